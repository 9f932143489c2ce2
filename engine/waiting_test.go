package engine

import (
	"testing"
	"time"
)

// standing returns a run of len(steps) workflow steps standing as steps
// say: "pending", "waiting/PRODUCED", "waiting/FAILED", "retrying" (FAILED,
// its retry due), "interrupted", "running", "done".
func standing(t *testing.T, state RunState, steps ...string) *Run {
	t.Helper()
	p := Plan{Input: InputWorkflow, Source: "f"}
	for range steps {
		p.Steps = append(p.Steps, PlanStep{Skill: "a"})
	}
	evs, err := NewRun("r1", p, StartOptions{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	r, err := Fold(&Run{}, evs)
	if err != nil {
		t.Fatal(err)
	}
	r = r.Clone()
	for i, st := range steps {
		s := &r.Steps[i]
		a := Attempt{N: 1, Finished: time.Now()}
		switch st {
		case "pending":
			continue
		case "waiting/PRODUCED":
			s.Status, a.Result = StepWaiting, ResultProduced
		case "waiting/FAILED":
			s.Status, a.Result = StepWaiting, ResultFailed
		case "retrying":
			s.Status, a.Result = StepWaiting, ResultFailed
			s.Rules.OnError = ErrorPolicy{Kind: OnErrorRetry, Retries: 1, Backoff: time.Minute}
		case "interrupted":
			s.Status, a.Result = StepInterrupted, ResultFailed
		case "running":
			s.Status, a.Finished = StepRunning, time.Time{}
		case "done":
			s.Status, a.Result = StepDone, ResultProduced
		}
		s.Attempts = []Attempt{a}
	}
	r.State = state
	return r
}

func TestWhichStepWaits(t *testing.T) {
	n := func(s *Step) int {
		if s == nil {
			return 0
		}
		return s.N
	}
	for _, c := range []struct {
		name         string
		state        RunState
		steps        []string
		waitingOn    []int
		next, halted int
	}{
		{"a checkpoint", RunWaiting, []string{"done", "waiting/PRODUCED"}, []int{2}, 2, 2},
		{"a failure holds the run before a checkpoint", RunWaiting, []string{"waiting/PRODUCED", "waiting/FAILED"}, []int{1, 2}, 1, 2},
		{"an interruption holds the run", RunWaiting, []string{"waiting/PRODUCED", "interrupted"}, []int{1, 2}, 1, 2},
		{"a retry is nobody's decision", RunWaiting, []string{"retrying", "waiting/PRODUCED"}, []int{2}, 2, 1},
		{"only a retry", RunWaiting, []string{"retrying"}, nil, 0, 1},
		{"nothing is asked while a step runs", RunRunning, []string{"waiting/PRODUCED", "running"}, []int{1}, 0, 1},
		{"nothing waits", RunRunning, []string{"running", "pending"}, nil, 0, 0},
	} {
		r := standing(t, c.state, c.steps...)
		var on []int
		for _, s := range WaitingOn(r) {
			on = append(on, s.N)
		}
		if len(on) != len(c.waitingOn) || (len(on) > 0 && on[0] != c.waitingOn[0]) || n(NextDecision(r)) != c.next || n(Halted(r)) != c.halted {
			t.Errorf("%s: waiting on %v, next %d, halted %d; want %v, %d, %d", c.name, on, n(NextDecision(r)), n(Halted(r)),
				c.waitingOn, c.next, c.halted)
		}
	}
}

func TestGateAndOptionalFailures(t *testing.T) {
	r := standing(t, RunWaiting, "waiting/FAILED", "waiting/FAILED")
	r.Steps[0].Rules.OnError = ErrorPolicy{Kind: OnErrorGate}
	if !GateOnError(&r.Steps[0]) || GateOnError(&r.Steps[1]) {
		t.Fatal("only the step with on_error: gate is gated")
	}
	if got := Allowed(&r.Steps[0]); len(got) != len(gateOnError) {
		t.Fatalf("a gated failure allows %v", got)
	}
	s := &r.Steps[1]
	s.Status, s.Rules.Optional = StepSkipped, true
	if !OptionalFailed(s) {
		t.Fatal("an optional step given up on is not reported")
	}
	s.Decisions = []Decision{{Kind: DecideSkip, Attempt: 1}}
	if OptionalFailed(s) {
		t.Fatal("a step someone skipped is reported as given up on")
	}
}

func TestTitle(t *testing.T) {
	r := standing(t, RunRunning, "done", "running", "pending")
	s := &r.Steps[2]
	s.Effort, s.Parent = "the mobile flow", 1
	tt := Title(r, s)
	if tt.Heading() != "Step 3 of 3: a" || tt.String() != "Step 3 of 3: a (the mobile flow) [added by step 1]" {
		t.Fatalf("title %q, %q", tt.Heading(), tt.String())
	}
	tt.Skill = "*a*"
	if tt.Heading() != "Step 3 of 3: *a*" {
		t.Fatalf("a front end's own skill text: %q", tt.Heading())
	}
}
