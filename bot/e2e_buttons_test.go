package bot_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/fakeslack"
)

// Each button of a step message, end to end: the click reaches the engine,
// the store records it, and the thread shows it.

func TestApproveRecordsWhoAndAdvances(t *testing.T) {
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), &scriptedRunner{})

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approve", "Edit", "Skip", "Redo", "Abort")
	click(t, srv, starter, step1, "Approve")

	waitStep(t, srv, 2, "deliver-user-stories", "Approve")
	after, _ := srv.Message(channel, step1.TS)
	if len(after.Buttons()) != 0 {
		t.Errorf("step 1 still shows buttons after the decision: %v", after.Buttons())
	}
	if !containsAll(after.Rendered, "Approved", starter) {
		t.Errorf("step 1 does not say who approved: %q", after.Rendered)
	}
	r := h.onlyRun()
	if r.Steps[0].Status != engine.StepDone {
		t.Errorf("step 1 is %s, want done", r.Steps[0].Status)
	}
	ds := h.decisions(r.ID)
	if len(ds) != 1 || ds[0].Decision != engine.DecideApprove || ds[0].Actor != starter {
		t.Errorf("journal decisions = %+v, want one approve by %s", ds, starter)
	}
}

func TestSkipSettlesTheStepAndGoesOn(t *testing.T) {
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), &scriptedRunner{})

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Skip")
	click(t, srv, starter, step1, "Skip")

	step2 := waitStep(t, srv, 2, "deliver-user-stories", "Approve")
	waitMsg(t, srv, "of step 1 skipped", func(m fakeslack.Message) bool {
		return m.TS == step1.TS && strings.Contains(m.Rendered, "Skipped") && len(m.Buttons()) == 0
	})
	click(t, srv, starter, step2, "Approve")
	waitText(t, srv, "Run complete")
	r := h.onlyRun()
	if r.Steps[0].Status != engine.StepSkipped || r.Steps[1].Status != engine.StepDone {
		t.Errorf("steps are %s and %s, want skipped and done", r.Steps[0].Status, r.Steps[1].Status)
	}
}

func TestRedoAsksForFeedbackAndRunsAgain(t *testing.T) {
	srv := newSlack(t)
	runner := &scriptedRunner{}
	h := start(t, srv, t.TempDir(), runner)

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Redo")
	click(t, srv, starter, step1, "Redo")

	modal := waitView(t, srv, 0)
	if modal.CallbackID != bot.ModalRedo || modal.User != starter {
		t.Fatalf("opened modal %q for %s, want the redo modal for %s", modal.CallbackID, modal.User, starter)
	}
	if h.onlyRun().Steps[0].Status != engine.StepWaiting {
		t.Fatal("opening the redo modal changed the step")
	}
	const feedback = "Cover guest checkout too, and cut the appendix."
	env, err := srv.SubmitView(starter, modal.ID, map[string]string{bot.InputFeedback: feedback})
	if err != nil {
		t.Fatal(err)
	}
	ack(t, srv, env)

	waitMsg(t, srv, "of step 1 attempt 2", func(m fakeslack.Message) bool {
		return m.TS == step1.TS && containsAll(m.Rendered, "attempt 2", "Approve")
	})
	var second *engine.Job
	for _, j := range runner.jobs() {
		if j.Step == 1 && j.Attempt == 2 {
			second = &j
		}
	}
	if second == nil {
		t.Fatalf("no second attempt was run: %+v", runner.jobs())
	}
	if !strings.Contains(second.Prompt, feedback) {
		t.Errorf("attempt 2's prompt lacks the feedback:\n%s", second.Prompt)
	}
	r := h.onlyRun()
	if a := r.Steps[0].Latest(); a.N != 2 || a.Feedback != feedback {
		t.Errorf("latest attempt = %d with feedback %q", a.N, a.Feedback)
	}
	files := waitFiles(t, srv, step1.ThreadTS, "01-deliver-prd.md", "01-deliver-prd.attempt-2.md")
	if !strings.Contains(string(files["01-deliver-prd.attempt-2.md"].Content), "attempt 2") {
		t.Errorf("the second file holds %q", files["01-deliver-prd.attempt-2.md"].Content)
	}
}

func TestEditShortArtifactReplacesIt(t *testing.T) {
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), &scriptedRunner{})

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Edit")
	waitFiles(t, srv, step1.ThreadTS, "01-deliver-prd.md")
	click(t, srv, starter, step1, "Edit")

	modal := waitView(t, srv, 0)
	if modal.CallbackID != bot.ModalEdit {
		t.Fatalf("opened modal %q, want the edit modal", modal.CallbackID)
	}
	r := h.onlyRun()
	original, err := h.svc.Artifact(context.Background(), r.ID, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := initialValue(t, modal, bot.InputArtifact); got != string(original) {
		t.Errorf("the edit box holds %q, want the artifact %q", got, original)
	}

	const edited = "# PRD\n\nRewritten by the team: guest checkout is in scope.\n"
	env, err := srv.SubmitView(starter, modal.ID, map[string]string{bot.InputArtifact: edited})
	if err != nil {
		t.Fatal(err)
	}
	ack(t, srv, env)

	waitStep(t, srv, 2, "deliver-user-stories", "Approve")
	body, err := h.svc.Artifact(context.Background(), r.ID, 1, 1)
	if err != nil || string(body) != edited {
		t.Errorf("stored artifact = %q, %v; want the edit", body, err)
	}
	files := waitFiles(t, srv, step1.ThreadTS, "01-deliver-prd.edited.md")
	if got := string(files["01-deliver-prd.edited.md"].Content); got != edited {
		t.Errorf("attached edit = %q, want %q", got, edited)
	}
	if got := string(files["01-deliver-prd.md"].Content); got != string(original) {
		t.Errorf("the agent's original attachment changed to %q", got)
	}
	if a := h.onlyRun().Steps[0].Latest(); !a.Edited {
		t.Error("the attempt is not marked edited")
	}
}

func TestEditLongArtifactTakesAReplyFile(t *testing.T) {
	srv := newSlack(t)
	runner := &scriptedRunner{}
	long := "# PRD\n\n" + strings.Repeat("A long requirement line for the checkout flow.\n", 100) // > 3,000 characters
	runner.script("deliver-prd", engine.Outcome{Artifact: []byte(long)})
	h := start(t, srv, t.TempDir(), runner)

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Edit")
	click(t, srv, starter, step1, "Edit")

	tooLong := waitView(t, srv, 0)
	if tooLong.CallbackID == bot.ModalEdit || !containsAll(tooLong.Rendered, "characters", "3,000", "reply") {
		t.Fatalf("want the too-long modal, got %q: %q", tooLong.CallbackID, tooLong.Rendered)
	}
	if strings.Contains(string(tooLong.JSON), `"submit"`) {
		t.Error("the too-long modal offers a submit button")
	}

	replacement := "# PRD v2\n\n" + strings.Repeat("A shorter, sharper requirement.\n", 120)
	file := srv.AddFile("prd-v2.md", []byte(replacement))
	replyTS, err := srv.AddUserMessage(channel, step1.ThreadTS, starter, "new version attached", file)
	if err != nil {
		t.Fatal(err)
	}
	click(t, srv, starter, step1, "Edit")

	offer := waitView(t, srv, 1)
	if offer.CallbackID != bot.ModalEditReply || !strings.Contains(offer.Rendered, "prd-v2.md") {
		t.Fatalf("want the from-reply modal offering prd-v2.md, got %q: %q", offer.CallbackID, offer.Rendered)
	}
	choice := initialOption(t, offer, bot.InputReply)
	if !strings.Contains(choice, replyTS) || !strings.Contains(choice, file) {
		t.Errorf("the offered reply %q is not %s with %s", choice, replyTS, file)
	}
	env, err := srv.SubmitView(starter, offer.ID, map[string]string{bot.InputReply: choice})
	if err != nil {
		t.Fatal(err)
	}
	ack(t, srv, env)

	waitStep(t, srv, 2, "deliver-user-stories", "Approve")
	r := h.onlyRun()
	body, err := h.svc.Artifact(context.Background(), r.ID, 1, 1)
	if err != nil || string(body) != replacement {
		t.Errorf("stored artifact = %.60q…, %v; want the reply's file", body, err)
	}
	if len(srv.Calls("url_private")) == 0 {
		t.Error("the reply's file was not downloaded from url_private")
	}
	files := waitFiles(t, srv, step1.ThreadTS, "01-deliver-prd.edited.md")
	if got := string(files["01-deliver-prd.edited.md"].Content); got != replacement {
		t.Errorf("attached edit = %.60q…", got)
	}
}

// editFromReply runs a chain whose first artifact is too long for the edit
// box, posts reply as the starter in the run's thread (text as Slack stores
// it, and files), and submits the from-reply modal that Edit then offers.
func editFromReply(t *testing.T, srv *fakeslack.Server, h *harness, reply string, files ...string) fakeslack.Message {
	t.Helper()
	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Edit")
	if _, err := srv.AddUserMessage(channel, step1.ThreadTS, starter, reply, files...); err != nil {
		t.Fatal(err)
	}
	click(t, srv, starter, step1, "Edit")
	offer := waitView(t, srv, 0)
	if offer.CallbackID != bot.ModalEditReply {
		t.Fatalf("want the from-reply modal, got %q: %q", offer.CallbackID, offer.Rendered)
	}
	env, err := srv.SubmitView(starter, offer.ID, map[string]string{bot.InputReply: initialOption(t, offer, bot.InputReply)})
	if err != nil {
		t.Fatal(err)
	}
	ack(t, srv, env)
	return step1
}

func longArtifactRunner() *scriptedRunner {
	r := &scriptedRunner{}
	r.script("deliver-prd", engine.Outcome{Artifact: []byte("# PRD\n\n" + strings.Repeat("A long requirement line for the checkout flow.\n", 100))})
	return r
}

func TestEditTakesATextReplyAsTyped(t *testing.T) {
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), longArtifactRunner())

	// Slack stores a typed "<", ">" and "&" as entities, and a mention as
	// markup; the artifact is what the person typed.
	editFromReply(t, srv, h, "# PRD v3\n\nCheckout: cart -&gt; pay &amp; ship, owned by <@U0START>.\n")
	waitStep(t, srv, 2, "deliver-user-stories", "Approve")
	body, err := h.svc.Artifact(context.Background(), h.onlyRun().ID, 1, 1)
	if want := "# PRD v3\n\nCheckout: cart -> pay & ship, owned by @U0START.\n"; err != nil || string(body) != want {
		t.Errorf("stored artifact = %q, %v; want %q", body, err, want)
	}
}

// A reply that cannot replace the artifact is read when Edit is pressed:
// the modal says why, before anything is submitted.
func TestEditRefusesAReplyThatIsNotText(t *testing.T) {
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), longArtifactRunner())

	file := srv.AddFile("prd-colour.md", []byte("# PRD\n\n\x1b[31mred terminal text\x1b[0m\n"))
	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Edit")
	if _, err := srv.AddUserMessage(channel, step1.ThreadTS, starter, "here it is", file); err != nil {
		t.Fatal(err)
	}
	click(t, srv, starter, step1, "Edit")
	waitNoticeModal(t, srv, starter, "prd-colour.md", "cannot replace the artifact", "control character", "press *Edit* again")
	settle(srv, 50*time.Millisecond, time.Second)
	if es := afterAcks(srv.Ephemerals(starter)); len(es) != 0 {
		t.Errorf("the starter was also told %q", es[0].Text)
	}
	r := h.onlyRun()
	if r.Steps[0].Status != engine.StepWaiting || r.Steps[0].Latest().Edited {
		t.Errorf("a refused reply changed step 1: %s, edited %v", r.Steps[0].Status, r.Steps[0].Latest().Edited)
	}
}

func TestAbortEndsTheRunAndLaterClicksAreRefused(t *testing.T) {
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), &scriptedRunner{})

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Abort")
	if i := buttonIndex(step1, "Abort"); i < 0 || !step1.Buttons()[i].Confirm {
		t.Error("Abort does not ask for confirmation")
	}
	click(t, srv, starter, step1, "Abort")

	waitText(t, srv, "Run halted", "aborted")
	r := h.onlyRun()
	if r.State != engine.RunAborted {
		t.Fatalf("run is %s, want aborted", r.State)
	}
	clickStale(t, srv, starter, step1, "Approve")
	waitEphemeral(t, srv, starter, "moved on")
	if got := h.onlyRun(); got.Seq != r.Seq {
		t.Errorf("a click after the abort changed the run (seq %d -> %d)", r.Seq, got.Seq)
	}
}

func TestCancelStopsARunningStep(t *testing.T) {
	srv := newSlack(t)
	runner := &scriptedRunner{}
	release := runner.holdSkill("deliver-prd")
	defer release()
	h := start(t, srv, t.TempDir(), runner)

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	running := waitStep(t, srv, 1, "Running", "Cancel")
	if len(running.Buttons()) != 1 {
		t.Errorf("a running step offers %v, want Cancel only", running.Buttons())
	}
	click(t, srv, starter, running, "Cancel")

	halt := waitText(t, srv, "Run halted", "cancelled by", "Redo", "Abort")
	if halt.ThreadTS != running.ThreadTS {
		t.Error("the halt message is not in the run's thread")
	}
	r := h.onlyRun()
	a := r.Steps[0].Latest()
	if a.Result != engine.ResultFailed || !strings.Contains(a.Reason, "cancelled by "+starter) {
		t.Errorf("attempt = %s %q, want FAILED cancelled by %s", a.Result, a.Reason, starter)
	}
	if got := labels(halt); strings.Join(got, ",") != "Redo,Abort" {
		t.Errorf("the halt message offers %v, want Redo and Abort", got)
	}
}

// ---- small readers of what fakeslack holds ----

// waitFiles waits until the thread holds files with all the names, and
// returns the thread's files by name.
func waitFiles(t *testing.T, srv *fakeslack.Server, thread string, names ...string) map[string]fakeslack.File {
	t.Helper()
	var got map[string]fakeslack.File
	err := srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool {
		got = map[string]fakeslack.File{}
		for _, f := range st.Files(channel, thread) {
			got[f.Name] = f
		}
		for _, n := range names {
			if _, ok := got[n]; !ok {
				return false
			}
		}
		return true
	})
	if err != nil {
		var have []string
		for n := range got {
			have = append(have, n)
		}
		t.Fatalf("the thread lacks %q (has %q): %v", names, have, err)
	}
	return got
}

func buttonIndex(m fakeslack.Message, label string) int {
	for i, b := range m.Buttons() {
		if b.Text == label {
			return i
		}
	}
	return -1
}

func labels(m fakeslack.Message) []string {
	var out []string
	for _, b := range m.Buttons() {
		out = append(out, b.Text)
	}
	return out
}

// viewInput finds the element of the modal's input block with actionID.
func viewInput(t *testing.T, v fakeslack.View, actionID string) map[string]any {
	t.Helper()
	var blocks []map[string]any
	if err := json.Unmarshal(v.Blocks, &blocks); err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		if el, ok := b["element"].(map[string]any); ok && el["action_id"] == actionID {
			return el
		}
	}
	t.Fatalf("modal %q has no input %q", v.CallbackID, actionID)
	return nil
}

func initialValue(t *testing.T, v fakeslack.View, actionID string) string {
	s, _ := viewInput(t, v, actionID)["initial_value"].(string)
	return s
}

func initialOption(t *testing.T, v fakeslack.View, actionID string) string {
	o, _ := viewInput(t, v, actionID)["initial_option"].(map[string]any)
	s, _ := o["value"].(string)
	if s == "" {
		t.Fatalf("modal %q: input %q has no initial option", v.CallbackID, actionID)
	}
	return s
}
