package config

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sethvargo/go-envconfig"
)

// Temporal is how gonogo reaches a Temporal cluster. Any of the TLS
// variables turns TLS on; a client certificate needs its key.
type Temporal struct {
	Addr          string `env:"GONOGO_TEMPORAL_ADDR" example:"temporal.internal:7233"`
	Namespace     string `env:"GONOGO_TEMPORAL_NAMESPACE, default=gonogo"`
	TLSCert       string `env:"GONOGO_TEMPORAL_TLS_CERT" example:"/etc/gonogo/client.pem"`
	TLSKey        string `env:"GONOGO_TEMPORAL_TLS_KEY" example:"/etc/gonogo/client.key"`
	TLSCA         string `env:"GONOGO_TEMPORAL_TLS_CA" example:"/etc/gonogo/ca.pem"`
	TLSServerName string `env:"GONOGO_TEMPORAL_TLS_SERVER_NAME"`
	// Heartbeat is how long the cluster trusts a silent step worker before
	// it records the step interrupted. It is fixed, for each run, by
	// whoever starts the run (run, serve), and read by nobody else.
	Heartbeat time.Duration `env:"GONOGO_TEMPORAL_HEARTBEAT, default=10s"`
	// MaxSteps is the cluster-wide limit on the steps that run at once,
	// fixed for each run, like Heartbeat, by whoever starts it; 0 is none.
	MaxSteps int `env:"GONOGO_TEMPORAL_MAX_STEPS, default=0"`
}

// MinHeartbeat: a running step sends a heartbeat every second, so a
// shorter timeout would take a live worker for lost.
const MinHeartbeat = 3 * time.Second

// LoadTemporal reads the GONOGO_TEMPORAL_* environment l gives and checks
// it; an unset GONOGO_TEMPORAL_ADDR is no error (Addr is then empty: no
// cluster is named). Every refusal starts "configuration:".
func LoadTemporal(ctx context.Context, l envconfig.Lookuper) (Temporal, error) {
	var tc Temporal
	if err := Process(ctx, &tc, l); err != nil {
		return tc, err
	}
	tc.Addr, tc.Namespace = strings.TrimSpace(tc.Addr), strings.TrimSpace(tc.Namespace)
	if tc.Namespace == "" {
		return tc, errors.New("configuration: GONOGO_TEMPORAL_NAMESPACE is empty; leave it unset for the default, gonogo")
	}
	if tc.MaxSteps < 0 {
		return tc, fmt.Errorf("configuration: GONOGO_TEMPORAL_MAX_STEPS is %d; it must be 0 (no limit) or more (for example GONOGO_TEMPORAL_MAX_STEPS=8)", tc.MaxSteps)
	}
	if tc.Heartbeat < MinHeartbeat {
		return tc, fmt.Errorf("configuration: GONOGO_TEMPORAL_HEARTBEAT is %s; it must be at least %s (a running step sends a heartbeat every second)", tc.Heartbeat, MinHeartbeat)
	}
	return tc, nil
}
