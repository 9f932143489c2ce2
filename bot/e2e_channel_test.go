package bot_test

import (
	"github.com/slack-go/slack"
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/bot/fakeslack"
	"github.com/gonogo/gonogo/engine"
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
