package temporalbackend

import (
	"context"
	"math"

	"github.com/gonogo/gonogo/engine"
)

// everyRun is the cluster as engine.ReadStats reads it: every run in the
// visibility store, where a listing for people shows the newest
// listLimit.
type everyRun struct{ *Backend }

func (e everyRun) List(ctx context.Context) ([]engine.RunSummary, error) {
	return e.Backend.List(ctx, math.MaxInt)
}

// Stats computes gonogo stats over every run on the cluster, from each
// run's journal, as engine.ReadStats does for a store.
func (b *Backend) Stats(ctx context.Context, q engine.StatsQuery) (engine.Stats, error) {
	return engine.ReadStats(ctx, everyRun{b}, q)
}

// StatsSource is every run on the cluster, as Stats reads them.
func (r *Reader) StatsSource() engine.StatsSource { return everyRun{r.b} }

// Stats computes gonogo stats over every run on the cluster.
func (r *Reader) Stats(ctx context.Context, q engine.StatsQuery) (engine.Stats, error) {
	return r.b.Stats(ctx, q)
}
