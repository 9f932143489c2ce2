package bot_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/fakeslack"
	"github.com/gonogo/gonogo/internal/hangguard"
)

// Scheduled syncs (Config.ScheduledSyncs): the backend, not the bot, says
// when a run's thread is synced, as temporalbackend's SyncThread activity
// does for every serve replica.

// scheduledRun starts a two-step chain with scheduled syncs, syncs its
// thread until step 1 waits with its file attached, and returns the run.
func scheduledRun(t *testing.T) (*harness, *fakeslack.Server, engine.RunID) {
	t.Helper()
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), &scriptedRunner{}, withConfig(func(c *bot.Config) { c.ScheduledSyncs = true }))
	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	var id engine.RunID
	deadline := hangguard.Deadline(t)
	for id == "" || len(h.onlyRun().Step(1).Attempts) == 0 || h.onlyRun().State != engine.RunWaiting {
		if time.Now().After(deadline) {
			t.Fatal("the run did not come to wait at step 1")
		}
		if h.runCount() == 1 {
			id = h.onlyRun().ID
		}
		time.Sleep(10 * time.Millisecond)
	}
	settle(srv, 50*time.Millisecond, time.Second)
	if n := len(srv.Calls("chat.postMessage")); n != 0 {
		t.Fatalf("with scheduled syncs the bot posted %d messages on its own, want none", n)
	}
	if _, _, err := h.bot.SyncThread(ctxT(t), id, false); err != nil {
		t.Fatal(err)
	}
	waitStep(t, srv, 1, "deliver-prd", "Approve")
	return h, srv, id
}

func TestRetriedSyncFindsWhatACutOffSyncPostedInsteadOfPostingItAgain(t *testing.T) {
	h, srv, id := scheduledRun(t)
	ctx := ctxT(t)
	before, err := h.db.Notes(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	posts, uploads := len(srv.Calls("chat.postMessage")), len(srv.Calls("files.completeUploadExternal"))
	// A sync cut off after Slack took its posts and before it noted them:
	// the header, the thread, step 1's message and its file are in Slack,
	// not in the notes.
	lost := map[string]string{"header": "", "thread": "", "step/1": "", "file/1/1": ""}
	for k := range lost {
		if before[k] == "" {
			t.Fatalf("note %q was never set (notes %v)", k, before)
		}
	}
	if err := h.db.SetNotes(ctx, id, lost); err != nil {
		t.Fatal(err)
	}
	later, done, err := h.bot.SyncThread(ctx, id, true)
	if err != nil {
		t.Fatal(err)
	}
	if done || later <= 0 {
		t.Errorf("SyncThread = later %s, done %v: want one more sync asked for, to update what was found", later, done)
	}
	if n := len(srv.Calls("chat.postMessage")) - posts; n != 0 {
		t.Errorf("the retried sync posted %d messages again, want none", n)
	}
	if n := len(srv.Calls("files.completeUploadExternal")) - uploads; n != 0 {
		t.Errorf("the retried sync attached %d files again, want none", n)
	}
	after, err := h.db.Notes(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"header", "thread", "step/1"} {
		if after[k] != before[k] {
			t.Errorf("note %q = %q after the retried sync, want the message Slack holds, %q", k, after[k], before[k])
		}
	}
	if after["file/1/1"] == "" {
		t.Error("the file found in the thread was not noted")
	}
	// The sync asked for shows the run in what was found (what those
	// messages show was not known); the header's refresh waits for its
	// turn (MessageUpdateInterval), step 1's message is updated at once.
	if _, _, err := h.bot.SyncThread(ctx, id, false); err != nil {
		t.Fatal(err)
	}
	after, err = h.db.Notes(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if shown := after["shown/"+after["step/1"]]; shown != before["shown/"+before["step/1"]] {
		t.Errorf("step 1's message shows %q after the next sync, want what it showed before, %q", shown, before["shown/"+before["step/1"]])
	}

	// A sync that is not a retry trusts the notes: a lost note means a
	// second post (what the retry above saved).
	if err := h.db.SetNotes(ctx, id, map[string]string{"step/1": ""}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.bot.SyncThread(ctx, id, false); err != nil {
		t.Fatal(err)
	}
	if n := len(botMessages(srv, "*Step 1 of 2")); n != 2 {
		t.Errorf("%d messages for step 1 after a plain sync with its note lost, want 2", n)
	}
}

func TestScheduledSyncSaysDoneOnlyWhenTheEndIsShown(t *testing.T) {
	h, srv, id := scheduledRun(t)
	ctx := ctxT(t)
	if _, err := h.svc.Abort(ctx, id, starter); err != nil {
		t.Fatal(err)
	}
	done := false
	for range 10 {
		later, d, err := h.bot.SyncThread(ctx, id, false)
		if err != nil {
			t.Fatal(err)
		}
		if done = d; done {
			break
		}
		time.Sleep(max(later, 10*time.Millisecond))
	}
	if !done {
		t.Fatal("the aborted run's thread never said done")
	}
	waitText(t, srv, "aborted")
	notes, err := h.db.Notes(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if notes["final"] == "" || notes["audit"] != "1" {
		t.Errorf("done before the end message and the audit trail were noted: %v", notes)
	}
}

// dupInbox is an inbox on which another replica recorded every envelope
// first: Record refuses each with ErrDuplicate.
type dupInbox struct {
	mu   sync.Mutex
	seen []string
}

func (d *dupInbox) Record(_ context.Context, payload []byte) (uint64, error) {
	key, err := bot.EnvelopeKey(payload)
	if err != nil {
		return 0, err
	}
	d.mu.Lock()
	d.seen = append(d.seen, key)
	d.mu.Unlock()
	return 0, fmt.Errorf("envelope %s: %w", key, engine.ErrDuplicate)
}

func (d *dupInbox) Pending(context.Context) ([]engine.InboxItem, error) { return nil, nil }
func (d *dupInbox) Done(context.Context, ...uint64) error               { return nil }

func TestEnvelopeAnotherReplicaKeptIsAcknowledgedAndNotCarriedOut(t *testing.T) {
	srv := newSlack(t)
	inbox := &dupInbox{}
	h := start(t, srv, t.TempDir(), &scriptedRunner{}, withConfig(func(c *bot.Config) { c.Inbox = inbox }))
	env := slash(t, srv, starter, "chain deliver-prd")
	ack(t, srv, env)
	settle(srv, 50*time.Millisecond, time.Second)
	if n := h.runCount(); n != 0 {
		t.Errorf("%d runs started from an envelope another replica kept, want 0", n)
	}
	inbox.mu.Lock()
	defer inbox.mu.Unlock()
	if len(inbox.seen) != 1 || inbox.seen[0] != env {
		t.Errorf("the inbox was asked for %v, want [%s]", inbox.seen, env)
	}
}

func TestCarryOutStartsWhatTheEnvelopeAsksOnce(t *testing.T) {
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), &scriptedRunner{})
	cmd := map[string]string{
		"command": "/gonogo", "text": "chain deliver-prd", "user_id": starter, "channel_id": channel,
		"team_id": fakeslack.TeamID, "trigger_id": "1.2.3",
	}
	payload, err := json.Marshal(cmd)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := json.Marshal(map[string]any{"type": "slash_commands", "envelope_id": "env-kept-elsewhere", "payload": json.RawMessage(payload)})
	if err != nil {
		t.Fatal(err)
	}
	if key, err := bot.EnvelopeKey(kept); err != nil || key != "env-kept-elsewhere" {
		t.Fatalf("EnvelopeKey = %q, %v", key, err)
	}
	if _, err := bot.EnvelopeKey([]byte(`{"type":"slash_commands"}`)); err == nil {
		t.Error("EnvelopeKey of an envelope without an id: no error")
	}
	for range 2 {
		if err := h.bot.CarryOut(ctxT(t), kept, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	waitStep(t, srv, 1, "deliver-prd", "Approve")
	if n := h.runCount(); n != 1 {
		t.Errorf("%d runs from one envelope carried out twice, want 1", n)
	}
	if err := h.bot.CarryOut(ctxT(t), []byte("not json"), time.Now()); err != nil {
		t.Errorf("an unreadable envelope: %v, want it dropped", err)
	}
}

// memInbox keeps envelopes in memory and says which were marked done.
type memInbox struct {
	mu       sync.Mutex
	payloads map[uint64][]byte
	done     map[uint64]bool
}

func (m *memInbox) Record(_ context.Context, payload []byte) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id := uint64(len(m.payloads) + 1)
	m.payloads[id] = payload
	return id, nil
}

func (m *memInbox) Pending(context.Context) ([]engine.InboxItem, error) { return nil, nil }

func (m *memInbox) Done(_ context.Context, ids ...uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range ids {
		m.done[id] = true
	}
	return nil
}

// slowCluster fails the first decisions (fails), and the first reads of
// a run (loadFails), as a cluster that did not answer in time would.
type slowCluster struct {
	bot.Engine
	mu        sync.Mutex
	fails     int
	loadFails int
}

// fail spends one of *left failures, if any remain, as a deadline the
// cluster let pass on run id.
func (s *slowCluster) fail(left *int, id engine.RunID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if *left <= 0 {
		return nil
	}
	*left--
	return fmt.Errorf("run %s: %w", id, context.DeadlineExceeded)
}

func (s *slowCluster) Load(ctx context.Context, id engine.RunID) (*engine.Run, error) {
	if err := s.fail(&s.loadFails, id); err != nil {
		return nil, err
	}
	return s.Engine.Load(ctx, id)
}

func (s *slowCluster) Decide(ctx context.Context, id engine.RunID, d engine.Decision, body []byte) (*engine.Run, error) {
	if err := s.fail(&s.fails, id); err != nil {
		return nil, err
	}
	return s.Engine.Decide(ctx, id, d, body)
}

// clusterRun starts a one-step chain on a bot with scheduled syncs and
// inbox, with slow between it and the engine, and returns the run
// waiting at step 1, with that step's message.
func clusterRun(t *testing.T, inbox engine.Inbox, slow *slowCluster) (*harness, *fakeslack.Server, engine.RunID, fakeslack.Message) {
	t.Helper()
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), &scriptedRunner{}, withConfig(func(c *bot.Config) { c.ScheduledSyncs, c.Inbox = true, inbox }),
		withEngine(func(e bot.Engine) bot.Engine { slow.Engine = e; return slow }))
	slash(t, srv, starter, "chain deliver-prd")
	deadline := hangguard.Deadline(t)
	for h.runCount() == 0 || h.onlyRun().State != engine.RunWaiting {
		if time.Now().After(deadline) {
			t.Fatal("the run did not come to wait")
		}
		time.Sleep(10 * time.Millisecond)
	}
	id := h.onlyRun().ID
	if _, _, err := h.bot.SyncThread(ctxT(t), id, false); err != nil {
		t.Fatal(err)
	}
	return h, srv, id, waitStep(t, srv, 1, "deliver-prd", "Approve")
}

// keptUndone returns the payload the inbox keeps for envelope env, which
// must not be marked done.
func (m *memInbox) keptUndone(t *testing.T, env string) []byte {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, p := range m.payloads {
		if k, _ := bot.EnvelopeKey(p); k == env {
			if m.done[i] {
				t.Errorf("envelope %s was marked done", env)
			}
			return p
		}
	}
	t.Fatalf("envelope %s was not kept", env)
	return nil
}

// What the cluster could not do in time (record a decision, read the
// clicked run) is no refusal and no absent run: the person is told once
// that it is tried again, the envelope stays in the inbox, and carried out
// again (by any replica) it decides once.
func TestClusterCarriesOutAgainWhatItCouldNotDo(t *testing.T) {
	for _, tt := range []struct {
		name             string
		fails, loadFails int
		told             string
	}{
		{"decision not recorded", 2, 0, "could not record that decision yet"},
		// The click's handler, then the first carrying out: its check and
		// its handler.
		{"run not read", 0, 3, "could not read this run yet"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			inbox := &memInbox{payloads: map[uint64][]byte{}, done: map[uint64]bool{}}
			slow := &slowCluster{}
			h, srv, id, step := clusterRun(t, inbox, slow)
			slow.mu.Lock()
			slow.fails, slow.loadFails = tt.fails, tt.loadFails
			slow.mu.Unlock()
			env := click(t, srv, starter, step, "Approve")
			ack(t, srv, env)
			waitEphemeral(t, srv, starter, tt.told)
			settle(srv, 50*time.Millisecond, time.Second)
			kept := inbox.keptUndone(t, env)
			if d := h.decisions(id); len(d) != 0 {
				t.Fatalf("decisions %v before the click was carried out", d)
			}
			// Another replica carries it out: the cluster fails once more
			// (the person is not told again), then it is done, once.
			if err := h.bot.CarryOut(ctxT(t), kept, time.Now()); err == nil {
				t.Error("CarryOut of what the cluster could not do: no error, so it would not be tried again")
			}
			for range 2 {
				if err := h.bot.CarryOut(ctxT(t), kept, time.Now()); err != nil {
					t.Fatal(err)
				}
				if d := h.decisions(id); len(d) != 1 || d[0].Decision != engine.DecideApprove {
					t.Errorf("decisions %v, want the one approval", d)
				}
			}
			n := 0
			for _, e := range srv.Ephemerals(starter) {
				if strings.Contains(e.Rendered, tt.told) {
					n++
				}
				if strings.Contains(e.Rendered, "not in gonogo's store") {
					t.Errorf("a run the cluster was slow to read was called absent: %q", e.Rendered)
				}
			}
			if n != 1 {
				t.Errorf("the person was told %d times %q, want once", n, tt.told)
			}
		})
	}
}

// refusingInbox keeps nothing while refuse is set, as an inbox the
// cluster could not reach.
type refusingInbox struct {
	*memInbox
	refuse atomic.Bool
}

func (r *refusingInbox) Record(ctx context.Context, payload []byte) (uint64, error) {
	if r.refuse.Load() {
		return 0, errors.New("the inbox did not answer in time")
	}
	return r.memInbox.Record(ctx, payload)
}

// A click the cluster's inbox could not keep, and whose decision the
// cluster could not record in time, is no other replica's to carry out
// again: this one does, as it told the person, and decides once.
func TestClusterCarriesOutAgainAClickItCouldNotKeep(t *testing.T) {
	inbox := &refusingInbox{memInbox: &memInbox{payloads: map[uint64][]byte{}, done: map[uint64]bool{}}}
	slow := &slowCluster{}
	h, srv, id, step := clusterRun(t, inbox, slow)
	inbox.refuse.Store(true)
	slow.mu.Lock()
	slow.fails = 2
	slow.mu.Unlock()
	click(t, srv, starter, step, "Approve")
	waitEphemeral(t, srv, starter, "could not record that decision yet")
	deadline := hangguard.Deadline(t)
	for len(h.decisions(id)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the click the inbox could not keep was never carried out again")
		}
		time.Sleep(20 * time.Millisecond)
	}
	settle(srv, 100*time.Millisecond, time.Second)
	if d := h.decisions(id); len(d) != 1 || d[0].Decision != engine.DecideApprove {
		t.Errorf("decisions %v, want the one approval", d)
	}
	n := 0
	for _, e := range srv.Ephemerals(starter) {
		if strings.Contains(e.Rendered, "could not record that decision yet") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the person was told %d times that it is tried again, want once", n)
	}
}

// On one machine a store that fails a read is no absent run either: the
// person is told nothing changed and to ask the operator.
func TestClickWhoseRunCouldNotBeReadOnOneMachine(t *testing.T) {
	srv := newSlack(t)
	slow := &slowCluster{}
	h := start(t, srv, t.TempDir(), &scriptedRunner{}, withEngine(func(e bot.Engine) bot.Engine { slow.Engine = e; return slow }))
	slash(t, srv, starter, "chain deliver-prd")
	step := waitStep(t, srv, 1, "deliver-prd", "Approve")
	// Every read fails until the person is told: a sync of the thread
	// (its session, its status) may read the run before the click does.
	slow.mu.Lock()
	slow.loadFails = 1 << 30
	slow.mu.Unlock()
	ack(t, srv, click(t, srv, starter, step, "Approve"))
	waitEphemeral(t, srv, starter, "could not read this run; nothing changed")
	slow.mu.Lock()
	slow.loadFails = 0
	slow.mu.Unlock()
	if d := h.decisions(h.onlyRun().ID); len(d) != 0 {
		t.Errorf("decisions %v after a click whose run could not be read", d)
	}
}
