package engine

import (
	"cmp"
	"fmt"
	"slices"
)

// The questions every front end asks of a run, answered once: which steps
// wait on people, which one holds the run, what a step is called.

// WaitingOn lists, in step order, the steps people must decide on now:
// waiting for a decision or interrupted, and not about to be retried by
// gonogo itself.
func WaitingOn(r *Run) []*Step {
	var out []*Step
	for i := range r.Steps {
		if s := &r.Steps[i]; waitsOnPeople(s) {
			out = append(out, s)
		}
	}
	return out
}

func waitsOnPeople(s *Step) bool {
	if s.Status != StepWaiting && s.Status != StepInterrupted {
		return false
	}
	_, _, _, retrying := RetryDue(s)
	return !retrying
}

// NextDecision is the first step a person must decide on now: none while
// a step of the run still runs (its other steps run on meanwhile), and
// none that gonogo retries by itself.
func NextDecision(r *Run) *Step {
	if r.State != RunWaiting {
		return nil
	}
	for i := range r.Steps {
		if s := &r.Steps[i]; waitsOnPeople(s) {
			return s
		}
	}
	return nil
}

// Halted is the step that holds a waiting run most: the first one that was
// interrupted or FAILED, else the first FAILED step gonogo is about to
// retry, else the first step waiting for a decision; nil when none waits.
func Halted(r *Run) *Step {
	var retrying, waiting *Step
	for i := range r.Steps {
		s := &r.Steps[i]
		switch {
		case s.Status == StepInterrupted:
			return s
		case s.Status != StepWaiting:
		case !waitsOnPeople(s):
			retrying = cmp.Or(retrying, s)
		case latestFailed(s):
			return s
		default:
			waiting = cmp.Or(waiting, s)
		}
	}
	return cmp.Or(retrying, waiting)
}

// GateOnError reports a FAILED step waiting under on_error: gate: the team
// may fix it (edit, skip, redo) besides aborting.
func GateOnError(s *Step) bool {
	return s.Status == StepWaiting && latestFailed(s) && s.Rules.OnError.Kind == OnErrorGate
}

// latestFailed reports whether the attempt s stands on FAILED.
func latestFailed(s *Step) bool {
	l := s.Latest()
	return l != nil && l.Result == ResultFailed
}

// OptionalFailed reports an optional step whose failure the run went on
// without: skipped, its latest attempt FAILED, and nobody skipped it.
func OptionalFailed(s *Step) bool {
	l := s.Latest()
	if s.Status != StepSkipped || !s.Rules.Optional || l == nil || l.Result != ResultFailed {
		return false
	}
	return !slices.ContainsFunc(s.Decisions, func(d Decision) bool { return d.Attempt == l.N && d.Kind == DecideSkip })
}

// StepTitle is how a step is named to people: "Step N of Total: skill",
// its effort, and the step whose output added it.
type StepTitle struct {
	N, Of  int
	Skill  string
	Effort string
	Parent int // 0 for a step of the plan
}

// Title names step s of r.
func Title(r *Run, s *Step) StepTitle {
	return StepTitle{N: s.N, Of: len(r.Steps), Skill: s.Skill, Effort: s.Effort, Parent: s.Parent}
}

// Heading is "Step N of Total: skill", as every front end opens a step's
// title.
func (t StepTitle) Heading() string { return fmt.Sprintf("Step %d of %d: %s", t.N, t.Of, t.Skill) }

// String is the whole title in plain text: the heading, the effort in
// parentheses and "[added by step P]".
func (t StepTitle) String() string {
	s := t.Heading()
	if t.Effort != "" {
		s += " (" + t.Effort + ")"
	}
	if t.Parent != 0 {
		s += fmt.Sprintf(" [added by step %d]", t.Parent)
	}
	return s
}
