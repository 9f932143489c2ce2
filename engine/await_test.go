package engine

import (
	"errors"
	"slices"
	"testing"
	"testing/synctest"
)

// A run recorded to await Start runs nothing until someone who may decide
// starts it; then it runs as any run does. A Start is keyed: the same
// click again, a late one, or a Cancel after it changes nothing.
func TestAwaitStartThenStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := &directory{groups: map[string][]string{}}
		h := newHarnessWith(t, 4, false, func(_ *harness, c *ServiceConfig) { c.Members = dir.members })
		ctx := t.Context()
		r, err := h.svc.Start(ctx, h.chain(Flags{}, "deliver-prd", "deliver-user-stories"), StartOptions{StartedBy: "U-ana",
			Origin: Origin{Channel: "C1"}, Oversight: Oversight{Approvers: []string{"U-apr"}}, AwaitStart: true, Key: "cmd-1"})
		if err != nil {
			t.Fatal(err)
		}
		id := r.ID
		synctest.Wait()
		r = h.expect(id, RunWaiting, "pending", "pending")
		if !AwaitingStart(r) || r.PausedBy != AwaitStartActor || len(h.runner.calls()) != 0 {
			t.Fatalf("awaiting Start: %v, paused by %q, %d steps ran", AwaitingStart(r), r.PausedBy, len(h.runner.calls()))
		}
		if got := types(h.checkJournal(id), 0); !slices.Equal(got, []EventType{EvRunStarted, EvRunPaused}) {
			t.Fatalf("journal %v, want run-started then run-paused", got)
		}

		// Nobody who may not decide starts it, and nothing else moves it.
		if _, err := h.svc.StartAwaited(ctx, id, "U-stranger", "click-0"); !errors.Is(err, ErrNotApprover) {
			t.Fatalf("a stranger's Start: %v, want ErrNotApprover", err)
		}
		if _, err := h.svc.Pause(ctx, id, "U-ana"); !errors.Is(err, ErrPaused) {
			t.Fatalf("pausing a run awaiting Start: %v, want ErrPaused", err)
		}
		if _, err := h.svc.Resume(ctx, id, ""); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		h.expect(id, RunWaiting, "pending", "pending")

		r, err = h.svc.StartAwaited(ctx, id, "U-apr", "click-1")
		if err != nil {
			t.Fatal(err)
		}
		if AwaitingStart(r) || r.Paused || r.Step(1).Status != StepRunning {
			t.Fatalf("started: awaiting %v, paused %v, step 1 %s", AwaitingStart(r), r.Paused, r.Step(1).Status)
		}
		synctest.Wait()
		h.expect(id, RunWaiting, "waiting/PRODUCED", "pending")
		for _, again := range []string{"click-1", "click-2"} {
			if _, err := h.svc.StartAwaited(ctx, id, "U-apr", again); !errors.Is(err, ErrNotAwaitingStart) {
				t.Fatalf("Start (%s) on a started run: %v, want ErrNotAwaitingStart", again, err)
			}
		}
		if _, err := h.svc.CancelAwaited(ctx, id, "U-ana"); !errors.Is(err, ErrNotAwaitingStart) {
			t.Fatalf("Cancel on a started run: %v, want ErrNotAwaitingStart", err)
		}
		h.decide(id, 1, DecideApprove, "", nil)
		synctest.Wait()
		h.decide(id, 2, DecideApprove, "", nil)
		synctest.Wait()
		h.expect(id, RunCompleted, "done/PRODUCED", "done/PRODUCED")
		j := h.checkJournal(id)
		if ev := j[2]; ev.Type != EvRunResumed || ev.Actor != "U-apr" || ev.Key != "click-1" {
			t.Fatalf("event 3 = %s by %q key %q, want run-resumed by U-apr with the click's key", ev.Type, ev.Actor, ev.Key)
		}
		if got := len(h.runner.calls()); got != 2 {
			t.Fatalf("%d steps ran, want 2", got)
		}
	})
}

// Cancel ends a run awaiting Start with nothing run; a Start after it is
// refused.
func TestAwaitStartThenCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, false)
		ctx := t.Context()
		r, err := h.svc.Start(ctx, h.chain(Flags{}, "deliver-prd"), StartOptions{StartedBy: "U-ana", AwaitStart: true})
		if err != nil {
			t.Fatal(err)
		}
		r, err = h.svc.CancelAwaited(ctx, r.ID, "U-ana")
		if err != nil {
			t.Fatal(err)
		}
		if r.State != RunAborted || r.Halt != CancelledBeforeStart || AwaitingStart(r) {
			t.Fatalf("cancelled: %s, halt %q, awaiting %v", r.State, r.Halt, AwaitingStart(r))
		}
		if _, err := h.svc.StartAwaited(ctx, r.ID, "U-ana", "k"); !errors.Is(err, ErrNotAwaitingStart) {
			t.Fatalf("Start after Cancel: %v, want ErrNotAwaitingStart", err)
		}
		if _, err := h.svc.CancelAwaited(ctx, r.ID, "U-ana"); !errors.Is(err, ErrNotAwaitingStart) {
			t.Fatalf("Cancel twice: %v, want ErrNotAwaitingStart", err)
		}
		synctest.Wait()
		h.expect(r.ID, RunAborted, "aborted")
		if n := len(h.runner.calls()); n != 0 {
			t.Fatalf("%d steps ran", n)
		}
		j := h.checkJournal(r.ID)
		if last := j[len(j)-1]; last.Type != EvRunFinished || last.Actor != "U-ana" {
			t.Fatalf("last event %s by %q, want run-finished by U-ana", last.Type, last.Actor)
		}
	})
}

// A Start's key counts once across runs, as a decision's does; a run
// awaiting Start resumed from the terminal (Unpause) starts too.
func TestAwaitStartKeysAndUnpause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, false)
		ctx := t.Context()
		var ids []RunID
		for range 2 {
			r, err := h.svc.Start(ctx, h.chain(Flags{}, "deliver-prd"), StartOptions{StartedBy: "U-ana", AwaitStart: true})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, r.ID)
		}
		if _, err := h.svc.StartAwaited(ctx, ids[0], "U-ana", "click"); err != nil {
			t.Fatal(err)
		}
		if _, err := h.svc.StartAwaited(ctx, ids[1], "U-ana", "click"); !errors.Is(err, ErrDuplicate) {
			t.Fatalf("a seen key: %v, want ErrDuplicate", err)
		}
		if r := h.load(ids[1]); !AwaitingStart(r) {
			t.Fatal("a refused Start changed the run")
		}
		if _, err := h.svc.Unpause(ctx, ids[1], "operator", ""); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		h.expect(ids[1], RunWaiting, "waiting/PRODUCED")
		h.checkJournal(ids[1])
	})
}

func TestNewRunAwaitingStartRebuilds(t *testing.T) {
	p := Plan{Input: InputChain, Steps: []PlanStep{{Skill: "deliver-prd"}}}
	evs, err := NewRun("r1", p, StartOptions{StartedBy: "U1", AwaitStart: true}, t0)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Rebuild(evs)
	if err != nil {
		t.Fatal(err)
	}
	if !AwaitingStart(r) || len(Ready(r)) != 0 || r.State != RunWaiting {
		t.Fatalf("rebuilt: awaiting %v, ready %v, %s", AwaitingStart(r), Ready(r), r.State)
	}
	if _, err := Start(r, 1, t0); !errors.Is(err, ErrPaused) {
		t.Fatalf("starting a step of a run awaiting Start: %v, want ErrPaused", err)
	}
}
