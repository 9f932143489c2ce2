package bot_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/fakeslack"
)

// A run's thread catches up after Slack refused an update: a failed sync
// is tried again, and a message that is gone is posted anew.

// waitStepOrErr is waitStep that returns its error, for a test to say
// what never showed. Its wait only guards against a hang.
func waitStepOrErr(t *testing.T, srv *fakeslack.Server, n int, want ...string) (fakeslack.Message, error) {
	t.Helper()
	prefix := "*Step " + strconv.Itoa(n) + " of "
	return srv.WaitMessage(ctxT(t), channel, func(m fakeslack.Message) bool {
		return strings.HasPrefix(m.Text, prefix) && containsAll(m.Rendered, want...)
	})
}

// A header message someone deleted (or a retention policy removed) is
// posted again, and the next checkpoint's message still arrives, so the run
// can be decided from Slack.
func TestDeletedHeaderIsPostedAgain(t *testing.T) {
	srv := newSlack(t)
	start(t, srv, t.TempDir(), &scriptedRunner{})

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approve")

	// Someone deletes the run's root (header) message.
	admin := slack.New(srv.BotToken(), slack.OptionAPIURL(srv.APIURL()))
	if _, _, err := admin.DeleteMessage(channel, step1.ThreadTS); err != nil {
		t.Fatal(err)
	}
	click(t, srv, starter, step1, "Approve")

	if _, err := waitStepOrErr(t, srv, 2, "deliver-user-stories", "Approve"); err != nil {
		t.Fatalf("step 2's checkpoint was never posted after the header was deleted: %v\n%s", err, dump(srv))
	}
}

// A transient Slack error answered as {"ok":false} (internal_error,
// fatal_error, request_timeout) is retried: the step message gives way
// from "Running" with Cancel to the checkpoint's Approve.
func TestTransientErrorIsRetried(t *testing.T) {
	srv := newSlack(t)
	runner := &scriptedRunner{}
	release := runner.holdSkill("deliver-prd")
	defer release()
	h := start(t, srv, t.TempDir(), runner)

	slash(t, srv, starter, "chain deliver-prd")
	waitStep(t, srv, 1, "Running", "Cancel")
	settle(srv, 100*time.Millisecond, 2*time.Second)

	srv.Fail("chat.update", 2, "internal_error")
	release()
	r := h.onlyRun()
	waitState(t, h.svc, r.ID, engine.RunWaiting)

	if _, err := waitStepOrErr(t, srv, 1, "deliver-prd", "Approve"); err != nil {
		t.Fatalf("the run waits for a decision but its step message never got the buttons: %v\n%s", err, dump(srv))
	}
}
