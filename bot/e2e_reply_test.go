package bot_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/internal/fakeslack"
)

// A decision shows in the clicked message through the click's
// response_url, outside chat.update's rate tier; when Slack refuses the
// url, the same change goes through chat.update.

// updatesOf returns the calls of method that changed the message ts.
func updatesOf(srv *fakeslack.Server, method, ts string) []fakeslack.Call {
	var out []fakeslack.Call
	for _, c := range srv.Calls(method) {
		if c.Params.Get("ts") == ts {
			out = append(out, c)
		}
	}
	return out
}

func TestDecisionShowsThroughTheClicksResponseURL(t *testing.T) {
	srv := newSlack(t)
	start(t, srv, t.TempDir(), &scriptedRunner{})

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approve")
	before := len(updatesOf(srv, "chat.update", step1.TS))
	click(t, srv, starter, step1, "Approve")
	waitMsg(t, srv, "step 1 approved", func(m fakeslack.Message) bool {
		return m.TS == step1.TS && strings.Contains(m.Rendered, "Approved by") && len(m.Buttons()) == 0
	})
	waitStep(t, srv, 2, "deliver-user-stories", "Approve")

	replies := updatesOf(srv, "response_url", step1.TS)
	if len(replies) != 1 {
		t.Fatalf("%d posts to the click's response_url, want 1 (the decision's update)", len(replies))
	}
	if c := replies[0]; c.Status != http.StatusOK || !strings.Contains(string(c.JSON), `"replace_original":true`) {
		t.Errorf("the response_url post was answered %d, body %s: want a replace_original Slack took", c.Status, c.JSON)
	}
	if n := len(updatesOf(srv, "chat.update", step1.TS)) - before; n != 0 {
		t.Errorf("%d chat.update calls on step 1's message after the click, want none: the click's response_url carried the decision", n)
	}
}

func TestRefusedResponseURLFallsBackToChatUpdate(t *testing.T) {
	srv := newSlack(t)
	runner := &scriptedRunner{}
	start(t, srv, t.TempDir(), runner)

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Redo")
	// The second attempt waits: once it has an artifact, its file rides on
	// a chat.update (a response_url cannot carry one), and the click's url
	// would not be tried at all.
	release := runner.holdSkill("deliver-prd")
	defer release()
	click(t, srv, starter, step1, "Redo")
	modal := waitView(t, srv, 0)
	// Slack no longer takes the click's url (as after 30 minutes); the bot
	// still counts it fresh, tries it, and falls back.
	srv.AgeResponseURLs(31 * time.Minute)
	before := len(updatesOf(srv, "chat.update", step1.TS))
	env, err := srv.SubmitView(starter, modal.ID, map[string]string{bot.InputFeedback: "Shorter, please."})
	if err != nil {
		t.Fatal(err)
	}
	ack(t, srv, env)
	waitMsg(t, srv, "step 1's second attempt running", func(m fakeslack.Message) bool {
		return m.TS == step1.TS && strings.Contains(m.Rendered, "attempt 2")
	})
	release()
	waitMsg(t, srv, "step 1's second attempt", func(m fakeslack.Message) bool {
		return m.TS == step1.TS && containsAll(m.Rendered, "attempt 2", "Approve")
	})
	replies := updatesOf(srv, "response_url", step1.TS)
	if len(replies) == 0 || replies[0].Status != http.StatusNotFound {
		t.Fatalf("response_url posts for step 1: %+v; want the expired url tried once and refused", replies)
	}
	if len(replies) != 1 {
		t.Errorf("%d posts to a url Slack refused, want 1: a refused url is dropped", len(replies))
	}
	if n := len(updatesOf(srv, "chat.update", step1.TS)) - before; n == 0 {
		t.Error("no chat.update after the response_url was refused: the redo never showed")
	}
}
