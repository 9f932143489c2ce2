package artifacts

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestOpen(t *testing.T) {
	tmp := t.TempDir()
	keys := map[string]string{"AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": testSecret}
	tests := []struct {
		name string
		spec string
		env  map[string]string
		// want is the store's Path (Dir) or String plus endpoint URL (S3).
		want string
		// wantErr lists what the error must say; the secret never.
		wantErr []string
	}{
		{name: "dir", spec: "dir:" + tmp + "/arts", want: filepath.Join(tmp, "arts")},
		{name: "dir with no path", spec: "dir:", wantErr: []string{"GONOGO_ARTIFACTS", "the path after dir: is missing"}},
		{name: "empty", spec: "", wantErr: []string{"GONOGO_ARTIFACTS is empty", "dir:PATH", "s3://bucket/prefix"}},
		{name: "unknown scheme", spec: "file:///x", wantErr: []string{`GONOGO_ARTIFACTS="file:///x"`, "want dir:PATH or s3://bucket/prefix"}},
		{name: "bare path", spec: "/var/gonogo", wantErr: []string{`GONOGO_ARTIFACTS="/var/gonogo"`}},

		{name: "s3 on AWS", spec: "s3://bucket/a/b", env: keys, want: "s3://bucket/a/b https://s3.amazonaws.com"},
		{name: "s3 trailing slash", spec: "s3://bucket/a/", env: keys, want: "s3://bucket/a https://s3.amazonaws.com"},
		{name: "s3 no prefix", spec: "s3://bucket", env: keys, want: "s3://bucket/ https://s3.amazonaws.com"},
		{name: "s3 over http", spec: "s3://bucket/p", env: with(keys, EnvS3Endpoint, "http://minio:9000"), want: "s3://bucket/p http://minio:9000"},
		{name: "s3 https URL", spec: "s3://bucket/p", env: with(keys, EnvS3Endpoint, "https://minio:9000/"), want: "s3://bucket/p https://minio:9000"},
		{name: "s3 host:port is TLS", spec: "s3://bucket/p", env: with(keys, EnvS3Endpoint, "minio:9000"), want: "s3://bucket/p https://minio:9000"},
		{name: "s3 with an IAM role", spec: "s3://bucket/p", env: map[string]string{}, want: "s3://bucket/p https://s3.amazonaws.com"},

		{name: "s3 no bucket", spec: "s3:///p", wantErr: []string{"GONOGO_ARTIFACTS", "no bucket"}},
		{name: "s3 bad bucket", spec: "s3://Bad_Bucket/p", wantErr: []string{"GONOGO_ARTIFACTS", `bucket "Bad_Bucket"`}},
		{name: "s3 bad prefix", spec: "s3://bucket/a//b", wantErr: []string{"GONOGO_ARTIFACTS", `prefix "a//b"`, "empty segment"}},
		{name: "s3 dotted prefix", spec: "s3://bucket/../b", wantErr: []string{"GONOGO_ARTIFACTS", `prefix "../b"`}},
		{name: "s3 query", spec: "s3://bucket/p?region=x", wantErr: []string{"GONOGO_ARTIFACTS", "no query"}},
		{name: "s3 credentials in spec", spec: "s3://AKIA:" + testSecret + "@bucket/p", wantErr: []string{"GONOGO_ARTIFACTS holds credentials", "AWS_ACCESS_KEY_ID"}},
		{name: "s3 key without secret", spec: "s3://bucket/p", env: map[string]string{"AWS_ACCESS_KEY_ID": "AKIAEXAMPLE"},
			wantErr: []string{"AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together"}},
		{name: "s3 secret without key", spec: "s3://bucket/p", env: map[string]string{"AWS_SECRET_ACCESS_KEY": testSecret},
			wantErr: []string{"must be set together"}},
		{name: "endpoint scheme", spec: "s3://bucket/p", env: with(keys, EnvS3Endpoint, "ftp://minio:9000"), wantErr: []string{"GONOGO_S3_ENDPOINT", "http or https"}},
		{name: "endpoint path", spec: "s3://bucket/p", env: with(keys, EnvS3Endpoint, "http://minio:9000/bucket"), wantErr: []string{"GONOGO_S3_ENDPOINT", "only scheme, host and port"}},
		{name: "endpoint host path", spec: "s3://bucket/p", env: with(keys, EnvS3Endpoint, "minio:9000/bucket"), wantErr: []string{"GONOGO_S3_ENDPOINT", "host:port or a URL"}},
		{name: "endpoint no host", spec: "s3://bucket/p", env: with(keys, EnvS3Endpoint, "http://"), wantErr: []string{"GONOGO_S3_ENDPOINT", "no host"}},
		{name: "endpoint credentials", spec: "s3://bucket/p", env: with(keys, EnvS3Endpoint, "http://AKIA:"+testSecret+"@minio:9000"),
			wantErr: []string{"GONOGO_S3_ENDPOINT", "holds credentials"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(tt.spec, func(k string) string { return tt.env[k] })
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("Open(%q) = %v, want an error", tt.spec, s)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				if strings.Contains(err.Error(), testSecret) {
					t.Errorf("error %q holds the secret", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got string
			switch s := s.(type) {
			case *Dir:
				got = s.Path()
			case *S3:
				got = s.String() + " " + s.client.EndpointURL().String()
			}
			if got != tt.want {
				t.Fatalf("Open(%q) = %s, want %s", tt.spec, got, tt.want)
			}
		})
	}
}

// with returns m plus k=v.
func with(m map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for mk, mv := range m {
		out[mk] = mv
	}
	return out
}
