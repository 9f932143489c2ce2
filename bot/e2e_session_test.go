package bot_test

import (
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/fakeslack"
)

// waitSession waits until the thread's agent session has been given the
// statuses want, in that order, and returns it.
func waitSession(t *testing.T, srv *fakeslack.Server, thread string, want ...string) fakeslack.AgentSession {
	t.Helper()
	var got fakeslack.AgentSession
	err := srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool {
		got, _ = st.Session(channel, thread)
		return slices.Equal(got.StatusList(), want)
	})
	if err != nil {
		t.Fatalf("the session's statuses are %v, want %v: %v", got.StatusList(), want, err)
	}
	return got
}

// A run's thread is an agent session whose status follows the run:
// processing while a step runs, suspended while a checkpoint waits,
// processing again once approved, closed when the run ends; its title is
// the run's, and its initiator the run's starter.
func TestSessionFollowsTheRun(t *testing.T) {
	srv := newSlack(t)
	runner := &scriptedRunner{}
	release1 := runner.holdSkill("deliver-prd")
	release2 := runner.holdSkill("deliver-user-stories")
	defer release1()
	defer release2()
	h := start(t, srv, t.TempDir(), runner)

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories -- mobile checkout")
	running := waitStep(t, srv, 1, "Running", "Cancel")
	s := waitSession(t, srv, running.ThreadTS, "processing")
	if want := "gonogo chain run: deliver-prd -> deliver-user-stories -- mobile checkout"; s.Title != want || s.Initiator != starter {
		t.Errorf("session titled %q started by %s, want %q by %s", s.Title, s.Initiator, want, starter)
	}
	release1()
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approve")
	waitSession(t, srv, running.ThreadTS, "processing", "suspended")
	click(t, srv, starter, step1, "Approve")
	waitStep(t, srv, 2, "Running", "Cancel")
	waitSession(t, srv, running.ThreadTS, "processing", "suspended", "processing")
	release2()
	step2 := waitStep(t, srv, 2, "deliver-user-stories", "Approve")
	waitSession(t, srv, running.ThreadTS, "processing", "suspended", "processing", "suspended")
	click(t, srv, starter, step2, "Approve")
	waitText(t, srv, "Run complete")
	waitSession(t, srv, running.ThreadTS, "processing", "suspended", "processing", "suspended", "closed")
	if r := h.onlyRun(); r.State != engine.RunCompleted {
		t.Errorf("run state %s, want completed", r.State)
	}
}

// Slack's Stop button on the session cancels the running step as its
// Cancel button does: the step is offered for redo, the run waits, and
// the session leaves processing. A person who may not decide stops
// nothing.
func TestSessionStopCancelsTheRunningStep(t *testing.T) {
	srv := newSlack(t)
	runner := &scriptedRunner{}
	release := runner.holdSkill("deliver-prd")
	defer release()
	h := start(t, srv, t.TempDir(), runner, withApprovers(starter))

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	running := waitStep(t, srv, 1, "Running", "Cancel")
	waitSession(t, srv, running.ThreadTS, "processing")

	env, err := srv.StopSession(channel, running.ThreadTS, "U0STRANGER")
	if err != nil {
		t.Fatal(err)
	}
	ack(t, srv, env)
	waitEphemeral(t, srv, "U0STRANGER", "Only <@"+starter+">")
	if r := h.onlyRun(); r.Steps[0].Status != engine.StepRunning {
		t.Fatalf("a stranger's Stop left step 1 %s, want running", r.Steps[0].Status)
	}

	env, err = srv.StopSession(channel, running.ThreadTS, starter)
	if err != nil {
		t.Fatal(err)
	}
	ack(t, srv, env)
	halt := waitText(t, srv, "Run halted", "cancelled by", "Redo", "Abort")
	if halt.ThreadTS != running.ThreadTS {
		t.Error("the halt message is not in the run's thread")
	}
	waitSession(t, srv, running.ThreadTS, "processing", "suspended")
	r := h.onlyRun()
	a := r.Steps[0].Latest()
	if a.Result != engine.ResultFailed || !strings.Contains(a.Reason, "cancelled by "+starter) {
		t.Errorf("attempt = %s %q, want FAILED cancelled by %s", a.Result, a.Reason, starter)
	}
	if r.Finished() {
		t.Errorf("the run ended (%s): Stop cancels the step, not the run", r.State)
	}
}

// A workspace or app without agent sessions refuses the method: gonogo
// says why once in its log, never calls it again, and the run's thread
// is as before (here in a workspace that does not stream either: the
// loading status shows the progress from the step's start).
func TestSessionRefusedKeepsTheLoadingStatus(t *testing.T) {
	srv := newSlack(t)
	srv.Fail("agents.sessions.setStatus", 1000, "not_allowed")
	srv.Fail("chat.startStream", 1000, "not_allowed")
	logs := &ldLog{}
	runner := &scriptedRunner{}
	release := runner.holdSkill("deliver-prd")
	defer release()
	h := start(t, srv, t.TempDir(), runner, withLog(slog.New(slog.NewTextHandler(logs, nil))))

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	running := waitStep(t, srv, 1, "Running", "Cancel")
	if err := srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool {
		ss := st.Statuses(channel, running.ThreadTS)
		return len(ss) > 0 && strings.Contains(ss[len(ss)-1].Status, "is running step 1/2")
	}); err != nil {
		t.Fatalf("no loading status while step 1 runs: %v", err)
	}
	release()
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approve")
	click(t, srv, starter, step1, "Approve")
	step2 := waitStep(t, srv, 2, "deliver-user-stories", "Approve")
	click(t, srv, starter, step2, "Approve")
	waitText(t, srv, "Run complete")
	if r := h.onlyRun(); r.State != engine.RunCompleted {
		t.Errorf("run state %s, want completed", r.State)
	}
	if n := len(srv.Calls("agents.sessions.setStatus")); n != 1 {
		t.Errorf("agents.sessions.setStatus called %d times, want once: a refusal stops the calls", n)
	}
	if n := strings.Count(logs.String(), "refused agent sessions"); n != 1 {
		t.Errorf("%d log lines say the sessions were refused, want 1:\n%s", n, logs)
	}
	if _, ok := srv.Session(channel, running.ThreadTS); ok {
		t.Error("a refused session was recorded")
	}
}
