package storage

import (
	"context"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// A pause, a rate-limit wait and a resume are kept on disk: the run read
// back after the store is reopened is the run committed, and its journal
// alone rebuilds it.
func TestPauseAndRateLimitSurviveReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openStore(t, dir, Options{})
	c := newClock()
	r := startRun(t, db, "r0001", testPlan(2), c)
	r.start(1)
	evs, err := engine.Pause(r.run, "U789", "", c.now())
	if err != nil {
		t.Fatal(err)
	}
	r.commit(evs, nil, nil, "")
	a := r.run.Step(1).Latest().N
	evs, err = engine.Finish(r.run, 1, a, engine.Finished{Result: engine.ResultFailed, Reason: "the agent reported an error: 429",
		ErrorKind: engine.AgentErrRateLimit, RateLimit: engine.RateLimit{Wait: time.Minute, Tries: 5}}, c.now())
	if err != nil {
		t.Fatal(err)
	}
	r.commit(evs, nil, nil, "")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openStore(t, dir, Options{})
	got, err := db.Load(ctx, "r0001")
	if err != nil {
		t.Fatal(err)
	}
	sameRun(t, "reopened", got, r.run)
	if l := got.Step(1).Latest(); !got.Paused || got.PausedBy != "U789" || l.ErrorKind != engine.AgentErrRateLimit || l.RetryAt.IsZero() || l.Retries != 5 {
		t.Fatalf("reopened: paused %v by %q, attempt %+v", got.Paused, got.PausedBy, l)
	}
	rebuilt, err := rebuild(ctx, db, "r0001")
	if err != nil {
		t.Fatal(err)
	}
	sameRun(t, "rebuilt", rebuilt, r.run)
}
