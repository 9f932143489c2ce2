package bot_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/hangguard"
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
	deadline := hangguard.Deadline(t)
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
	// Both envelopes carried out, then quiet: what they did twice, or
	// said, would show by now.
	left := drained(t, inbox)
	settle(srv, 100*time.Millisecond, 2*time.Second)
	ds := h.decisions(id)
	if len(ds) != 1 || ds[0].Decision != engine.DecideApprove || ds[0].Actor != starter {
		t.Errorf("decisions after the restart = %+v, want the one approval", ds)
	}
	if h.runCount() != 1 {
		t.Errorf("%d runs after the command was carried out again, want 1", h.runCount())
	}
	if left != 0 {
		t.Errorf("the inbox still holds %d envelopes", left)
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
	// The envelopes left behind carried out, then quiet: a second approval,
	// or a word to the starter, would show by now.
	left := drained(t, inbox)
	settle(srv, 100*time.Millisecond, 2*time.Second)
	if ds := h.decisions(id); len(ds) != 1 {
		t.Errorf("decisions after the restart = %+v, want the one approval", ds)
	}
	if h.runCount() != 1 {
		t.Errorf("%d runs, want 1", h.runCount())
	}
	if left != 0 {
		t.Errorf("the inbox still holds %d envelopes", left)
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

// An event the inbox cannot keep is not acknowledged: Slack sends an
// Events API envelope again (retry_attempt), and once kept it is
// acknowledged and answered.
func TestEventThatCannotBeKeptIsNotAcknowledged(t *testing.T) {
	srv := newSlack(t)
	inbox := &flakyInbox{Inbox: openInbox(t, t.TempDir())}
	inbox.broken.Store(true)
	start(t, srv, t.TempDir(), &scriptedRunner{}, withInbox(inbox))

	_, env, err := srv.SendMention(channel, "", starter, "what now?")
	if err != nil {
		t.Fatal(err)
	}
	settle(srv, 100*time.Millisecond, time.Second)
	if srv.Acked(env) {
		t.Fatal("an event the inbox refused was acknowledged")
	}
	if es := srv.Ephemerals(starter); len(es) != 0 {
		t.Fatalf("an event that was not acknowledged was answered: %q", es[0].Text)
	}
	inbox.broken.Store(false)
	if err := srv.Redeliver(env); err != nil {
		t.Fatal(err)
	}
	ack(t, srv, env)
	waitEphemeral(t, srv, starter, "attach")
}

// Slack never sends a click or a slash command again: one the inbox
// cannot keep is acknowledged all the same and carried out, the run
// started and the decision recorded as if it had been kept.
func TestClickAndCommandTheInboxCouldNotKeepAreCarriedOut(t *testing.T) {
	srv := newSlack(t)
	inbox := &flakyInbox{Inbox: openInbox(t, t.TempDir())}
	inbox.broken.Store(true)
	h := start(t, srv, t.TempDir(), &scriptedRunner{}, withInbox(inbox))

	command := slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approve")
	approve := click(t, srv, starter, step1, "Approve")
	waitStep(t, srv, 2, "deliver-user-stories", "Approve")
	ds := h.decisions(h.onlyRun().ID)
	if len(ds) != 1 || ds[0].Decision != engine.DecideApprove || ds[0].Actor != starter {
		t.Errorf("decisions %+v, want the one approval", ds)
	}
	if h.runCount() != 1 {
		t.Errorf("%d runs, want the one the command started", h.runCount())
	}
	for _, env := range []string{command, approve} {
		if !srv.Acked(env) {
			t.Errorf("envelope %s was not acknowledged", env)
		}
	}
	if n := pending(t, inbox.Inbox); n != 0 {
		t.Errorf("the broken inbox holds %d envelopes", n)
	}
	if es := afterAcks(srv.Ephemerals(starter)); len(es) != 0 {
		t.Errorf("the starter was told %q; everything was carried out", es[0].Text)
	}
}

// failingStore is an engine whose store fails every start and decision
// while broken is set, as a full disk would.
type failingStore struct {
	bot.Engine
	broken atomic.Bool
}

var errDiskFull = errors.New("disk full")

func (f *failingStore) Start(ctx context.Context, p engine.Plan, opt engine.StartOptions) (*engine.Run, error) {
	if f.broken.Load() {
		return nil, errDiskFull
	}
	return f.Engine.Start(ctx, p, opt)
}

func (f *failingStore) Decide(ctx context.Context, id engine.RunID, d engine.Decision, body []byte) (*engine.Run, error) {
	if f.broken.Load() {
		return nil, errDiskFull
	}
	return f.Engine.Decide(ctx, id, d, body)
}

// A click or slash command that neither the inbox nor the store could
// record is not dropped in silence: it is acknowledged, and the person is
// told that nothing changed.
func TestClickAndCommandNeitherKeptNorRecordedAreAnswered(t *testing.T) {
	srv := newSlack(t)
	inbox := &flakyInbox{Inbox: openInbox(t, t.TempDir())}
	store := &failingStore{}
	h := start(t, srv, t.TempDir(), &scriptedRunner{}, withInbox(inbox),
		withEngine(func(e bot.Engine) bot.Engine { store.Engine = e; return store }))
	slash(t, srv, starter, "chain deliver-prd")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approve")
	id := h.onlyRun().ID

	inbox.broken.Store(true)
	store.broken.Store(true)
	click(t, srv, starter, step1, "Approve")
	waitEphemeral(t, srv, starter, "gonogo could not record that decision; nothing changed")
	slash(t, srv, starter, "chain deliver-user-stories")
	waitEphemeral(t, srv, starter, "gonogo could not do that; nothing was started")

	if ds := h.decisions(id); len(ds) != 0 {
		t.Errorf("decisions %+v, though the store failed", ds)
	}
	if h.runCount() != 1 {
		t.Errorf("%d runs, want the first one only", h.runCount())
	}
	if un := srv.Unacked(); len(un) != 0 {
		t.Errorf("%d envelopes were never acknowledged", len(un))
	}
}

func metricsText(m *bot.Metrics) string {
	var b strings.Builder
	m.Write(&b, nil, nil)
	return b.String()
}
