//go:build temporal

package temporalbackend

import (
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// BenchmarkWorkerStopAndAbort measures, on the in-process Temporal
// server, two claims the tests hold without a clock: a decision on a run
// whose workflow worker was stopped (it tells the cluster, and the run
// moves to another worker at once), from the call until it is answered,
// with gonogo's WorkflowWorkerOptions; and an abort of a run whose agent
// is running, from the call until the agent sees the cancel, with the
// default heartbeat timeout (10 s: a beat every second, not the SDK's 8 s
// hold). Each is reported as its p50 and as a ratio to a decision on a
// run whose worker lives, measured in the same run. (A worker killed
// without a word is cmd/gonogo's BenchmarkDecisionAfterWorkerKilled.) Run
// it with -benchtime 1x: an iteration is the whole measurement.
func BenchmarkWorkerStopAndAbort(b *testing.B) {
	const n = 10
	for b.Loop() {
		live := measureStop(b, n, false)
		stopped := measureStop(b, n, true)
		abort := measureAborts(b, n)
		base := pct(live, 50)
		b.ReportMetric(ms(base), "live-decide-p50-ms")
		for _, m := range []struct {
			what string
			d    []time.Duration
		}{{"stopped-decide", stopped}, {"abort-to-cancel", abort}} {
			p := pct(m.d, 50)
			b.ReportMetric(ms(p), m.what+"-p50-ms")
			b.ReportMetric(float64(p)/float64(max(base, 1)), m.what+"/live-decide")
		}
	}
	b.ReportMetric(0, "ns/op") // an op is the whole measurement
}

// measureStop times the first decision of n runs, each held by a workflow
// worker of its own, stopped before the decision when stop is set (and
// another then started). Only that worker polls while its run starts.
func measureStop(b *testing.B, n int, stop bool) []time.Duration {
	e := temporalEnv(b)
	e.flows.Stop()
	var out []time.Duration
	for range n {
		held := e.newFlowWorker()
		id := e.start()
		waiting(b, e.b, id, 1, 1)
		next := held
		if stop {
			held.Stop()
			next = e.newFlowWorker()
		}
		d := e.decision(id, 1, engine.DecideApprove)
		sent := time.Now()
		if _, err := e.b.Decide(b.Context(), id, d, nil); err != nil {
			b.Fatal(err)
		}
		out = append(out, time.Since(sent))
		waiting(b, e.b, id, 2, 1)
		next.Stop()
	}
	return out
}

// measureAborts times n aborts of a run whose agent runs, from the call
// until the agent sees the cancel, with the default heartbeat timeout.
func measureAborts(b *testing.B, n int) []time.Duration {
	e := temporalEnv(b)
	e.b = New(e.config(func(c *Config) { c.Heartbeat = 0 }))
	b.Cleanup(e.runner.holdSkill("deliver-prd"))
	var out []time.Duration
	for range n {
		id := e.start()
		<-e.runner.started
		sent := time.Now()
		if _, err := e.b.Abort(b.Context(), id, "U-ana"); err != nil {
			b.Fatal(err)
		}
		<-e.runner.cancels
		out = append(out, time.Since(sent))
		ended(b, e.b, id)
	}
	return out
}
