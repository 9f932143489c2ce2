package bot

import (
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/gonogo/gonogo/engine"
)

// Metrics counts what the bot does, for /metrics (Prometheus text format).
type Metrics struct {
	set       *metrics.Set
	calls     labeled                      // Slack Web API calls by method
	limited   labeled                      // 429 answers by method
	connFails labeled                      // failed attempts to connect, by Slack call
	acks      *metrics.PrometheusHistogram // envelope-to-ack latency
	decisions *metrics.PrometheusHistogram // checkpoint-to-decision latency
	deferred  *metrics.Counter             // chat.update calls put off by the update budget
	replayed  *metrics.Counter             // envelopes acknowledged before a restart and carried out after it
	connected atomic.Bool
	// slackConns is how many Socket Mode connections Slack counted for
	// the app at the last hello.
	slackConns atomic.Int64
}

// Metric names. They are part of what gonogo serve offers: the README's
// Metrics list names each one.
const (
	metricRuns            = "gonogo_runs"
	metricActiveSteps     = "gonogo_active_steps"
	metricCalls           = "gonogo_slack_calls_total"
	metricRateLimited     = "gonogo_slack_rate_limited_total"
	metricDeferred        = "gonogo_slack_updates_deferred_total"
	metricReplayed        = "gonogo_envelopes_replayed_total"
	metricAckLatency      = "gonogo_ack_latency_seconds"
	metricDecisionLatency = "gonogo_decision_latency_seconds"
	metricConnected       = "gonogo_slack_connected"
	metricConnectFails    = "gonogo_slack_connect_failures_total"
	metricConnections     = "gonogo_slack_connections"
)

func init() {
	// # TYPE lines let Prometheus tell counters, gauges and histograms
	// apart.
	metrics.ExposeMetadata(true)
}

// NewMetrics returns empty metrics.
func NewMetrics() *Metrics {
	s := metrics.NewSet()
	m := &Metrics{
		set:       s,
		calls:     labeled{set: s, name: metricCalls, label: "method"},
		limited:   labeled{set: s, name: metricRateLimited, label: "method"},
		connFails: labeled{set: s, name: metricConnectFails, label: "call"},
		acks:      s.NewPrometheusHistogramExt(metricAckLatency, []float64{0.0005, 0.001, 0.002, 0.005, 0.01, 0.05, 0.1, 1}),
		decisions: s.NewPrometheusHistogramExt(metricDecisionLatency, []float64{10, 60, 300, 900, 3600, 4 * 3600, 24 * 3600}),
		deferred:  s.NewCounter(metricDeferred),
		replayed:  s.NewCounter(metricReplayed),
	}
	s.NewGauge(metricConnected, func() float64 {
		if m.connected.Load() {
			return 1
		}
		return 0
	})
	s.NewGauge(metricConnections, func() float64 { return float64(m.slackConns.Load()) })
	return m
}

// labeled is a counter with one label, whose values are known only as
// they come (Slack methods, connection calls); each value's counter is
// made once and found again without allocating.
type labeled struct {
	set   *metrics.Set
	name  string
	label string
	by    sync.Map // label value -> *metrics.Counter
}

func (l *labeled) counter(value string) *metrics.Counter {
	if c, ok := l.by.Load(value); ok {
		return c.(*metrics.Counter)
	}
	c := l.set.GetOrCreateCounter(l.name + "{" + l.label + "=" + strconv.Quote(value) + "}")
	l.by.Store(value, c)
	return c
}

func (l *labeled) get(value string) int64 {
	if c, ok := l.by.Load(value); ok {
		return int64(c.(*metrics.Counter).Get())
	}
	return 0
}

func (m *Metrics) call(method string)        { m.calls.counter(method).Inc() }
func (m *Metrics) rateLimited(method string) { m.limited.counter(method).Inc() }
func (m *Metrics) updateDeferred()           { m.deferred.Inc() }
func (m *Metrics) replaying(n int)           { m.replayed.Add(n) }
func (m *Metrics) acked(d time.Duration)     { m.acks.Update(d.Seconds()) }
func (m *Metrics) decided(d time.Duration)   { m.decisions.Update(d.Seconds()) }
func (m *Metrics) setConnected(c bool)       { m.connected.Store(c) }
func (m *Metrics) connFailed(call string)    { m.connFails.counter(call).Inc() }
func (m *Metrics) setSlackConnections(n int) { m.slackConns.Store(int64(n)) }

// Connected reports whether the Socket Mode connection is up.
func (m *Metrics) Connected() bool { return m.connected.Load() }

// Calls returns how many times method was called, and how many of those
// calls Slack answered 429.
func (m *Metrics) Calls(method string) (calls, limited int64) {
	return m.calls.get(method), m.limited.get(method)
}

// Write writes the metrics in Prometheus' text format: the run and step
// gauges from summaries and runs, the bot's counters and histograms, and
// the Go runtime's and the process's metrics.
func (m *Metrics) Write(w io.Writer, summaries []engine.RunSummary, active []*engine.Run) {
	store := metrics.NewSet()
	byState := map[engine.RunState]int{}
	for _, s := range summaries {
		byState[s.State]++
	}
	for _, st := range []engine.RunState{engine.RunRunning, engine.RunWaiting, engine.RunCompleted, engine.RunAborted} {
		store.NewGauge(metricRuns+`{state=`+strconv.Quote(string(st))+`}`, nil).Set(float64(byState[st]))
	}
	byStatus := map[engine.StepStatus]int{}
	for _, r := range active {
		for i := range r.Steps {
			byStatus[r.Steps[i].Status]++
		}
	}
	for _, st := range []engine.StepStatus{engine.StepPending, engine.StepQueued, engine.StepRunning, engine.StepWaiting,
		engine.StepDone, engine.StepSkipped, engine.StepInterrupted, engine.StepAborted} {
		store.NewGauge(metricActiveSteps+`{status=`+strconv.Quote(string(st))+`}`, nil).Set(float64(byStatus[st]))
	}
	store.WritePrometheus(w)
	m.set.WritePrometheus(w)
	metrics.WriteProcessMetrics(w)
	metrics.WriteFDMetrics(w)
}
