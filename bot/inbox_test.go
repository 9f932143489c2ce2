package bot_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/bot/fakeslack"
	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/storage"
)

// dyingInbox keeps envelopes but never marks one done: the process it
// stands for dies before it can.
type dyingInbox struct{ *storage.Inbox }

func (dyingInbox) Done(context.Context, ...uint64) error { return nil }

// lostDecisions is an engine whose decisions vanish: the process it stands
// for acknowledged the click and died before applying it.
type lostDecisions struct{ bot.Engine }

func (l lostDecisions) Decide(ctx context.Context, id engine.RunID, _ engine.Decision, _ []byte) (*engine.Run, error) {
	return l.Load(ctx, id)
}

// openInbox opens an inbox in dir, for the bot's envelopes; it is closed
// when the test ends. The harness opens and closes the runs' store itself.
func openInbox(t *testing.T, dir string) *storage.Inbox {
	t.Helper()
	in, err := storage.OpenInbox(dir, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close() })
	return in
}

func withInbox(in engine.Inbox) option { return withConfig(func(c *bot.Config) { c.Inbox = in }) }

// pending is how many envelopes the inbox still holds.
func pending(t *testing.T, in *storage.Inbox) int {
	t.Helper()
	items, err := in.Pending(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return len(items)
}

// drained waits until the inbox holds nothing (an envelope carried out is
// marked done a moment after its effect shows), and returns what it still
// holds when it gives up.
func drained(t *testing.T, in *storage.Inbox) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // a hang guard
	for {
		n := pending(t, in)
		if n == 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// An Approve acknowledged by a process that died before applying it is
// applied by the next one, from the inbox, once.
func TestAckedClickLostWithTheProcessIsAppliedAfterTheRestart(t *testing.T) {
	srv := newSlack(t)
	dir := t.TempDir()
	inbox := openInbox(t, t.TempDir())
	h := start(t, srv, dir, &scriptedRunner{}, withInbox(dyingInbox{inbox}),
		withEngine(func(e bot.Engine) bot.Engine { return lostDecisions{e} }))

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approve")
	click(t, srv, starter, step1, "Approve")
	settle(srv, 100*time.Millisecond, 2*time.Second)
	id := h.onlyRun().ID
	if ds := h.decisions(id); len(ds) != 0 {
		t.Fatalf("the lost click was applied: %+v", ds)
	}
	if n := pending(t, inbox); n != 2 {
		t.Fatalf("the inbox holds %d envelopes, want the command and the click", n)
	}
	h.stop()

	h = start(t, srv, dir, &scriptedRunner{}, withInbox(inbox))
	waitStep(t, srv, 2, "deliver-user-stories", "Approve")
	settle(srv, 100*time.Millisecond, 2*time.Second)
	ds := h.decisions(id)
	if len(ds) != 1 || ds[0].Decision != engine.DecideApprove || ds[0].Actor != starter {
		t.Errorf("decisions after the restart = %+v, want the one approval", ds)
	}
	if h.runCount() != 1 {
		t.Errorf("%d runs after the command was carried out again, want 1", h.runCount())
	}
	if n := drained(t, inbox); n != 0 {
		t.Errorf("the inbox still holds %d envelopes", n)
	}
	if es := afterAcks(srv.Ephemerals(starter)); len(es) != 0 {
		t.Errorf("the starter was told %q; carrying out the inbox again says nothing", es[0].Text)
	}
	if got := h.bot.Metrics(); !strings.Contains(metricsText(got), "gonogo_envelopes_replayed_total 2") {
		t.Errorf("metrics do not count the two envelopes carried out again:\n%s", metricsText(got))
	}
}

// A process that applied a click and died before marking it done leaves it
// in the inbox; the next one finds the decision in the run and says
// nothing.
func TestAppliedClickLeftInTheInboxChangesNothing(t *testing.T) {
	srv := newSlack(t)
	dir := t.TempDir()
	inbox := openInbox(t, t.TempDir())
	h := start(t, srv, dir, &scriptedRunner{}, withInbox(dyingInbox{inbox}), withQuorum(2, false), withApprovers(approver))

	slash(t, srv, starter, "chain deliver-prd")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approvals: 0 of 2")
	click(t, srv, starter, step1, "Approve")
	waitStep(t, srv, 1, "deliver-prd", "Approvals: 1 of 2")
	id := h.onlyRun().ID
	h.stop()

	h = start(t, srv, dir, &scriptedRunner{}, withInbox(inbox), withQuorum(2, false), withApprovers(approver))
	settle(srv, 100*time.Millisecond, 2*time.Second)
	if ds := h.decisions(id); len(ds) != 1 {
		t.Errorf("decisions after the restart = %+v, want the one approval", ds)
	}
	if h.runCount() != 1 {
		t.Errorf("%d runs, want 1", h.runCount())
	}
	if n := drained(t, inbox); n != 0 {
		t.Errorf("the inbox still holds %d envelopes", n)
	}
	if es := afterAcks(srv.Ephemerals(starter)); len(es) != 0 {
		t.Errorf("the starter was told %q after the restart, want nothing", es[0].Text)
	}
	// The run goes on from where it was.
	click(t, srv, approver, step1, "Approve")
	waitText(t, srv, "Run complete")
}

// flakyInbox fails to keep envelopes while broken is set.
type flakyInbox struct {
	*storage.Inbox
	broken atomic.Bool
}

func (f *flakyInbox) Record(ctx context.Context, envelope []byte) (uint64, error) {
	if f.broken.Load() {
		return 0, errors.New("disk full")
	}
	return f.Inbox.Record(ctx, envelope)
}

// What cannot be kept is not acknowledged, so Slack sends it again; once
// kept, it is acknowledged and carried out.
func TestEnvelopeThatCannotBeKeptIsNotAcknowledged(t *testing.T) {
	srv := newSlack(t)
	inbox := &flakyInbox{Inbox: openInbox(t, t.TempDir())}
	inbox.broken.Store(true)
	h := start(t, srv, t.TempDir(), &scriptedRunner{}, withInbox(inbox))

	env := srv.SendSlashCommand(slackCommand(starter, "chain deliver-prd"))
	settle(srv, 100*time.Millisecond, time.Second)
	if srv.Acked(env) {
		t.Fatal("an envelope the inbox refused was acknowledged")
	}
	if h.runCount() != 0 {
		t.Fatal("an envelope that was not acknowledged was carried out")
	}
	inbox.broken.Store(false)
	if err := srv.Redeliver(env); err != nil {
		t.Fatal(err)
	}
	ack(t, srv, env)
	waitStep(t, srv, 1, "deliver-prd", "Approve")
	if h.runCount() != 1 {
		t.Errorf("%d runs, want 1", h.runCount())
	}
}

func slackCommand(user, text string) slack.SlashCommand {
	return slack.SlashCommand{Command: "/gonogo", UserID: user, ChannelID: channel, TeamID: fakeslack.TeamID, Text: text}
}

func metricsText(m *bot.Metrics) string {
	var b strings.Builder
	m.Write(&b, nil, nil)
	return b.String()
}
