package bot_test

import (
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// An envelope is acknowledged before it is handled, and Slack never
// redelivers an acknowledged one: a click still queued when the bot is told
// to stop (a deploy) is carried out before it stops, and a decision never
// waits behind a reply that Slack is rate-limiting (here refusals to an
// outsider, answered with a 429).
func TestClickAckedBeforeShutdownIsApplied(t *testing.T) {
	srv := newSlack(t)
	dir := t.TempDir()
	h := start(t, srv, dir, &scriptedRunner{})

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approve")
	id := h.onlyRun().ID

	const outsider = "U0OUTSIDER"
	srv.RateLimit("chat.postEphemeral", 1, time.Second)
	for range 4 {
		click(t, srv, outsider, step1, "Approve")
	}
	// The starter's click is acknowledged at once, and gonogo is stopped
	// right after.
	click(t, srv, starter, step1, "Approve")
	h.stop()
	time.Sleep(1100 * time.Millisecond) // the restarted bot cannot know the old 429's window

	h = start(t, srv, dir, &scriptedRunner{})
	eventually(t, "the starter's Approve is in the journal", func() bool { return len(h.decisions(id)) > 0 })
	// Then quiet, so that a second application would show.
	settle(srv, 200*time.Millisecond, 3*time.Second)
	if ds := h.decisions(id); len(ds) != 1 {
		t.Fatalf("the starter's acknowledged Approve was not applied exactly once (journal holds %d decisions)", len(ds))
	}
	if r := h.onlyRun(); r.Steps[0].Status != engine.StepDone {
		t.Errorf("step 1 is %s, want done", r.Steps[0].Status)
	}
}
