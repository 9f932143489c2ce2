package storage

import (
	"context"
	"testing"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/engine/statstest"
)

// BenchmarkReadStats10000Runs is gonogo stats over 10,000 recorded runs
// read from a bbolt store: each run and its journal, and the versions of
// each edited artifact. journals-only, the baseline, reads the same runs
// and journals and computes nothing.
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
	b.Run("stats", func(b *testing.B) {
		for b.Loop() {
			s, err := engine.ReadStats(ctx, db, q)
			if err != nil || s.Runs != len(rec.Runs) {
				b.Fatalf("%d runs, %v", s.Runs, err)
			}
		}
	})
	b.Run("journals-only", func(b *testing.B) {
		for b.Loop() {
			list, err := db.List(ctx)
			if err != nil {
				b.Fatal(err)
			}
			for _, s := range list {
				if _, _, err := db.RunWithJournal(ctx, s.ID); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
