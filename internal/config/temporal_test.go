package config

import (
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"
)

// GONOGO_TEMPORAL_HEARTBEAT is read by whoever starts a run and reaches
// the backend's configuration; unset it is 10 s.
func TestTemporalHeartbeatSetting(t *testing.T) {
	for _, c := range []struct {
		value string
		want  time.Duration
	}{{"", 10 * time.Second}, {"45s", 45 * time.Second}} {
		vars := map[string]string{"GONOGO_TEMPORAL_ADDR": "127.0.0.1:1"}
		if c.value != "" {
			vars["GONOGO_TEMPORAL_HEARTBEAT"] = c.value
		}
		tc, err := LoadTemporal(t.Context(), envconfig.MapLookuper(vars))
		if err != nil || tc.Heartbeat != c.want {
			t.Errorf("GONOGO_TEMPORAL_HEARTBEAT=%q: heartbeat %s, err %v; want %s", c.value, tc.Heartbeat, err, c.want)
		}
	}
}

// GONOGO_TEMPORAL_MAX_STEPS is read by whoever starts a run and reaches
// the backend's configuration; unset there is no limit.
func TestTemporalMaxStepsSetting(t *testing.T) {
	for _, c := range []struct {
		value string
		want  int
	}{{"", 0}, {"8", 8}} {
		vars := map[string]string{"GONOGO_TEMPORAL_ADDR": "127.0.0.1:1"}
		if c.value != "" {
			vars["GONOGO_TEMPORAL_MAX_STEPS"] = c.value
		}
		tc, err := LoadTemporal(t.Context(), envconfig.MapLookuper(vars))
		if err != nil || tc.MaxSteps != c.want {
			t.Errorf("GONOGO_TEMPORAL_MAX_STEPS=%q: %d, err %v; want %d", c.value, tc.MaxSteps, err, c.want)
		}
	}
}
