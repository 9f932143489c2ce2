package temporalbackend

import (
	"testing"
	"time"
)

func TestDaysSaysWholeDays(t *testing.T) {
	for d, want := range map[string]string{"720h": "30 days", "24h": "1 day", "36h": "36h0m0s"} {
		if got := days(mustDuration(t, d)); got != want {
			t.Errorf("days(%s) = %q, want %q", d, got, want)
		}
	}
}

func mustDuration(t *testing.T, s string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
