package engine

import (
	"fmt"
	"slices"
	"strings"
)

// NotPossible is a decision a step cannot take now. It says what the step
// stands at and what it can take, so that a front end words the refusal
// (or offers the choices) without asking the rules again. It wraps
// ErrNotWaiting; its message is the same on every front end and across
// every wire.
type NotPossible struct {
	Run     RunID
	Title   StepTitle
	Kind    DecisionKind
	Status  StepStatus
	Result  Result         // the latest attempt's result; "" before any
	Allowed []DecisionKind // what the step takes now; nil when it waits for none
}

func (e *NotPossible) Error() string {
	if len(e.Allowed) == 0 {
		return fmt.Sprintf("%s is %s, not waiting for a decision", e.Title, e.Status)
	}
	result := string(e.Result)
	if result == "" {
		result = "-"
	}
	kinds := make([]string, len(e.Allowed))
	for i, k := range e.Allowed {
		kinds[i] = string(k)
	}
	return fmt.Sprintf("%s is not possible at %s now (%s); possible: %s", e.Kind, e.Title, result, strings.Join(kinds, ", "))
}

func (e *NotPossible) Unwrap() error { return ErrNotWaiting }

// CheckDecision refuses, as *NotPossible, a decision of kind k that step s
// of r cannot take now: the one rule the engine applies when deciding and
// a front end asks before it offers or sends a choice.
func CheckDecision(r *Run, s *Step, k DecisionKind) error {
	allowed := Allowed(s)
	if slices.Contains(allowed, k) {
		return nil
	}
	e := &NotPossible{Run: r.ID, Title: Title(r, s), Kind: k, Status: s.Status, Allowed: allowed}
	if l := s.Latest(); l != nil {
		e.Result = l.Result
	}
	return e
}

// EditOf is the edit that decision d of run r records when it replaces the
// step's artifact with body: refused when d's step does not exist or body
// holds nothing but white space. See PrepareEdit.
func EditOf(r *Run, d Decision, body []byte) (*Edit, error) {
	size := len(body)
	if !hasContent(body) {
		size = 0
	}
	if r.Step(d.Step) == nil || size == 0 {
		return PrepareEdit(r, d, size, "")
	}
	return PrepareEdit(r, d, size, Summarize(body))
}

// PrepareEdit is the edit that decision d of run r records for a
// replacement artifact of size bytes summarised as summary: refused when
// d's step does not exist or the replacement is empty. The service calls it
// (through EditOf) with the body at hand; the Temporal workflow, which
// never holds the body, with the size and summary its caller took from it
// with EditOf. The edit's file is the step's artifact file when the run
// has more than one step.
func PrepareEdit(r *Run, d Decision, size int, summary string) (*Edit, error) {
	st := r.Step(d.Step)
	if st == nil {
		return nil, fmt.Errorf("run %s has no step %d: %w", r.ID, d.Step, ErrNotFound)
	}
	if size == 0 {
		return nil, invalidDecision("step %d: the replacement artifact is empty", d.Step)
	}
	edit := &Edit{Size: size, Summary: summary}
	if len(r.Steps) > 1 {
		edit.File = ArtifactFile(r.ID, st.N, st.Skill, d.Attempt, true)
	}
	return edit, nil
}
