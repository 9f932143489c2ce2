package bot_test

import (
	"github.com/slack-go/slack"
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/fakeslack"
)

// A slash command works in any channel, but the bot can post only where it
// was invited. There, the run it started is stopped at once (nobody could
// see or decide it, and it must not go on spending), and the person who
// typed the command is told through the command's response_url, which
// needs no membership.
func TestSlashCommandInChannelWithoutBot(t *testing.T) {
	srv := newSlack(t)
	runner := &scriptedRunner{}
	h := start(t, srv, t.TempDir(), runner)
	srv.Fail("chat.postMessage", 50, "not_in_channel")
	srv.Fail("chat.postEphemeral", 50, "not_in_channel")

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	err := srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool {
		for _, e := range st.Ephemerals(starter) {
			if strings.Contains(e.Text, "cannot post in this channel") && strings.Contains(e.Text, "/invite") {
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("the person who typed the command was not told: %v", err)
	}
	eventually(t, "the unreachable run is aborted", func() bool { return h.onlyRun().State == engine.RunAborted })
	// Then quiet, so that a step started after all would show.
	settle(srv, 200*time.Millisecond, 3*time.Second)
	if r := h.onlyRun(); r.State != engine.RunAborted {
		t.Errorf("the unreachable run is %s, want aborted", r.State)
	}
	if jobs := runner.jobs(); len(jobs) > 1 {
		t.Errorf("%d agent steps ran for a run nobody can see", len(jobs))
	}
}

// A person from another organization (a Slack Connect channel) who is not
// a listed approver cannot start a run, and so cannot approve one alone.
func TestOutsiderCannotStartRuns(t *testing.T) {
	srv := newSlack(t)
	runner := &scriptedRunner{}
	h := start(t, srv, t.TempDir(), runner)
	env := srv.SendSlashCommand(slack.SlashCommand{Command: "/gonogo", UserID: "U0GUEST", ChannelID: channel,
		TeamID: "T0OTHERORG", Text: "chain deliver-prd -> deliver-user-stories"})
	ack(t, srv, env)
	err := srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool {
		for _, e := range st.Ephemerals("U0GUEST") {
			if strings.Contains(e.Text, "own workspace") {
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("the outsider was not told: %v", err)
	}
	if n := h.runCount(); n != 0 {
		t.Fatalf("%d runs started for an outsider", n)
	}
}

// A person from another organization may not decide on a run either,
// unless the approvers name them; the engine applies the rule, the bot
// says who the person is.
func TestOutsiderCannotDecideUnlessNamed(t *testing.T) {
	srv := newSlack(t)
	const guest, partner = "U0GUEST", "U0PARTNER"
	h := start(t, srv, t.TempDir(), &scriptedRunner{}, withApprovers(partner))
	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approve")
	before := h.onlyRun()

	clickFrom(t, srv, guest, "T0OTHERORG", step1, "Approve")
	if e := waitEphemeral(t, srv, guest, "Only <@"+starter+">"); !strings.Contains(e.Rendered, "Nothing changed") {
		t.Errorf("refusal = %q", e.Rendered)
	}
	if got := h.onlyRun(); got.Seq != before.Seq {
		t.Fatalf("an outsider changed the run (seq %d -> %d)", before.Seq, got.Seq)
	}
	clickFrom(t, srv, partner, "T0OTHERORG", step1, "Approve")
	waitStep(t, srv, 2, "deliver-user-stories", "Approve")
	if ds := h.decisions(before.ID); len(ds) != 1 || ds[0].Actor != partner {
		t.Errorf("decisions = %+v, want the named partner's approval", ds)
	}
}
