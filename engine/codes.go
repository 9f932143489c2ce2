package engine

import (
	"errors"
	"fmt"
)

// codes name the sentinels a caller branches on when a refusal crosses a
// wire (the local API between two gonogo processes, a Temporal update):
// the one table both use, so that a refusal is the same error on either
// side of either wire. ErrNotApprover wraps ErrForbidden: it comes first
// so that it is kept.
var codes = []struct {
	code string
	err  error
}{
	{"not-approver", ErrNotApprover},
	{"forbidden", ErrForbidden},
	{"not-found", ErrNotFound},
	{"duplicate", ErrDuplicate},
	{"key-reused", ErrKeyReused},
	{"stale", ErrStale},
	{"not-waiting", ErrNotWaiting},
	{"paused", ErrPaused},
	{"not-moving", ErrNotMoving},
	{"not-paused", ErrNotPaused},
	{"not-awaiting-start", ErrNotAwaitingStart},
	{"invalid-decision", ErrInvalidDecision},
}

// IsRefusal reports whether err is something asked for that the run's
// rules refuse (a decision on a step that moved on, by someone not
// allowed, under a key used already, that does not fit the step; a pause
// of a run not moving...), as opposed to a failure to carry it out (a
// store that could not write, a holder that did not answer), after which
// the same request may still be right. The one rule every front end
// words its answer by: refused (exit 1 on the command line) or not
// recorded. A run or step that does not exist (ErrNotFound) is neither:
// each front end names what is missing.
func IsRefusal(err error) bool {
	code := ErrorCode(err)
	return code != "" && code != "not-found"
}

// invalidDecision is a refusal with ErrInvalidDecision, its message the
// one formatted: the sentinel's own words add nothing to it.
func invalidDecision(format string, a ...any) error {
	return &coded{msg: fmt.Sprintf(format, a...), sentinel: ErrInvalidDecision}
}

// ErrorCode is the wire code of the sentinel err wraps, or "" when it
// wraps none of them.
func ErrorCode(err error) string {
	for _, c := range codes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return ""
}

// CodeError is the error a refusal with message msg and wire code code
// (see ErrorCode) stands for on this side of the wire: msg, wrapping the
// sentinel code names; an unknown or empty code gives msg alone.
func CodeError(code, msg string) error {
	for _, c := range codes {
		if c.code == code {
			return &coded{msg: msg, sentinel: c.err}
		}
	}
	return errors.New(msg)
}

// coded is a refusal that crossed a wire (its message is the engine's on
// the other side), or one whose message says all (see invalidDecision):
// it wraps the engine's sentinel.
type coded struct {
	msg      string
	sentinel error
}

func (e *coded) Error() string { return e.msg }
func (e *coded) Unwrap() error { return e.sentinel }
