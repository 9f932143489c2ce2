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
