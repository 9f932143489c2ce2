package hangguard

import (
	"testing"
	"time"
)

// A wait gives up before the binary's own deadline, and not sooner than a
// loaded machine could need.
func TestDeadlineComesBeforeTheBinarys(t *testing.T) {
	end, ok := t.Deadline()
	if !ok {
		t.Skip("run without -timeout: no deadline to come before")
	}
	got := Deadline(t)
	if !got.Before(end) {
		t.Errorf("the waits give up at %v, not before the binary's deadline %v", got, end)
	}
	if left := time.Until(end); left > 10*time.Minute/2 && time.Until(got) < left*9/10 {
		t.Errorf("the waits give up %v from now, out of %v left", time.Until(got), left)
	}
}

// A benchmark has no deadline: its waits last ten minutes.
func TestNoDeadlineMeansTenMinutes(t *testing.T) {
	var b testing.B
	if d := Limit(&b); d < 9*time.Minute || d > noDeadline {
		t.Errorf("a benchmark's waits last %v, want %v", d, noDeadline)
	}
}
