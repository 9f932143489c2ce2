package engine

import (
	"fmt"
	"time"
)

// Pausing a run holds it at its next checkpoint: the steps already running
// finish and are judged as usual, then wait for a decision whatever the
// run's mode, and no step starts until someone resumes the run or decides
// at the checkpoint. An agent's rate limit pauses the run the same way
// (PausedBy RateLimitActor) until the step's automatic redo.

// RateLimitActor pauses a run while an agent's rate limit or overload is
// waited out, and makes the redo that ends the wait.
const RateLimitActor = "gonogo (rate limit)"

// RateLimit is how long gonogo waits out an agent's rate limit or
// overload before it redoes the step by itself.
type RateLimit struct {
	Wait  time.Duration // the first wait; each next one doubles (at most maxBackoff)
	Tries int           // automatic redos at most; 0 fails the step at once
}

// DefaultRateLimit waits a minute, then two, four, eight and sixteen.
func DefaultRateLimit() RateLimit { return RateLimit{Wait: time.Minute, Tries: 5} }

// ParseAgentErrorKind reads a stored agent error kind; "" is none.
func ParseAgentErrorKind(s string) (AgentErrorKind, error) {
	if s == "" {
		return "", nil
	}
	return parseOne("agent error kind", s, AgentErrAuth, AgentErrBilling, AgentErrRateLimit,
		AgentErrOverloaded, AgentErrContextTooLong, AgentErrOther)
}

// Pause holds a moving run: no new step starts, queued steps go back to
// pending, and each running step waits at a checkpoint when it finishes.
// A paused run refuses with ErrPaused; a run waiting for a decision or
// finished, with ErrNotMoving.
func Pause(r *Run, actor, reason string, now time.Time) ([]Event, error) {
	switch {
	case r.Finished():
		return nil, fmt.Errorf("run %s: %w: it is %s", r.ID, ErrNotMoving, r.State)
	case r.Paused:
		return nil, fmt.Errorf("run %s: %w (by %s at %s)", r.ID, ErrPaused, r.PausedBy, r.PausedAt.Format("15:04 MST"))
	case r.State == RunWaiting:
		return nil, fmt.Errorf("run %s: %w: it waits for a decision", r.ID, ErrNotMoving)
	}
	if err := holdQueued(r); err != nil {
		return nil, err
	}
	if reason == "" {
		reason = "paused by " + actor
	}
	return stamp(r, now, Event{Type: EvRunPaused, Actor: actor, Reason: reason}), nil
}

// holdQueued checks that every queued step of r may go back to pending.
func holdQueued(r *Run) error {
	for i := range r.Steps {
		if s := &r.Steps[i]; s.Status == StepQueued {
			if _, err := next(s, trHold); err != nil {
				return err
			}
		}
	}
	return nil
}

// Unpause resumes a paused run, in mode m ("" keeps the run's). Each step
// the pause held at a checkpoint goes on when the mode would have let it
// (added are the steps a held route or decompose step's output brings);
// in checkpointed mode it stays at its checkpoint. A run that is not
// paused refuses with ErrNotPaused.
func Unpause(r *Run, actor string, m Mode, added map[int][]PlanStep, now time.Time) ([]Event, error) {
	if r.Finished() || !r.Paused {
		return nil, fmt.Errorf("run %s: %w (it is %s)", r.ID, ErrNotPaused, r.State)
	}
	if m == r.Mode {
		m = ""
	}
	evs := stamp(r, now, Event{Type: EvRunResumed, Actor: actor, Mode: m})
	cur, err := Fold(r, evs)
	if err != nil {
		return nil, err
	}
	for i := range cur.Steps {
		if !releasable(cur, &cur.Steps[i]) {
			continue
		}
		var more []Event
		if cur, more, err = release(cur, &cur.Steps[i], actor, added, now); err != nil {
			return nil, err
		}
		evs = append(evs, more...)
	}
	return evs, nil
}

// releasable reports whether s is held at a checkpoint by a pause that r's
// mode would not have stopped it at.
func releasable(r *Run, s *Step) bool {
	l := s.Latest()
	return s.Held && s.Status == StepWaiting && l != nil && !pauses(r, s, l.Result)
}

// release lets held step s of cur go on, with the steps added[s.N] its
// output brings; it returns the run after that and the events saying so.
func release(cur *Run, s *Step, actor string, added map[int][]PlanStep, now time.Time) (*Run, []Event, error) {
	to, err := next(s, trRelease)
	if err != nil {
		return nil, nil, err
	}
	more, err := withSettle(cur, now, added[s.N], Event{Type: EvStepReleased, Step: s.N, Attempt: s.Latest().N, Actor: actor, Status: to})
	if err != nil {
		return nil, nil, err
	}
	after, err := Fold(cur, more)
	if err != nil {
		return nil, nil, err
	}
	return after, more, nil
}

// Releasable lists the steps Unpause would let go on in mode m ("" the
// run's): the service reads their output first when they add steps.
func Releasable(r *Run, m Mode) []int {
	c := *r
	if m != "" {
		c.Mode = m
	}
	var out []int
	for i := range r.Steps {
		if s := &r.Steps[i]; releasable(&c, s) {
			out = append(out, s.N)
		}
	}
	return out
}

// automatic reports whether actor is gonogo itself, redoing a step after a
// backoff.
func automatic(actor string) bool { return actor == RetryActor || actor == RateLimitActor }

// AutomaticActor reports whether actor is gonogo itself (a retry on_error
// asks for, or the redo after an agent's rate limit), not a person.
func AutomaticActor(actor string) bool { return automatic(actor) }

// rateLimitRetriesUsed counts the rate-limit redos of s since a person last
// decided on it.
func rateLimitRetriesUsed(s *Step) int {
	n := 0
	for i := len(s.Decisions) - 1; i >= 0 && automatic(s.Decisions[i].Actor); i-- {
		if s.Decisions[i].Actor == RateLimitActor {
			n++
		}
	}
	return n
}

// backoff is the wait before retry used+1: first, doubled used times, at
// most maxBackoff.
func backoff(first time.Duration, used int) time.Duration {
	wait := min(first, maxBackoff)
	for range used {
		if wait *= 2; wait >= maxBackoff {
			return maxBackoff
		}
	}
	return wait
}

// rateLimited fills in ev, a FAILED attempt's finish, when the agent's
// error is one that waiting cures and tries are left: the step waits for
// its automatic redo, and the run pauses (unless it is paused already)
// saying why and until when. It returns the pause event to append, if any.
func rateLimited(r *Run, s *Step, ev *Event, f Finished, now time.Time) (*Event, bool) {
	if ev.Final || !f.ErrorKind.Transient() {
		return nil, false
	}
	used := rateLimitRetriesUsed(s)
	if used >= f.RateLimit.Tries {
		return nil, false
	}
	ev.RetryAt, ev.Retries = now.Add(backoff(f.RateLimit.Wait, used)), f.RateLimit.Tries
	if r.Paused {
		return nil, true
	}
	what := "rate limited"
	if f.ErrorKind == AgentErrOverloaded {
		what = "overloaded"
	}
	return &Event{Type: EvRunPaused, Actor: RateLimitActor,
		Reason: fmt.Sprintf("step %d: the agent is %s; retrying at %s (retry %d of %d)",
			s.N, what, ev.RetryAt.Format("15:04 MST"), used+1, f.RateLimit.Tries)}, true
}

// applyPaused folds a run-paused event: queued steps go back to pending.
func applyPaused(r *Run, ev Event) {
	r.Paused, r.PausedBy, r.PauseReason, r.PausedAt = true, ev.Actor, ev.Reason, ev.Time
	for i := range r.Steps {
		if s := &r.Steps[i]; s.Status == StepQueued {
			s.Status = StepPending
		}
	}
}

// applyResumed folds a run-resumed event.
func applyResumed(r *Run, ev Event) {
	r.Paused, r.PausedBy, r.PauseReason, r.PausedAt = false, "", "", time.Time{}
	if ev.Mode != "" {
		r.Mode = ev.Mode
	}
}

// resumedBy returns the event that resumes a paused run before a decision
// on it: a person's decision goes on from the checkpoint; gonogo's own
// automatic redo ends only its own rate-limit wait, and is refused while a
// person holds the run.
func resumedBy(r *Run, actor string, now time.Time) ([]Event, error) {
	if !r.Paused || r.Finished() {
		return nil, nil
	}
	if automatic(actor) && r.PausedBy != RateLimitActor {
		return nil, fmt.Errorf("run %s: %w (by %s)", r.ID, ErrPaused, r.PausedBy)
	}
	return stamp(r, now, Event{Type: EvRunResumed, Actor: actor}), nil
}

// PausedByPerson reports whether a person paused r, not gonogo waiting out
// an agent's rate limit, and r has not ended. While it holds, no step
// starts and no automatic retry runs until a person resumes r.
func (r *Run) PausedByPerson() bool {
	return r.Paused && r.PausedBy != RateLimitActor && !r.Finished()
}
