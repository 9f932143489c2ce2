package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/fakeslack"
)

// Plan before apply, end to end: a run that waits at its preview for
// Start (GONOGO_CONFIRM_START, and every plan a mention uploads unless
// --yes), Start and Cancel and who may press them, a restart in between,
// checks that only show, and a mention with several files.

func confirmStart() option { return withConfig(func(c *bot.Config) { c.ConfirmStart = true }) }

// waitPreview waits for the preview with Start in the channel.
func waitPreview(t *testing.T, srv *fakeslack.Server) fakeslack.Message {
	t.Helper()
	return waitMsg(t, srv, "the preview with Start and Cancel", func(m fakeslack.Message) bool {
		return m.FromBot && hasButton(m, "Start") && hasButton(m, "Cancel")
	})
}

// runEvents counts the events of type typ in the run's journal.
func (h *harness) runEvents(id engine.RunID, typ engine.EventType) int {
	h.t.Helper()
	j, err := h.db.Journal(ctxT(h.t), id)
	if err != nil {
		h.t.Fatal(err)
	}
	n := 0
	for _, ev := range j {
		if ev.Type == typ {
			n++
		}
	}
	return n
}

// With GONOGO_CONFIRM_START a chain waits at its preview: what check shows,
// with Start and Cancel. Nothing runs until someone who may decide presses
// Start: a stranger's Start is refused; an approver's starts the run, once,
// however often the click is delivered; then the thread looks as any run's.
func TestConfirmStartWaitsForAnApproversStart(t *testing.T) {
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), &scriptedRunner{}, confirmStart(), withApprovers(approver))

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories --thread -- ferry tickets")
	preview := waitPreview(t, srv)
	if preview.ThreadTS != "" {
		t.Errorf("the preview of a slash command's run is in thread %q, want a root message", preview.ThreadTS)
	}
	for _, want := range []string{"Preview", "deliver-prd", "deliver-user-stories", "checkpointed, threaded", "ferry tickets",
		"Nothing runs until <@" + starter + "> or an approver presses *Start*"} {
		if !strings.Contains(preview.Rendered, want) {
			t.Errorf("the preview lacks %q:\n%s", want, preview.Rendered)
		}
	}
	r := h.onlyRun()
	if !engine.AwaitingStart(r) {
		t.Fatalf("the run is %s (paused %v by %q), want awaiting Start", r.State, r.Paused, r.PausedBy)
	}

	click(t, srv, stranger, preview, "Start")
	waitEphemeral(t, srv, stranger, "Only <@"+starter+">", "start it", "Nothing ran")
	settle(srv, 50*time.Millisecond, time.Second)
	if n := len(h.runner.jobs()); n != 0 || !engine.AwaitingStart(h.onlyRun()) {
		t.Fatalf("a stranger's Start: %d steps ran, awaiting Start %v", n, engine.AwaitingStart(h.onlyRun()))
	}
	if n := len(botMessages(srv, "*Step")); n != 0 {
		t.Fatalf("%d step messages before Start", n)
	}

	env := click(t, srv, approver, preview, "Start")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approve")
	if step1.ThreadTS != preview.TS {
		t.Errorf("step 1 is in thread %q, want the preview's %q", step1.ThreadTS, preview.TS)
	}
	// The preview is now the run's header, as any run's.
	hdr := waitMsg(t, srv, "the header in place of the preview", func(m fakeslack.Message) bool {
		return m.TS == preview.TS && !hasButton(m, "Start") && strings.Contains(m.Rendered, "gonogo chain run")
	})
	if strings.Contains(hdr.Rendered, "Preview") {
		t.Errorf("the header still says Preview:\n%s", hdr.Rendered)
	}

	// The same click delivered again, and a second click on the old
	// preview, start nothing more.
	if err := srv.Redeliver(env); err != nil {
		t.Fatal(err)
	}
	waitAcks(t, srv, env, 2)
	clickStale(t, srv, starter, preview, "Start")
	waitEphemeral(t, srv, starter, "no longer waits for Start")
	settle(srv, 50*time.Millisecond, time.Second)
	r = h.onlyRun()
	if n := h.runEvents(r.ID, engine.EvRunResumed); n != 1 {
		t.Errorf("%d starts in the journal, want 1", n)
	}
	if n := len(h.runner.jobs()); n != 1 {
		t.Errorf("%d steps ran, want 1 (step 1, waiting for its decision)", n)
	}
	click(t, srv, approver, step1, "Approve")
	step2 := waitStep(t, srv, 2, "deliver-user-stories", "Approve")
	click(t, srv, starter, step2, "Approve")
	waitText(t, srv, "Run complete")
	if n := len(botMessages(srv, "*Step 1 of 2")); n != 1 {
		t.Errorf("%d messages for step 1, want 1", n)
	}
}

// Cancel at a plan's preview ends the run with nothing run; the preview
// says who cancelled it, and a Start after that is refused.
func TestPreviewCancelLeavesNothingRunning(t *testing.T) {
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), &scriptedRunner{})

	file := srv.AddFile("ferry-plan.md", []byte(plan))
	_, env, err := srv.SendMention(channel, "", starter, "please run this", file)
	if err != nil {
		t.Fatal(err)
	}
	ack(t, srv, env)
	preview := waitPreview(t, srv)
	for _, want := range []string{"ferry-plan.md", "Complicated", "High", "deliver-prd", "Write a PRD for season passes",
		"measure-experiment-design", "Manual", "workflow-feature-kickoff"} {
		if !strings.Contains(preview.Rendered, want) {
			t.Errorf("the plan's preview lacks %q:\n%s", want, preview.Rendered)
		}
	}

	click(t, srv, stranger, preview, "Cancel")
	waitEphemeral(t, srv, stranger, "Only <@"+starter+">", "cancel it")
	if !engine.AwaitingStart(h.onlyRun()) {
		t.Fatal("a stranger's Cancel changed the run")
	}

	click(t, srv, starter, preview, "Cancel")
	waitMsg(t, srv, "the cancelled preview", func(m fakeslack.Message) bool {
		return m.TS == preview.TS && !hasButton(m, "Start") && containsAll(m.Rendered, "Cancelled", "by <@"+starter+">", "Nothing ran")
	})
	waitText(t, srv, "Run halted", "aborted")
	r := h.onlyRun()
	if r.State != engine.RunAborted || r.Halt != engine.CancelledBeforeStart {
		t.Errorf("cancelled run: %s, %q", r.State, r.Halt)
	}
	clickStale(t, srv, starter, preview, "Start")
	waitEphemeral(t, srv, starter, "no longer waits for Start")
	settle(srv, 50*time.Millisecond, time.Second)
	if n := len(h.runner.jobs()); n != 0 {
		t.Errorf("%d steps ran after Cancel", n)
	}
	if n := len(botMessages(srv, "*Step")); n != 0 {
		t.Errorf("%d step messages after Cancel", n)
	}
	if r := h.onlyRun(); r.State != engine.RunAborted {
		t.Errorf("the run is %s after a late Start, want aborted", r.State)
	}
}

// A restart between the preview and Start loses nothing: the preview is not
// posted again, and its Start starts the run recorded before the restart.
func TestRestartBetweenPreviewAndStart(t *testing.T) {
	srv := newSlack(t)
	dir := t.TempDir()
	h := start(t, srv, dir, &scriptedRunner{}, confirmStart())

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	preview := waitPreview(t, srv)
	id := h.onlyRun().ID
	settle(srv, 50*time.Millisecond, time.Second)
	posts := len(srv.Calls("chat.postMessage"))
	h.stop()

	h = start(t, srv, dir, &scriptedRunner{}, confirmStart())
	settle(srv, 100*time.Millisecond, 2*time.Second)
	if n := len(srv.Calls("chat.postMessage")); n != posts {
		t.Errorf("the restart posted %d messages, want none", n-posts)
	}
	if r := h.onlyRun(); r.ID != id || !engine.AwaitingStart(r) || len(h.runner.jobs()) != 0 {
		t.Fatalf("after the restart: run %s awaiting Start %v, %d steps ran", r.ID, engine.AwaitingStart(r), len(h.runner.jobs()))
	}
	click(t, srv, starter, preview, "Start")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approve")
	if step1.ThreadTS != preview.TS || h.onlyRun().ID != id {
		t.Errorf("step 1 is in thread %q of run %s, want %q of %s", step1.ThreadTS, h.onlyRun().ID, preview.TS, id)
	}
}

// Checks show what would run and record nothing: /gonogo check EXPR and
// check run WORKFLOW privately, a mention that says check in its thread;
// none has buttons, each says how to start it.
func TestChecksShowWhatWouldRunAndRunNothing(t *testing.T) {
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), &scriptedRunner{}, withWorkflows(workflows(t, map[string]string{"diamond.yaml": diamondYAML})))

	slash(t, srv, starter, "check deliver-prd -> deliver-user-stories --auto -- ferry tickets")
	e := waitEphemeral(t, srv, starter, "Check", "deliver-prd", "deliver-user-stories", "checkpointed", "--auto ignored",
		"Checked only: nothing was recorded or run", "/gonogo chain deliver-prd -&gt; deliver-user-stories --auto -- ferry tickets")
	if strings.Contains(string(e.Blocks), `"button"`) {
		t.Errorf("a check has buttons: %s", e.Blocks)
	}

	slash(t, srv, approver, "check run diamond --arg feature=passes")
	waitEphemeral(t, srv, approver, "Check", "gonogo workflow run: diamond", "Write the PRD for passes", "Levels", "/gonogo run diamond --arg feature=passes")

	slash(t, srv, "U0BOB", "check deliver-prdd")
	waitEphemeral(t, srv, "U0BOB", "Refused", "did you mean", "`deliver-prd`")

	file := srv.AddFile("ferry-plan.md", []byte(plan))
	ts, env, err := srv.SendMention(channel, "", starter, "check this please", file)
	if err != nil {
		t.Fatal(err)
	}
	ack(t, srv, env)
	m := waitText(t, srv, "Check", "ferry-plan.md", "deliver-prd", "without `check`")
	if m.ThreadTS != ts || len(m.Buttons()) != 0 {
		t.Errorf("the mention's check is in thread %q with %d buttons, want the mention's %q and none", m.ThreadTS, len(m.Buttons()), ts)
	}
	settle(srv, 50*time.Millisecond, time.Second)
	if n := h.runCount(); n != 0 {
		t.Errorf("checks recorded %d runs", n)
	}
	if n := len(h.runner.jobs()); n != 0 {
		t.Errorf("checks ran %d steps", n)
	}
}

// --yes starts a mentioned plan at once; GONOGO_CONFIRM_START overrules it.
func TestMentionYes(t *testing.T) {
	srv := newSlack(t)
	start(t, srv, t.TempDir(), &scriptedRunner{})
	file := srv.AddFile("ferry-plan.md", []byte(plan))
	_, env, err := srv.SendMention(channel, "", starter, "run it --yes", file)
	if err != nil {
		t.Fatal(err)
	}
	ack(t, srv, env)
	waitStep(t, srv, 1, "deliver-prd", "Approve")
	if n := len(srv.Messages(channel)); hasButton(botMessages(srv, "")[0], "Start") {
		t.Errorf("--yes showed a preview (%d messages)", n)
	}

	srv2 := newSlack(t)
	h2 := start(t, srv2, t.TempDir(), &scriptedRunner{}, confirmStart())
	file = srv2.AddFile("ferry-plan.md", []byte(plan))
	_, env, err = srv2.SendMention(channel, "", starter, "run it --yes", file)
	if err != nil {
		t.Fatal(err)
	}
	ack(t, srv2, env)
	waitPreview(t, srv2)
	waitEphemeral(t, srv2, starter, "does not skip the preview", "GONOGO_CONFIRM_START")
	if !engine.AwaitingStart(h2.onlyRun()) {
		t.Error("--yes started a run where GONOGO_CONFIRM_START asks for Start")
	}
}

// Of several files, the plan is the one whose content has a Section 7,
// wherever it is in the message; a file that is no plan is never run.
func TestMentionWithSeveralFilesRunsThePlanAmongThem(t *testing.T) {
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), &scriptedRunner{})

	notes := srv.AddFile("meeting-notes.md", []byte("# Notes\n\nWe talked about season passes.\n"))
	shot := srv.AddFile("screenshot.png", []byte("\x89PNG\r\n\x1a\n"))
	thePlan := srv.AddFile("ferry-plan.md", []byte(plan))
	_, env, err := srv.SendMention(channel, "", starter, "here is everything", notes, shot, thePlan)
	if err != nil {
		t.Fatal(err)
	}
	ack(t, srv, env)
	waitPreview(t, srv)
	if r := h.onlyRun(); r.Plan.Source != "ferry-plan.md" {
		t.Errorf("the run is of %q, want ferry-plan.md", r.Plan.Source)
	}

	// No plan among them: refused, naming them.
	a := srv.AddFile("a.md", []byte("# A\n"))
	b := srv.AddFile("b.txt", []byte("just text\n"))
	_, env, err = srv.SendMention(channel, "", "U0BOB", "run", a, b, shot)
	if err != nil {
		t.Fatal(err)
	}
	ack(t, srv, env)
	waitEphemeral(t, srv, "U0BOB", "none of the 2 Markdown or text files", `"a.md"`, `"b.txt"`, "Section 7", "Nothing was run")
	if n := h.runCount(); n != 1 {
		t.Errorf("%d runs, want 1", n)
	}
}

// Several plans in one message: gonogo asks which, in the thread; only
// the author picks; the pick starts that plan (here at once, --yes), and
// one message starts one run however many buttons are pressed.
func TestMentionWithSeveralPlansAsksWhichOne(t *testing.T) {
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), &scriptedRunner{})

	first := srv.AddFile("q2-plan.md", []byte(plan))
	second := srv.AddFile("q3-plan.md", []byte(strings.Replace(plan, "season passes", "night ferries", -1)))
	ts, env, err := srv.SendMention(channel, "", starter, "which one? --yes --dry-run", first, second)
	if err != nil {
		t.Fatal(err)
	}
	ack(t, srv, env)
	choice := waitMsg(t, srv, "the choice of plan", func(m fakeslack.Message) bool {
		return m.FromBot && strings.Contains(m.Rendered, "Which one should gonogo run")
	})
	if choice.ThreadTS != ts || len(choice.Buttons()) != 2 || !containsAll(choice.Rendered, "q2-plan.md", "q3-plan.md") {
		t.Fatalf("choice in thread %q with %d buttons:\n%s", choice.ThreadTS, len(choice.Buttons()), choice.Rendered)
	}
	if n := h.runCount(); n != 0 {
		t.Fatalf("%d runs before the pick", n)
	}

	pick := func(user string, i int) {
		t.Helper()
		clickButton(t, srv, user, fakeslack.TeamID, choice, choice.Buttons()[i])
	}
	pick(stranger, 0)
	waitEphemeral(t, srv, stranger, "Only <@"+starter+">", "can pick the plan")
	if n := h.runCount(); n != 0 {
		t.Fatalf("a stranger's pick started %d runs", n)
	}

	pick(starter, 1)
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approve")
	if step1.ThreadTS != ts {
		t.Errorf("step 1 is in thread %q, want the mention's %q", step1.ThreadTS, ts)
	}
	r := h.onlyRun()
	if r.Plan.Source != "q3-plan.md" || !r.DryRun || !strings.Contains(r.Steps[0].Prompt, "night ferries") {
		t.Errorf("the run is of %q (dry run %v), prompt %q; want q3-plan.md as picked, a dry run", r.Plan.Source, r.DryRun, r.Steps[0].Prompt)
	}
	waitMsg(t, srv, "the choice made", func(m fakeslack.Message) bool {
		return m.TS == choice.TS && len(m.Buttons()) == 0 && containsAll(m.Rendered, "<@"+starter+"> picked", "q3-plan.md")
	})

	pick(starter, 0)
	waitEphemeral(t, srv, starter, "started already", "one message starts one run")
	settle(srv, 50*time.Millisecond, time.Second)
	if n := h.runCount(); n != 1 {
		t.Errorf("%d runs from one message, want 1", n)
	}
}

// lostStarts is an engine whose Starts vanish: the process it stands for
// acknowledged the click and died before applying it.
type lostStarts struct{ bot.Engine }

func (l lostStarts) StartAwaited(ctx context.Context, id engine.RunID, _, _ string) (*engine.Run, error) {
	return l.Load(ctx, id)
}

// A Start acknowledged by a process that died before applying it is
// applied by the next one, from the inbox; one that was applied before the
// process died is not applied again, and nobody is told anything.
func TestStartKeptInTheInboxAppliesOnce(t *testing.T) {
	for _, lost := range []bool{true, false} {
		t.Run(map[bool]string{true: "lost", false: "applied"}[lost], func(t *testing.T) {
			srv := newSlack(t)
			dir := t.TempDir()
			inbox := openInbox(t, t.TempDir())
			opts := []option{withInbox(dyingInbox{inbox}), confirmStart()}
			if lost {
				opts = append(opts, withEngine(func(e bot.Engine) bot.Engine { return lostStarts{e} }))
			}
			h := start(t, srv, dir, &scriptedRunner{}, opts...)
			slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
			click(t, srv, starter, waitPreview(t, srv), "Start")
			if lost {
				settle(srv, 100*time.Millisecond, 2*time.Second)
				if !engine.AwaitingStart(h.onlyRun()) {
					t.Fatal("the lost Start was applied")
				}
			} else {
				waitStep(t, srv, 1, "deliver-prd", "Approve")
			}
			id := h.onlyRun().ID
			h.stop()

			h = start(t, srv, dir, &scriptedRunner{}, withInbox(inbox), confirmStart())
			waitStep(t, srv, 1, "deliver-prd", "Approve")
			// The envelopes left behind carried out, then quiet: a second
			// start, or a word to the starter, would show by now.
			left := drained(t, inbox)
			settle(srv, 100*time.Millisecond, 2*time.Second)
			if n := h.runEvents(id, engine.EvRunResumed); n != 1 {
				t.Errorf("%d starts in the journal, want 1", n)
			}
			if n := h.runEvents(id, engine.EvStepStarted); n != 1 {
				t.Errorf("step 1 started %d times, want once", n)
			}
			if left != 0 {
				t.Errorf("the inbox still holds %d envelopes", left)
			}
			if es := afterAcks(srv.Ephemerals(starter)); len(es) != 0 {
				t.Errorf("the starter was told %q; carrying out the inbox again says nothing", es[0].Text)
			}
		})
	}
}
