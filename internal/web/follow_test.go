package web

import (
	"testing"
	"time"
)

// A decision made on one page reaches another page following the run
// without waiting for its next look: the look here is an hour away, so
// only the form's own change can wake it.
func TestFormDecisionWakesOtherPages(t *testing.T) {
	br := newBenchRun(t, 1, runner{}, Options{PollEvery: time.Hour})
	p := br.pageRedo(t, br.c, br.signIn(t))
	defer p.cancel()
	p.submit(t)
	select {
	case <-p.theirs:
	case <-time.After(waitLimit):
		t.Fatal("the other page never heard of the decision")
	}
	br.waitingAttempt(t, 1, p.attempt+1)
}
