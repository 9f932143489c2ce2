package temporalbackend

import (
	"errors"

	"go.temporal.io/sdk/temporal"

	"github.com/gonogo/gonogo/engine"
)

// Refusals cross Temporal as application errors typed by the wire code
// of the engine sentinel they wrap (engine.ErrorCode), so that Backend
// hands callers errors they branch on with errors.Is exactly as on bbolt.

// refusal is err as an application error that Temporal does not retry,
// typed by the sentinel it wraps.
func refusal(err error) error {
	if err == nil {
		return nil
	}
	kind := engine.ErrorCode(err)
	if kind == "" {
		kind = "refused"
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
	return engine.CodeError(app.Type(), app.Message())
}
