package engine

import (
	"errors"
	"testing"
	"time"
)

// quorumRun returns a one-step chain run waiting at its checkpoint, needing
// quorum approvals.
func quorumRun(t *testing.T, quorum int, excludeStarter bool) *Run {
	t.Helper()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	p := Plan{Input: InputChain, Source: "a", Steps: []PlanStep{{Skill: "a"}}}
	r := &Run{}
	step := func(evs []Event, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if r, err = Fold(r, evs); err != nil {
			t.Fatal(err)
		}
	}
	step(NewRun("r1", p, StartOptions{StartedBy: "U0", Quorum: quorum, ExcludeStarter: excludeStarter}, now))
	step(Start(r, 1, now))
	step(Finish(r, 1, 1, Finished{Result: ResultProduced, Artifact: true, Size: 10}, now))
	return r
}

func TestQuorum(t *testing.T) {
	approve := func(r *Run, actor, key string) (*Run, error) {
		evs, err := Decide(r, Decision{Kind: DecideApprove, Actor: actor, Step: 1, Attempt: 1, Key: key}, nil, time.Now())
		if err != nil {
			return r, err
		}
		return Fold(r, evs)
	}
	t.Run("two distinct approvals advance", func(t *testing.T) {
		r := quorumRun(t, 2, false)
		r, err := approve(r, "U1", "k1")
		if err != nil {
			t.Fatal(err)
		}
		if s := r.Step(1); s.Status != StepWaiting || len(Approvals(s)) != 1 {
			t.Fatalf("after one vote: %s with %v", s.Status, Approvals(s))
		}
		if _, err := approve(r, "U1", "k2"); !errors.Is(err, ErrDuplicate) {
			t.Fatalf("second vote by the same person: %v, want ErrDuplicate", err)
		}
		r, err = approve(r, "U2", "k3")
		if err != nil {
			t.Fatal(err)
		}
		if r.Step(1).Status != StepDone || r.State != RunCompleted {
			t.Fatalf("after two votes: step %s run %s", r.Step(1).Status, r.State)
		}
	})
	t.Run("the starter's vote may be excluded", func(t *testing.T) {
		r := quorumRun(t, 2, true)
		if _, err := approve(r, "U0", "k1"); !errors.Is(err, ErrForbidden) {
			t.Fatalf("starter vote: %v, want ErrForbidden", err)
		}
	})
	t.Run("any approver's abort stops the run before the quorum", func(t *testing.T) {
		r := quorumRun(t, 3, false)
		r, err := approve(r, "U1", "k1")
		if err != nil {
			t.Fatal(err)
		}
		evs, err := Decide(r, Decision{Kind: DecideAbort, Actor: "U2", Step: 1, Attempt: 1, Key: "k2"}, nil, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if r, err = Fold(r, evs); err != nil || r.State != RunAborted {
			t.Fatalf("abort: %v %s", err, r.State)
		}
	})
	t.Run("votes are per attempt", func(t *testing.T) {
		r := quorumRun(t, 2, false)
		r, _ = approve(r, "U1", "k1")
		evs, err := Decide(r, Decision{Kind: DecideRedo, Actor: "U2", Step: 1, Attempt: 1, Key: "k2"}, nil, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		r, _ = Fold(r, evs)
		evs, _ = Start(r, 1, time.Now())
		r, _ = Fold(r, evs)
		evs, _ = Finish(r, 1, 2, Finished{Result: ResultProduced}, time.Now())
		r, _ = Fold(r, evs)
		if v := Approvals(r.Step(1)); len(v) != 0 {
			t.Fatalf("attempt 2 starts with votes %v", v)
		}
	})
}
