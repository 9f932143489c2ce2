package engine

import "fmt"

// The typed states below have an invalid zero value and are stored as their
// text; Parse* functions turn stored text back into a state.

// RunState is the state of a whole run.
type RunState string

const (
	RunRunning   RunState = "running"
	RunWaiting   RunState = "waiting" // for a decision: a checkpoint, an EMPTY pause, a FAILED halt or an interrupted step
	RunCompleted RunState = "completed"
	RunAborted   RunState = "aborted"
)

// StepStatus is the state of one step.
type StepStatus string

const (
	StepPending     StepStatus = "pending"
	StepQueued      StepStatus = "queued" // ready, waiting for a free runner slot
	StepRunning     StepStatus = "running"
	StepWaiting     StepStatus = "waiting" // finished, waiting for a decision
	StepDone        StepStatus = "done"
	StepSkipped     StepStatus = "skipped"
	StepInterrupted StepStatus = "interrupted" // was running when gonogo stopped
	StepAborted     StepStatus = "aborted"
)

// Result is the verdict on one attempt.
type Result string

const (
	ResultProduced    Result = "PRODUCED"
	ResultEmpty       Result = "EMPTY"
	ResultFailed      Result = "FAILED"
	ResultManual      Result = "SKIPPED-MANUAL"
	ResultNotExecuted Result = "NOT-EXECUTED"
)

// DecisionKind is what a person decided at a checkpoint.
type DecisionKind string

const (
	DecideApprove DecisionKind = "approve"
	DecideEdit    DecisionKind = "edit"
	DecideSkip    DecisionKind = "skip"
	DecideRedo    DecisionKind = "redo"
	DecideAbort   DecisionKind = "abort"
	// DecidePick takes one candidate of a best-of step as the step's
	// artifact (see Candidates).
	DecidePick DecisionKind = "pick"
)

// Mode is how a run advances past a step that went well.
type Mode string

const (
	ModeCheckpointed Mode = "checkpointed" // pause after every step
	ModeGuardedAuto  Mode = "guarded-auto" // advance, but halt on FAILED and pause on EMPTY
)

// Gate says when a step pauses for a decision.
type Gate string

const (
	GateAlways    Gate = "always"     // a checkpoint after the step
	GateNever     Gate = "never"      // advance on success (FAILED and EMPTY still stop)
	GateOnFailure Gate = "on-failure" // same as never; named for workflow files
	GateOnEmpty   Gate = "on-empty"   // same as never; named for workflow files
)

// EventType names a journal event.
type EventType string

const (
	EvRunStarted      EventType = "run-started"
	EvStepQueued      EventType = "step-queued"
	EvStepStarted     EventType = "step-started"
	EvStepFinished    EventType = "step-finished"
	EvStepInterrupted EventType = "step-interrupted"
	EvDecision        EventType = "decision"
	EvModeChanged     EventType = "mode-changed"
	EvRunFinished     EventType = "run-finished"
	EvStepsAdded      EventType = "steps-added"    // a route or decompose step's output added steps to the run
	EvRunPaused       EventType = "run-paused"     // no new step starts until the run is resumed
	EvRunResumed      EventType = "run-resumed"    // the run goes on, in the mode the event names
	EvStepReleased    EventType = "step-released"  // a step the pause held at a checkpoint went on when the run resumed
	EvSetupChanged    EventType = "setup-changed"  // resume changed how the run's steps are carried out
	EvStepReminded    EventType = "step-reminded"  // gonogo reminded the approvers of a checkpoint left waiting
	EvStepTimedOut    EventType = "step-timed-out" // a checkpoint's decision timed out; the step keeps waiting
)

func parseOne[T ~string](kind, s string, all ...T) (T, error) {
	for _, v := range all {
		if string(v) == s {
			return v, nil
		}
	}
	return "", fmt.Errorf("unknown %s %q", kind, s)
}

// ParseRunState reads a stored run state.
func ParseRunState(s string) (RunState, error) {
	return parseOne("run state", s, RunRunning, RunWaiting, RunCompleted, RunAborted)
}

// ParseStepStatus reads a stored step status.
func ParseStepStatus(s string) (StepStatus, error) {
	return parseOne("step status", s, StepPending, StepQueued, StepRunning, StepWaiting,
		StepDone, StepSkipped, StepInterrupted, StepAborted)
}

// ParseResult reads a stored attempt result; the empty string is no result.
func ParseResult(s string) (Result, error) {
	if s == "" {
		return "", nil
	}
	return parseOne("result", s, ResultProduced, ResultEmpty, ResultFailed, ResultManual, ResultNotExecuted)
}

// ParseDecisionKind reads a decision kind.
func ParseDecisionKind(s string) (DecisionKind, error) {
	return parseOne("decision", s, DecideApprove, DecideEdit, DecideSkip, DecideRedo, DecideAbort, DecidePick)
}

// ParseMode reads a stored run mode.
func ParseMode(s string) (Mode, error) {
	return parseOne("mode", s, ModeCheckpointed, ModeGuardedAuto)
}

// ParseGate reads a gate name.
func ParseGate(s string) (Gate, error) {
	return parseOne("gate", s, GateAlways, GateNever, GateOnFailure, GateOnEmpty)
}

// ParseEventType reads a stored event type.
func ParseEventType(s string) (EventType, error) {
	return parseOne("event type", s, EvRunStarted, EvStepQueued, EvStepStarted, EvStepFinished,
		EvStepInterrupted, EvDecision, EvModeChanged, EvRunFinished, EvStepsAdded, EvSetupChanged,
		EvRunPaused, EvRunResumed, EvStepReleased, EvStepReminded, EvStepTimedOut)
}
