package bot

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
)

// A decision the run's rules refused is answered as refused, in the
// engine's words, whichever rule it was; only a failure to record it is
// answered as not recorded yet (notYet), which would tell the person to
// try again a decision that can never be taken.
func TestRefusalWords(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string // "" for a failure
	}{
		{fmt.Errorf("step 1: %w", engine.ErrStale), movedOn},
		{&engine.NotPossible{Kind: engine.DecideApprove, Status: engine.StepDone}, movedOn},
		{fmt.Errorf("key k1: %w", engine.ErrDuplicate), "Already done: key k1: already applied"},
		{fmt.Errorf("U9: %w", engine.ErrNotApprover), "Not counted: U9: "},
		{fmt.Errorf("key k1 was used for approve: %w", engine.ErrKeyReused), "Refused: key k1 was used for approve: the key was used for another decision"},
		{engine.CodeError("invalid-decision", "step 2: candidate 2 (codex) is FAILED and cannot be picked; pick another, redo or abort"),
			"Refused: step 2: candidate 2 (codex) is FAILED and cannot be picked; pick another, redo or abort"},
		{errors.New("bbolt: timeout"), ""},
		{fmt.Errorf("commit: %w", engine.ErrFilesPending), ""},
	} {
		msg, ok := refusalWords(tt.err)
		if ok != (tt.want != "") || !strings.HasPrefix(msg, tt.want) {
			t.Errorf("%v: %q (refusal %v), want %q", tt.err, msg, ok, tt.want)
		}
	}
}
