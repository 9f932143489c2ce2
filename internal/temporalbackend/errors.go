package temporalbackend

import (
	"errors"

	"go.temporal.io/sdk/temporal"

	"github.com/gonogo/gonogo/engine"
)

// Refusals cross Temporal as application errors whose type names the
// engine sentinel they wrap, so that Backend hands callers errors they
// branch on with errors.Is exactly as on bbolt.
var sentinels = []struct {
	kind string
	err  error
}{
	// ErrNotApprover wraps ErrForbidden: it comes first so it is kept.
	{"not-approver", engine.ErrNotApprover},
	{"forbidden", engine.ErrForbidden},
	{"duplicate", engine.ErrDuplicate},
	{"key-reused", engine.ErrKeyReused},
	{"stale", engine.ErrStale},
	{"not-waiting", engine.ErrNotWaiting},
	{"not-found", engine.ErrNotFound},
	{"paused", engine.ErrPaused},
	{"not-moving", engine.ErrNotMoving},
	{"not-paused", engine.ErrNotPaused},
	{"not-awaiting-start", engine.ErrNotAwaitingStart},
}

// refusal is err as an application error that Temporal does not retry,
// typed by the sentinel it wraps.
func refusal(err error) error {
	if err == nil {
		return nil
	}
	kind := "refused"
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			kind = s.kind
			break
		}
	}
	return temporal.NewNonRetryableApplicationError(err.Error(), kind, nil)
}

// fromRefusal turns an application error from an update back into an
// error wrapping its sentinel; other errors pass unchanged.
func fromRefusal(err error) error {
	var app *temporal.ApplicationError
	if !errors.As(err, &app) {
		return err
	}
	for _, s := range sentinels {
		if app.Type() == s.kind {
			return &refused{msg: app.Message(), sentinel: s.err}
		}
	}
	return errors.New(app.Message())
}

// refused is a refusal answered through Temporal: its message is the
// engine's, and it wraps the engine's sentinel.
type refused struct {
	msg      string
	sentinel error
}

func (e *refused) Error() string { return e.msg }
func (e *refused) Unwrap() error { return e.sentinel }
