package engine

import (
	"testing"
	"time"
)

// standStep is a step of a standing test: its status and its latest
// attempt's result; retry says the step's rules retry a FAILED attempt.
func standStep(n int, status StepStatus, result Result, retry bool) Step {
	def := &StepDef{N: n, Skill: "skill"}
	if retry {
		def.Rules.OnError = ErrorPolicy{Kind: OnErrorRetry, Retries: 2}
	}
	st := &StepState{Status: status}
	if result != "" {
		st.Attempts = []Attempt{{N: 1, Result: result, Finished: time.Unix(1, 0)}}
	}
	return Step{StepDef: def, StepState: st}
}

// How a run stands is one answer for every front end. Of the steps that
// hold a waiting run, an interrupted one is named first, then a FAILED one
// people decide on, then one waiting for a decision, and a FAILED step
// gonogo retries by itself only when no person is waited on.
func TestStandingOf(t *testing.T) {
	cases := []struct {
		name   string
		state  RunState
		steps  []Step
		paused string
		stand  Stand
		at     int
		wait   int
	}{
		{"a step runs", RunRunning, []Step{standStep(1, StepRunning, "", false), standStep(2, StepPending, "", false)}, "", StandRunning, 0, 0},
		{"waiting at a checkpoint", RunWaiting, []Step{standStep(1, StepWaiting, ResultProduced, false)}, "", StandWaiting, 1, 1},
		{"halted on FAILED", RunWaiting, []Step{standStep(1, StepWaiting, ResultProduced, false), standStep(2, StepWaiting, ResultFailed, false)}, "", StandHalted, 2, 2},
		{"interrupted before FAILED", RunWaiting, []Step{standStep(1, StepWaiting, ResultFailed, false), standStep(2, StepInterrupted, "", false)}, "", StandInterrupted, 2, 2},
		{"a decision before a retry", RunWaiting, []Step{standStep(1, StepWaiting, ResultProduced, false), standStep(2, StepWaiting, ResultFailed, true)}, "", StandWaiting, 1, 1},
		{"only a retry", RunWaiting, []Step{standStep(1, StepDone, ResultProduced, false), standStep(2, StepWaiting, ResultFailed, true)}, "", StandRetrying, 2, 0},
		{"a rate limit waited out", RunWaiting, []Step{standStep(1, StepWaiting, ResultFailed, true)}, RateLimitActor, StandRetrying, 1, 0},
		{"paused by a person at a checkpoint", RunWaiting, []Step{standStep(1, StepWaiting, ResultProduced, false)}, "ana", StandPaused, 1, 1},
		{"paused by a person while a step runs", RunRunning, []Step{standStep(1, StepRunning, "", false)}, "ana", StandRunning, 0, 0},
		{"completed", RunCompleted, []Step{standStep(1, StepDone, ResultProduced, false)}, "", StandCompleted, 0, 0},
		{"aborted", RunAborted, []Step{standStep(1, StepAborted, ResultProduced, false)}, "", StandAborted, 0, 0},
	}
	for _, c := range cases {
		r := &Run{State: c.state, Steps: c.steps, Paused: c.paused != "", PausedBy: c.paused}
		st := StandingOf(r)
		at := 0
		if st.At != nil {
			at = st.At.N
		}
		if st.Stand != c.stand || at != c.at || len(st.Waiting) != c.wait {
			t.Errorf("%s: %s at step %d, %d waiting; want %s at step %d, %d waiting", c.name, st.Stand, at, len(st.Waiting), c.stand, c.at, c.wait)
		}
		if st.PausedByPerson != (c.paused != "" && c.paused != RateLimitActor) || st.RateLimited != (c.paused == RateLimitActor) {
			t.Errorf("%s: paused by a person %v, rate limited %v", c.name, st.PausedByPerson, st.RateLimited)
		}
	}
}
