package bot

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// Metrics counts what the bot does, for /metrics (Prometheus text format).
type Metrics struct {
	mu        sync.Mutex
	calls     map[string]int64 // Slack Web API calls by method
	limited   map[string]int64 // 429 answers by method
	acks      histogram        // envelope-to-ack latency
	decisions histogram        // checkpoint-to-decision latency
	deferred  int64            // chat.update calls put off by the update budget
	replayed  int64            // envelopes acknowledged before a restart and carried out after it
	connected bool
	connFails map[string]int64 // failed attempts to connect, by Slack call
}

// NewMetrics returns empty metrics.
func NewMetrics() *Metrics {
	return &Metrics{
		calls: map[string]int64{}, limited: map[string]int64{}, connFails: map[string]int64{},
		acks:      newHistogram(0.0005, 0.001, 0.002, 0.005, 0.01, 0.05, 0.1, 1),
		decisions: newHistogram(10, 60, 300, 900, 3600, 4*3600, 24*3600),
	}
}

func (m *Metrics) call(method string) {
	m.mu.Lock()
	m.calls[method]++
	m.mu.Unlock()
}

func (m *Metrics) rateLimited(method string) {
	m.mu.Lock()
	m.limited[method]++
	m.mu.Unlock()
}

func (m *Metrics) updateDeferred() {
	m.mu.Lock()
	m.deferred++
	m.mu.Unlock()
}

func (m *Metrics) replaying(n int) {
	m.mu.Lock()
	m.replayed += int64(n)
	m.mu.Unlock()
}

func (m *Metrics) acked(d time.Duration) {
	m.mu.Lock()
	m.acks.observe(d.Seconds())
	m.mu.Unlock()
}

func (m *Metrics) decided(d time.Duration) {
	m.mu.Lock()
	m.decisions.observe(d.Seconds())
	m.mu.Unlock()
}

func (m *Metrics) setConnected(c bool) {
	m.mu.Lock()
	m.connected = c
	m.mu.Unlock()
}

func (m *Metrics) connFailed(call string) {
	m.mu.Lock()
	m.connFails[call]++
	m.mu.Unlock()
}

// Connected reports whether the Socket Mode connection is up.
func (m *Metrics) Connected() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.connected
}

// Calls returns how many times method was called, and how many of those
// calls Slack answered 429.
func (m *Metrics) Calls(method string) (calls, limited int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls[method], m.limited[method]
}

// WriteTo writes the metrics in Prometheus' text format, with the run and
// step gauges from summaries and runs.
func (m *Metrics) Write(w io.Writer, summaries []engine.RunSummary, active []*engine.Run) {
	m.mu.Lock()
	defer m.mu.Unlock()
	byState := map[string]int{}
	for _, s := range summaries {
		byState[string(s.State)]++
	}
	fmt.Fprintln(w, "# HELP gonogo_runs Runs in the store by state.\n# TYPE gonogo_runs gauge")
	for _, st := range []engine.RunState{engine.RunRunning, engine.RunWaiting, engine.RunCompleted, engine.RunAborted} {
		fmt.Fprintf(w, "gonogo_runs{state=%q} %d\n", st, byState[string(st)])
	}
	byStatus := map[engine.StepStatus]int{}
	for _, r := range active {
		for i := range r.Steps {
			byStatus[r.Steps[i].Status]++
		}
	}
	fmt.Fprintln(w, "# HELP gonogo_active_steps Steps of unfinished runs by status.\n# TYPE gonogo_active_steps gauge")
	for _, st := range []engine.StepStatus{engine.StepPending, engine.StepQueued, engine.StepRunning, engine.StepWaiting,
		engine.StepDone, engine.StepSkipped, engine.StepInterrupted, engine.StepAborted} {
		fmt.Fprintf(w, "gonogo_active_steps{status=%q} %d\n", st, byStatus[st])
	}
	fmt.Fprintln(w, "# HELP gonogo_slack_calls_total Slack Web API calls by method.\n# TYPE gonogo_slack_calls_total counter")
	for _, k := range slices.Sorted(maps.Keys(m.calls)) {
		fmt.Fprintf(w, "gonogo_slack_calls_total{method=%q} %d\n", k, m.calls[k])
	}
	fmt.Fprintln(w, "# HELP gonogo_slack_rate_limited_total Slack Web API calls answered 429, by method.\n# TYPE gonogo_slack_rate_limited_total counter")
	for _, k := range slices.Sorted(maps.Keys(m.limited)) {
		fmt.Fprintf(w, "gonogo_slack_rate_limited_total{method=%q} %d\n", k, m.limited[k])
	}
	fmt.Fprintf(w, "# HELP gonogo_slack_updates_deferred_total chat.update calls put off to stay inside Slack's rate tier.\n# TYPE gonogo_slack_updates_deferred_total counter\ngonogo_slack_updates_deferred_total %d\n", m.deferred)
	fmt.Fprintf(w, "# HELP gonogo_envelopes_replayed_total Envelopes acknowledged before a restart and carried out after it.\n# TYPE gonogo_envelopes_replayed_total counter\ngonogo_envelopes_replayed_total %d\n", m.replayed)
	m.acks.write(w, "gonogo_ack_latency_seconds", "Time from receiving a Socket Mode envelope to acknowledging it (after keeping it on disk).")
	m.decisions.write(w, "gonogo_decision_latency_seconds", "Time a checkpoint waited for its decision.")
	up := 0
	if m.connected {
		up = 1
	}
	fmt.Fprintf(w, "# HELP gonogo_slack_connected Whether the Socket Mode connection is up.\n# TYPE gonogo_slack_connected gauge\ngonogo_slack_connected %d\n", up)
	fmt.Fprintln(w, "# HELP gonogo_slack_connect_failures_total Failed attempts to connect to Slack, by call (auth.test, apps.connections.open).\n# TYPE gonogo_slack_connect_failures_total counter")
	for _, k := range slices.Sorted(maps.Keys(m.connFails)) {
		fmt.Fprintf(w, "gonogo_slack_connect_failures_total{call=%q} %d\n", k, m.connFails[k])
	}
}

type histogram struct {
	bounds []float64
	counts []int64
	sum    float64
	n      int64
}

func newHistogram(bounds ...float64) histogram {
	return histogram{bounds: bounds, counts: make([]int64, len(bounds))}
}

func (h *histogram) observe(v float64) {
	for i, b := range h.bounds {
		if v <= b {
			h.counts[i]++
		}
	}
	h.sum += v
	h.n++
}

func (h *histogram) write(w io.Writer, name, help string) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name)
	for i, b := range h.bounds {
		fmt.Fprintf(w, "%s_bucket{le=\"%g\"} %d\n", name, b, h.counts[i])
	}
	fmt.Fprintf(w, "%s_bucket{le=\"+Inf\"} %d\n%s_sum %g\n%s_count %d\n", name, h.n, name, h.sum, name, h.n)
}
