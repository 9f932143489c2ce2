//go:build temporal

package temporalbackend

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// BenchmarkDecide measures decisions through each backend on the same
// fakes, in the same run: a redo of a waiting step, from the call until it
// is answered (decide), and from the answer until the new attempt's agent
// starts (dispatch), 100 of each on bbolt and then on Temporal (the server
// in-process). It reports each backend's p50 and p99 and Temporal's as
// ratios to bbolt's. Run it with -benchtime 1x: an iteration is the whole
// measurement.
func BenchmarkDecide(b *testing.B) {
	const decisions = 100
	for b.Loop() {
		bolt := measureDecisions(b, bboltEnv, decisions)
		temp := measureDecisions(b, temporalEnv, decisions)
		for _, m := range []struct {
			what       string
			bolt, temp []time.Duration
		}{{"decide", bolt.decide, temp.decide}, {"dispatch", bolt.dispatch, temp.dispatch}} {
			for _, p := range []int{50, 99} {
				bp, tp := pct(m.bolt, p), pct(m.temp, p)
				b.ReportMetric(ms(bp), fmt.Sprintf("bbolt-%s-p%d-ms", m.what, p))
				b.ReportMetric(ms(tp), fmt.Sprintf("temporal-%s-p%d-ms", m.what, p))
				b.ReportMetric(float64(tp)/float64(max(bp, 1)), fmt.Sprintf("%s-p%d-temporal/bbolt", m.what, p))
			}
		}
	}
	b.ReportMetric(0, "ns/op") // an op is the whole measurement
}

type decisionTimes struct{ decide, dispatch []time.Duration }

// measureDecisions redoes the first step of a run n times through the
// backend mk makes, timing each decision and each dispatch.
func measureDecisions(b *testing.B, mk func(testing.TB) *env, n int) decisionTimes {
	e := mk(b)
	id := e.start()
	<-e.runner.started
	waiting(b, e.b, id, 1, 1)
	var out decisionTimes
	for i := range n {
		d := engine.Decision{Kind: engine.DecideRedo, Actor: "U-ana", Step: 1, Attempt: i + 1, Key: fmt.Sprintf("bench-%s-%d", id, i)}
		sent := time.Now()
		if _, err := e.b.Decide(b.Context(), id, d, nil); err != nil {
			b.Fatal(err)
		}
		answered := time.Now()
		<-e.runner.started
		out.decide = append(out.decide, answered.Sub(sent))
		out.dispatch = append(out.dispatch, time.Since(answered))
		waiting(b, e.b, id, 1, i+2)
	}
	return out
}

func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[min(max(i-1, 0), len(s)-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
