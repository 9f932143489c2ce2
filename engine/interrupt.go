package engine

import (
	"fmt"
	"slices"
	"time"
)

// Interrupt marks running steps as interrupted, since nothing is running
// them any more: with no steps named, every running step (after a crash no
// process can still be running any); with steps named, only those (the
// worker that ran them was lost while the rest go on). A named step that is
// not running is left as it is. The run then waits for redo or abort.
func Interrupt(r *Run, now time.Time, steps ...int) []Event {
	reason := reasonStopped
	if len(steps) > 0 {
		reason = reasonWorkerLost
	}
	var evs []Event
	for i := range r.Steps {
		s := &r.Steps[i]
		if s.Status != StepRunning || !namedOrAll(steps, s.N) {
			continue
		}
		to, err := next(s, trInterrupt)
		if err != nil {
			continue
		}
		evs = append(evs, interruptEvents(s, to, reason)...)
	}
	return stamp(r, now, evs...)
}

// namedOrAll reports whether step n is among steps, where no step named
// names them all.
func namedOrAll(steps []int, n int) bool {
	return len(steps) == 0 || slices.Contains(steps, n)
}

// interruptEvents are the events of interrupting running step s: every
// attempt the step's start began that has not ended is lost, each
// candidate of a best-of round on its own, once; with none, the step is.
func interruptEvents(s *Step, to StepStatus, reason string) []Event {
	var evs []Event
	for _, a := range StartedAttempts(s) {
		if a.Finished.IsZero() {
			evs = append(evs, Event{Type: EvStepInterrupted, Step: s.N, Attempt: a.N, Status: to, Reason: reason})
		}
	}
	if len(evs) == 0 {
		evs = append(evs, Event{Type: EvStepInterrupted, Step: s.N, Status: to, Reason: reason})
	}
	return evs
}

// Recover is the change a store commits for r when it opens after gonogo
// stopped: every step recorded as running is interrupted, with a journal
// event, because no process can still be running it. ok is false when no
// step of r was running, and there is nothing to commit.
//
// Each event says when its attempt was lost (Event.Lost) as far as gonogo
// knows, which is not now, when the next gonogo found it: the last sign
// that the gonogo running it was alive. That is the latest of the
// attempt's start, the run's last recorded change (only the gonogo running
// the step could record one while it ran: the store's lock is exclusive,
// and the next holder recovers before anything else) and pulse, the last
// time the store was told that gonogo was alive while steps ran (see Pulse;
// zero when it keeps none). A pulse after now (a clock set back) counts
// as now; what the run recorded is never moved.
func Recover(r *Run, now, pulse time.Time) (c Commit, ok bool, err error) {
	evs := Interrupt(r, now)
	if len(evs) == 0 {
		return Commit{}, false, nil
	}
	if pulse.After(now) {
		pulse = now
	}
	for i := range evs {
		evs[i].Lost = lostSince(r, evs[i], pulse)
	}
	after, err := Fold(r, evs)
	if err != nil {
		return Commit{}, false, fmt.Errorf("recover run %s: %w", r.ID, err)
	}
	return Commit{Run: after, Events: evs, After: r.Seq}, true, nil
}

// lostSince is when the attempt ev interrupts was last known to run: the
// latest of its start, the run's last change and pulse.
func lostSince(r *Run, ev Event, pulse time.Time) time.Time {
	lost := r.Updated
	if pulse.After(lost) {
		lost = pulse
	}
	if a := attempt(r.Step(ev.Step), ev.Attempt); a != nil && a.Started.After(lost) {
		lost = a.Started
	}
	return lost
}

// LostAt is when the attempt a step-interrupted event ended was lost, as
// far as gonogo knows: the event's Lost (see Recover), or, in an event
// that has none, the event's own time.
func LostAt(ev Event) time.Time {
	if ev.Lost.IsZero() {
		return ev.Time
	}
	return ev.Lost
}

// The reasons an interrupted attempt records.
const (
	reasonStopped    = "interrupted: gonogo stopped while this step was running"
	reasonWorkerLost = "interrupted: the worker running this step was lost"
)

// WorkerLost reports whether step s was interrupted because the worker
// running it was lost (gonogo on Temporal) rather than because gonogo
// itself stopped: the one answer the terminal, show and Slack word.
func WorkerLost(s *Step) bool {
	l := s.Latest()
	return s.Status == StepInterrupted && l != nil && l.Reason == reasonWorkerLost
}
