package bot_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/fakeslack"
)

// Restarts: the bot, the engine and the store stop and start again on the
// same data directory, while the fake Slack (and every message it holds)
// stays.

func TestRestartWithAWaitingRunKeepsItsButtons(t *testing.T) {
	srv := newSlack(t)
	dir := t.TempDir()
	h := start(t, srv, dir, &scriptedRunner{})

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approve")
	waitFiles(t, srv, step1.ThreadTS, "01-deliver-prd.md")
	settle(srv, 50*time.Millisecond, time.Second)
	posts := len(srv.Calls("chat.postMessage"))
	h.stop()

	h = start(t, srv, dir, &scriptedRunner{})
	settle(srv, 100*time.Millisecond, 2*time.Second)
	if n := len(srv.Calls("chat.postMessage")); n != posts {
		t.Errorf("the restart posted %d messages, want none", n-posts)
	}
	// The message posted before the restart: its button still works.
	click(t, srv, starter, step1, "Approve")
	step2 := waitStep(t, srv, 2, "deliver-user-stories", "Approve")
	click(t, srv, starter, step2, "Approve")
	waitText(t, srv, "Run complete")

	var roots int
	for _, m := range srv.Messages(channel) {
		if m.FromBot && m.ThreadTS == "" {
			roots++
		}
	}
	if roots != 1 {
		t.Errorf("%d headers, want 1", roots)
	}
	for n, prefix := range []string{"*Step 1 of 2", "*Step 2 of 2"} {
		if got := len(botMessages(srv, prefix)); got != 1 {
			t.Errorf("%d messages for step %d, want 1", got, n+1)
		}
	}
	if got := len(srv.Files(channel, step1.ThreadTS)); got != 2 {
		t.Errorf("%d files attached, want 2 (one per step)", got)
	}
	if r := h.onlyRun(); r.State != engine.RunCompleted {
		t.Errorf("run is %s, want completed", r.State)
	}
}

func TestRestartWithARunningStepAnnouncesItInterrupted(t *testing.T) {
	srv := newSlack(t)
	dir := t.TempDir()
	first := &scriptedRunner{}
	release := first.holdSkill("deliver-prd")
	defer release()
	h := start(t, srv, dir, first)

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	waitStep(t, srv, 1, "Running", "Cancel")
	id := h.onlyRun().ID
	h.stop() // the step is still running in the store

	h = start(t, srv, dir, &scriptedRunner{})
	if r := h.onlyRun(); r.Steps[0].Status != engine.StepInterrupted {
		t.Fatalf("after the restart step 1 is %s, want interrupted", r.Steps[0].Status)
	}
	notice := waitMsg(t, srv, "announcing the interrupted step", func(m fakeslack.Message) bool {
		return m.FromBot && strings.Contains(m.Text, "interrupted") && !strings.HasPrefix(m.Text, "*Step")
	})
	if got := strings.Join(labels(notice), ","); got != "Redo,Abort" {
		t.Errorf("the announcement offers %q, want Redo and Abort", got)
	}
	waitStep(t, srv, 1, "interrupted", "Redo", "Abort")

	click(t, srv, starter, notice, "Redo")
	modal := waitView(t, srv, 0)
	env, err := srv.SubmitView(starter, modal.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	ack(t, srv, env)
	step1 := waitStep(t, srv, 1, "attempt 2", "Approve")
	r := h.onlyRun()
	if r.ID != id || r.Steps[0].Status != engine.StepWaiting || r.Steps[0].Latest().N != 2 {
		t.Errorf("after the redo: step 1 is %s at attempt %d", r.Steps[0].Status, r.Steps[0].Latest().N)
	}
	// Once acted on, the announcement's buttons give way.
	waitMsg(t, srv, "announcing the interrupted step, without buttons", func(m fakeslack.Message) bool {
		return m.TS == notice.TS && len(m.Buttons()) == 0 && strings.Contains(m.Rendered, "moved on")
	})
	click(t, srv, starter, step1, "Approve")
	waitStep(t, srv, 2, "deliver-user-stories", "Approve")

	// A second restart announces nothing again.
	h.stop()
	start(t, srv, dir, &scriptedRunner{})
	settle(srv, 100*time.Millisecond, 2*time.Second)
	var notices int
	for _, m := range srv.Messages(channel) {
		if m.FromBot && strings.Contains(m.Text, "interrupted") && !strings.HasPrefix(m.Text, "*Step") {
			notices++
		}
	}
	if notices != 1 {
		t.Errorf("%d interrupted announcements, want 1", notices)
	}
}

func TestStopRightAfterAPostRepeatsNothing(t *testing.T) {
	srv := newSlack(t)
	dir := t.TempDir()
	runner := &scriptedRunner{}
	release := runner.holdSkill("deliver-prd")
	defer release()
	h := start(t, srv, dir, runner)

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	// Stopped the moment the step's message shows in Slack: the bot may
	// not have read Slack's answer yet, and must still note the message.
	waitStep(t, srv, 1, "Running")
	h.stop()

	start(t, srv, dir, &scriptedRunner{})
	waitText(t, srv, "was *interrupted*", "Redo")
	settle(srv, 100*time.Millisecond, 2*time.Second)
	if n := len(botMessages(srv, "*Step 1 of")); n != 1 {
		t.Errorf("%d messages for step 1, want 1:\n%s", n, dump(srv))
	}
	step1 := waitStep(t, srv, 1, "interrupted", "Redo")
	if strings.Contains(step1.Rendered, "Running") {
		t.Errorf("step 1's message still shows it running: %q", step1.Rendered)
	}
}

func TestReminderIsPostedOnceAcrossRestarts(t *testing.T) {
	srv := newSlack(t)
	dir := t.TempDir()
	remind := withConfig(func(c *bot.Config) { c.RemindAfter = 150 * time.Millisecond })
	h := start(t, srv, dir, &scriptedRunner{}, remind)

	slash(t, srv, starter, "chain deliver-prd")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approve")
	// A restart before the reminder is due does not lose it.
	h.stop()
	h = start(t, srv, dir, &scriptedRunner{}, remind)
	reminder := waitText(t, srv, "is waiting for a decision", "Step 1 of 1")
	if reminder.ThreadTS != step1.ThreadTS {
		t.Errorf("the reminder is not in the run's thread")
	}
	// Stopped the moment the reminder shows in Slack, the bot still notes
	// that it was posted.
	h.stop()
	start(t, srv, dir, &scriptedRunner{}, remind)
	settle(srv, 150*time.Millisecond, 2*time.Second)
	if n := countText(srv, "is waiting for a decision"); n != 1 {
		t.Errorf("%d reminders, want 1", n)
	}
}

func TestDecisionTimeoutAborts(t *testing.T) {
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), &scriptedRunner{}, withConfig(func(c *bot.Config) {
		c.DecisionTimeout, c.TimeoutAction = 150*time.Millisecond, "abort"
	}))

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	waitStep(t, srv, 1, "deliver-prd", "Decide by", "the run is aborted then")
	waitText(t, srv, "Run halted", "aborted")
	r := h.onlyRun()
	if r.State != engine.RunAborted {
		t.Fatalf("run is %s, want aborted", r.State)
	}
	ds := h.decisions(r.ID)
	if len(ds) != 1 || ds[0].Decision != engine.DecideAbort || !strings.Contains(ds[0].Actor, "decision timeout") {
		t.Errorf("decisions = %+v, want one abort by the decision timeout", ds)
	}
}

func TestDecisionTimeoutWaitNotesOnceAcrossRestarts(t *testing.T) {
	srv := newSlack(t)
	dir := t.TempDir()
	wait := withConfig(func(c *bot.Config) { c.DecisionTimeout, c.TimeoutAction = 150*time.Millisecond, "wait" })
	h := start(t, srv, dir, &scriptedRunner{}, wait)

	slash(t, srv, starter, "chain deliver-prd")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Decide by", "keeps waiting")
	note := waitText(t, srv, "for a decision; it keeps waiting")
	if note.ThreadTS != step1.ThreadTS {
		t.Errorf("the timeout note is not in the run's thread")
	}
	settle(srv, 150*time.Millisecond, 2*time.Second)
	h.stop()
	h = start(t, srv, dir, &scriptedRunner{}, wait)
	settle(srv, 150*time.Millisecond, 2*time.Second)
	if n := countText(srv, "it keeps waiting"); n != 1 {
		t.Errorf("%d timeout notes, want 1", n)
	}
	if r := h.onlyRun(); r.State != engine.RunWaiting {
		t.Errorf("run is %s, want still waiting", r.State)
	}
	click(t, srv, starter, step1, "Approve")
	waitText(t, srv, "Run complete")
}

// countText counts the bot's messages in the channel whose text holds s.
func countText(srv *fakeslack.Server, s string) int {
	n := 0
	for _, m := range srv.Messages(channel) {
		if m.FromBot && strings.Contains(m.Rendered, s) {
			n++
		}
	}
	return n
}
