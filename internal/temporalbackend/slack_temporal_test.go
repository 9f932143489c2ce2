//go:build temporal

package temporalbackend

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/hangguard"
)

// syncCall is one SyncThread as the fake Slack side saw it: the run's seq
// and whether it had finished when the sync began, and whether it was a
// retry.
type syncCall struct {
	seq      uint64
	finished bool
	retried  bool
}

// fakeSlack is a serve replica's Slack side: it reads the run, takes
// sleep to "post", and counts syncs under way at once. A sync waits on
// gate while it is set; the first attempt of failFirst syncs fails; a
// thread not done asks for another sync after later; the thread is done
// once the run has finished and allowDone is set.
type fakeSlack struct {
	b         *Backend
	mu        sync.Mutex
	calls     []syncCall
	now, most int
	sleep     time.Duration
	gate      chan struct{}
	failFirst int
	later     time.Duration
	allowDone bool
}

func (f *fakeSlack) SyncThread(ctx context.Context, id engine.RunID, retried bool) (time.Duration, bool, error) {
	f.mu.Lock()
	f.now++
	f.most = max(f.most, f.now)
	gate, sleep := f.gate, f.sleep
	fail := f.failFirst > 0 && !retried
	if fail {
		f.failFirst--
	}
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.now--
		f.mu.Unlock()
	}()
	r, err := f.b.Load(ctx, id)
	if err != nil {
		return 0, false, err
	}
	f.mu.Lock()
	f.calls = append(f.calls, syncCall{seq: r.Seq, finished: r.Finished(), retried: retried})
	f.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return 0, false, ctx.Err()
		}
	}
	select {
	case <-time.After(sleep):
	case <-ctx.Done():
		return 0, false, ctx.Err()
	}
	if fail {
		return 0, false, errors.New("slack answered 500")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.allowDone && r.Finished() {
		return 0, true, nil
	}
	return f.later, false, nil
}

func (f *fakeSlack) seen() ([]syncCall, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]syncCall(nil), f.calls...), f.most
}

// slackEnv is temporalEnv whose runs have their threads synced on
// SlackQueue by fake.
func slackEnv(t testing.TB, fake *fakeSlack, historyLimit int) *env {
	t.Helper()
	e := temporalEnv(t)
	b := New(e.config(func(c *Config) { c.SlackQueue, c.HistoryLimit = e.q.slack, historyLimit }))
	e.b, fake.b = b, b
	e.worker(e.q.slack, func(r worker.Registry) { RegisterSlack(r, fake) })
	return e
}

// status is the state of the run's latest workflow.
func status(t testing.TB, c client.Client, id engine.RunID) enumspb.WorkflowExecutionStatus {
	t.Helper()
	d, err := c.DescribeWorkflowExecution(t.Context(), string(id), "")
	if err != nil {
		t.Fatal(err)
	}
	return d.GetWorkflowExecutionInfo().GetStatus()
}

// eventually polls ok until it holds; its bound only guards against a
// hang.
func eventually(t testing.TB, what string, ok func() bool) {
	t.Helper()
	deadline := hangguard.Deadline(t)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// workflowClosed waits until the run's workflow has ended.
func workflowClosed(t testing.TB, c client.Client, id engine.RunID) {
	t.Helper()
	eventually(t, fmt.Sprintf("run %s's workflow ended", id), func() bool {
		return status(t, c, id) != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
	})
}

// TestNotes: notes merge, an empty value deletes its key, they survive
// the run's workflow continuing as new, and they are no journal events.
func TestNotes(t *testing.T) {
	e := temporalEnv(t)
	c := e.ts.GetDefaultClient()
	b := New(e.config(func(c *Config) { c.HistoryLimit = 40 }))
	e.b = b
	ctx := t.Context()
	id := e.start()
	got, err := b.Notes(ctx, id)
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("notes of a new run: %v, %v; want an empty map", got, err)
	}
	if err := b.SetNotes(ctx, id, map[string]string{"thread": "1.1", "step/1": "1.2"}); err != nil {
		t.Fatal(err)
	}
	if err := b.SetNotes(ctx, id, map[string]string{"step/1": "", "step/2": "1.3"}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"thread": "1.1", "step/2": "1.3"}
	if got, err := b.Notes(ctx, id); err != nil || !maps.Equal(got, want) {
		t.Fatalf("notes after a merge and a deletion: %v, %v; want %v", got, err, want)
	}
	journal := len(e.journal(id))
	r, err := b.Load(ctx, id)
	if err != nil || int(r.Seq) != journal {
		t.Fatalf("notes reached the journal: run at %d, journal of %d (%v)", r.Seq, journal, err)
	}
	firstRun := func() string {
		d, err := c.DescribeWorkflowExecution(ctx, string(id), "")
		if err != nil {
			t.Fatal(err)
		}
		return d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	}
	first := firstRun()
	waiting(t, b, id, 1, 1)
	for a := 1; a <= 4; a++ {
		e.decide(id, 1, engine.DecideRedo, "", nil)
		waiting(t, b, id, 1, a+1)
	}
	if firstRun() == first {
		t.Fatal("the run's workflow never continued as new")
	}
	if got, err := b.Notes(ctx, id); err != nil || !maps.Equal(got, want) {
		t.Errorf("notes after continuing as new: %v, %v; want %v", got, err, want)
	}
	if err := b.SetNotes(ctx, id, map[string]string{"": "x"}); err == nil {
		t.Error("a note without a key was kept")
	}
	const unknown = engine.RunID("20310402-090000-000000000000")
	if _, err := b.Notes(ctx, unknown); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("notes of an unknown run: %v, want ErrNotFound", err)
	}
	if err := b.SetNotes(ctx, unknown, want); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("setting notes of an unknown run: %v, want ErrNotFound", err)
	}
}

// TestSlackSyncsOneAtATime: a run's thread is synced after its start and
// after its changes, never twice at once; changes while a sync runs bring
// exactly one more sync, which sees them all.
func TestSlackSyncsOneAtATime(t *testing.T) {
	fake := &fakeSlack{sleep: 200 * time.Millisecond, allowDone: true}
	e := slackEnv(t, fake, 0)
	c := e.ts.GetDefaultClient()
	id := e.start()
	// The thread catches up with the run waiting on step 1, then rests.
	r := waiting(t, e.b, id, 1, 1)
	eventually(t, "a sync saw the run waiting on step 1", func() bool {
		calls, _ := fake.seen()
		return len(calls) > 0 && calls[len(calls)-1].seq == r.Seq
	})
	time.Sleep(time.Second)
	before, _ := fake.seen()
	if last := before[len(before)-1]; last.seq != r.Seq {
		t.Fatalf("a sync after the thread caught up saw seq %d, the run is at %d", last.seq, r.Seq)
	}

	// A sync held while the run moves on: step 1 approved, step 2 run
	// and waiting.
	gate := make(chan struct{})
	fake.mu.Lock()
	fake.gate = gate
	fake.mu.Unlock()
	e.decide(id, 1, engine.DecideApprove, "", nil)
	r = waiting(t, e.b, id, 2, 1)
	eventually(t, "a sync began after the approval", func() bool {
		calls, _ := fake.seen()
		return len(calls) == len(before)+1
	})
	time.Sleep(500 * time.Millisecond)
	if calls, _ := fake.seen(); len(calls) != len(before)+1 {
		t.Fatalf("%d syncs began while one was held, want none", len(calls)-len(before)-1)
	}
	fake.mu.Lock()
	fake.gate = nil
	fake.mu.Unlock()
	close(gate)
	eventually(t, "one more sync after the held one", func() bool {
		calls, _ := fake.seen()
		return len(calls) == len(before)+2
	})
	time.Sleep(time.Second)
	calls, _ := fake.seen()
	if len(calls) != len(before)+2 || calls[len(calls)-1].seq != r.Seq {
		t.Errorf("after the held sync: %d more syncs, the last seeing seq %d; want 1 seeing %d", len(calls)-len(before)-1, calls[len(calls)-1].seq, r.Seq)
	}

	e.decide(id, 2, engine.DecideApprove, "", nil)
	ended(t, e.b, id)
	workflowClosed(t, c, id)
	calls, most := fake.seen()
	if last := calls[len(calls)-1]; !last.finished {
		t.Errorf("the last sync saw the run unfinished (seq %d)", last.seq)
	}
	if most != 1 {
		t.Errorf("%d syncs of the run ran at once, want 1", most)
	}
}

// TestSlackSyncLaterRetriedAndDone: a failed sync is retried with retried
// set; a sync that asks to be called again later is; a finished run's
// workflow stays open until a sync says its thread is done, then ends;
// a run without a Slack thread ends as before, with no sync.
func TestSlackSyncLaterRetriedAndDone(t *testing.T) {
	fake := &fakeSlack{failFirst: 1, later: 300 * time.Millisecond}
	e := slackEnv(t, fake, 0)
	c := e.ts.GetDefaultClient()
	ctx := t.Context()
	id := e.start()
	r := waiting(t, e.b, id, 1, 1)
	eventually(t, "syncs go on while the run waits", func() bool {
		calls, _ := fake.seen()
		return len(calls) >= 5
	})
	calls, _ := fake.seen()
	if calls[0].retried || !calls[1].retried {
		t.Errorf("retried of the first two syncs: %v, %v; want false, then true (the first failed)", calls[0].retried, calls[1].retried)
	}
	if last := calls[len(calls)-1]; last.seq != r.Seq || last.retried {
		t.Errorf("a later sync saw seq %d (retried %v), the run is at %d", last.seq, last.retried, r.Seq)
	}

	if _, err := e.b.Abort(ctx, id, "U-ana"); err != nil {
		t.Fatal(err)
	}
	ended(t, e.b, id)
	time.Sleep(1500 * time.Millisecond)
	if s := status(t, c, id); s != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Fatalf("the finished run's workflow is %s before its thread is done", s)
	}
	// The front end may still keep notes while it finishes the thread.
	b := e.b.(*Backend)
	if err := b.SetNotes(ctx, id, map[string]string{"end": "1.9"}); err != nil {
		t.Errorf("notes of a finished run whose thread is not done: %v", err)
	}
	fake.mu.Lock()
	fake.allowDone = true
	fake.mu.Unlock()
	workflowClosed(t, c, id)
	if s := status(t, c, id); s != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Errorf("the run's workflow ended %s, want completed", s)
	}
	if got, err := b.Notes(ctx, id); err != nil || got["end"] != "1.9" {
		t.Errorf("notes after the workflow ended: %v, %v", got, err)
	}
	if err := b.SetNotes(ctx, id, map[string]string{"end": "2.0"}); !errors.Is(err, engine.ErrStale) {
		t.Errorf("notes after the workflow ended: %v, want ErrStale", err)
	}

	n, _ := fake.seen()
	plain := e.startWith(func(_ *engine.Plan, o *engine.StartOptions) { o.Origin = engine.Origin{} })
	waiting(t, e.b, plain, 1, 1)
	if _, err := e.b.Abort(ctx, plain, "U-ana"); err != nil {
		t.Fatal(err)
	}
	workflowClosed(t, c, plain)
	if after, _ := fake.seen(); len(after) != len(n) {
		t.Errorf("a run without a Slack thread was synced %d times", len(after)-len(n))
	}
}

// TestStartKeyOfADeadClaimer: a start key claimed by a start that died
// before it started its run is carried out under the claimed run id, and
// refused once that run exists.
func TestStartKeyOfADeadClaimer(t *testing.T) {
	e := temporalEnv(t)
	c := e.ts.GetDefaultClient()
	b := e.b.(*Backend)
	const claimed = engine.RunID("20310402-090000-00000000abcd")
	if got, err := b.claim(t.Context(), "envelope-7", claimed); err != nil || got != claimed {
		t.Fatalf("claim: %s, %v", got, err)
	}
	id := e.startWith(func(_ *engine.Plan, o *engine.StartOptions) { o.Key = "envelope-7" })
	if id != claimed {
		t.Errorf("the start of a claimed key started run %s, want the claimed %s", id, claimed)
	}
	if _, err := e.tryStart(func(_ *engine.Plan, o *engine.StartOptions) { o.Key = "envelope-7" }); !errors.Is(err, engine.ErrDuplicate) {
		t.Errorf("a start of the key once its run exists: %v, want ErrDuplicate", err)
	}
	if s := status(t, c, id); s != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Errorf("the run's workflow is %s", s)
	}
}
