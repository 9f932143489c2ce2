package bot_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/fakeslack"
)

// Never lose a person's action: a modal opens on the click's trigger
// before anything else is asked of Slack, a submission a person can
// correct is answered under its field with the modal still open, and a
// command or a mention is answered as it arrives.

// longEditWithReply starts a chain whose first artifact is too long for
// the edit box, with a reply file in its thread from user, and returns the
// step's message once the thread is quiet.
func longEditWithReply(t *testing.T, srv *fakeslack.Server, user string) fakeslack.Message {
	t.Helper()
	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Edit")
	waitFiles(t, srv, step1.ThreadTS, "01-deliver-prd.md")
	file := srv.AddFile("prd-v2.md", []byte("# PRD v2\n\n"+strings.Repeat("A sharper requirement.\n", 150)))
	if _, err := srv.AddUserMessage(channel, step1.ThreadTS, user, "new version", file); err != nil {
		t.Fatal(err)
	}
	settle(srv, 100*time.Millisecond, 3*time.Second)
	return step1
}

func TestViewsOpenIsTheFirstCallAfterAnEditClick(t *testing.T) {
	srv := newSlack(t)
	srv.AddUserGroup(reviewGr, groupie)
	start(t, srv, t.TempDir(), longArtifactRunner(), withApprovers(reviewGr))
	step1 := longEditWithReply(t, srv, groupie)

	env := click(t, srv, groupie, step1, "Edit")
	offer := waitView(t, srv, 0)
	if offer.CallbackID != bot.ModalEditReply || offer.User != groupie || offer.Updates != 1 {
		t.Fatalf("modal %q for %s (%d updates), want the from-reply modal filled once for %s", offer.CallbackID, offer.User, offer.Updates, groupie)
	}
	sent := ack(t, srv, env).Sent
	var after []string
	for _, c := range srv.Calls("") {
		if !c.Time.Before(sent) {
			after = append(after, c.Method)
		}
	}
	if len(after) == 0 || after[0] != "views.open" {
		t.Fatalf("calls after the click: %v, want views.open first", after)
	}
	for _, m := range []string{"usergroups.users.list", "conversations.replies", "url_private", "views.update"} {
		if !strings.Contains(strings.Join(after, " "), m) {
			t.Errorf("calls after the click %v lack %s: the modal was not filled as expected", after, m)
		}
	}
}

func TestModalOpensOnTheClicksTriggerWhenSlackIsSlow(t *testing.T) {
	srv := newSlack(t)
	srv.AddUserGroup(reviewGr, groupie)
	h := start(t, srv, t.TempDir(), longArtifactRunner(), withApprovers(reviewGr))
	step1 := longEditWithReply(t, srv, groupie)

	// Every call but views.open now takes 2 s: checking the group, reading
	// the thread and filling the modal take 6 s, twice a trigger's life.
	srv.Delay("", 2*time.Second)
	srv.Delay("views.open", 0)
	env := click(t, srv, groupie, step1, "Edit")
	sent := ack(t, srv, env).Sent
	offer := waitView(t, srv, 0)
	if offer.CallbackID != bot.ModalEditReply || offer.User != groupie || !strings.Contains(offer.Rendered, "prd-v2.md") {
		t.Fatalf("modal %q for %s: %q, want the from-reply modal offering prd-v2.md", offer.CallbackID, offer.User, offer.Rendered)
	}
	if opened := offer.Opened.Sub(sent); opened > fakeslack.TriggerLife {
		t.Errorf("the modal opened %v after the click was sent", opened)
	}
	if took := offer.Updated.Sub(sent); took < 4*time.Second {
		t.Errorf("the modal was filled %v after the click: the delays did not apply", took)
	}
	for _, c := range srv.Calls("views.open") {
		if c.Error != "" {
			t.Errorf("views.open failed: %s", c.Error)
		}
	}

	srv.Delay("", 0)
	sub, err := srv.SubmitView(groupie, offer.ID, map[string]string{bot.InputReply: initialOption(t, offer, bot.InputReply)})
	if err != nil {
		t.Fatal(err)
	}
	ack(t, srv, sub)
	waitStep(t, srv, 2, "deliver-user-stories", "Approve")
	if ds := h.decisions(h.onlyRun().ID); len(ds) != 1 || ds[0].Decision != engine.DecideEdit || ds[0].Actor != groupie {
		t.Errorf("decisions = %+v, want the group member's edit", ds)
	}
	if es := afterAcks(srv.Ephemerals(groupie)); len(es) != 0 {
		t.Errorf("the group member was told %q", es[0].Text)
	}
}

// A views.open that Slack holds off past the trigger's life is not tried
// again: the person is told to press the button again.
func TestModalThatCannotOpenInTimeIsNotRetried(t *testing.T) {
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), &scriptedRunner{})
	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Redo")
	before := h.onlyRun().Seq

	srv.RateLimit("views.open", 1, 3*time.Second)
	click(t, srv, starter, step1, "Redo")
	e := waitEphemeral(t, srv, starter, "did not open the Redo form in time", "Press *Redo* again")
	if e.ThreadTS != step1.ThreadTS {
		t.Error("the notice is not in the run's thread")
	}
	if n := len(srv.Calls("views.open")); n != 1 {
		t.Errorf("views.open was called %d times, want once: no call after the trigger's 2.5 s", n)
	}
	if got := h.onlyRun().Seq; got != before {
		t.Errorf("the run changed (seq %d -> %d)", before, got)
	}
}

// submitExpectingErrors submits a modal as user and checks that the ack
// answers with field errors (the fake checks that each names an input
// block of the view), that the modal stays open showing them, and returns
// them.
func submitExpectingErrors(t *testing.T, srv *fakeslack.Server, user, viewID string, values map[string]string) map[string]string {
	t.Helper()
	env, err := srv.SubmitView(user, viewID, values)
	if err != nil {
		t.Fatal(err)
	}
	var resp slack.ViewSubmissionResponse
	if err := json.Unmarshal(ack(t, srv, env).Payload, &resp); err != nil || resp.ResponseAction != slack.RAErrors || len(resp.Errors) == 0 {
		t.Fatalf("the ack of %v carries %+v (%v), want field errors", values, resp, err)
	}
	v, _ := srv.View(viewID)
	if v.Closed || len(v.Errors) != len(resp.Errors) {
		t.Errorf("the modal is closed (%v) or shows %v, want it open with %v", v.Closed, v.Errors, resp.Errors)
	}
	return resp.Errors
}

func TestBadSubmissionsAreAnsweredUnderTheField(t *testing.T) {
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), &scriptedRunner{})
	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Edit", "Redo")

	click(t, srv, starter, step1, "Edit")
	edit := waitView(t, srv, 0)
	click(t, srv, starter, step1, "Redo")
	redo := waitView(t, srv, 1)
	for _, c := range []struct {
		name, view, input, block, want string
		value                          string
	}{
		{"blank artifact", edit.ID, bot.InputArtifact, bot.BlockArtifact, "empty", " \n\t\n"},
		{"artifact with a control character", edit.ID, bot.InputArtifact, bot.BlockArtifact, "control character", "# PRD\n\x1b[31mred\n"},
		{"feedback with a control character", redo.ID, bot.InputFeedback, bot.BlockFeedback, "control character", "make it \x07louder"},
		// Slack's client keeps to the input's max_length; a payload that
		// does not is answered the same way.
		{"feedback too long", redo.ID, bot.InputFeedback, bot.BlockFeedback, "the limit is 3000", strings.Repeat("more detail ", 251)},
	} {
		t.Run(c.name, func(t *testing.T) {
			errs := submitExpectingErrors(t, srv, starter, c.view, map[string]string{c.input: c.value})
			if !strings.Contains(errs[c.block], c.want) || len(errs) != 1 {
				t.Errorf("field errors %v, want one under %s saying %q", errs, c.block, c.want)
			}
		})
	}

	// The step moves on while both modals are open: submitting either is
	// answered under its field.
	click(t, srv, starter, step1, "Approve")
	waitStep(t, srv, 2, "deliver-user-stories", "Approve")
	if errs := submitExpectingErrors(t, srv, starter, edit.ID, map[string]string{bot.InputArtifact: "# PRD\n\nFine now.\n"}); !strings.Contains(errs[bot.BlockArtifact], "moved on") {
		t.Errorf("edit after the step moved on: %v", errs)
	}
	if errs := submitExpectingErrors(t, srv, starter, redo.ID, map[string]string{bot.InputFeedback: "again"}); !strings.Contains(errs[bot.BlockFeedback], "moved on") {
		t.Errorf("redo after the step moved on: %v", errs)
	}

	settle(srv, 100*time.Millisecond, 2*time.Second)
	r := h.onlyRun()
	if ds := h.decisions(r.ID); len(ds) != 1 || ds[0].Decision != engine.DecideApprove {
		t.Errorf("decisions = %+v, want the one approval", ds)
	}
	if a := r.Steps[0].Latest(); a.N != 1 || a.Edited {
		t.Errorf("step 1's attempt %d edited %v: a refused submission changed it", a.N, a.Edited)
	}
	if es := afterAcks(srv.Ephemerals(starter)); len(es) != 0 {
		t.Errorf("the starter was also told %q", es[0].Text)
	}
}

func TestEditFromReplyAfterTheStepMovedOnIsAnsweredUnderTheField(t *testing.T) {
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), longArtifactRunner())
	step1 := longEditWithReply(t, srv, starter)
	click(t, srv, starter, step1, "Edit")
	offer := waitView(t, srv, 0)
	if offer.CallbackID != bot.ModalEditReply {
		t.Fatalf("modal %q, want the from-reply modal", offer.CallbackID)
	}
	if errs := submitExpectingErrors(t, srv, starter, offer.ID, map[string]string{bot.InputReply: ""}); !strings.Contains(errs[bot.BlockReply], "choose the reply") {
		t.Errorf("no reply chosen: field errors %v", errs)
	}
	click(t, srv, starter, step1, "Skip")
	waitStep(t, srv, 2, "deliver-user-stories", "Approve")

	errs := submitExpectingErrors(t, srv, starter, offer.ID, map[string]string{bot.InputReply: initialOption(t, offer, bot.InputReply)})
	if !strings.Contains(errs[bot.BlockReply], "moved on") {
		t.Errorf("field errors %v, want the step moved on under %s", errs, bot.BlockReply)
	}
	settle(srv, 100*time.Millisecond, 2*time.Second)
	if ds := h.decisions(h.onlyRun().ID); len(ds) != 1 || ds[0].Decision != engine.DecideSkip {
		t.Errorf("decisions = %+v, want the skip only", ds)
	}
	if len(srv.Calls("url_private")) != 1 {
		t.Errorf("the reply was downloaded %d times, want once (to offer it)", len(srv.Calls("url_private")))
	}
}

// A slash command is answered in its acknowledgement: the person sees
// what starts, or why nothing does, before any thread exists.
func TestSlashCommandIsAnsweredInItsAck(t *testing.T) {
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), &scriptedRunner{})

	for _, c := range []struct{ name, user, team, text, want string }{
		{"unknown skill", "U0A", fakeslack.TeamID, "chain deliver-prx", "did you mean"},
		{"trailing separator", "U0B", fakeslack.TeamID, "chain deliver-prd ->", "Refused"},
		{"help", "U0C", fakeslack.TeamID, "help", "runs"},
		{"check", "U0E", fakeslack.TeamID, "check deliver-prd -> deliver-user-stories", "To run it"},
		{"another organization", "U0D", "T0OTHERORG", "chain deliver-prd", "own workspace"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := srv.SendSlashCommand(slack.SlashCommand{Command: "/gonogo", UserID: c.user, ChannelID: channel, TeamID: c.team, Text: c.text})
			a := ack(t, srv, env)
			var msg slack.Msg
			if err := json.Unmarshal(a.Payload, &msg); err != nil || !strings.Contains(msg.Text+string(a.Payload), c.want) {
				t.Fatalf("the ack carries %s (%v), want an answer saying %q", a.Payload, err, c.want)
			}
			es := srv.Ephemerals(c.user)
			if len(es) != 1 || es[0].Via != "ack" || es[0].Time.After(a.Acked) {
				t.Errorf("%s was shown %+v, want the ack's answer only", c.user, es)
			}
		})
	}
	settle(srv, 100*time.Millisecond, 2*time.Second)
	if n := len(srv.Calls("chat.postEphemeral")); n != 0 {
		t.Errorf("%d ephemerals were posted besides the acks' answers", n)
	}
	if n := h.runCount(); n != 0 {
		t.Errorf("%d runs started", n)
	}

	env := slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	a := ack(t, srv, env)
	waitText(t, srv, "gonogo chain run")
	es := srv.Ephemerals(starter)
	if len(es) != 1 || es[0].Via != "ack" || !containsAll(es[0].Rendered, "Starting chain", "2 steps", "checkpointed") {
		t.Fatalf("the starter was shown %+v, want what starts", es)
	}
	// The answer is the ack's own payload (Via "ack" above), so the person
	// has it as soon as Slack has the ack. The ack is sent on the socket
	// before the run starts, but the fake may read it after the thread's
	// first post (over HTTP), which Slack's two channels do not order
	// either: the order is not compared.
	if es[0].Time.After(a.Acked) {
		t.Errorf("the answer came at %v, after the ack at %v: want it with the ack", es[0].Time, a.Acked)
	}
}

// A mention is answered with an ephemeral before its plan file is
// fetched: its acknowledgement cannot carry a message.
func TestMentionIsAnsweredBeforeTheFileIsRead(t *testing.T) {
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), &scriptedRunner{})
	file := srv.AddFile("ferry-plan.md", []byte(plan))
	_, env, err := srv.SendMention(channel, "", starter, "run this --dry-run --yes", file)
	if err != nil {
		t.Fatal(err)
	}
	if a := ack(t, srv, env); len(a.Payload) != 0 && string(a.Payload) != "null" {
		t.Errorf("an app_mention's ack carries %s", a.Payload)
	}
	e := waitEphemeral(t, srv, starter, "Reading `ferry-plan.md`")
	waitText(t, srv, "Step 1 of 2")
	var order []string
	for _, c := range srv.Calls("") {
		if c.Method == "chat.postEphemeral" || c.Method == "url_private" || c.Method == "chat.postMessage" {
			order = append(order, c.Method)
		}
	}
	if len(order) < 3 || order[0] != "chat.postEphemeral" || order[1] != "url_private" {
		t.Errorf("calls %v: want the answer before the download and the thread", order)
	}
	if e.Via != "chat.postEphemeral" || h.runCount() != 1 {
		t.Errorf("answer %+v, %d runs", e, h.runCount())
	}

	// A mention without a plan is refused once, at once.
	_, env, err = srv.SendMention(channel, "", "U0NOFILE", "what now?")
	if err != nil {
		t.Fatal(err)
	}
	ack(t, srv, env)
	waitEphemeral(t, srv, "U0NOFILE", "attach")
	settle(srv, 100*time.Millisecond, 2*time.Second)
	if n := len(srv.Ephemerals("U0NOFILE")); n != 1 {
		t.Errorf("the refusal was told %d times", n)
	}
}

// With GONOGO_CONFIRM_START the answer says that the run waits for Start.
func TestSlashCommandAnswerSaysTheRunWaitsForStart(t *testing.T) {
	srv := newSlack(t)
	start(t, srv, t.TempDir(), &scriptedRunner{}, confirmStart())
	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	waitText(t, srv, "Preview")
	if es := srv.Ephemerals(starter); len(es) != 1 || es[0].Via != "ack" || !containsAll(es[0].Rendered, "Previewing chain", "*Start*") {
		t.Errorf("the starter was shown %+v, want the preview announced", es)
	}
}
