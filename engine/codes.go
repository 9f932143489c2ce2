package engine

import "errors"

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

// coded is a refusal that crossed a wire: its message is the engine's on
// the other side, and it wraps the engine's sentinel.
type coded struct {
	msg      string
	sentinel error
}

func (e *coded) Error() string { return e.msg }
func (e *coded) Unwrap() error { return e.sentinel }
