package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// A best-of step runs on several runners at once: each start of it is a
// round of candidates, one attempt per runner (StepRules.BestOf), each
// judged on its own. The step waits until every candidate of the round
// has ended; then people pick one (DecidePick), whose artifact becomes
// the step's (Step.Latest), or edit, skip, redo the round or abort. Guarded
// auto picks for them only when exactly one candidate PRODUCED. A failed
// candidate is final: no retry, fallback or rate-limit wait follows it,
// since the others stand beside it.

// ErrBestOfUnsupported refuses a best-of run on a backend that does not
// carry out best-of steps; nothing is started.
var ErrBestOfUnsupported = errors.New("best-of steps (--best-of, best_of:) are not carried out here")

// AutoPickActor is who picks a best-of step's candidate when guarded auto
// does it: exactly one candidate PRODUCED.
const AutoPickActor = "gonogo (auto)"

// BestOf returns p with every step run by runners (at least two names; a
// name may come twice) unless the step names its own (a workflow's
// best_of:). Fewer than two names leave p as it is.
func BestOf(p Plan, runners []string) Plan {
	if len(runners) < 2 {
		return p
	}
	p = clonePlan(p)
	for i := range p.Steps {
		if len(p.Steps[i].Rules.BestOf) == 0 {
			p.Steps[i].Rules.BestOf = slices.Clone(runners)
		}
	}
	return p
}

// CheckBestOf refuses a best-of list that names a runner not in known,
// or fewer than two runners, naming what is wrong; empty is no best-of.
func CheckBestOf(runners, known []string) error {
	if len(runners) == 0 {
		return nil
	}
	for _, n := range runners {
		if !slices.Contains(known, n) {
			return fmt.Errorf("best-of: unknown runner %q (valid: %s)", n, strings.Join(known, ", "))
		}
	}
	if len(runners) < 2 {
		return fmt.Errorf("best-of: %q is one runner; name at least two (the same one twice runs it twice)", strings.Join(runners, ","))
	}
	return nil
}

// ParseBestOf splits a comma-separated list of runner names.
func ParseBestOf(s string) []string {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// PlanBestOf reports whether any step of p runs as a round of
// candidates.
func PlanBestOf(p Plan) bool {
	return slices.ContainsFunc(p.Steps, func(s PlanStep) bool { return len(s.Rules.BestOf) > 1 })
}

// RunsOn reports whether a run of p may run a step on the runner named
// own, the run's own: a step that is not a round of candidates runs on
// it, as do the steps a route, a task list or a fallback adds (they take
// no best-of of their own), and a round that names it.
func RunsOn(p Plan, own string) bool {
	return slices.ContainsFunc(p.Steps, func(s PlanStep) bool {
		r := s.Rules
		return len(r.BestOf) < 2 || r.Route || r.Decompose != "" || r.Fallback != "" || slices.Contains(r.BestOf, own)
	})
}

// IsBestOf reports whether s runs as a round of candidates.
func IsBestOf(s *Step) bool { return len(s.Rules.BestOf) > 1 }

// round is the indexes in s.Attempts of the candidates of the step's
// latest round, in order; nil when its latest attempt is no candidate.
func (s *Step) round() []int {
	last := len(s.Attempts) - 1
	if last < 0 || s.Attempts[last].Candidate == 0 {
		return nil
	}
	first := last
	for first > 0 && s.Attempts[first].Candidate > 1 && s.Attempts[first-1].Candidate > 0 {
		first--
	}
	out := make([]int, 0, last-first+1)
	for i := first; i <= last; i++ {
		out = append(out, i)
	}
	return out
}

// Candidates returns the candidates of the step's latest best-of round,
// in order (candidate k is at k-1); nil when its latest attempt is no
// candidate. The attempts are the step's own: never change them.
func Candidates(s *Step) []*Attempt {
	idx := s.round()
	if idx == nil {
		return nil
	}
	out := make([]*Attempt, len(idx))
	for i, j := range idx {
		out[i] = &s.Attempts[j]
	}
	return out
}

// Picking reports whether s waits for people to pick one of its
// candidates: a best-of round has ended and none is picked yet.
func Picking(s *Step) bool {
	c := Candidates(s)
	if s.Status != StepWaiting || len(c) == 0 {
		return false
	}
	for _, a := range c {
		if a.Picked {
			return false
		}
	}
	return true
}

// Pickable reports whether a candidate may be picked: it kept output
// (PRODUCED or EMPTY); a FAILED one may not.
func Pickable(a *Attempt) bool {
	return a.Result == ResultProduced || a.Result == ResultEmpty
}

// PickDecision is the decision by actor that picks candidate k of step
// n of r, with an optional note; an error names what is wrong (no such
// step, no candidates waiting for a pick, no candidate k, or one that
// FAILED).
func PickDecision(r *Run, n, k int, actor, note string) (Decision, error) {
	s, err := step(r, n)
	if err != nil {
		return Decision{}, err
	}
	c := Candidates(s)
	if !Picking(s) {
		return Decision{}, fmt.Errorf("step %d (%s) has no candidates waiting for a pick: %w", n, s.Skill, ErrNotWaiting)
	}
	if k < 1 || k > len(c) {
		return Decision{}, invalidDecision("step %d has candidates 1 to %d, not %d", n, len(c), k)
	}
	d := Decision{Kind: DecidePick, Actor: actor, Step: n, Attempt: c[k-1].N, Candidate: k, Feedback: note}
	return d, checkPick(s, d)
}

// checkPick refuses a pick that names no pickable candidate of s's
// round.
func checkPick(s *Step, d Decision) error {
	for _, a := range Candidates(s) {
		if a.N != d.Attempt {
			continue
		}
		if d.Candidate != 0 && d.Candidate != a.Candidate {
			return fmt.Errorf("step %d: attempt %d is candidate %d, not %d: %w", s.N, a.N, a.Candidate, d.Candidate, ErrStale)
		}
		if !Pickable(a) {
			return invalidDecision("step %d: candidate %d (%s) is %s and cannot be picked; pick another, redo or abort", s.N, a.Candidate, a.Runner, a.Result)
		}
		return nil
	}
	return fmt.Errorf("step %d: attempt %d is not a candidate waiting for a pick: %w", s.N, d.Attempt, ErrStale)
}

// decidesAttempt reports whether d names the attempt s waits on: its
// latest, or for a pick any candidate of its round.
func decidesAttempt(s *Step, d Decision) bool {
	l := s.Latest()
	if l == nil || l.N == d.Attempt {
		return true
	}
	return d.Kind == DecidePick && slices.ContainsFunc(Candidates(s), func(a *Attempt) bool { return a.N == d.Attempt })
}

// candidateStarts are the events that start a round of candidates of s,
// each on its runner, all carrying ev's feedback and status.
func candidateStarts(s *Step, ev Event) []Event {
	out := make([]Event, len(s.Rules.BestOf))
	for i, name := range s.Rules.BestOf {
		c := ev
		c.Attempt, c.Runner, c.Candidate = ev.Attempt+i, name, i+1
		out[i] = c
	}
	return out
}

// finishCandidate is Finish for attempt a of s, a candidate of its round.
// While other candidates run the step runs on; the last to end makes it
// wait for a pick, or, in guarded auto with exactly one candidate
// PRODUCED, picks that one for people.
func finishCandidate(r *Run, s *Step, a int, f Finished, now time.Time) ([]Event, error) {
	ev := finishedEvent(s.N, a, f)
	// A failed candidate is final: the others stand beside it, and a
	// redo is the team's to ask for.
	ev.Final = f.Result == ResultFailed
	var err error
	if s.Status == StepAborted {
		if ev.Status, err = next(s, trRecord); err != nil {
			return nil, err
		}
		return stamp(r, now, ev), nil
	}
	produced := 0
	var pick *Attempt
	for _, c := range Candidates(s) {
		res := c.Result
		switch {
		case c.N == a:
			res = f.Result
		case c.Finished.IsZero():
			// Another candidate runs on: the step waits for it.
			if ev.Status, err = next(s, trCandidate); err != nil {
				return nil, err
			}
			return stamp(r, now, ev), nil
		}
		if res == ResultProduced {
			produced, pick = produced+1, c
		}
	}
	if r.BudgetUSD > 0 && r.CostUSD+f.CostUSD > r.BudgetUSD {
		budget := fmt.Sprintf("budget exceeded: the run has cost $%.2f of its $%.2f budget", r.CostUSD+f.CostUSD, r.BudgetUSD)
		ev.Reason, pick = strings.TrimPrefix(ev.Reason+"; "+budget, "; "), nil
	}
	if ev.Status, err = next(s, trPause); err != nil {
		return nil, err
	}
	evs := stamp(r, now, ev)
	if produced != 1 || pick == nil || pauses(r, s, ResultProduced) || r.PausedByPerson() {
		return evs, nil
	}
	after, err := Fold(r, evs)
	if err != nil {
		return nil, err
	}
	return pickEvents(after, Decision{Kind: DecidePick, Actor: AutoPickActor, Step: s.N, Attempt: pick.N, Candidate: pick.Candidate}, now, evs)
}

// pickEvents appends to before (already folded into r) the decision d
// that picks a candidate, and the run's end when that settles it.
func pickEvents(r *Run, d Decision, now time.Time, before []Event) ([]Event, error) {
	s := r.Step(d.Step)
	to, err := next(s, trPick)
	if err != nil {
		return nil, err
	}
	c := attempt(s, d.Attempt)
	if c == nil {
		return nil, fmt.Errorf("step %d has no attempt %d: %w", d.Step, d.Attempt, ErrNotFound)
	}
	ev := Event{Type: EvDecision, Step: d.Step, Attempt: d.Attempt, Candidate: c.Candidate, Actor: d.Actor,
		Decision: DecidePick, Key: d.Key, Feedback: d.Feedback, Status: to, File: pickFile(r, s, d.Attempt)}
	evs, err := withSettle(r, now, nil, ev)
	if err != nil {
		return nil, err
	}
	return append(before, evs...), nil
}

// pickFile is where the picked candidate's artifact goes: the step's
// artifact file, when the candidate's output is on disk under its attempt
// name; "" when it has no file (a run of one step writes none).
func pickFile(r *Run, s *Step, n int) string {
	if a := attempt(s, n); a == nil || a.File == "" {
		return ""
	}
	return ArtifactFile(r.ID, s.N, s.Skill, n, true)
}

// PickWrites are the file moves the picks among evs make once r has
// folded them in: each picked candidate's file to the step's artifact
// file, any other attempt's file there first making way for it. A front
// end or backend commits them with the events.
func PickWrites(r *Run, evs []Event) ([]FileWrite, error) {
	var out []FileWrite
	cur := r
	for i, ev := range evs {
		if ev.Type == EvDecision && ev.Decision == DecidePick && ev.File != "" {
			st := cur.Step(ev.Step)
			if a := attempt(st, ev.Attempt); a != nil && a.File != "" && a.File != ev.File {
				out = append(out, makeWay(r.ID, st, ev.Attempt, ev.File)...)
				out = append(out, FileWrite{From: a.File, Path: ev.File})
			}
		}
		next, err := Fold(cur, evs[i:i+1])
		if err != nil {
			return nil, err
		}
		cur = next
	}
	return out, nil
}

// StartedAttempts are the attempts the latest start of s began: the
// candidates of its round, or its latest attempt alone.
func StartedAttempts(s *Step) []*Attempt {
	if c := Candidates(s); c != nil {
		return c
	}
	if l := s.Latest(); l != nil {
		return []*Attempt{l}
	}
	return nil
}
