package artifacts

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// The environment variables Open reads, besides the standard AWS ones
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION).
const (
	// EnvArtifacts holds the spec Open parses.
	EnvArtifacts = "GONOGO_ARTIFACTS"
	// EnvS3Endpoint is the S3 service: host:port (TLS) or a URL, where
	// http:// means no TLS. Unset means AWS S3.
	EnvS3Endpoint = "GONOGO_S3_ENDPOINT"
)

// Open returns the store spec (the value of GONOGO_ARTIFACTS) names:
//
//	dir:PATH              a Dir at PATH (relative to the working directory)
//	s3://BUCKET[/PREFIX]  an S3 bucket, keys under PREFIX
//
// For S3 it reads GONOGO_S3_ENDPOINT and the AWS variables through getenv
// (nil means os.Getenv); with no AWS_ACCESS_KEY_ID, the instance's or
// container's IAM role signs requests. Open makes no network request.
// Errors name the variable at fault and never repeat a secret.
func Open(spec string, getenv func(string) string) (Store, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if path, ok := strings.CutPrefix(spec, "dir:"); ok {
		if path == "" {
			return nil, fmt.Errorf("%s=%q: the path after dir: is missing", EnvArtifacts, spec)
		}
		d, err := NewDir(path)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: %w", EnvArtifacts, spec, err)
		}
		return d, nil
	}
	if rest, ok := strings.CutPrefix(spec, "s3://"); ok {
		return openS3(spec, rest, getenv)
	}
	if spec == "" {
		return nil, fmt.Errorf("%s is empty: want dir:PATH or s3://bucket/prefix", EnvArtifacts)
	}
	return nil, fmt.Errorf("%s=%q: want dir:PATH or s3://bucket/prefix", EnvArtifacts, spec)
}

func openS3(spec, rest string, getenv func(string) string) (Store, error) {
	if strings.Contains(rest, "@") {
		return nil, fmt.Errorf("%s holds credentials: give them in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY", EnvArtifacts)
	}
	bucket, prefix, _ := strings.Cut(rest, "/")
	prefix = strings.TrimSuffix(prefix, "/")
	switch {
	case bucket == "":
		return nil, fmt.Errorf("%s=%q: no bucket after s3://", EnvArtifacts, spec)
	case strings.ContainsAny(rest, "?#"):
		return nil, fmt.Errorf("%s=%q: want s3://bucket/prefix, with no query or fragment", EnvArtifacts, spec)
	}
	cfg := S3Config{
		Endpoint:        getenv(EnvS3Endpoint),
		Bucket:          bucket,
		Prefix:          prefix,
		Region:          getenv("AWS_REGION"),
		AccessKeyID:     getenv("AWS_ACCESS_KEY_ID"),
		SecretAccessKey: getenv("AWS_SECRET_ACCESS_KEY"),
		SessionToken:    getenv("AWS_SESSION_TOKEN"),
	}
	if (cfg.AccessKeyID == "") != (cfg.SecretAccessKey == "") {
		return nil, errors.New("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together, or neither to use an IAM role")
	}
	if _, _, err := parseEndpoint(cfg.Endpoint); err != nil {
		return nil, fmt.Errorf("%s: %w", EnvS3Endpoint, err)
	}
	s, err := NewS3(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s=%q: %w", EnvArtifacts, spec, err)
	}
	return s, nil
}
