package artifacts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"
)

// maxPrefixLen leaves room for a full key within S3's 1024-byte limit.
const maxPrefixLen = 1024 - MaxKeyLen - 1

// S3Config says where an S3 store is and how to sign in to it.
type S3Config struct {
	// Endpoint is host:port (TLS) or a URL: http:// means no TLS. Empty
	// means AWS S3.
	Endpoint string
	Bucket   string
	// Prefix, if any, is put before every key, with a slash between.
	Prefix string
	// Region is the bucket's; empty asks the service.
	Region string
	// Static credentials. With no access key, the IAM role of the instance
	// or container (ECS, EKS web identity, EC2 metadata) signs requests.
	AccessKeyID, SecretAccessKey, SessionToken string
}

// String describes the configuration without its secrets, so that a
// config printed by mistake gives nothing away.
func (c S3Config) String() string {
	endpoint := c.Endpoint
	if strings.Contains(endpoint, "@") {
		endpoint = "(an endpoint holding credentials)"
	}
	return fmt.Sprintf("s3://%s/%s at %q (region %q)", c.Bucket, c.Prefix, endpoint, c.Region)
}

// GoString is String, for %#v.
func (c S3Config) GoString() string { return c.String() }

// S3 keeps artifacts as objects in an S3 bucket, under a prefix: key k is
// the object prefix/k. It needs no closing.
type S3 struct {
	client *minio.Client
	bucket string
	prefix string // "" or ending in "/"
}

// NewS3 returns the store cfg describes. It makes no request: a wrong
// bucket or credentials show up at the first Put or Get.
func NewS3(cfg S3Config) (*S3, error) {
	host, secure, err := parseEndpoint(cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	if err := s3utils.CheckValidBucketNameStrict(cfg.Bucket); err != nil {
		return nil, fmt.Errorf("S3 bucket %q: %w", cfg.Bucket, err)
	}
	prefix := cfg.Prefix
	if prefix != "" {
		if err := checkPath(prefix, maxPrefixLen); err != nil {
			return nil, fmt.Errorf("S3 prefix %q: %w", prefix, err)
		}
		prefix += "/"
	}
	// The chain skips static credentials that are empty and tries IAM.
	creds := credentials.NewChainCredentials([]credentials.Provider{
		&credentials.Static{Value: credentials.Value{
			AccessKeyID:     cfg.AccessKeyID,
			SecretAccessKey: cfg.SecretAccessKey,
			SessionToken:    cfg.SessionToken,
			SignerType:      credentials.SignatureV4,
		}},
		&credentials.IAM{},
	})
	client, err := minio.New(host, &minio.Options{Creds: creds, Secure: secure, Region: cfg.Region})
	if err != nil {
		return nil, fmt.Errorf("S3 client for %s: %w", host, err)
	}
	return &S3{client: client, bucket: cfg.Bucket, prefix: prefix}, nil
}

// parseEndpoint turns an endpoint into minio-go's host and TLS flag. Its
// errors never repeat a value that could hold a password.
func parseEndpoint(e string) (host string, secure bool, err error) {
	if e == "" {
		return "s3.amazonaws.com", true, nil
	}
	if strings.Contains(e, "@") {
		return "", false, errors.New("S3 endpoint holds credentials: give them in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	if !strings.Contains(e, "://") {
		if strings.ContainsAny(e, "/?#") {
			return "", false, fmt.Errorf("S3 endpoint %q: want host:port or a URL", e)
		}
		return e, true, nil
	}
	u, err := url.Parse(e)
	switch {
	case err != nil:
		return "", false, fmt.Errorf("S3 endpoint %q is not a URL", e)
	case u.Scheme != "http" && u.Scheme != "https":
		return "", false, fmt.Errorf("S3 endpoint %q: the scheme must be http or https", e)
	case u.Host == "":
		return "", false, fmt.Errorf("S3 endpoint %q has no host", e)
	case strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "":
		return "", false, fmt.Errorf("S3 endpoint %q: want only scheme, host and port (the bucket and prefix go in GONOGO_ARTIFACTS)", e)
	}
	return u.Host, u.Scheme == "https", nil
}

// String names the bucket and prefix.
func (s *S3) String() string { return "s3://" + s.bucket + "/" + strings.TrimSuffix(s.prefix, "/") }

// conflictRetries bounds the retries of a Put whose conditional write was
// refused (412, or AWS's 409 ConditionalRequestConflict while another
// conditional write to the key is in flight): the next try reads the other
// writer's object.
const conflictRetries = 5

// Put stores body under key, unless key already holds it (see the package
// contract).
//
// It reads the key first: a retried Put then costs a read instead of an
// upload, and on a service that ignores conditional headers an existing
// body is still never replaced, unless a writer races this one between the
// read and the write. The write itself carries If-None-Match: *, which AWS
// S3 (since 2024), MinIO and gofakes3 check atomically: of two racing
// writers one stores and the other gets 412 Precondition Failed, then reads
// the winner's body to compare. Read-then-conditional-write rather than
// either alone: the read alone is racy, and the conditional write alone,
// on a service that ignores the header, replaces bodies without a word.
func (s *S3) Put(ctx context.Context, key string, body []byte) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if err := s.put(ctx, key, body); err != nil {
		return fmt.Errorf("put artifact %s in %s: %w", key, s, err)
	}
	return nil
}

func (s *S3) put(ctx context.Context, key string, body []byte) error {
	for try := 0; try <= conflictRetries; try++ {
		got, err := s.get(ctx, key)
		switch {
		case err == nil:
			return compare(got, body)
		case !errors.Is(err, ErrNotFound):
			return err
		}
		// Over plain HTTP minio-go signs the body in chunks, and sends an
		// empty one with no Content-Length, which services refuse
		// (MissingContentLength); an empty body has nothing to sign.
		opts := minio.PutObjectOptions{DisableMultipart: true, DisableContentSha256: len(body) == 0}
		opts.SetMatchETagExcept("*")
		_, err = s.client.PutObject(ctx, s.bucket, s.prefix+key, bytes.NewReader(body), int64(len(body)), opts)
		if err == nil {
			return nil
		}
		resp := minio.ErrorResponse{}
		if !errors.As(err, &resp) {
			return err
		}
		switch resp.StatusCode {
		case http.StatusPreconditionFailed:
			// Another writer won: the next turn reads its body.
		case http.StatusConflict:
			if err := sleep(ctx, time.Duration(try+1)*50*time.Millisecond); err != nil {
				return err
			}
		default:
			return s.explain(err)
		}
	}
	return fmt.Errorf("gave up after %d tries: the key kept being written and was never readable", conflictRetries+1)
}

// compare accepts a stored body equal to the one offered and refuses any
// other.
func compare(stored, body []byte) error {
	if !bytes.Equal(stored, body) {
		return fmt.Errorf("%w (%d bytes stored, %d offered)", ErrExists, len(stored), len(body))
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// Get returns the body stored under key.
func (s *S3) Get(ctx context.Context, key string) ([]byte, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	body, err := s.get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("get artifact %s in %s: %w", key, s, err)
	}
	return body, nil
}

func (s *S3) get(ctx context.Context, key string) ([]byte, error) {
	obj, err := s.client.GetObject(ctx, s.bucket, s.prefix+key, minio.GetObjectOptions{})
	if err != nil {
		return nil, s.explain(err)
	}
	defer obj.Close()
	body, err := io.ReadAll(obj)
	if err != nil {
		return nil, s.explain(err)
	}
	return body, nil
}

// explain turns the S3 answers callers branch on into this package's
// errors. minio-go's errors carry the service's code and message, never
// the credentials.
func (s *S3) explain(err error) error {
	resp := minio.ErrorResponse{}
	if !errors.As(err, &resp) {
		return err
	}
	switch resp.Code {
	case minio.NoSuchKey:
		return ErrNotFound
	case minio.NoSuchBucket:
		return fmt.Errorf("bucket %q does not exist: %w", s.bucket, err)
	}
	return err
}
