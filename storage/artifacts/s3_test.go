package artifacts

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

const (
	testBucket = "gonogo-artifacts"
	testSecret = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY"
)

// fakeS3 is an in-memory S3 service on 127.0.0.1; wrap, if given, sees
// every request first.
type fakeS3 struct {
	url     string
	backend *s3mem.Backend
}

func newFakeS3(t *testing.T, wrap func(http.Handler) http.Handler) fakeS3 {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket(testBucket); err != nil {
		t.Fatal(err)
	}
	h := gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog())).Server()
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h) // listens on 127.0.0.1
	t.Cleanup(srv.Close)
	return fakeS3{url: srv.URL, backend: backend}
}

// env is what Open reads for this service.
func (f fakeS3) env(extra ...string) func(string) string {
	m := map[string]string{
		EnvS3Endpoint:           f.url,
		"AWS_ACCESS_KEY_ID":     "AKIAEXAMPLE",
		"AWS_SECRET_ACCESS_KEY": testSecret,
		"AWS_REGION":            "us-east-1",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i]] = extra[i+1]
	}
	return func(k string) string { return m[k] }
}

func (f fakeS3) open(t *testing.T, spec string, extra ...string) Store {
	t.Helper()
	s, err := Open(spec, f.env(extra...))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// objects lists every object in the bucket, sorted.
func (f fakeS3) objects(t *testing.T) []string {
	t.Helper()
	list, err := f.backend.ListBucket(testBucket, &gofakes3.Prefix{}, gofakes3.ListBucketPage{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range list.Contents {
		names = append(names, o.Key)
	}
	slices.Sort(names)
	return names
}

func TestS3(t *testing.T) {
	testStore(t, func(t *testing.T) fixture {
		f := newFakeS3(t, nil)
		spec := "s3://" + testBucket + "/teams/gonogo"
		return fixture{
			a: f.open(t, spec), b: f.open(t, spec),
			stored: f.objects,
			name:   func(key string) string { return "teams/gonogo/" + key },
		}
	})
}

func TestS3Prefixes(t *testing.T) {
	f := newFakeS3(t, nil)
	ctx := t.Context()
	const key = "run/01-x.attempt-1.md"
	bare := f.open(t, "s3://"+testBucket, "AWS_REGION", "") // asks the service for the bucket's region
	one := f.open(t, "s3://"+testBucket+"/one/")
	two := f.open(t, "s3://"+testBucket+"/two")
	for _, s := range []Store{bare, one, two} {
		if _, err := s.Get(ctx, key); !errors.Is(err, ErrNotFound) {
			t.Fatalf("%v: Get before any Put = %v, want ErrNotFound", s, err)
		}
		if err := s.Put(ctx, key, []byte(s.(*S3).String())); err != nil {
			t.Fatalf("%v: %v", s, err)
		}
	}
	for _, s := range []Store{bare, one, two} {
		got, err := s.Get(ctx, key)
		if err != nil || string(got) != s.(*S3).String() {
			t.Fatalf("%v: Get = %q, %v", s, got, err)
		}
	}
	want := []string{"one/" + key, key, "two/" + key}
	if got := f.objects(t); !slices.Equal(got, want) {
		t.Fatalf("objects %q, want %q", got, want)
	}
}

// Every write asks the service to refuse an existing key.
func TestS3PutIsConditional(t *testing.T) {
	var mu sync.Mutex
	var puts []string
	f := newFakeS3(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut {
				mu.Lock()
				puts = append(puts, r.Header.Get("If-None-Match"))
				mu.Unlock()
			}
			h.ServeHTTP(w, r)
		})
	})
	s := f.open(t, "s3://"+testBucket+"/p")
	if err := s.Put(t.Context(), "run/01-x.attempt-1.md", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(puts, []string{"*"}) {
		t.Fatalf("If-None-Match of the PUTs sent: %q, want one *", puts)
	}
}

// On a service that ignores If-None-Match, reading first still refuses
// to replace a body.
func TestS3WithoutConditionalWrites(t *testing.T) {
	f := newFakeS3(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Header.Del("If-None-Match")
			h.ServeHTTP(w, r)
		})
	})
	ctx := t.Context()
	s := f.open(t, "s3://"+testBucket+"/p")
	const key = "run/01-x.attempt-1.md"
	if err := s.Put(ctx, key, []byte("first")); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, key, []byte("second")); !errors.Is(err, ErrExists) {
		t.Fatalf("second Put = %v, want ErrExists", err)
	}
	if got, err := s.Get(ctx, key); err != nil || string(got) != "first" {
		t.Fatalf("Get = %q, %v; want first", got, err)
	}
}

// AWS answers 409 ConditionalRequestConflict while another conditional
// write to the key is in flight; Put tries again.
func TestS3RetriesConflict(t *testing.T) {
	var mu sync.Mutex
	conflicts := 2
	f := newFakeS3(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			conflict := r.Method == http.MethodPut && conflicts > 0
			if conflict {
				conflicts--
			}
			mu.Unlock()
			if conflict {
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(http.StatusConflict)
				_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>ConditionalRequestConflict</Code><Message>A conflicting conditional operation is in progress.</Message></Error>`))
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	s := f.open(t, "s3://"+testBucket+"/p")
	const key = "run/01-x.attempt-1.md"
	if err := s.Put(t.Context(), key, []byte("x")); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if conflicts != 0 {
		t.Fatalf("%d conflicts left unserved", conflicts)
	}
	if got := f.objects(t); !slices.Equal(got, []string{"p/" + key}) {
		t.Fatalf("objects %q", got)
	}
}

// Failures say what is wrong and never carry the secret key.
func TestS3Errors(t *testing.T) {
	ctx := t.Context()
	f := newFakeS3(t, nil)
	const key = "run/01-x.attempt-1.md"

	s := f.open(t, "s3://no-such-bucket/p")
	err := s.Put(ctx, key, []byte("x"))
	if err == nil || !strings.Contains(err.Error(), `bucket "no-such-bucket" does not exist`) {
		t.Fatalf("Put into a missing bucket = %v", err)
	}
	if _, err := s.Get(ctx, key); err == nil || errors.Is(err, ErrNotFound) {
		t.Fatalf("Get from a missing bucket = %v, want an error other than ErrNotFound", err)
	}

	denied := newFakeS3(t, func(http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`))
		})
	})
	s = denied.open(t, "s3://"+testBucket+"/p")
	_, gerr := s.Get(ctx, key)
	for _, err := range []error{s.Put(ctx, key, []byte("x")), gerr} {
		if err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "Access Denied") {
			t.Fatalf("call refused by the service = %v, want its Access Denied", err)
		}
		if strings.Contains(err.Error(), testSecret) {
			t.Fatalf("error %q holds the secret", err)
		}
	}
	cfg := S3Config{Bucket: "b", AccessKeyID: "AKIAEXAMPLE", SecretAccessKey: testSecret, SessionToken: "session-token"}
	for _, out := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg)} {
		if strings.Contains(out, testSecret) || strings.Contains(out, "session-token") {
			t.Fatalf("S3Config printed as %s", out)
		}
	}
}
