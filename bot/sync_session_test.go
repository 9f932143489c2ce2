package bot

import (
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// The session's status follows the run's state, and a suspension counts
// from the end of the step people wait on; a person's pause has no wait
// to outlast.
func TestSessionStatus(t *testing.T) {
	now := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	ended := now.Add(-time.Second)
	step := func(st engine.StepStatus, a engine.Attempt) engine.Step {
		return engine.Step{StepDef: &engine.StepDef{N: 1}, StepState: &engine.StepState{Status: st, Attempts: []engine.Attempt{a}}}
	}
	running := step(engine.StepRunning, engine.Attempt{N: 1, Started: now.Add(-time.Minute)})
	waiting := step(engine.StepWaiting, engine.Attempt{N: 1, Result: engine.ResultProduced, Finished: ended})
	pending := engine.Step{StepDef: &engine.StepDef{N: 2}, StepState: &engine.StepState{Status: engine.StepPending}}
	for _, c := range []struct {
		name  string
		r     engine.Run
		want  string
		since time.Time
	}{
		{"awaiting Start", engine.Run{State: engine.RunRunning, Paused: true, PausedBy: engine.AwaitStartActor, Steps: []engine.Step{pending}}, "", time.Time{}},
		{"a step runs", engine.Run{State: engine.RunRunning, Steps: []engine.Step{running, pending}}, sessionProcessing, time.Time{}},
		{"between steps", engine.Run{State: engine.RunRunning, Steps: []engine.Step{pending}}, sessionProcessing, time.Time{}},
		{"at a checkpoint", engine.Run{State: engine.RunWaiting, Steps: []engine.Step{waiting, pending}}, sessionSuspended, ended},
		{"paused", engine.Run{State: engine.RunRunning, Paused: true, PausedBy: "U1", Steps: []engine.Step{pending}}, sessionSuspended, time.Time{}},
		{"ended", engine.Run{State: engine.RunCompleted, Steps: []engine.Step{pending}}, sessionClosed, time.Time{}},
	} {
		got, since := sessionStatus(&c.r, now)
		if got != c.want || !since.Equal(c.since) {
			t.Errorf("%s: %q since %v, want %q since %v", c.name, got, since, c.want, c.since)
		}
	}
}

// A session's title is the run's, within Slack's 200 characters.
func TestSessionTitle(t *testing.T) {
	r := &engine.Run{Input: engine.InputChain, Plan: engine.Plan{Source: "deliver-prd -> deliver-user-stories"}}
	if got, want := SessionTitle(r), "gonogo chain run: deliver-prd -> deliver-user-stories"; got != want {
		t.Errorf("title %q, want %q", got, want)
	}
	r.Plan.Source = strings.Repeat("deliver-prd -> ", 30)
	if got := SessionTitle(r); textLen(got) != maxSessionTitle {
		t.Errorf("a long run's title has %d characters, want %d", textLen(got), maxSessionTitle)
	}
}
