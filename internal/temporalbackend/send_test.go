package temporalbackend

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"
)

// An update that something on its way stopped is sent again; a refusal,
// a run that is not there or a wait that ran out is not one of them.
func TestCutOffUpdate(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{serviceerror.NewCanceled("the worker stopped"), true},
		{serviceerror.NewUnavailable("workflow update was aborted"), true},
		{serviceerror.NewAborted("aborted"), true},
		{fmt.Errorf("update: %w", context.Canceled), true},
		{temporal.NewApplicationError("stale attempt", "refused"), false},
		{serviceerror.NewNotFound("no such workflow"), false},
		{serviceerror.NewDeadlineExceeded("wait ran out"), false},
		{errors.New("something else"), false},
	} {
		if got := cutOffUpdate(c.err); got != c.want {
			t.Errorf("cutOffUpdate(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
