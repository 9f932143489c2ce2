package engine

import (
	"testing"
	"testing/synctest"
	"time"
)

// waitingRun returns a one-step chain run whose step finished at t0 and
// waits for a decision, with oversight o.
func waitingRun(t *testing.T, o Oversight, res Result, rules StepRules) (*Run, time.Time) {
	t.Helper()
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	p := Plan{Input: InputChain, Source: "a", Steps: []PlanStep{{Skill: "a", Rules: rules}}}
	r := &Run{}
	step := func(evs []Event, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if r, err = Fold(r, evs); err != nil {
			t.Fatal(err)
		}
	}
	step(NewRun("r1", p, StartOptions{StartedBy: "U0", Oversight: o}, t0))
	step(Start(r, 1, t0))
	step(Finish(r, 1, 1, Finished{Result: res, Artifact: res == ResultProduced, Size: 10}, t0))
	return r, t0
}

func TestDeadlines(t *testing.T) {
	o := Oversight{RemindAfter: time.Hour, DecisionTimeout: 3 * time.Hour}
	r, t0 := waitingRun(t, o, ResultProduced, StepRules{})
	s := r.Step(1)
	remind, timeout := Deadlines(r, s)
	if !remind.Equal(t0.Add(time.Hour)) || !timeout.Equal(t0.Add(3*time.Hour)) {
		t.Fatalf("deadlines %v, %v", remind, timeout)
	}
	if due, ok := DeadlineDue(r, s); !ok || !due.Equal(remind) {
		t.Fatalf("first due %v %v, want the reminder", due, ok)
	}
	if evs, aborts := Overdue(r, t0.Add(59*time.Minute)); len(evs) != 0 || len(aborts) != 0 {
		t.Fatalf("overdue before the reminder: %+v %+v", evs, aborts)
	}
	evs, _ := Overdue(r, t0.Add(time.Hour))
	if len(evs) != 1 || evs[0].Type != EvStepReminded || evs[0].Step != 1 || evs[0].Attempt != 1 {
		t.Fatalf("at the reminder: %+v", evs)
	}
	after, err := Fold(r, evs)
	if err != nil {
		t.Fatal(err)
	}
	if a := after.Step(1).Latest(); !a.Reminded.Equal(t0.Add(time.Hour)) || !after.Updated.Equal(r.Updated) || after.State != RunWaiting {
		t.Fatalf("after the reminder: reminded %v, updated %v (was %v), %s", a.Reminded, after.Updated, r.Updated, after.State)
	}
	if due, ok := DeadlineDue(after, after.Step(1)); !ok || !due.Equal(timeout) {
		t.Fatalf("next due %v %v, want the timeout", due, ok)
	}
	evs, _ = Overdue(after, t0.Add(3*time.Hour))
	if len(evs) != 1 || evs[0].Type != EvStepTimedOut || evs[0].Reason != "waited 3h0m0s for a decision; it keeps waiting" {
		t.Fatalf("at the timeout: %+v", evs)
	}
	if after, err = Fold(after, evs); err != nil {
		t.Fatal(err)
	}
	if _, ok := DeadlineDue(after, after.Step(1)); ok {
		t.Fatal("a deadline is due after both were acted on")
	}
	// Both overdue at once (gonogo was down): the timeout first.
	evs, _ = Overdue(r, t0.Add(5*time.Hour))
	if len(evs) != 2 || evs[0].Type != EvStepTimedOut || evs[1].Type != EvStepReminded {
		t.Fatalf("both overdue: %+v", evs)
	}
}

func TestDeadlineAborts(t *testing.T) {
	r, t0 := waitingRun(t, Oversight{RemindAfter: time.Hour, DecisionTimeout: time.Hour, OnTimeout: TimeoutAbort}, ResultEmpty, StepRules{})
	evs, aborts := Overdue(r, t0.Add(time.Hour))
	want := Decision{Kind: DecideAbort, Actor: TimeoutActor, Step: 1, Attempt: 1, Key: "timeout:r1:timeout/1/1"}
	if len(evs) != 0 || len(aborts) != 1 || aborts[0] != want {
		t.Fatalf("overdue: %+v, aborts %+v, want only %+v", evs, aborts, want)
	}
}

func TestNoDeadlineWhileNobodyIsWaitedOn(t *testing.T) {
	o := Oversight{RemindAfter: time.Minute, DecisionTimeout: time.Hour}
	// A FAILED step gonogo retries itself.
	r, t0 := waitingRun(t, o, ResultFailed, StepRules{OnError: ErrorPolicy{Kind: OnErrorRetry, Retries: 2, Backoff: 2 * time.Hour}})
	if _, _, _, retrying := RetryDue(r.Step(1)); !retrying {
		t.Fatal("the step does not wait for a retry")
	}
	if _, ok := DeadlineDue(r, r.Step(1)); ok {
		t.Fatal("a deadline is due while gonogo retries the step itself")
	}
	if _, timeout := Deadlines(r, r.Step(1)); !timeout.Equal(t0.Add(time.Hour)) {
		t.Fatalf("its deadline still shows: %v", timeout)
	}
	// A run that still runs another step.
	r, _ = waitingRun(t, o, ResultProduced, StepRules{})
	r.State = RunRunning
	if _, ok := DeadlineDue(r, r.Step(1)); ok {
		t.Fatal("a deadline is due while the run still runs")
	}
	// No oversight (a run recorded before runs kept it), none set.
	for _, o := range []*Oversight{nil, {}} {
		r, _ = waitingRun(t, Oversight{}, ResultProduced, StepRules{})
		r.Oversight = o
		if remind, timeout := Deadlines(r, r.Step(1)); !remind.IsZero() || !timeout.IsZero() {
			t.Fatalf("deadlines of a run with oversight %v: %v %v", o, remind, timeout)
		}
	}
}

// startOverseen starts a one-step chain with oversight o and waits until
// it waits at its checkpoint.
func startOverseen(t *testing.T, h *harness, o Oversight) RunID {
	t.Helper()
	r, err := h.svc.Start(t.Context(), h.chain(Flags{}, "deliver-prd"), StartOptions{StartedBy: "U-ana",
		Origin: Origin{Channel: "C1"}, Oversight: o})
	if err != nil {
		t.Fatal(err)
	}
	synctest.Wait()
	h.expect(r.ID, RunWaiting, "waiting/PRODUCED")
	return r.ID
}

// eventsOf counts the journal's events of each type.
func eventsOf(h *harness, id RunID) map[EventType]int {
	n := map[EventType]int{}
	for _, ev := range h.store.journal(id) {
		n[ev.Type]++
	}
	return n
}

func TestServiceRemindsAndTimesOutOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, false)
		id := startOverseen(t, h, Oversight{RemindAfter: time.Hour, DecisionTimeout: 3 * time.Hour, OnTimeout: TimeoutWait})
		time.Sleep(59 * time.Minute)
		synctest.Wait()
		if n := eventsOf(h, id)[EvStepReminded]; n != 0 {
			t.Fatalf("%d reminders before the hour", n)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := eventsOf(h, id)[EvStepReminded]; n != 1 {
			t.Fatalf("%d reminders at the hour, want 1", n)
		}
		time.Sleep(2 * time.Hour)
		synctest.Wait()
		time.Sleep(24 * time.Hour)
		synctest.Wait()
		if n := eventsOf(h, id); n[EvStepReminded] != 1 || n[EvStepTimedOut] != 1 {
			t.Fatalf("events %v, want one reminder and one timeout", n)
		}
		h.expect(id, RunWaiting, "waiting/PRODUCED")
		h.checkJournal(id)

		// A restart neither repeats them nor forgets the run.
		h.stop()
		again, stop := startService(t, ServiceConfig{Store: h.store, Catalog: h.cat, Runner: h.runner})
		defer stop()
		if _, err := again.Resume(t.Context(), id, ""); err != nil {
			t.Fatal(err)
		}
		time.Sleep(48 * time.Hour)
		synctest.Wait()
		if n := eventsOf(h, id); n[EvStepReminded] != 1 || n[EvStepTimedOut] != 1 {
			t.Fatalf("after a restart: events %v, want one reminder and one timeout", n)
		}
	})
}

func TestServiceKeepsADeadlineAcrossARestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, false)
		id := startOverseen(t, h, Oversight{RemindAfter: time.Hour})
		time.Sleep(30 * time.Minute)
		h.stop()
		time.Sleep(2 * time.Hour) // gonogo is down when the reminder is due
		synctest.Wait()
		if n := eventsOf(h, id)[EvStepReminded]; n != 0 {
			t.Fatalf("%d reminders while stopped", n)
		}
		again, stop := startService(t, ServiceConfig{Store: h.store, Catalog: h.cat, Runner: h.runner})
		defer stop()
		if _, err := again.Resume(t.Context(), id, ""); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if n := eventsOf(h, id)[EvStepReminded]; n != 1 {
			t.Fatalf("%d reminders once resumed, want the overdue one", n)
		}
	})
}

func TestServiceTimeoutAborts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, false)
		id := startOverseen(t, h, Oversight{RemindAfter: 2 * time.Hour, DecisionTimeout: time.Hour, OnTimeout: TimeoutAbort})
		time.Sleep(time.Hour)
		synctest.Wait()
		r := h.expect(id, RunAborted, "aborted/PRODUCED")
		d := r.Step(1).Decisions
		if len(d) != 1 || d[0].Kind != DecideAbort || d[0].Actor != TimeoutActor || d[0].Key != TimeoutKey(id, 1, 1) {
			t.Fatalf("decisions %+v, want one abort by the decision timeout", d)
		}
		time.Sleep(3 * time.Hour)
		synctest.Wait()
		if n := eventsOf(h, id); n[EvStepReminded] != 0 || n[EvStepTimedOut] != 0 {
			t.Fatalf("events after the abort: %v", n)
		}
	})
}

func TestServiceDecisionStopsTheDeadlines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, false)
		id := startOverseen(t, h, Oversight{RemindAfter: time.Hour, DecisionTimeout: 2 * time.Hour, OnTimeout: TimeoutAbort})
		time.Sleep(10 * time.Minute)
		h.decide(id, 1, DecideApprove, "", nil)
		time.Sleep(5 * time.Hour)
		synctest.Wait()
		h.expect(id, RunCompleted, "done/PRODUCED")
		if n := eventsOf(h, id); n[EvStepReminded] != 0 {
			t.Fatalf("events after the decision: %v", n)
		}
	})
}
