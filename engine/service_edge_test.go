package engine

import (
	"strings"
	"testing"
	"testing/synctest"
)

// Attempt 1 of step 1 is written to NN-skill.md. A redo brings back nothing
// (EMPTY, no artifact), and attempt 2 is then edited: the edit is written to
// NN-skill.md, so attempt 1's file must make way first (renamed to its
// attempt name), never be overwritten.
func TestEditAfterEmptyRedoKeepsEarlierAttemptFile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, false)
		h.runner.script["deliver-prd"] = []Outcome{
			{Artifact: []byte("# PRD, attempt 1\n\nThe agent's first draft.\n")},
			{}, // attempt 2: nothing
		}
		id := h.start(h.chain(Flags{}, "deliver-prd", "deliver-user-stories"))
		synctest.Wait()
		h.decide(id, 1, DecideRedo, "", nil)
		synctest.Wait()
		h.expect(id, RunWaiting, "waiting/EMPTY", "pending")
		h.decide(id, 1, DecideEdit, "", []byte("# PRD, written by hand\n\nReplaces the empty attempt 2.\n"))
		synctest.Wait()

		r := h.load(id)
		a1 := r.Step(1).Attempts[0]
		b, ok := h.store.file(a1.File)
		if !ok || !strings.Contains(string(b), "attempt 1") {
			t.Fatalf("attempt 1 says its artifact is %s, which holds %q", a1.File, b)
		}
	})
}

// A freed runner slot goes to the oldest queued step: the run that freed it
// cannot take it straight back, so with one slot a step queued behind a
// guarded-auto run does not wait for that whole run.
func TestQueuedStepGetsFreedSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 1, true)
		pa := testPlan(InputPlan, "deliver-prd", "deliver-user-stories", "define-problem-statement")
		pa.Domain, pa.Flags.Auto = DomainClear, true
		a := h.start(pa)
		synctest.Wait()
		pb := testPlan(InputPlan, "deliver-prd")
		pb.Domain, pb.Flags.Auto = DomainClear, true
		b := h.start(pb)
		synctest.Wait()
		h.expect(b, RunRunning, "queued")

		h.runner.gate <- struct{}{} // a's step 1 ends and frees the slot
		synctest.Wait()
		// b's step was queued before a's step 2 was even ready: it should
		// have the slot now.
		if got := h.load(b).Step(1).Status; got != StepRunning {
			t.Fatalf("after the slot freed, the oldest queued step is %s; a's step 2 is %s", got, h.load(a).Step(2).Status)
		}
		for range 3 {
			h.runner.gate <- struct{}{}
			synctest.Wait()
		}
	})
}

// An artifact whose title happens to start "Error -" (a postmortem, an
// error-handling spec) is content, judged PRODUCED: only "ERROR:"-style lines
// are an agent's refusal, and a FAILED step could not be approved.
func TestTitleStartingWithErrorIsNotARefusal(t *testing.T) {
	body := "# Error - checkout timeout postmortem\n\nOn 3 March the payment call timed out for 14 minutes. Root cause: ...\n"
	if res, reason := Judge(Outcome{Artifact: []byte(body)}, Skill{}); res != ResultProduced {
		t.Fatalf("Judge = %s (%s), want PRODUCED", res, reason)
	}
}
