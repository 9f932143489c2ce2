package terminal

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gonogo/gonogo/engine"
)

// DecideRequest is one gonogo decide.
type DecideRequest struct {
	Data     string
	Run      engine.RunID
	Kind     engine.DecisionKind
	Feedback string
	Step     int // 0: the step waiting for a decision
	Attempt  int // 0: the step's latest attempt
	// Candidate is the candidate a pick takes (pick N).
	Candidate int
	Key       string // "": a fresh one
	Actor     string
}

// ParseDecideArgs reads RUN KIND [feedback...], or RUN pick N [note]
// (the flags are read already).
func ParseDecideArgs(req *DecideRequest, positional []string) error {
	if len(positional) < 2 {
		return fmt.Errorf("expected a run id and a decision: gonogo decide RUN approve|skip|redo [feedback]|pick N [note]|abort [--step N]")
	}
	req.Run = engine.RunID(positional[0])
	kind, err := engine.ParseDecisionKind(strings.ToLower(positional[1]))
	if err != nil || kind == engine.DecideEdit {
		return fmt.Errorf("%q is not a decision decide makes; expected approve, skip, redo [feedback], pick N [note] or abort (edit in the terminal or Slack running the step)", positional[1])
	}
	req.Kind = kind
	rest := positional[2:]
	if kind == engine.DecidePick {
		if req.Candidate, rest, err = pickArgs(rest); err != nil {
			return err
		}
	} else if len(rest) > 0 && kind != engine.DecideRedo {
		return fmt.Errorf("%s takes no more words (got %q); only redo takes feedback, and pick a note", kind, strings.Join(rest, " "))
	}
	req.Feedback = strings.TrimSpace(strings.Join(rest, " "))
	return nil
}

// pickArgs reads N [note] after pick: the candidate, and the words of
// the note.
func pickArgs(rest []string) (int, []string, error) {
	n := 0
	if len(rest) > 0 {
		n, _ = strconv.Atoi(rest[0])
	}
	if n < 1 {
		return 0, nil, fmt.Errorf("pick needs the number of a candidate: gonogo decide RUN pick N [note]")
	}
	return n, rest[1:], nil
}

// ErrRefused marks what decide refuses under the run's rules (exit 1).
var ErrRefused = errors.New("refused")

// StepOf finds the step the decision is for: the one named, else
// the one step that waits on people. Whether that step can take the
// decision now is the engine's to say when it applies it.
func (req DecideRequest) StepOf(r *engine.Run) (*engine.Step, error) {
	if req.Step != 0 {
		s := r.Step(req.Step)
		if s == nil {
			return nil, fmt.Errorf("run %s has no step %d (it has %d)", r.ID, req.Step, len(r.Steps))
		}
		return s, nil
	}
	return onlyWaiting(r)
}

// onlyWaiting is the one step of r that waits on people; none, or more
// than one, is an error.
func onlyWaiting(r *engine.Run) (*engine.Step, error) {
	var s *engine.Step
	var waiting []string
	for _, st := range engine.WaitingOn(r) {
		waiting = append(waiting, fmt.Sprint(st.N))
		if s == nil {
			s = st
		}
	}
	switch {
	case s == nil:
		return nil, fmt.Errorf("run %s is %s: no step waits for a decision: %w", r.ID, r.State, ErrRefused)
	case len(waiting) > 1:
		return nil, fmt.Errorf("steps %s of run %s wait for a decision: name one with --step N", strings.Join(waiting, ", "), r.ID)
	}
	return s, nil
}

// Asked is the decision as asked, before the step it is for is known.
func (req DecideRequest) Asked() engine.Decision {
	return engine.Decision{Kind: req.Kind, Step: req.Step, Attempt: req.Attempt, Feedback: req.Feedback, Key: req.Key, Actor: req.Actor,
		Candidate: req.Candidate}
}

// Decision is the decision on step s: on the attempt asked for, else its
// latest.
func (req DecideRequest) Decision(s *engine.Step) engine.Decision {
	d := req.Asked()
	d.Step = s.N
	if c := engine.Candidates(s); d.Kind == engine.DecidePick && d.Attempt == 0 && d.Candidate >= 1 && d.Candidate <= len(c) {
		// The candidate's own attempt; one out of range is left for the
		// engine to refuse as not waiting.
		d.Attempt = c[d.Candidate-1].N
	}
	if d.Attempt == 0 {
		d.Attempt = AttemptN(s.Latest())
	}
	return d
}

// NeedsHolder refuses to approve, in a store no gonogo holds, a step whose
// output adds steps: that needs the skills and workflows a gonogo resume
// loads. gonogo decide and the run's web page both ask it.
func NeedsHolder(r *engine.Run, s *engine.Step, kind engine.DecisionKind, held bool, data string) error {
	if !held && kind == engine.DecideApprove && (s.Rules.Route || s.Rules.Decompose != "") {
		return fmt.Errorf("approving step %d adds steps to the run from its output, which needs its skills and workflows: approve it in gonogo resume %s%s", s.N, r.ID, DataFlag(data))
	}
	return nil
}
