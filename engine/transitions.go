package engine

import (
	"fmt"
	"slices"
)

// This file is gonogo's one transition table: every way a step may change
// state, and which decisions a checkpoint accepts. Transition functions in
// engine.go consult it before they emit an event; Apply trusts the events.

// trigger is what moves a step from one status to another.
type trigger string

const (
	trQueue     trigger = "queue"     // ready, but no runner slot is free
	trStart     trigger = "start"     // a runner slot was taken
	trPause     trigger = "pause"     // finished; a decision is needed
	trAdvance   trigger = "advance"   // finished well; no decision needed
	trInterrupt trigger = "interrupt" // gonogo stopped while the step ran
	trCancel    trigger = "cancel"    // the run was aborted around this step
	trRecord    trigger = "record"    // an aborted step's attempt came back: keep its result and cost
	trFallback  trigger = "fallback"  // failed; the step's fallback skill runs next
	trGiveUp    trigger = "give-up"   // an optional step failed: recorded, and the run goes on without it
	trHold      trigger = "hold"      // the run was paused before a queued step could start
	trRelease   trigger = "release"   // the run resumed in a mode that lets a step the pause held go on
	trCandidate trigger = "candidate" // a best-of step's candidate started or ended while others run
	trApprove   trigger = trigger(DecideApprove)
	trEdit      trigger = trigger(DecideEdit)
	trSkip      trigger = trigger(DecideSkip)
	trRedo      trigger = trigger(DecideRedo)
	trAbort     trigger = trigger(DecideAbort)
	trPick      trigger = trigger(DecidePick)
)

// stepTable maps a status and a trigger to the next status. A missing entry
// is a move that is not allowed.
var stepTable = map[StepStatus]map[trigger]StepStatus{
	StepPending: {
		trQueue:  StepQueued,
		trStart:  StepRunning,
		trCancel: StepAborted,
	},
	StepQueued: {
		trStart:  StepRunning,
		trHold:   StepPending,
		trCancel: StepAborted,
	},
	StepRunning: {
		trPause:     StepWaiting,
		trAdvance:   StepDone,
		trFallback:  StepQueued,
		trGiveUp:    StepSkipped,
		trInterrupt: StepInterrupted,
		trCancel:    StepAborted,
		trCandidate: StepRunning,
	},
	StepWaiting: {
		trApprove: StepDone,
		trEdit:    StepDone,
		trSkip:    StepSkipped,
		trRedo:    StepQueued,
		trAbort:   StepAborted,
		trCancel:  StepAborted,
		trRelease: StepDone,
		trPick:    StepDone,
	},
	StepInterrupted: {
		trRedo:   StepQueued,
		trAbort:  StepAborted,
		trCancel: StepAborted,
	},
	// Done, skipped and aborted are final.
	StepDone:    {},
	StepSkipped: {},
	StepAborted: {trRecord: StepAborted},
}

// decisionsAfter lists the decisions a waiting step accepts, by the result of
// its latest attempt. A FAILED step (and an interrupted one) can only be
// redone or aborted: approving or skipping past a failure is not a go.
var decisionsAfter = map[Result][]DecisionKind{
	ResultProduced:    {DecideApprove, DecideEdit, DecideSkip, DecideRedo, DecideAbort},
	ResultEmpty:       {DecideApprove, DecideEdit, DecideSkip, DecideRedo, DecideAbort},
	ResultNotExecuted: {DecideApprove, DecideEdit, DecideSkip, DecideRedo, DecideAbort},
	ResultFailed:      {DecideRedo, DecideAbort},
}

// gateOnError is what a FAILED step whose on_error is gate accepts: the
// team fixes it and continues (an edit supplies the output, a redo runs it
// again, a skip goes on without it), or aborts.
var gateOnError = []DecisionKind{DecideEdit, DecideSkip, DecideRedo, DecideAbort}

// afterRound is what a best-of step whose candidates have all ended
// accepts, by whether any of them may be picked (see Pickable): a pick,
// an edit, a skip, a redo of the whole round, or an abort; with every
// candidate FAILED, a redo or an abort.
var afterRound = map[bool][]DecisionKind{
	true:  {DecidePick, DecideEdit, DecideSkip, DecideRedo, DecideAbort},
	false: {DecideRedo, DecideAbort},
}

// next returns the status a step moves to on t, or an error naming the
// refused move.
func next(s *Step, t trigger) (StepStatus, error) {
	to, ok := stepTable[s.Status][t]
	if !ok {
		if decisionTriggers[t] {
			return "", fmt.Errorf("step %d (%s) is %s: %w", s.N, s.Skill, s.Status, ErrNotWaiting)
		}
		return "", fmt.Errorf("step %d (%s): cannot %s a %s step", s.N, s.Skill, t, s.Status)
	}
	return to, nil
}

// decisionTriggers are the moves a person's decision makes: refused, they
// are refused because the step waits for no decision.
var decisionTriggers = map[trigger]bool{
	trApprove: true, trEdit: true, trSkip: true, trRedo: true, trAbort: true, trPick: true,
}

// Allowed lists the decisions step s accepts now; nil when it is not waiting.
func Allowed(s *Step) []DecisionKind {
	switch s.Status {
	case StepInterrupted:
		return []DecisionKind{DecideRedo, DecideAbort}
	case StepWaiting:
		if Picking(s) {
			return afterRound[slices.ContainsFunc(Candidates(s), Pickable)]
		}
		if a := s.Latest(); a != nil {
			if GateOnError(s) {
				return gateOnError
			}
			return decisionsAfter[a.Result]
		}
		return []DecisionKind{DecideRedo, DecideAbort}
	}
	return nil
}
