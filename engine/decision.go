package engine

import (
	"fmt"
	"time"
)

// A person's decision on a waiting step, as a transition: the checks that
// refuse it, and the events of each kind of decision.

// Edit is the replacement artifact an edit decision brings.
type Edit struct {
	Size    int
	File    string
	Summary string
}

// Decide applies a person's decision to the step it names. It refuses, with
// ErrDuplicate, a decision its run applied already under its key, and with
// ErrKeyReused one whose key the run used for another decision; with ErrStale, a decision for
// an attempt that is not the step's latest; with ErrNotWaiting, a step that
// is not waiting for a decision; and a decision the step's result does not
// allow (approving a FAILED step). Abort ends the run, keeping everything
// produced.
func Decide(r *Run, d Decision, edit *Edit, now time.Time) ([]Event, error) {
	return DecideExpand(r, d, edit, nil, now)
}

// DecideExpand is Decide for a route or decompose step: added are the steps
// its confirmed output brings, added when the decision makes it done.
func DecideExpand(r *Run, d Decision, edit *Edit, added []PlanStep, now time.Time) ([]Event, error) {
	resumed, err := resumedBy(r, d.Actor, now)
	if err != nil {
		return nil, err
	}
	if len(resumed) == 0 {
		return decideExpand(r, d, edit, added, now)
	}
	// A decision on a paused run goes on from its checkpoint: the run is
	// resumed, in its mode, and then decided.
	cur, err := Fold(r, resumed)
	if err != nil {
		return nil, err
	}
	evs, err := decideExpand(cur, d, edit, added, now)
	if err != nil {
		return nil, err
	}
	return append(resumed, evs...), nil
}

func decideExpand(r *Run, d Decision, edit *Edit, added []PlanStep, now time.Time) ([]Event, error) {
	s, err := step(r, d.Step)
	if err != nil {
		return nil, err
	}
	if err := checkDecidable(r, s, d); err != nil {
		return nil, err
	}
	if d.Kind == DecidePick {
		return decidePick(r, s, d, now)
	}
	to, err := next(s, trigger(d.Kind))
	if err != nil {
		return nil, err
	}
	ev := Event{Type: EvDecision, Step: d.Step, Attempt: d.Attempt, Actor: d.Actor, Decision: d.Kind, Key: d.Key, Feedback: d.Feedback, Status: to}
	switch d.Kind {
	case DecideApprove:
		return approveEvents(r, s, ev, added, now)
	case DecideEdit:
		if err := withEdit(&ev, edit); err != nil {
			return nil, err
		}
	case DecideAbort:
		return abortEvents(r, ev, now)
	}
	return withSettle(r, now, added, ev)
}

// decidePick records the pick d of one of best-of step s's candidates.
func decidePick(r *Run, s *Step, d Decision, now time.Time) ([]Event, error) {
	if err := checkPick(s, d); err != nil {
		return nil, err
	}
	return pickEvents(r, d, now, nil)
}

// withEdit puts the replacement artifact of edit decision ev in it; an
// edit without one is refused.
func withEdit(ev *Event, edit *Edit) error {
	if edit == nil || edit.Size == 0 {
		return invalidDecision("step %d: an edit needs a replacement artifact", ev.Step)
	}
	ev.Artifact, ev.Size, ev.File, ev.Summary = true, edit.Size, edit.File, edit.Summary
	return nil
}

// checkDecidable refuses decision d on step s of r, in this order: a key
// the run applied already (or used for another decision), a finished run,
// an attempt that is not the step's latest, and a decision the step's
// state and result do not allow.
func checkDecidable(r *Run, s *Step, d Decision) error {
	switch rec, err := KeyedBefore(r, d); {
	case err != nil:
		return err
	case rec != nil:
		return fmt.Errorf("decision %s was already applied: %w", d.Key, ErrDuplicate)
	}
	if r.Finished() {
		return fmt.Errorf("run %s is %s: nothing waits for a decision: %w", r.ID, r.State, ErrStale)
	}
	if !decidesAttempt(s, d) {
		return fmt.Errorf("step %d: the decision was for attempt %d, the step is at attempt %d: %w", d.Step, d.Attempt, len(s.Attempts), ErrStale)
	}
	return CheckDecision(r, s, d.Kind)
}

// approveEvents records the approval ev of step s. With a quorum, a vote
// short of it is recorded and the step keeps waiting; the vote that
// reaches it settles the step.
func approveEvents(r *Run, s *Step, ev Event, added []PlanStep, now time.Time) ([]Event, error) {
	if r.Quorum <= 1 {
		return withSettle(r, now, added, ev)
	}
	votes, err := vote(r, s, ev.Actor)
	if err != nil {
		return nil, err
	}
	if votes < r.Quorum {
		ev.Status = s.Status
		return stamp(r, now, ev), nil
	}
	return withSettle(r, now, added, ev)
}

// abortEvents records the abort decision ev and the end of the run it
// brings, which keeps everything produced.
func abortEvents(r *Run, ev Event, now time.Time) ([]Event, error) {
	evs := stamp(r, now, ev)
	after, err := Fold(r, evs)
	if err != nil {
		return nil, err
	}
	return append(evs, stamp(after, now, Event{Type: EvRunFinished, State: RunAborted, Actor: ev.Actor,
		Reason: fmt.Sprintf("aborted by %s at step %d", ev.Actor, ev.Step)})...), nil
}

// vote counts the distinct approvals of a step's latest attempt with actor's
// added. The same person approving twice, or the starter when the starter's
// approval does not count, is refused.
func vote(r *Run, s *Step, actor string) (int, error) {
	if r.ExcludeStarter && actor == r.StartedBy {
		return 0, fmt.Errorf("the run's starter cannot approve toward the quorum of %d: %w", r.Quorum, ErrForbidden)
	}
	voters := Approvals(s)
	for _, v := range voters {
		if v == actor {
			return 0, fmt.Errorf("%s already approved step %d: %w", actor, s.N, ErrDuplicate)
		}
	}
	return len(voters) + 1, nil
}

// Approvals lists who approved the step's latest attempt so far, in order.
func Approvals(s *Step) []string {
	l := s.Latest()
	if l == nil {
		return nil
	}
	var out []string
	for _, d := range s.Decisions {
		if d.Kind == DecideApprove && d.Attempt == l.N {
			out = append(out, d.Actor)
		}
	}
	return out
}
