package storage

import (
	"context"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/engine/statstest"
)

// oneByOne is a store read as a source that cannot read runs at once: a
// run's snapshot, its journal and each edited artifact's versions, each
// in a transaction of its own, every record decoded whole.
type oneByOne struct{ engine.StatsSource }

// BenchmarkReadStats10000Runs is gonogo stats over 10,000 recorded runs
// read from a bbolt store (read-and-compute: engine.ReadStats, which
// reads the runs at once through DB.StatsRuns). Its baselines, in the
// same run: compute-only, ComputeStats over the same runs already read;
// one-by-one, ReadStats reading each run on its own, whole. The
// x-compute-only metric is read-and-compute's time over compute-only's.
func BenchmarkReadStats10000Runs(b *testing.B) {
	ctx := context.Background()
	rec := statstest.Generate(10000)
	db, err := Open(b.TempDir(), Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for _, r := range rec.Runs {
		for _, c := range r.Commits {
			if err := db.Commit(ctx, c); err != nil {
				b.Fatal(err)
			}
		}
	}
	q := engine.StatsQuery{Now: rec.Now}
	var runs []engine.StatsRun
	if err := db.StatsRuns(ctx, statsIDs(b, db), func(sr engine.StatsRun) error {
		runs = append(runs, sr)
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	rec = nil // what the store holds is all the stats read
	var compute time.Duration
	b.Run("compute-only", func(b *testing.B) {
		for b.Loop() {
			if s := engine.ComputeStats(runs, q); s.Runs != len(runs) {
				b.Fatalf("%d runs of %d", s.Runs, len(runs))
			}
		}
		compute = b.Elapsed() / time.Duration(b.N)
	})
	runs = nil
	read := func(src engine.StatsSource) func(b *testing.B) {
		return func(b *testing.B) {
			for b.Loop() {
				s, err := engine.ReadStats(ctx, src, q)
				if err != nil || s.Runs != 10000 {
					b.Fatalf("%d runs, %v", s.Runs, err)
				}
			}
			if compute > 0 {
				b.ReportMetric(float64(b.Elapsed()/time.Duration(b.N))/float64(compute), "x-compute-only")
			}
		}
	}
	b.Run("read-and-compute", read(db))
	b.Run("one-by-one", read(oneByOne{db}))
}

func statsIDs(tb testing.TB, db *DB) []engine.RunID {
	tb.Helper()
	list, err := db.List(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	ids := make([]engine.RunID, len(list))
	for i, s := range list {
		ids[i] = s.ID
	}
	return ids
}
