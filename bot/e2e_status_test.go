package bot_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/fakeslack"
	"github.com/gonogo/gonogo/internal/hangguard"
)

// The thread shows Slack's own loading status while a step runs, with the
// step's live progress; the step's message is not updated for progress,
// and the status ends when the step does.

// waitStatus waits until the thread shows a status containing all of want,
// and returns it.
func waitStatus(t *testing.T, srv *fakeslack.Server, thread string, want ...string) fakeslack.ThreadStatus {
	t.Helper()
	var got fakeslack.ThreadStatus
	err := srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool {
		for _, s := range st.Statuses(channel, thread) {
			if s.Showing(time.Now()) && containsAll(s.Status+"\n"+strings.Join(s.Loading, "\n"), want...) {
				got = s
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("the thread never showed a status with %q: %v; statuses %+v", want, err, srv.Statuses(channel, thread))
	}
	return got
}

// showing returns the status a thread shows now, if any.
func showing(srv *fakeslack.Server, thread string) (fakeslack.ThreadStatus, bool) {
	for _, s := range srv.Statuses(channel, thread) {
		if s.Showing(time.Now()) {
			return s, true
		}
	}
	return fakeslack.ThreadStatus{}, false
}

func TestThreadShowsTheRunningStepsProgress(t *testing.T) {
	srv := newSlack(t)
	noStreaming(srv)
	runner := &scriptedRunner{}
	release := runner.holdSkill("deliver-prd")
	defer release()
	release2 := runner.holdSkill("deliver-user-stories")
	defer release2()
	start(t, srv, t.TempDir(), runner)

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories -- status")
	running := waitStep(t, srv, 1, "Running", "Cancel")
	st := waitStatus(t, srv, running.ThreadTS, "is running step 1/2: deliver-prd · 1 turn · ", "last tool: Read")
	if !strings.HasPrefix(st.Loading[0], "step 1/2: deliver-prd · 1 turn · ") || !strings.HasSuffix(st.Loading[0], " · 2 tool calls") {
		t.Errorf("the loading messages %q do not repeat the status %q", st.Loading, st.Status)
	}
	// Live progress goes to the status alone: the step's message is not
	// updated while the step runs.
	settle(srv, 300*time.Millisecond, 2*time.Second)
	if m := waitStep(t, srv, 1, "Running"); m.Updates != 0 {
		t.Errorf("the running step's message was updated %d times", m.Updates)
	}

	release()
	step1 := waitStep(t, srv, 1, "PRODUCED", "Approve")
	waitFiles(t, srv, running.ThreadTS, "01-deliver-prd.md")
	// The artifact shared in the thread is gonogo's reply: it ends the
	// status, which nothing sets again while the step waits.
	settle(srv, 300*time.Millisecond, 2*time.Second)
	if s, ok := showing(srv, running.ThreadTS); ok {
		t.Errorf("a step waits for a decision, yet the thread shows %q", s.Status)
	}
	if step1.Updates != 1 {
		t.Errorf("step 1's message was updated %d times before its checkpoint, want once", step1.Updates)
	}

	click(t, srv, starter, step1, "Approve")
	waitStatus(t, srv, running.ThreadTS, "is running step 2/2: deliver-user-stories")
	release2()
	click(t, srv, starter, waitStep(t, srv, 2, "Approve"), "Approve")
	waitText(t, srv, "Run complete")
	settle(srv, 300*time.Millisecond, 2*time.Second)
	for _, s := range srv.Statuses(channel, running.ThreadTS) {
		if s.Showing(time.Now()) || s.How == "expired" {
			t.Errorf("after the run: status %q %s", s.Status, s.How)
		}
	}
}

// A step that runs long without a word from its agent keeps its status:
// gonogo sets it again before Slack drops it.
// The test waits for work, not for the clock: for enough settings of the
// status to span more than Slack's expiry, or for the status to stop
// showing, whichever comes first. A machine that runs the bot late by up
// to the expiry less the refresh still passes.
func TestThreadStatusOutlivesSlacksExpiry(t *testing.T) {
	const expiry, refresh = 3 * time.Second, 250 * time.Millisecond
	srv := newSlack(t, fakeslack.WithStatusExpiry(expiry))
	noStreaming(srv)
	runner := &scriptedRunner{}
	release := runner.holdSkill("deliver-prd")
	defer release()
	start(t, srv, t.TempDir(), runner, withConfig(func(c *bot.Config) { c.StatusRefresh = refresh }))

	slash(t, srv, starter, "chain deliver-prd")
	running := waitStep(t, srv, 1, "Running", "Cancel")
	waitStatus(t, srv, running.ThreadTS, "is running step 1/1")
	sets := int(expiry/refresh) + 5
	var st []fakeslack.ThreadStatus
	eventually(t, "the status set again past Slack's expiry, or let go", func() bool {
		st = srv.Statuses(channel, running.ThreadTS)
		_, shows := showing(srv, running.ThreadTS)
		return len(st) >= sets || !shows
	})
	if span := st[len(st)-1].Set.Sub(st[0].Set); span <= expiry {
		t.Errorf("%d statuses over %v, want them to span more than Slack's expiry (%v)", len(st), span, expiry)
	}
	for _, s := range st {
		if s.How == "expired" {
			t.Errorf("a status expired while the step ran: %+v", s)
		}
	}
	if _, ok := showing(srv, running.ThreadTS); !ok {
		t.Error("the running step's thread shows no status")
	}
	release()
}

// A status Slack refuses is set again at once, shortened to the least it
// says; one refused even shortened leaves the thread without a status for
// a while, never for the rest of the run: the full status, with the
// step's progress, shows again.
func TestRefusedStatusIsShortenedAndProgressGoesOn(t *testing.T) {
	srv := newSlack(t)
	noStreaming(srv)
	runner := &scriptedRunner{}
	release := runner.holdSkill("deliver-prd")
	defer release()
	start(t, srv, t.TempDir(), runner, withConfig(func(c *bot.Config) { c.StatusRefresh = 250 * time.Millisecond }))
	// The first full status and its shortened retry, then the next full
	// status, are refused as Slack refuses a status too long for it.
	srv.Fail("assistant.threads.setStatus", 3, "invalid_arguments")

	slash(t, srv, starter, "chain deliver-prd")
	running := waitStep(t, srv, 1, "Running", "Cancel")
	full := waitStatus(t, srv, running.ThreadTS, "is running step 1/1: deliver-prd · 1 turn", "last tool: Read")
	var short []fakeslack.ThreadStatus
	for _, st := range srv.Statuses(channel, running.ThreadTS) {
		if st.Status == "is running step 1/1" && len(st.Loading) == 0 {
			short = append(short, st)
		}
	}
	if len(short) != 1 || !short[0].Set.Before(full.Set) {
		t.Errorf("the refused status was not set again shortened before the full one came back: %+v", srv.Statuses(channel, running.ThreadTS))
	}
	calls := srv.Calls("assistant.threads.setStatus")
	if len(calls) < 5 {
		t.Errorf("%d setStatus calls, want the 3 refused ones, the shortened one and the full one", len(calls))
	}
	release()
	waitStep(t, srv, 1, "PRODUCED", "Approve")
}

// The steps of a workflow that run at once share their thread's one
// status; when one ends, the status goes on for the other.
func TestParallelStepsShareTheThreadsStatus(t *testing.T) {
	srv := newSlack(t)
	noStreaming(srv)
	runner := &scriptedRunner{}
	h := start(t, srv, t.TempDir(), runner, withWorkflows(workflows(t, map[string]string{"diamond.yaml": diamondYAML})))
	holdStories := runner.holdSkill("deliver-user-stories")
	defer holdStories()
	holdExperiment := runner.holdSkill("measure-experiment-design")
	defer holdExperiment()

	slash(t, srv, starter, "run diamond --arg feature=guest-checkout")
	prd := waitStep(t, srv, 1, "deliver-prd", "Approve")
	click(t, srv, starter, prd, "Approve")
	waitStep(t, srv, 2, "Running")
	waitStep(t, srv, 3, "Running")
	st := waitStatus(t, srv, prd.ThreadTS, "is running 2 steps at once: 2 · 3")
	if len(st.Loading) != 2 || !strings.HasPrefix(st.Loading[0], "step 2/4: deliver-user-stories · ") ||
		!strings.HasPrefix(st.Loading[1], "step 3/4: measure-experiment-design · ") {
		t.Errorf("loading messages %q, want one for each running step", st.Loading)
	}

	holdStories()
	waitStep(t, srv, 2, "Approve")
	// Step 2's artifact ended the status: it is set again for step 3.
	waitStatus(t, srv, prd.ThreadTS, "is running step 3/4: measure-experiment-design")
	holdExperiment()
	waitStep(t, srv, 3, "Approve")
	if r := h.onlyRun(); r.State != engine.RunWaiting {
		t.Errorf("run is %s, want waiting", r.State)
	}
}

// When a run ends its audit trail (gonogo export's Markdown) is attached
// to its thread, once, after the end of the run.
func TestRunEndAttachesItsAuditTrail(t *testing.T) {
	srv := newSlack(t)
	noStreaming(srv)
	dir := t.TempDir()
	h := start(t, srv, dir, &scriptedRunner{})

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories -- audit")
	step1 := waitStep(t, srv, 1, "Approve")
	click(t, srv, starter, step1, "Approve")
	step2 := waitStep(t, srv, 2, "Approve")
	click(t, srv, starter, step2, "Abort")
	end := waitText(t, srv, "Run halted: aborted")
	r := h.onlyRun()
	name := "audit-" + string(r.ID) + ".md"
	files := waitFiles(t, srv, step1.ThreadTS, name)
	trail := string(files[name].Content)
	for _, w := range []string{"# Audit trail of run " + string(r.ID), "deliver-prd", "deliver-user-stories", starter, "abort"} {
		if !strings.Contains(trail, w) {
			t.Errorf("the audit trail lacks %q:\n%.2000s", w, trail)
		}
	}
	var share fakeslack.Message
	for _, m := range srv.Messages(channel) {
		if len(m.Files) == 1 && m.Files[0].Name == name {
			share = m
		}
	}
	if share.TS <= end.TS {
		t.Errorf("the audit trail (%s) is not after the end of the run (%s)", share.TS, end.TS)
	}

	// A restart attaches nothing again.
	h.stop()
	start(t, srv, dir, &scriptedRunner{})
	settle(srv, 300*time.Millisecond, 3*time.Second)
	n := 0
	for _, f := range srv.Files(channel, step1.ThreadTS) {
		if f.Name == name {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the audit trail was attached %d times", n)
	}
}

// An audit trail that could not be attached before gonogo stopped is
// attached after the restart: it is noted as due with the end of the run.
func TestAuditTrailDueSurvivesARestart(t *testing.T) {
	srv := newSlack(t)
	noStreaming(srv)
	dir := t.TempDir()
	h := start(t, srv, dir, &scriptedRunner{})

	slash(t, srv, starter, "chain deliver-prd")
	step1 := waitStep(t, srv, 1, "Approve")
	waitFiles(t, srv, step1.ThreadTS, "01-deliver-prd.md")
	settle(srv, 200*time.Millisecond, 2*time.Second)
	// Slack refuses the trail's upload until gonogo has stopped.
	srv.Fail("files.getUploadURLExternal", 1000, "not_allowed")
	click(t, srv, starter, step1, "Approve")
	waitText(t, srv, "Run complete")
	r := h.onlyRun()
	waitNote(t, h, r.ID, "audit", "pending")
	h.stop()

	srv.Fail("files.getUploadURLExternal", 0, "")
	h = start(t, srv, dir, &scriptedRunner{})
	waitFiles(t, srv, step1.ThreadTS, "audit-"+string(r.ID)+".md")
	waitNote(t, h, r.ID, "audit", "1")
	if n := len(botMessages(srv, "✅ Run complete")); n != 1 {
		t.Errorf("the end of the run was posted %d times", n)
	}
}

// GONOGO_SLACK_AUDIT_TRAIL=false (Config.NoAuditTrail) attaches none.
func TestAuditTrailOff(t *testing.T) {
	srv := newSlack(t)
	noStreaming(srv)
	start(t, srv, t.TempDir(), &scriptedRunner{}, withConfig(func(c *bot.Config) { c.NoAuditTrail = true }))

	slash(t, srv, starter, "chain deliver-prd")
	step1 := waitStep(t, srv, 1, "Approve")
	click(t, srv, starter, step1, "Approve")
	waitText(t, srv, "Run complete")
	settle(srv, 300*time.Millisecond, 2*time.Second)
	for _, f := range srv.Files(channel, step1.ThreadTS) {
		if strings.HasPrefix(f.Name, "audit-") {
			t.Errorf("an audit trail was attached: %s", f.Name)
		}
	}
}

// waitNote waits until the bot has noted key = want with the run.
func waitNote(t *testing.T, h *harness, id engine.RunID, key, want string) {
	t.Helper()
	deadline := hangguard.Deadline(t)
	for {
		notes, err := h.svc.Notes(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if notes[key] == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("note %q is %q, want %q", key, notes[key], want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stepMessages are the bot's messages for step n.
func stepMessages(srv *fakeslack.Server, n int) []fakeslack.Message {
	var ms []fakeslack.Message
	for _, m := range srv.Messages(channel) {
		if m.FromBot && strings.HasPrefix(m.Text, fmt.Sprintf("*Step %d of", n)) {
			ms = append(ms, m)
		}
	}
	return ms
}

// waitRoot waits for the run's root message, the header a slash command
// opens the thread with.
func waitRoot(t *testing.T, srv *fakeslack.Server) fakeslack.Message {
	t.Helper()
	return waitMsg(t, srv, "the run's root message", func(m fakeslack.Message) bool { return m.FromBot && m.ThreadTS == "" })
}

// A step that ends within its quiet start gets one message, posted as it
// ends with its result and buttons; until then the thread's agent session
// says it runs (processing), or, where Slack refuses agent sessions, the
// thread's loading status does.
func TestQuickStepIsPostedOnceAtItsCheckpoint(t *testing.T) {
	t.Run("session", func(t *testing.T) { quickStepPostedOnce(t, true) })
	t.Run("no session", func(t *testing.T) { quickStepPostedOnce(t, false) })
}

func quickStepPostedOnce(t *testing.T, sessions bool) {
	srv := newSlack(t)
	noStreaming(srv)
	if !sessions {
		srv.Fail("agents.sessions.setStatus", 1000, "not_allowed")
	}
	runner := &scriptedRunner{}
	release := runner.holdSkill("deliver-prd")
	defer release()
	start(t, srv, t.TempDir(), runner, withQuietStart(time.Hour))

	slash(t, srv, starter, "chain deliver-prd -- quiet")
	root := waitRoot(t, srv)
	if sessions {
		waitSession(t, srv, root.TS, "processing")
		if ss := srv.Statuses(channel, root.TS); len(ss) != 0 {
			t.Errorf("a step in its quiet start has a loading status beside its session: %q", ss[0].Status)
		}
	} else {
		waitStatus(t, srv, root.TS, "is running step 1/1: deliver-prd")
	}
	if ms := stepMessages(srv, 1); len(ms) != 0 {
		t.Errorf("a step in its quiet start has a message: %q", ms[0].Rendered)
	}

	release()
	step1 := waitStep(t, srv, 1, "PRODUCED", "Approve")
	waitFiles(t, srv, root.TS, "01-deliver-prd.md")
	if step1.Updates != 0 || strings.Contains(step1.Rendered, "Cancel") {
		t.Errorf("the quick step's message was updated %d times; it shows %q", step1.Updates, step1.Rendered)
	}
	click(t, srv, starter, step1, "Approve")
	waitStep(t, srv, 1, "Approved by")
	waitText(t, srv, "Run complete")
	if ms := stepMessages(srv, 1); len(ms) != 1 || ms[0].Updates != 1 {
		t.Errorf("step 1 has %d messages, want one updated once for the decision: %+v", len(ms), ms)
	}
}

// A step still running after its quiet start gets its running message
// with Cancel, then its checkpoint as an update.
func TestLongStepIsPostedAfterItsQuietStart(t *testing.T) {
	srv := newSlack(t)
	noStreaming(srv)
	runner := &scriptedRunner{}
	release := runner.holdSkill("deliver-prd")
	defer release()
	const quiet = 400 * time.Millisecond
	start(t, srv, t.TempDir(), runner, withQuietStart(quiet))

	began := time.Now()
	slash(t, srv, starter, "chain deliver-prd -- quiet")
	running := waitStep(t, srv, 1, "Running", "Cancel")
	if waited := running.Posted.Sub(began); waited < quiet {
		t.Errorf("the running step's message was posted %v after the command, within its quiet start of %v", waited, quiet)
	}
	release()
	if step1 := waitStep(t, srv, 1, "PRODUCED", "Approve"); step1.TS != running.TS || step1.Updates != 1 {
		t.Errorf("the checkpoint is message %s updated %d times, want the running message %s updated once", step1.TS, step1.Updates, running.TS)
	}
}

// A step whose gonogo stops in its quiet start is announced interrupted
// after the restart, with its message.
func TestRestartInAQuietStartAnnouncesTheStepInterrupted(t *testing.T) {
	srv := newSlack(t)
	noStreaming(srv)
	dir := t.TempDir()
	first := &scriptedRunner{}
	release := first.holdSkill("deliver-prd")
	defer release()
	h := start(t, srv, dir, first, withQuietStart(time.Hour))

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	root := waitRoot(t, srv)
	waitSession(t, srv, root.TS, "processing")
	// The session is processing from the run's start; gonogo stops once
	// step 1's agent runs, or the step would not be interrupted at all.
	first.waitRan(t, "deliver-prd")
	h.stop()

	start(t, srv, dir, &scriptedRunner{}, withQuietStart(time.Hour))
	waitStep(t, srv, 1, "interrupted", "Redo", "Abort")
	waitMsg(t, srv, "announcing the interrupted step", func(m fakeslack.Message) bool {
		return m.FromBot && strings.Contains(m.Text, "interrupted") && !strings.HasPrefix(m.Text, "*Step")
	})
	if ms := stepMessages(srv, 1); len(ms) != 1 {
		t.Errorf("step 1 has %d messages, want 1", len(ms))
	}
}

// noStreaming makes Slack refuse to stream, as a workspace without it
// does: the thread's loading status shows a running step's progress.
func noStreaming(srv *fakeslack.Server) { srv.Fail("chat.startStream", 1<<20, "not_allowed") }
