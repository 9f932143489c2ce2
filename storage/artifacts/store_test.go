package artifacts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fixture is one empty store, seen the way the conformance suite needs.
type fixture struct {
	// a and b are two handles on the same data, as two processes would
	// hold.
	a, b Store
	// stored lists every name the backing holds, sorted, including
	// anything written beside the store (files in the Dir's parent folder,
	// objects anywhere in the bucket).
	stored func(t *testing.T) []string
	// name is where key is kept in that listing.
	name func(key string) string
}

// testStore checks the package contract against the stores newFixture
// makes, each check on a fresh, empty store.
func testStore(t *testing.T, newFixture func(t *testing.T) fixture) {
	checks := []struct {
		name  string
		check func(t *testing.T, f fixture)
	}{
		{"put then get, from either handle", checkPutGet},
		{"empty body", checkEmptyBody},
		{"same bytes again succeed", checkSameBytes},
		{"different bytes refused, original kept", checkDifferentBytes},
		{"missing key", checkMissing},
		{"1 MiB body", checkLarge},
		{"racing puts of different bodies: one wins", checkRaceDifferent},
		{"racing puts of the same body all succeed", checkRaceSame},
		{"keys that are prefixes of others are separate", checkKeyPrefixes},
		{"bad keys refused before any I/O", checkBadKeys},
		{"cancelled context", checkCancelled},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) { c.check(t, newFixture(t)) })
	}
}

// key is a key as Key makes them.
const key = "20261127-015533-1a2b3c4d/01-deliver-prd.attempt-1.md"

func checkPutGet(t *testing.T, f fixture) {
	ctx := t.Context()
	body := []byte("# PRD\n\nGoals.\n")
	if err := f.a.Put(ctx, key, body); err != nil {
		t.Fatal(err)
	}
	for _, s := range []Store{f.a, f.b} {
		got, err := s.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, body) {
			t.Fatalf("Get = %q, want %q", got, body)
		}
	}
}

func checkEmptyBody(t *testing.T, f fixture) {
	ctx := t.Context()
	if err := f.a.Put(ctx, key, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.b.Put(ctx, key, []byte{}); err != nil {
		t.Fatalf("re-put of the same empty body: %v", err)
	}
	got, err := f.a.Get(ctx, key)
	if err != nil || len(got) != 0 {
		t.Fatalf("Get = %q, %v; want empty, nil", got, err)
	}
	if err := f.a.Put(ctx, key, []byte("x")); !errors.Is(err, ErrExists) {
		t.Fatalf("a body over an empty one: %v, want ErrExists", err)
	}
}

func checkSameBytes(t *testing.T, f fixture) {
	ctx := t.Context()
	body := []byte("v1")
	for i, s := range []Store{f.a, f.a, f.b} {
		if err := s.Put(ctx, key, slices.Clone(body)); err != nil {
			t.Fatalf("put %d: %v", i+1, err)
		}
	}
}

func checkDifferentBytes(t *testing.T, f fixture) {
	ctx := t.Context()
	orig := []byte("the agent's artifact")
	if err := f.a.Put(ctx, key, orig); err != nil {
		t.Fatal(err)
	}
	for _, other := range [][]byte{[]byte("an edit"), append(slices.Clone(orig), '\n'), orig[:len(orig)-1], nil} {
		err := f.b.Put(ctx, key, other)
		if !errors.Is(err, ErrExists) || !errors.Is(err, fs.ErrExist) {
			t.Fatalf("Put(%q) over %q = %v, want ErrExists", other, orig, err)
		}
		if !strings.Contains(err.Error(), key) {
			t.Errorf("error %q does not name the key", err)
		}
	}
	if got, err := f.a.Get(ctx, key); err != nil || !bytes.Equal(got, orig) {
		t.Fatalf("Get = %q, %v; want the original %q", got, err, orig)
	}
}

func checkMissing(t *testing.T, f fixture) {
	ctx := t.Context()
	if err := f.a.Put(ctx, key, []byte("a sibling")); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{
		"20261127-015533-1a2b3c4d/01-deliver-prd.attempt-2.md", // folder exists
		"20990101-000000-00000000/01-x.attempt-1.md",           // folder does not
		key + "/under-a-file",                                  // a Dir's folder would be a file
	} {
		_, err := f.b.Get(ctx, k)
		if !errors.Is(err, ErrNotFound) || !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("Get(%s) = %v, want ErrNotFound", k, err)
		}
		if !strings.Contains(err.Error(), k) {
			t.Errorf("error %q does not name the key", err)
		}
	}
}

func checkLarge(t *testing.T, f fixture) {
	ctx := t.Context()
	body := make([]byte, 1<<20)
	rng := rand.NewChaCha8([32]byte{1})
	_, _ = rng.Read(body)
	if err := f.a.Put(ctx, key, body); err != nil {
		t.Fatal(err)
	}
	if err := f.b.Put(ctx, key, slices.Clone(body)); err != nil {
		t.Fatalf("same 1 MiB again: %v", err)
	}
	changed := slices.Clone(body)
	changed[len(changed)/2] ^= 1
	if err := f.b.Put(ctx, key, changed); !errors.Is(err, ErrExists) {
		t.Fatalf("1 MiB differing in one bit: %v, want ErrExists", err)
	}
	got, err := f.b.Get(ctx, key)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("Get: %d bytes, %v; want the original %d bytes", len(got), err, len(body))
	}
}

func checkRaceDifferent(t *testing.T, f fixture) {
	ctx := t.Context()
	for round := range 5 {
		k := fmt.Sprintf("race/%02d-x.attempt-1.md", round)
		errs, winner := race(ctx, f, k, func(i int) []byte { return []byte("writer " + strconv.Itoa(i)) })
		var won int
		for i, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, ErrExists):
				t.Fatalf("round %d writer %d: %v, want nil or ErrExists", round, i, err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d writers succeeded, want exactly 1 (errors %v)", round, won, errs)
		}
		got, err := f.a.Get(ctx, k)
		if err != nil || !bytes.Equal(got, winner) {
			t.Fatalf("round %d: Get = %q, %v; want the winner's %q", round, got, err, winner)
		}
	}
}

func checkRaceSame(t *testing.T, f fixture) {
	ctx := t.Context()
	errs, _ := race(ctx, f, key, func(int) []byte { return []byte("retried activity") })
	for i, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: %v", i, err)
		}
	}
}

func checkKeyPrefixes(t *testing.T, f fixture) {
	ctx := t.Context()
	keys := []string{
		"r/01-x.attempt-1",
		"r/01-x.attempt-1.md",
		"r/01-x.attempt-1.md2",
		"r/01-x.attempt-1.v2.md",
		"r2/01-x.attempt-1.md",
	}
	for _, k := range keys {
		if err := f.a.Put(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range keys {
		if got, err := f.b.Get(ctx, k); err != nil || string(got) != k {
			t.Fatalf("Get(%s) = %q, %v", k, got, err)
		}
	}
	var want []string
	for _, k := range keys {
		want = append(want, f.name(k))
	}
	slices.Sort(want)
	if got := f.stored(t); !slices.Equal(got, want) {
		t.Fatalf("stored names:\n got %q\nwant %q", got, want)
	}
}

func checkBadKeys(t *testing.T, f fixture) {
	ctx := t.Context()
	for _, k := range badKeys {
		err := f.a.Put(ctx, k, []byte("x"))
		if err == nil || errors.Is(err, ErrExists) || errors.Is(err, ErrNotFound) {
			t.Fatalf("Put(%q) = %v, want a bad-key error", k, err)
		}
		if !strings.Contains(err.Error(), strconv.Quote(k)) {
			t.Errorf("Put error %q does not name the key %q", err, k)
		}
		if _, err := f.a.Get(ctx, k); err == nil || errors.Is(err, ErrNotFound) {
			t.Fatalf("Get(%q) = %v, want a bad-key error", k, err)
		}
	}
	if got := f.stored(t); len(got) != 0 {
		t.Fatalf("bad keys stored %q", got)
	}
}

func checkCancelled(t *testing.T, f fixture) {
	ctx := t.Context()
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := f.a.Put(cctx, key, []byte("x")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Put = %v, want context.Canceled", err)
	}
	if got := f.stored(t); len(got) != 0 {
		t.Fatalf("a cancelled Put stored %q", got)
	}
}

// badKeys break one rule each.
var badKeys = []string{
	"",
	"/abs/01-x.attempt-1.md",
	"../01-x.attempt-1.md",
	"run/../../01-x.attempt-1.md",
	"run/..",
	"run/a..b",
	`run\01-x.attempt-1.md`,
	"run//01-x.attempt-1.md",
	"run/",
	"run/./01-x.md",
	"run/.tmp-ABC",
	"run/01-x\x00.md",
	"run/01-x\n.md",
	"run/\xff.md",
	"run/" + strings.Repeat("a", 256),
	strings.Repeat("run/", MaxKeyLen/4) + "x",
}

// race puts body(i) under key from 8 writers at once, alternating the
// fixture's two handles, and returns each writer's error and the body of
// the writer that succeeded first (nil if none did).
func race(ctx context.Context, f fixture, key string, body func(i int) []byte) ([]error, []byte) {
	const writers = 8
	errs := make([]error, writers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range writers {
		s := f.a
		if i%2 == 1 {
			s = f.b
		}
		wg.Go(func() {
			<-start
			errs[i] = s.Put(ctx, key, body(i))
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err == nil {
			return errs, body(i)
		}
	}
	return errs, nil
}
