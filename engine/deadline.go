package engine

import (
	"fmt"
	"time"
)

// A checkpoint left waiting has two deadlines, both counted from when its
// attempt finished and both set by the run's Oversight: a reminder to the
// approvers, and a decision timeout, after which gonogo aborts the run or
// says the step keeps waiting. The service keeps a timer for the next one,
// like a retry's, and commits what it did to the journal, so that a restart
// neither repeats a deadline nor forgets one.

// TimeoutAction is what gonogo does when a checkpoint's decision times out.
type TimeoutAction string

// The timeout actions; "" (none given) is TimeoutWait.
const (
	TimeoutWait  TimeoutAction = "wait"  // say so, and keep waiting
	TimeoutAbort TimeoutAction = "abort" // abort the run, as TimeoutActor
)

// ParseTimeoutAction reads a timeout action; "" is none given.
func ParseTimeoutAction(s string) (TimeoutAction, error) {
	if s == "" {
		return "", nil
	}
	return parseOne("decision timeout action", s, TimeoutWait, TimeoutAbort)
}

// TimeoutActor is the actor of the abort a decision timeout makes.
const TimeoutActor = "gonogo (decision timeout)"

// TimeoutKey is the idempotency key of the abort the decision timeout of
// a step attempt makes, so it is applied once however often it is issued.
func TimeoutKey(id RunID, step, attempt int) string {
	return fmt.Sprintf("timeout:%s:timeout/%d/%d", id, step, attempt)
}

// Deadlines says when the checkpoint of s is due its reminder and when its
// decision times out, counted from when its latest attempt finished; a
// zero time for a deadline the run does not set, or when s is not waiting
// for a decision. They hold whatever gonogo has done about them already.
func Deadlines(r *Run, s *Step) (remind, timeout time.Time) {
	l := s.Latest()
	o := r.Oversight
	if o == nil || s.Status != StepWaiting || l == nil || l.Finished.IsZero() {
		return time.Time{}, time.Time{}
	}
	return deadlineAfter(l.Finished, o.RemindAfter), deadlineAfter(l.Finished, o.DecisionTimeout)
}

// deadlineAfter is the deadline d after t; zero (none) for a d the run
// does not set.
func deadlineAfter(t time.Time, d time.Duration) time.Time {
	if d <= 0 {
		return time.Time{}
	}
	return t.Add(d)
}

// DeadlineDue reports the next deadline of s that gonogo still has to act
// on: not one the journal says it acted on, and none while nobody is being
// waited on (the run still runs other steps, or gonogo retries s itself).
func DeadlineDue(r *Run, s *Step) (time.Time, bool) {
	remind, timeout := pendingDeadlines(r, s)
	switch {
	case remind.IsZero() && timeout.IsZero():
		return time.Time{}, false
	case remind.IsZero():
		return timeout, true
	case timeout.IsZero() || remind.Before(timeout):
		return remind, true
	}
	return timeout, true
}

// pendingDeadlines are the deadlines of s gonogo still has to act on, as
// DeadlineDue says; zero for the others.
func pendingDeadlines(r *Run, s *Step) (remind, timeout time.Time) {
	if r.State != RunWaiting {
		return time.Time{}, time.Time{}
	}
	if _, _, _, retrying := RetryDue(s); retrying {
		return time.Time{}, time.Time{}
	}
	remind, timeout = Deadlines(r, s)
	l := s.Latest()
	if l == nil {
		return time.Time{}, time.Time{}
	}
	if !l.Reminded.IsZero() {
		remind = time.Time{}
	}
	if !l.TimedOut.IsZero() {
		timeout = time.Time{}
	}
	return remind, timeout
}

// Overdue says what gonogo does about r's deadlines that have passed by
// now: the events that record a reminder, or a timeout that leaves its
// step waiting (a timeout before a reminder due at the same time), and the
// aborts of timeouts whose action is TimeoutAbort, which the caller
// decides as TimeoutActor with TimeoutKey. An abort leaves no reminder to
// make.
func Overdue(r *Run, now time.Time) ([]Event, []Decision) {
	var evs []Event
	var aborts []Decision
	for i := range r.Steps {
		more, abort := overdueStep(r, &r.Steps[i], now)
		if abort != nil {
			aborts = append(aborts, *abort)
			continue
		}
		evs = append(evs, more...)
	}
	if len(aborts) > 0 {
		return nil, aborts[:1]
	}
	return stamp(r, now, evs...), nil
}

// overdueStep is what gonogo does about the deadlines of s that have
// passed by now: the abort of a timeout whose action is TimeoutAbort
// (and nothing else), else the events of a timeout that leaves s waiting
// and of a reminder, in that order.
func overdueStep(r *Run, s *Step, now time.Time) ([]Event, *Decision) {
	remind, timeout := pendingDeadlines(r, s)
	l := s.Latest()
	var evs []Event
	if passed(timeout, now) {
		if r.Oversight.OnTimeout == TimeoutAbort {
			return nil, &Decision{Kind: DecideAbort, Actor: TimeoutActor, Step: s.N, Attempt: l.N,
				Key: TimeoutKey(r.ID, s.N, l.N)}
		}
		evs = append(evs, Event{Type: EvStepTimedOut, Step: s.N, Attempt: l.N, Status: s.Status,
			Reason: fmt.Sprintf("waited %s for a decision; it keeps waiting", r.Oversight.DecisionTimeout)})
	}
	if passed(remind, now) {
		evs = append(evs, Event{Type: EvStepReminded, Step: s.N, Attempt: l.N, Status: s.Status})
	}
	return evs, nil
}

// passed reports whether deadline t is set and has passed by now.
func passed(t, now time.Time) bool {
	return !t.IsZero() && !t.After(now)
}
