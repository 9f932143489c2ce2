package engine

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// types lists the journal's event types from seq on, for assertions.
func types(j []Event, from int) []EventType {
	var out []EventType
	for _, ev := range j[from:] {
		out = append(out, ev.Type)
	}
	return out
}

// A pause during a running step in auto: the step finishes and is judged,
// then waits at a checkpoint offering the usual decisions; the next step
// does not start until the run is resumed, and then the run completes in
// auto without another stop.
func TestPauseRunningStepInAuto(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, true)
		id := h.start(h.chain(Flags{ForceAuto: true}, "deliver-prd", "deliver-user-stories", "define-problem-statement"))
		synctest.Wait()
		h.expect(id, RunRunning, "running/", "pending", "pending")

		r, err := h.svc.Pause(t.Context(), id, "U-ana")
		if err != nil {
			t.Fatal(err)
		}
		if !r.Paused || r.PausedBy != "U-ana" || r.State != RunRunning {
			t.Fatalf("paused run: paused %v by %q, %s; want paused by U-ana, still running its step", r.Paused, r.PausedBy, r.State)
		}
		if _, err := h.svc.Pause(t.Context(), id, "U-bob"); !errors.Is(err, ErrPaused) {
			t.Fatalf("pausing twice: %v, want ErrPaused", err)
		}

		h.runner.gate <- struct{}{}
		synctest.Wait()
		r = h.expect(id, RunWaiting, "waiting/PRODUCED", "pending", "pending")
		if got := len(h.runner.calls()); got != 1 {
			t.Fatalf("%d steps ran while paused, want 1", got)
		}
		if s := r.Step(1); !s.Held || !slices.Equal(Allowed(s), decisionsAfter[ResultProduced]) {
			t.Fatalf("the paused checkpoint: held %v, offers %v", s.Held, Allowed(s))
		}
		if _, err := h.svc.Pause(t.Context(), id, "U-ana"); !errors.Is(err, ErrPaused) {
			t.Fatalf("pausing a paused, waiting run: %v", err)
		}

		r, err = h.svc.Unpause(t.Context(), id, "U-bob", "")
		if err != nil {
			t.Fatal(err)
		}
		if r.Paused || r.Mode != ModeGuardedAuto || r.Step(1).Status != StepDone || r.Step(2).Status != StepRunning {
			t.Fatalf("resumed: paused %v, mode %s, steps %s/%s", r.Paused, r.Mode, r.Step(1).Status, r.Step(2).Status)
		}
		if _, err := h.svc.Unpause(t.Context(), id, "U-bob", ""); !errors.Is(err, ErrNotPaused) {
			t.Fatalf("resuming a run that is not paused: %v", err)
		}
		h.runner.gate <- struct{}{}
		h.runner.gate <- struct{}{}
		synctest.Wait()
		h.expect(id, RunCompleted, "done/PRODUCED", "done/PRODUCED", "done/PRODUCED")
		j := h.checkJournal(id)
		want := []EventType{EvRunPaused, EvStepFinished, EvRunResumed, EvStepReleased, EvStepStarted}
		if got := types(j, 2); !slices.Equal(got[:len(want)], want) {
			t.Fatalf("journal %v, want it to begin %v", got, want)
		}
		if j[2].Actor != "U-ana" || j[4].Actor != "U-bob" || !j[3].Held {
			t.Fatalf("pause by %q, resume by %q, finish held %v", j[2].Actor, j[4].Actor, j[3].Held)
		}
		if _, err := h.svc.Pause(t.Context(), id, "U-ana"); !errors.Is(err, ErrNotMoving) {
			t.Fatalf("pausing a completed run: %v", err)
		}
	})
}

// A person's decision at the paused checkpoint resumes the run in its
// mode; resuming checkpointed keeps the held step at its checkpoint.
func TestPausedCheckpointDecisionsAndCheckpointedResume(t *testing.T) {
	for _, how := range []string{"approve", "resume checkpointed"} {
		t.Run(how, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, 4, true)
				id := h.start(h.chain(Flags{ForceAuto: true}, "deliver-prd", "deliver-user-stories"))
				synctest.Wait()
				if _, err := h.svc.Pause(t.Context(), id, "U-ana"); err != nil {
					t.Fatal(err)
				}
				h.runner.gate <- struct{}{}
				synctest.Wait()
				h.expect(id, RunWaiting, "waiting/PRODUCED", "pending")
				if how == "approve" {
					r := h.decide(id, 1, DecideApprove, "", nil)
					if r.Paused || r.Mode != ModeGuardedAuto || r.Step(2).Status != StepRunning {
						t.Fatalf("after approve: paused %v, mode %s, step 2 %s", r.Paused, r.Mode, r.Step(2).Status)
					}
					h.runner.gate <- struct{}{}
					synctest.Wait()
					h.expect(id, RunCompleted, "done/PRODUCED", "done/PRODUCED")
				} else {
					r, err := h.svc.Unpause(t.Context(), id, "U-ana", ModeCheckpointed)
					if err != nil {
						t.Fatal(err)
					}
					if r.Paused || r.Mode != ModeCheckpointed {
						t.Fatalf("after resume: paused %v, mode %s", r.Paused, r.Mode)
					}
					synctest.Wait()
					h.expect(id, RunWaiting, "waiting/PRODUCED", "pending")
				}
				h.checkJournal(id)
			})
		})
	}
}

// Pausing a run whose step waits for a runner slot takes the step out of
// the line: it does not start when the slot frees, and does on resume.
func TestPauseQueuedStep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 1, true)
		a := h.start(h.chain(Flags{ForceAuto: true}, "deliver-prd"))
		b := h.start(h.chain(Flags{ForceAuto: true}, "deliver-prd"))
		synctest.Wait()
		h.expect(b, RunRunning, "queued")
		if _, err := h.svc.Pause(t.Context(), b, "U-ana"); err != nil {
			t.Fatal(err)
		}
		h.expect(b, RunWaiting, "pending")
		h.runner.gate <- struct{}{}
		synctest.Wait()
		h.expect(a, RunCompleted, "done/PRODUCED")
		h.expect(b, RunWaiting, "pending")
		if _, err := h.svc.Unpause(t.Context(), b, "U-ana", ""); err != nil {
			t.Fatal(err)
		}
		h.runner.gate <- struct{}{}
		synctest.Wait()
		h.expect(b, RunCompleted, "done/PRODUCED")
		h.checkJournal(b)
	})
}

func TestPauseWaitingRunIsNoOp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, false)
		id := h.start(h.chain(Flags{}, "deliver-prd"))
		synctest.Wait()
		before := len(h.store.journal(id))
		if _, err := h.svc.Pause(t.Context(), id, "U-ana"); !errors.Is(err, ErrNotMoving) {
			t.Fatalf("pausing a waiting run: %v, want ErrNotMoving", err)
		}
		if _, err := h.svc.Unpause(t.Context(), id, "U-ana", ""); !errors.Is(err, ErrNotPaused) {
			t.Fatalf("resuming a waiting run: %v, want ErrNotPaused", err)
		}
		if after := len(h.store.journal(id)); after != before {
			t.Fatalf("a refused pause wrote %d events", after-before)
		}
	})
}

func rateLimitedOutcome() Outcome {
	return Outcome{AgentError: "API Error: Request rejected (429) · rate limit of 50 requests per minute",
		AgentErrorKind: AgentErrRateLimit, ExitCode: 1}
}

// An agent that is rate limited twice, then succeeds: the run pauses with
// the reason and the retry's time, waits a minute, then two, and completes
// without a person.
func TestRateLimitWaitedOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarnessWith(t, 4, false, func(_ *harness, c *ServiceConfig) {
			c.RateLimit = RateLimit{Wait: time.Minute, Tries: 5}
		})
		h.runner.script["deliver-prd"] = []Outcome{rateLimitedOutcome(), rateLimitedOutcome()}
		start := time.Now().UTC()
		id := h.start(h.chain(Flags{ForceAuto: true}, "deliver-prd", "deliver-user-stories"))
		synctest.Wait()
		r := h.expect(id, RunWaiting, "waiting/FAILED", "pending")
		due, n, of, ok := RetryDue(r.Step(1))
		if !r.Paused || r.PausedBy != RateLimitActor || !ok || n != 1 || of != 5 || !due.Equal(start.Add(time.Minute)) {
			t.Fatalf("paused %v by %q, retry %v %d of %d at %v", r.Paused, r.PausedBy, ok, n, of, due)
		}
		if want := "retrying at " + due.Format("15:04"); !strings.Contains(r.PauseReason, want) || !strings.Contains(r.PauseReason, "rate limited") {
			t.Fatalf("pause reason %q, want it to say %q", r.PauseReason, want)
		}
		if _, err := h.svc.Pause(t.Context(), id, "U-ana"); !errors.Is(err, ErrPaused) {
			t.Fatalf("pausing a run waiting out a rate limit: %v", err)
		}

		time.Sleep(time.Minute + time.Second)
		synctest.Wait()
		r = h.expect(id, RunWaiting, "waiting/FAILED", "pending")
		if due, n, _, _ := RetryDue(r.Step(1)); n != 2 || !due.Equal(start.Add(time.Minute+2*time.Minute)) {
			t.Fatalf("second wait: retry %d at %v", n, due)
		}
		time.Sleep(2*time.Minute + time.Second)
		synctest.Wait()
		r = h.expect(id, RunCompleted, "done/PRODUCED", "done/PRODUCED")
		if len(r.Step(1).Attempts) != 3 {
			t.Fatalf("%d attempts, want 3", len(r.Step(1).Attempts))
		}
		j := h.checkJournal(id)
		var pauses, resumes int
		for _, ev := range j {
			switch {
			case ev.Type == EvRunPaused && ev.Actor == RateLimitActor:
				pauses++
			case ev.Type == EvRunResumed && ev.Actor == RateLimitActor:
				resumes++
			case ev.Type == EvDecision && ev.Actor != RateLimitActor:
				t.Fatalf("a decision by %q: the wait needs no person", ev.Actor)
			}
		}
		if pauses != 2 || resumes != 2 {
			t.Fatalf("%d rate-limit pauses and %d resumes, want 2 and 2", pauses, resumes)
		}
	})
}

// A person may decide during the wait: a redo runs the step at once, and
// the scheduled retry then changes nothing.
func TestRateLimitPersonDecidesDuringWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, false)
		h.runner.script["deliver-prd"] = []Outcome{rateLimitedOutcome(), rateLimitedOutcome()}
		id := h.start(h.chain(Flags{ForceAuto: true}, "deliver-prd", "deliver-user-stories"))
		synctest.Wait()
		h.expect(id, RunWaiting, "waiting/FAILED", "pending")
		time.Sleep(30 * time.Second)
		r := h.decide(id, 1, DecideRedo, "", nil)
		if r.Paused {
			t.Fatal("a person's redo left the run paused")
		}
		synctest.Wait()
		// The redo was rate limited again: a fresh wait of a minute,
		// counted from the person's redo.
		r = h.expect(id, RunWaiting, "waiting/FAILED", "pending")
		if _, n, _, _ := RetryDue(r.Step(1)); n != 1 {
			t.Fatalf("after a person's redo the retries count again; this is retry %d", n)
		}
		time.Sleep(time.Minute + time.Second)
		synctest.Wait()
		h.expect(id, RunCompleted, "done/PRODUCED", "done/PRODUCED")
		if got := len(h.runner.calls()); got != 4 {
			t.Fatalf("the agent ran %d times, want 4", got)
		}
		h.checkJournal(id)
	})
}

// After the last try the step is FAILED with the agent's own message, and
// the run is no longer paused: it halts for a person.
func TestRateLimitGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarnessWith(t, 4, false, func(_ *harness, c *ServiceConfig) {
			c.RateLimit = RateLimit{Wait: time.Second, Tries: 2}
		})
		h.runner.script["deliver-prd"] = []Outcome{rateLimitedOutcome(), rateLimitedOutcome(), rateLimitedOutcome()}
		id := h.start(h.chain(Flags{ForceAuto: true}, "deliver-prd"))
		synctest.Wait()
		time.Sleep(time.Hour)
		synctest.Wait()
		r := h.expect(id, RunWaiting, "waiting/FAILED")
		l := r.Step(1).Latest()
		if r.Paused || l.N != 3 || !strings.Contains(l.Reason, "rate limit of 50 requests") || l.ErrorKind != AgentErrRateLimit {
			t.Fatalf("paused %v, attempt %d, reason %q, kind %q", r.Paused, l.N, l.Reason, l.ErrorKind)
		}
		if _, _, _, ok := RetryDue(r.Step(1)); ok {
			t.Fatal("a retry is still due after the last try")
		}
		h.checkJournal(id)
	})
}

// A person's pause holds a rate-limit retry that falls due: it runs when
// the run is resumed.
func TestRateLimitRetryHeldByPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarnessWith(t, 4, true, nil)
		h.runner.script["deliver-prd"] = []Outcome{rateLimitedOutcome()}
		id := h.start(h.chain(Flags{ForceAuto: true}, "deliver-prd"))
		synctest.Wait()
		if _, err := h.svc.Pause(t.Context(), id, "U-ana"); err != nil {
			t.Fatal(err)
		}
		h.runner.gate <- struct{}{}
		synctest.Wait()
		r := h.expect(id, RunWaiting, "waiting/FAILED")
		if r.PausedBy != "U-ana" {
			t.Fatalf("paused by %q, want the person who paused", r.PausedBy)
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		h.expect(id, RunWaiting, "waiting/FAILED")
		if _, err := h.svc.Unpause(t.Context(), id, "U-ana", ""); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		h.expect(id, RunRunning, "running/")
		h.runner.gate <- struct{}{}
		synctest.Wait()
		h.expect(id, RunCompleted, "done/PRODUCED")
		h.checkJournal(id)
	})
}

// A run paused before gonogo stopped is still paused after: the journal
// rebuilds it, and resuming the service starts nothing.
func TestPauseSurvivesRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, false)
		id := h.start(h.chain(Flags{ForceAuto: true}, "deliver-prd", "deliver-user-stories"))
		synctest.Wait()
		// Auto: both steps ran. Start another and pause it between steps.
		h.expect(id, RunCompleted, "done/PRODUCED", "done/PRODUCED")
		r, err := Rebuild(h.store.journal(id))
		if err != nil || r.Paused {
			t.Fatalf("rebuilt %v, %v", r, err)
		}
		h2 := newHarnessWith(t, 4, true, nil)
		id2 := h2.start(h2.chain(Flags{ForceAuto: true}, "deliver-prd", "deliver-user-stories"))
		synctest.Wait()
		if _, err := h2.svc.Pause(t.Context(), id2, "U-ana"); err != nil {
			t.Fatal(err)
		}
		h2.runner.gate <- struct{}{}
		synctest.Wait()
		h2.stop()
		again, stop := startService(t, ServiceConfig{Store: h2.store, Catalog: h2.cat, Runner: h2.runner})
		defer stop()
		r, err = again.Resume(t.Context(), id2, "")
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if !r.Paused || r.State != RunWaiting || r.Step(2).Status != StepPending {
			t.Fatalf("after restart: paused %v, %s, step 2 %s", r.Paused, r.State, r.Step(2).Status)
		}
		rebuilt, err := Rebuild(h2.store.journal(id2))
		if err != nil || !rebuilt.Paused || rebuilt.PausedBy != "U-ana" || !rebuilt.Step(1).Held {
			t.Fatalf("rebuilt from the journal: %+v, %v", rebuilt, err)
		}
	})
}

// A step that fails while the run is paused still falls back as its rules
// say, but the fallback waits for the resume: the run waits meanwhile.
func TestPausedFallbackWaitsForResume(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, true)
		p := h.chain(Flags{ForceAuto: true}, "deliver-prd", "deliver-user-stories")
		p.Steps[0].Rules.Fallback = "define-problem-statement"
		h.runner.script["deliver-prd"] = []Outcome{{ExitCode: 1, Stderr: "boom"}}
		id := h.start(p)
		synctest.Wait()
		if _, err := h.svc.Pause(t.Context(), id, "U-ana"); err != nil {
			t.Fatal(err)
		}
		h.runner.gate <- struct{}{}
		synctest.Wait()
		r := h.expect(id, RunWaiting, "queued/FAILED", "pending")
		if r.Step(1).Using != "define-problem-statement" || len(h.runner.calls()) != 1 {
			t.Fatalf("using %q after %d calls", r.Step(1).Using, len(h.runner.calls()))
		}
		if _, err := h.svc.Unpause(t.Context(), id, "U-ana", ""); err != nil {
			t.Fatal(err)
		}
		h.runner.gate <- struct{}{}
		h.runner.gate <- struct{}{}
		synctest.Wait()
		h.expect(id, RunCompleted, "done/PRODUCED", "done/PRODUCED")
		h.checkJournal(id)
	})
}

// An overloaded provider is waited out like a rate limit, and says so; an
// error waiting does not cure (a login) fails the step at once.
func TestOverloadedWaitedOutAuthNot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, false)
		h.runner.script["deliver-prd"] = []Outcome{{AgentError: "API Error: 529 overloaded", AgentErrorKind: AgentErrOverloaded, ExitCode: 1}}
		h.runner.script["deliver-user-stories"] = []Outcome{{AgentError: "Not logged in", AgentErrorKind: AgentErrAuth, ExitCode: 1}}
		id := h.start(h.chain(Flags{ForceAuto: true}, "deliver-prd", "deliver-user-stories"))
		synctest.Wait()
		r := h.expect(id, RunWaiting, "waiting/FAILED", "pending")
		if !strings.Contains(r.PauseReason, "the agent is overloaded; retrying at") {
			t.Fatalf("pause reason %q", r.PauseReason)
		}
		time.Sleep(time.Minute + time.Second)
		synctest.Wait()
		r = h.expect(id, RunWaiting, "done/PRODUCED", "waiting/FAILED")
		if r.Paused {
			t.Fatal("an auth error paused the run: it cannot be waited out")
		}
		if _, _, _, ok := RetryDue(r.Step(2)); ok {
			t.Fatal("an auth error is retried")
		}
		h.checkJournal(id)
	})
}

// A rate-limit wait pending when gonogo stopped is scheduled again when
// the run is resumed, for the time the journal says.
func TestRateLimitWaitSurvivesRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, false)
		h.runner.script["deliver-prd"] = []Outcome{rateLimitedOutcome()}
		id := h.start(h.chain(Flags{ForceAuto: true}, "deliver-prd"))
		synctest.Wait()
		due, _, _, ok := RetryDue(h.load(id).Step(1))
		if !ok {
			t.Fatal("no retry is due")
		}
		h.stop()
		time.Sleep(30 * time.Second)
		again, stop := startService(t, ServiceConfig{Store: h.store, Catalog: h.cat, Runner: h.runner})
		defer stop()
		if _, err := again.Resume(t.Context(), id, ""); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		h.expect(id, RunWaiting, "waiting/FAILED")
		time.Sleep(time.Until(due) + time.Second)
		synctest.Wait()
		h.expect(id, RunCompleted, "done/PRODUCED")
	})
}
