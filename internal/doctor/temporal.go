package doctor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gonogo/gonogo/internal/temporalbackend"
)

// Temporal is what doctor finds of the Temporal cluster
// GONOGO_TEMPORAL_ADDR names.
type Temporal struct {
	Addr      string `json:"addr"`
	Namespace string `json:"namespace"`
	Reachable bool   `json:"reachable"`
	// Ready: the namespace exists with gonogo's search attributes.
	Ready bool `json:"ready"`
	// Workers is how many pollers take steps from gonogo-steps now.
	Workers int `json:"workers"`
	// Heartbeat is GONOGO_TEMPORAL_HEARTBEAT: how long runs started here
	// trust a silent step worker.
	Heartbeat string `json:"heartbeat"`
	Problem   string `json:"problem,omitempty"`
}

// TemporalConfig is the cluster doctor asks, as the environment names it.
type TemporalConfig struct {
	// Err says the Temporal variables make no configuration; doctor
	// reports it as the cluster's problem and asks nothing.
	Err       error
	Addr      string
	Namespace string
	Heartbeat time.Duration
	// Dial connects to the cluster; doctor bounds it and closes what it
	// returns.
	Dial func(ctx context.Context) (Cluster, error)
}

// Cluster is what doctor asks of the namespace on a Temporal cluster;
// temporalbackend.Probe has it.
type Cluster interface {
	// Readiness is how the namespace stands against what gonogo needs.
	Readiness(ctx context.Context) (temporalbackend.Readiness, error)
	// StepWorkers is how many workers take steps now.
	StepWorkers(ctx context.Context) (int, error)
	Close()
}

// temporalWait bounds doctor's questions to the cluster.
const temporalWait = 5 * time.Second

func checkTemporal(ctx context.Context, tc *TemporalConfig) *Temporal {
	switch {
	case tc == nil:
		return nil
	case tc.Err != nil:
		return &Temporal{Problem: tc.Err.Error()}
	}
	d := &Temporal{Addr: tc.Addr, Namespace: tc.Namespace, Heartbeat: tc.Heartbeat.String()}
	ctx, cancel := context.WithTimeout(ctx, temporalWait)
	defer cancel()
	c, err := tc.Dial(ctx)
	if err != nil {
		d.Problem = err.Error()
		return d
	}
	defer c.Close()
	d.Reachable = true
	r, err := c.Readiness(ctx)
	if err != nil {
		d.Problem = err.Error()
		return d
	}
	if p := readinessProblem(r, tc.Namespace); p != "" {
		d.Problem = p
		return d
	}
	d.Ready = true
	// Not knowing how many workers there are keeps no run from starting:
	// a run waits for one.
	d.Workers, _ = c.StepWorkers(ctx)
	return d
}

// readinessProblem says what the namespace lacks for gonogo, or is "" when
// it is ready.
func readinessProblem(r temporalbackend.Readiness, namespace string) string {
	if !r.Exists {
		return fmt.Sprintf("namespace %s does not exist: run gonogo temporal setup", namespace)
	}
	if len(r.Lacking) == 0 {
		return ""
	}
	names := make([]string, len(r.Lacking))
	for i, g := range r.Lacking {
		names[i] = g.Name
	}
	return fmt.Sprintf("namespace %s lacks gonogo's search attributes %s: run gonogo temporal setup", namespace, strings.Join(names, ", "))
}
