package terminal

import (
	"errors"
	"fmt"
	"io"

	"github.com/gonogo/gonogo/engine"
)

// Fail prints an error of gonogo cmd to w and returns its exit code: 1 for
// a refusal, 2 for anything else.
func Fail(w io.Writer, cmd string, err error) int {
	if r, ok := errors.AsType[*engine.Refusal](err); ok {
		fmt.Fprintf(w, "gonogo %s: REFUSED (%s): %s\nNothing was run.\n", cmd, r.Reason, r.Error())
		return ExitRefused
	}
	fmt.Fprintf(w, "gonogo %s: %v\n", cmd, err)
	return ExitUsage
}
