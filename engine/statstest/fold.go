package statstest

import (
	"testing"

	"github.com/gonogo/gonogo/engine"
)

// Folded is a run and its journal, made in a test from the events the
// engine's transitions return, as a store records them:
//
//	f := statstest.Fold(t)
//	f.Apply(engine.NewRun(id, plan, opts, at))
//	f.Apply(engine.Start(f.Run, 1, at))
//	stats := engine.ComputeStats([]engine.StatsRun{{Run: f.Run, Journal: f.Journal}}, q)
type Folded struct {
	t       testing.TB
	Run     *engine.Run
	Journal []engine.Event
}

// Fold starts an empty run and journal; a move the engine refuses fails t.
func Fold(t testing.TB) *Folded {
	return &Folded{t: t, Run: &engine.Run{}}
}

// Apply folds evs, what a transition returned, into the run and appends
// them to the journal; err, a transition's refusal, fails the test, and so
// does a fold the engine refuses.
func (f *Folded) Apply(evs []engine.Event, err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
	r, err := engine.Fold(f.Run, evs)
	if err != nil {
		f.t.Fatal(err)
	}
	f.Run = r
	f.Journal = append(f.Journal, evs...)
}
