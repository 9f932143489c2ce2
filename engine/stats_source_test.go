package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/engine/statstest"
)

// recSource is a recorded store as a StatsSource.
type recSource struct {
	runs map[engine.RunID]engine.StatsRun
}

func newRecSource(rec *statstest.Recorded) *recSource {
	s := &recSource{runs: map[engine.RunID]engine.StatsRun{}}
	for _, r := range rec.Runs {
		s.runs[r.ID] = r.StatsRun()
	}
	return s
}

func (s *recSource) List(context.Context) ([]engine.RunSummary, error) {
	var out []engine.RunSummary
	for _, sr := range s.runs {
		out = append(out, sr.Run.Summary())
	}
	slices.SortFunc(out, engine.NewestFirst)
	return out, nil
}

func (s *recSource) RunWithJournal(_ context.Context, id engine.RunID) (*engine.Run, []engine.Event, error) {
	sr, ok := s.runs[id]
	if !ok {
		return nil, nil, fmt.Errorf("run %s: %w", id, engine.ErrNotFound)
	}
	return sr.Run, sr.Journal, nil
}

func (s *recSource) ArtifactVersions(_ context.Context, id engine.RunID, step, attempt int) ([][]byte, error) {
	vs, ok := s.runs[id].Versions[engine.ArtifactRef{Step: step, Attempt: attempt}]
	if !ok {
		return nil, engine.ErrNotFound
	}
	return vs, nil
}

// ownStats is a source that computes its stats itself, as a cluster
// does: over every run, though its List shows the newest only.
type ownStats struct {
	*recSource
	all []engine.StatsRun
}

func (o ownStats) Stats(_ context.Context, q engine.StatsQuery) (engine.Stats, error) {
	return engine.ComputeStats(o.all, q), nil
}

// StatsOf reads a source's runs for ComputeStats; a source that computes
// its stats itself (a cluster, whose List shows people only its newest
// runs) is asked for them instead.
func TestStatsOf(t *testing.T) {
	rec := statstest.Generate(40)
	q := engine.StatsQuery{Now: rec.Now}
	plain := newRecSource(rec)
	got, err := engine.StatsOf(t.Context(), plain, q)
	if err != nil {
		t.Fatal(err)
	}
	if !sameStats(got, engine.ComputeStats(rec.StatsRuns(), q)) {
		t.Errorf("a plain source's stats are not ComputeStats's over its runs")
	}
	newest := newRecSource(&statstest.Recorded{Runs: rec.Runs[30:], Now: rec.Now})
	got, err = engine.StatsOf(t.Context(), ownStats{newest, rec.StatsRuns()}, q)
	if err != nil {
		t.Fatal(err)
	}
	if got.Runs != 40 || !sameStats(got, engine.ComputeStats(rec.StatsRuns(), q)) {
		t.Errorf("a source computing its own stats: %d runs counted, want its own 40", got.Runs)
	}
}

func sameStats(a, b engine.Stats) bool {
	aj, _ := json.Marshal(a)
	bj, _ := json.Marshal(b)
	return string(aj) == string(bj)
}

// atOnce is a recorded store that reads many runs at once, giving only
// what the stats read; it counts its reads.
type atOnce struct {
	*recSource
	batches, oneByOne int
}

func (a *atOnce) StatsRuns(_ context.Context, ids []engine.RunID, fn func(engine.StatsRun) error) error {
	a.batches++
	for _, id := range ids {
		if sr, ok := a.runs[id]; ok {
			if err := fn(statstest.StatsFields(sr)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (a *atOnce) RunWithJournal(ctx context.Context, id engine.RunID) (*engine.Run, []engine.Event, error) {
	a.oneByOne++
	return a.recSource.RunWithJournal(ctx, id)
}

// A source that reads runs at once is read that way, by ReadStats and by
// the cache, in one call each and no run read on its own, to the same
// figures; a run listed and gone is left out, and only the runs not
// fresh are read again.
func TestStatsReadRunsAtOnce(t *testing.T) {
	rec := statstest.Generate(60)
	q := engine.StatsQuery{Now: rec.Now}
	src := &atOnce{recSource: newRecSource(rec)}
	want := engine.ComputeStats(rec.StatsRuns(), q)
	got, err := engine.ReadStats(t.Context(), src, q)
	if err != nil || !sameStats(got, want) || src.batches != 1 || src.oneByOne != 0 {
		t.Fatalf("ReadStats: %v, same %v, %d reads at once, %d one by one", err, sameStats(got, want), src.batches, src.oneByOne)
	}
	c := engine.NewStatsCache()
	if got, err = c.Read(t.Context(), src, q); err != nil || !sameStats(got, want) || src.batches != 2 || src.oneByOne != 0 {
		t.Fatalf("the cache: %v, same %v, %d reads at once, %d one by one", err, sameStats(got, want), src.batches, src.oneByOne)
	}
	gone := rec.Runs[5].ID
	delete(src.runs, gone)
	list := src.recSource.List
	src2 := &listedGone{atOnce: src, gone: gone, list: list}
	got, err = engine.ReadStats(t.Context(), src2, q)
	if err != nil || got.Runs != 59 {
		t.Errorf("a run listed and gone: %d runs, %v", got.Runs, err)
	}
}

// listedGone lists a run it no longer has.
type listedGone struct {
	*atOnce
	gone engine.RunID
	list func(context.Context) ([]engine.RunSummary, error)
}

func (l *listedGone) List(ctx context.Context) ([]engine.RunSummary, error) {
	out, err := l.list(ctx)
	return append(out, engine.RunSummary{ID: l.gone}), err
}
