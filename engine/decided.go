package engine

// DecidedAuto is what StepDecision names for a step whose accepted attempt
// went on with no decision: guarded auto, a gate that lets it pass, or a
// paused checkpoint let go as the run resumed in such a mode. Nobody makes
// it: ParseDecisionKind refuses it, and no transition takes it.
const DecidedAuto DecisionKind = "auto"

// StepDecision is the decision that took step s's accepted attempt forward,
// the one every table, show and export names as the step's decision: the
// last decision on its latest attempt, or, for a step done with none,
// DecidedAuto (with no actor). It is nil while nothing has decided the
// latest attempt (it runs, or waits).
//
// Only the latest attempt counts because every decision is made on the
// attempt the step is at: a redo of attempt 1 is what became of attempt 1,
// not how attempt 2 went on. A step whose attempt 1 FAILED, was redone, and
// whose attempt 2 PRODUCED and went on in guarded auto was decided auto.
// The decision is the step's own copy.
func StepDecision(s *Step) *Decision {
	n := 0
	if l := s.Latest(); l != nil {
		n = l.N
	}
	for i := len(s.Decisions) - 1; i >= 0; i-- {
		if d := s.Decisions[i]; d.Attempt == n {
			return &d
		}
	}
	if s.Status == StepDone {
		return &Decision{Kind: DecidedAuto, Step: s.N, Attempt: n}
	}
	return nil
}
