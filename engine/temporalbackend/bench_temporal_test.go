//go:build temporal

package temporalbackend

import (
	"fmt"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// BenchmarkDecide measures a decision through each backend, on the same
// fakes: a redo of a waiting step, from the call until it is answered
// (ns/op: the decision's latency), and from the answer until the new
// attempt's agent starts (dispatch-ns/op). Compare the two backends'
// figures as ratios; the Temporal server runs in-process.
func BenchmarkDecide(b *testing.B) {
	for _, mk := range []func(testing.TB) *env{bboltEnv, temporalEnv} {
		e := mk(b)
		b.Run(e.name, func(b *testing.B) {
			e.t = b
			id := e.start()
			<-e.runner.started
			waiting(b, e.b, id, 1, 1)
			var dispatch time.Duration
			b.ResetTimer()
			for i := range b.N {
				d := engine.Decision{Kind: engine.DecideRedo, Actor: "U-ana", Step: 1, Attempt: i + 1, Key: fmt.Sprintf("bench-%s-%d", id, i)}
				if _, err := e.b.Decide(b.Context(), id, d, nil); err != nil {
					b.Fatal(err)
				}
				answered := time.Now()
				b.StopTimer()
				<-e.runner.started
				dispatch += time.Since(answered)
				waiting(b, e.b, id, 1, i+2)
				b.StartTimer()
			}
			b.ReportMetric(float64(dispatch.Nanoseconds())/float64(b.N), "dispatch-ns/op")
		})
	}
}
