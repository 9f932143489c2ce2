package temporalbackend

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Dial refuses what the GONOGO_TEMPORAL_* variables get wrong before it
// reaches any cluster, naming the variable.
func TestDialRefusesBadSettingsByTheirVariable(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Dial(t.Context(), DialOptions{Namespace: "gonogo"}, slog.Default()); !errors.Is(err, ErrNoCluster) {
		t.Errorf("no address: %v, want ErrNoCluster", err)
	}
	for _, c := range []struct {
		o    DialOptions
		want string
	}{
		{DialOptions{TLSCert: "client.pem"}, "GONOGO_TEMPORAL_TLS_CERT and GONOGO_TEMPORAL_TLS_KEY go together"},
		{DialOptions{TLSCA: notPEM}, "GONOGO_TEMPORAL_TLS_CA=\"" + notPEM + "\" holds no PEM certificate"},
		{DialOptions{TLSCA: filepath.Join(t.TempDir(), "missing.pem")}, "configuration: GONOGO_TEMPORAL_TLS_CA: "},
	} {
		c.o.Addr, c.o.Namespace = "127.0.0.1:1", "gonogo"
		_, err := Dial(t.Context(), c.o, slog.Default())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
}
