package storage

import (
	"reflect"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// A run's approvers and deadlines are recorded with it, and what gonogo
// did about a deadline is journaled: a reopened store holds both.
func TestOversightAndDeadlinesSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	db := openStore(t, dir, Options{})
	c := newClock()
	o := engine.Oversight{Approvers: []string{"U1", "S2"}, RemindAfter: time.Hour, DecisionTimeout: 2 * time.Hour, OnTimeout: engine.TimeoutWait}
	evs, err := engine.NewRun("r1", testPlan(1), engine.StartOptions{StartedBy: "ann", Oversight: o}, c.now())
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{t: t, db: db, clock: c, run: &engine.Run{}}
	r.commit(evs, nil, nil, "")
	r.start(1)
	r.finish(1, engine.ResultProduced, "# A PRD\n\nDone.\n")
	evs, _ = engine.Overdue(r.run, r.run.Step(1).Latest().Finished.Add(3*time.Hour))
	if len(evs) != 2 {
		t.Fatalf("overdue: %+v", evs)
	}
	r.commit(evs, nil, nil, "")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openStore(t, dir, Options{})
	got, err := db.Load(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Oversight, &o) {
		t.Fatalf("stored oversight %+v, want %+v", got.Oversight, o)
	}
	if l := got.Step(1).Latest(); l.Reminded.IsZero() || l.TimedOut.IsZero() {
		t.Fatalf("the attempt does not say its deadlines were acted on: %+v", l)
	}
	rebuilt, err := rebuild(ctx, db, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rebuilt.Oversight, got.Oversight) || !rebuilt.Step(1).Latest().Reminded.Equal(got.Step(1).Latest().Reminded) {
		t.Fatalf("the journal rebuilds oversight %+v, attempt %+v", rebuilt.Oversight, rebuilt.Step(1).Latest())
	}
}
