package bot

import (
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// BenchmarkAcked measures what recording one acknowledgement's latency
// costs the Socket Mode loop.
func BenchmarkAcked(b *testing.B) {
	m := NewMetrics()
	b.ReportAllocs()
	for b.Loop() {
		m.acked(1500 * time.Microsecond)
	}
}

// BenchmarkAckedParallel is BenchmarkAcked with acknowledgements recorded
// from several goroutines at once, as kept envelopes are.
func BenchmarkAckedParallel(b *testing.B) {
	m := NewMetrics()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.acked(1500 * time.Microsecond)
		}
	})
}

// TestMetricsExposition checks /metrics' text: every family is typed
// once, named by Prometheus' conventions, and carries what was counted.
func TestMetricsExposition(t *testing.T) {
	m := NewMetrics()
	m.call("chat.postMessage")
	m.call("chat.postMessage")
	m.rateLimited("chat.postMessage")
	m.updateDeferred()
	m.replaying(3)
	m.acked(1500 * time.Microsecond)
	m.decided(2 * time.Minute)
	m.setConnected(true)
	m.connFailed("auth.test")
	summaries := []engine.RunSummary{{State: engine.RunWaiting}, {State: engine.RunCompleted}, {State: engine.RunCompleted}}
	active := []*engine.Run{{Steps: []engine.Step{{StepState: &engine.StepState{Status: engine.StepDone}}, {StepState: &engine.StepState{Status: engine.StepWaiting}}}}}
	var b strings.Builder
	m.Write(&b, summaries, active)
	text := b.String()

	for _, want := range []string{
		"# TYPE gonogo_runs gauge\n", `gonogo_runs{state="completed"} 2` + "\n", `gonogo_runs{state="aborted"} 0` + "\n",
		"# TYPE gonogo_active_steps gauge\n", `gonogo_active_steps{status="waiting"} 1` + "\n",
		"# TYPE gonogo_slack_calls_total counter\n", `gonogo_slack_calls_total{method="chat.postMessage"} 2` + "\n",
		`gonogo_slack_rate_limited_total{method="chat.postMessage"} 1` + "\n",
		"gonogo_slack_updates_deferred_total 1\n", "gonogo_envelopes_replayed_total 3\n",
		"# TYPE gonogo_ack_latency_seconds histogram\n",
		`gonogo_ack_latency_seconds_bucket{le="0.001"} 0` + "\n", `gonogo_ack_latency_seconds_bucket{le="0.002"} 1` + "\n",
		`gonogo_ack_latency_seconds_bucket{le="+Inf"} 1` + "\n", "gonogo_ack_latency_seconds_sum 0.0015\n", "gonogo_ack_latency_seconds_count 1\n",
		`gonogo_decision_latency_seconds_bucket{le="60"} 0` + "\n", `gonogo_decision_latency_seconds_bucket{le="300"} 1` + "\n",
		"gonogo_decision_latency_seconds_count 1\n",
		"# TYPE gonogo_slack_connected gauge\n", "gonogo_slack_connected 1\n",
		`gonogo_slack_connect_failures_total{call="auth.test"} 1` + "\n",
		"go_goroutines ", "go_memstats_alloc_bytes ", "process_cpu_seconds_total ", "process_resident_memory_bytes ", "process_open_fds ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, text)
		}
	}
	if c, l := m.Calls("chat.postMessage"); c != 2 || l != 1 {
		t.Errorf("Calls = %d, %d; want 2, 1", c, l)
	}

	typed := map[string]string{}
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			if _, dup := typed[f[2]]; dup {
				t.Errorf("%s is typed twice", f[2])
			}
			typed[f[2]] = f[3]
		}
	}
	for name, typ := range typed {
		if !strings.HasPrefix(name, "gonogo_") {
			continue
		}
		if counter := strings.HasSuffix(name, "_total"); counter != (typ == "counter") {
			t.Errorf("%s is a %s: only counters, and all of them, end in _total", name, typ)
		}
		if strings.Contains(name, "latency") && !strings.HasSuffix(name, "_seconds") {
			t.Errorf("%s is a duration not in seconds", name)
		}
	}
	if len(typed) < 10 {
		t.Errorf("only %d metric families typed:\n%s", len(typed), text)
	}
}
