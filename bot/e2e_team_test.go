package bot_test

import (
	"strings"
	"testing"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
)

// Who may decide (the starter, GONOGO_APPROVERS and the members of the user
// groups listed there), and checkpoints that need several approvals.

const (
	stranger = "U0STRANGER"
	approver = "U0APPROVER"
	groupie  = "U0GROUPIE"
	reviewGr = "S0REVIEWERS"
)

func TestStrangersAreRefusedAndNothingChanges(t *testing.T) {
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), &scriptedRunner{}, withApprovers(approver))

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approve")
	before := h.onlyRun()

	for i, label := range []string{"Approve", "Skip", "Abort"} {
		click(t, srv, stranger, step1, label)
		e := waitEphemeralN(t, srv, stranger, i+1)
		if !containsAll(e.Rendered, "Only <@"+starter+">", "Nothing changed") || e.ThreadTS != step1.ThreadTS {
			t.Errorf("%s: refusal %q in thread %q", label, e.Rendered, e.ThreadTS)
		}
	}
	// Edit and Redo open their modal at once, on the click; it says the
	// stranger may not decide, and offers nothing to submit.
	for i, label := range []string{"Edit", "Redo"} {
		click(t, srv, stranger, step1, label)
		v := waitView(t, srv, i)
		if v.User != stranger || !containsAll(v.Rendered, label+" step 1", "Only <@"+starter+">", "Nothing changed") ||
			strings.Contains(string(v.JSON), `"submit"`) {
			t.Errorf("%s: the stranger's modal says %q (%s)", label, v.Rendered, v.JSON)
		}
	}

	// A modal opened by the starter and submitted by someone else (a forged
	// submission) is refused as well.
	click(t, srv, starter, step1, "Redo")
	modal := waitView(t, srv, 2)
	env, err := srv.SubmitView(stranger, modal.ID, map[string]string{bot.InputFeedback: "do it my way"})
	if err != nil {
		t.Fatal(err)
	}
	ack(t, srv, env)
	if e := waitEphemeralN(t, srv, stranger, 4); !containsAll(e.Rendered, "Only <@"+starter+">", "Nothing changed") {
		t.Errorf("forged submission: refusal %q", e.Rendered)
	}

	after := h.onlyRun()
	if after.Seq != before.Seq || after.State != engine.RunWaiting || len(h.decisions(after.ID)) != 0 {
		t.Errorf("strangers changed the run: seq %d -> %d, state %s, decisions %+v",
			before.Seq, after.Seq, after.State, h.decisions(after.ID))
	}
	if len(h.runner.jobs()) != 1 {
		t.Errorf("the runner ran %d jobs, want 1", len(h.runner.jobs()))
	}
}

func TestApproversAndGroupMembersMayDecide(t *testing.T) {
	srv := newSlack(t)
	srv.AddUserGroup(reviewGr, "U0OTHER", groupie)
	h := start(t, srv, t.TempDir(), &scriptedRunner{}, withApprovers(approver, reviewGr))

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approve")
	click(t, srv, approver, step1, "Approve")
	step2 := waitStep(t, srv, 2, "deliver-user-stories", "Approve")
	click(t, srv, groupie, step2, "Approve")
	waitText(t, srv, "Run complete")

	r := h.onlyRun()
	ds := h.decisions(r.ID)
	if len(ds) != 2 || ds[0].Actor != approver || ds[1].Actor != groupie {
		t.Errorf("decisions = %+v, want approvals by %s then %s", ds, approver, groupie)
	}
	if len(srv.Calls("usergroups.users.list")) == 0 {
		t.Error("the user group's members were never read")
	}
	if n := len(afterAcks(srv.Ephemerals(""))); n != 0 {
		t.Errorf("%d refusals, want none", n)
	}
}

func TestQuorumNeedsDistinctApprovals(t *testing.T) {
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), &scriptedRunner{}, withApprovers(approver), withQuorum(2, false))

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approvals: 0 of 2", "Approve")
	click(t, srv, starter, step1, "Approve")
	step1 = waitStep(t, srv, 1, "deliver-prd", "Approvals: 1 of 2", "Approve")
	r := h.onlyRun()
	if r.Steps[0].Status != engine.StepWaiting || r.Steps[1].Status != engine.StepPending {
		t.Fatalf("after one of two approvals steps are %s and %s, want waiting and pending", r.Steps[0].Status, r.Steps[1].Status)
	}

	click(t, srv, starter, step1, "Approve")
	waitEphemeral(t, srv, starter, "already approved")
	if got := h.onlyRun(); got.Seq != r.Seq {
		t.Errorf("a second approval by the same person changed the run (seq %d -> %d)", r.Seq, got.Seq)
	}

	click(t, srv, approver, step1, "Approve")
	waitStep(t, srv, 2, "deliver-user-stories", "Approve")
	ds := h.decisions(r.ID)
	if len(ds) != 2 || ds[0].Actor != starter || ds[1].Actor != approver {
		t.Errorf("decisions = %+v, want approvals by %s and %s", ds, starter, approver)
	}
	final, _ := srv.Message(channel, step1.TS)
	if !containsAll(final.Rendered, starter, approver) || len(final.Buttons()) != 0 {
		t.Errorf("step 1 after the quorum: %q, buttons %v", final.Rendered, final.Buttons())
	}
}

func TestQuorumCanExcludeTheStarter(t *testing.T) {
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), &scriptedRunner{}, withApprovers(approver, reviewGr), withQuorum(2, true))
	srv.AddUserGroup(reviewGr, groupie)

	slash(t, srv, starter, "chain deliver-prd")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approvals: 0 of 2", "own approval does not count")
	click(t, srv, starter, step1, "Approve")
	e := waitEphemeral(t, srv, starter, "starter cannot approve")
	if !strings.Contains(e.Rendered, "Not counted") {
		t.Errorf("refusal = %q", e.Rendered)
	}
	if ds := h.decisions(h.onlyRun().ID); len(ds) != 0 {
		t.Fatalf("the starter's approval was recorded: %+v", ds)
	}

	click(t, srv, approver, step1, "Approve")
	waitStep(t, srv, 1, "deliver-prd", "Approvals: 1 of 2")
	click(t, srv, groupie, step1, "Approve")
	waitText(t, srv, "Run complete")
	if r := h.onlyRun(); r.State != engine.RunCompleted {
		t.Errorf("run is %s, want completed", r.State)
	}
}
