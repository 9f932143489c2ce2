package engine_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/engine/statstest"
)

// partial is r as its first k commits left it: not finished yet.
func partial(r statstest.Run, k int) engine.StatsRun {
	return statstest.Run{ID: r.ID, Commits: r.Commits[:k]}.StatsRun()
}

// counted is a source that counts the runs read.
type counted struct {
	*recSource
	reads int
}

func (c *counted) RunWithJournal(ctx context.Context, id engine.RunID) (*engine.Run, []engine.Event, error) {
	c.reads++
	return c.recSource.RunWithJournal(ctx, id)
}

// statsNow are src's runs as ComputeStats reads them, in its listing's
// order.
func (s *recSource) statsNow(t *testing.T) []engine.StatsRun {
	list, _ := s.List(t.Context())
	var out []engine.StatsRun
	for _, x := range list {
		out = append(out, s.runs[x.ID])
	}
	return out
}

// read reads src through cache for q, and checks that the figures are
// ComputeStats's over src's runs and that it read want runs.
func read(t *testing.T, what string, cache *engine.StatsCache, src *counted, q engine.StatsQuery, want int) {
	t.Helper()
	src.reads = 0
	got, err := cache.Read(t.Context(), src, q)
	if err != nil {
		t.Fatal(err)
	}
	if w := engine.ComputeStats(src.statsNow(t), q); !sameStats(got, w) {
		t.Errorf("%s: the cache's figures are not ComputeStats's:\ngot  %+v\nwant %+v", what, got.Total, w.Total)
	}
	if src.reads != want {
		t.Errorf("%s: %d runs read, want %d", what, src.reads, want)
	}
}

// The cache gives what ComputeStats gives over the same runs, reading
// again only the runs not finished: after runs move on and finish, after
// runs are added and removed, for another period start, and for an end
// before some events.
func TestStatsCacheIsComputeStats(t *testing.T) {
	rec := statstest.Generate(85)
	src := &counted{recSource: &recSource{runs: map[engine.RunID]engine.StatsRun{}}}
	for i, r := range rec.Runs[:70] {
		src.runs[r.ID] = r.StatsRun()
		if i%7 == 0 && len(r.Commits) > 2 {
			src.runs[r.ID] = partial(r, 2) // started, not finished
		}
	}
	active := 0
	for _, sr := range src.runs {
		if !sr.Run.Finished() {
			active++
		}
	}
	if active < 5 {
		t.Fatalf("%d runs not finished: too few to test", active)
	}
	cache := engine.NewStatsCache()
	q := engine.StatsQuery{Now: rec.Now}
	read(t, "the first read", cache, src, q, 70)
	read(t, "the next, nothing changed", cache, src, q, active)

	for i, r := range rec.Runs[:70] {
		if !src.runs[r.ID].Run.Finished() {
			src.runs[r.ID] = r.StatsRun() // moved on and finished
		}
		if i%10 == 3 {
			delete(src.runs, r.ID)
		}
	}
	for _, r := range rec.Runs[70:] {
		src.runs[r.ID] = r.StatsRun()
	}
	read(t, "after runs changed, came and went", cache, src, q, active-1+15) // one removed run was active
	read(t, "the next, nothing changed", cache, src, q, 0)

	since := statstest.T0.Add(10 * 24 * time.Hour)
	q2 := engine.StatsQuery{Since: since, Now: rec.Now}
	younger := 0
	list, _ := src.List(t.Context())
	for _, s := range list {
		if !s.Updated.Before(since) {
			younger++
		}
	}
	read(t, "for another period", cache, src, q2, younger)
	read(t, "the next, for that period", cache, src, q2, 0)
	// Runs whose events all came before the new end hold; the others are
	// read again.
	q3 := engine.StatsQuery{Since: since, Now: statstest.T0.Add(15 * 24 * time.Hour)}
	later := 0
	for _, s := range list {
		if s.Updated.After(q3.Now) {
			later++
		}
	}
	if later == 0 || later == younger {
		t.Fatalf("%d of %d runs end after %v: the end tests nothing", later, younger, q3.Now)
	}
	read(t, "for an end before some events", cache, src, q3, later)
}

// Add and Result without reading: a run added again at the same journal
// length is not counted twice; added again longer, it replaces its part.
func TestStatsCacheAddReplaces(t *testing.T) {
	rec := statstest.Generate(12)
	q := engine.StatsQuery{Now: rec.Now}
	cache := engine.NewStatsCache()
	var ids []engine.RunID
	var runs []engine.StatsRun
	for _, r := range rec.Runs {
		sr := partial(r, 2)
		cache.Add(sr, q)
		cache.Add(sr, q)
		ids, runs = append(ids, r.ID), append(runs, sr)
	}
	if !sameStats(cache.Result(ids, q), engine.ComputeStats(runs, q)) {
		t.Errorf("the runs' first commits: the cache's figures are not ComputeStats's")
	}
	for i, r := range rec.Runs {
		runs[i] = r.StatsRun()
		cache.Add(runs[i], q)
	}
	if got := cache.Result(ids, q); !sameStats(got, engine.ComputeStats(runs, q)) || got.Runs != 12 {
		t.Errorf("the runs whole: the cache's figures are not ComputeStats's (%d runs)", got.Runs)
	}
	if got := cache.Result(slices.Clip(ids[:4]), q); !sameStats(got, engine.ComputeStats(runs[:4], q)) {
		t.Errorf("four of the runs: the cache's figures are not ComputeStats's")
	}
}
