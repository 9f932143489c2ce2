// Package hangguard bounds the waits in gonogo's tests that only guard
// against a hang: a wait for something that must happen, however slowly a
// loaded machine gets there. Such a wait is no claim on speed (speed
// claims are benchmarks), so it gives up only shortly before the test
// binary's own deadline (go test -timeout): late enough that no machine
// is too slow for it, early enough that the test fails naming what never
// happened rather than in the binary's panic.
package hangguard

import (
	"context"
	"testing"
	"time"
)

// noDeadline is how long a wait lasts when the test has no deadline of
// its own (go test -timeout 0, or a benchmark).
const noDeadline = 10 * time.Minute

// margin is how long before the binary's deadline the waits give up, at
// most: time for the failure to be reported and the cleanups to run.
const margin = 30 * time.Second

// Deadline is when a wait that only guards against a hang gives up.
func Deadline(t testing.TB) time.Time {
	now := time.Now()
	d, ok := t.(interface{ Deadline() (time.Time, bool) })
	if !ok {
		return now.Add(noDeadline)
	}
	end, ok := d.Deadline()
	if !ok {
		return now.Add(noDeadline)
	}
	return end.Add(-min(margin, end.Sub(now)/10))
}

// Limit is how long from now a wait that only guards against a hang
// lasts.
func Limit(t testing.TB) time.Duration {
	return time.Until(Deadline(t))
}

// Context ends at Deadline(t), or when the test's cleanups run.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithDeadline(context.Background(), Deadline(t))
	t.Cleanup(cancel)
	return ctx
}
