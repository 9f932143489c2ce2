package engine

import (
	"errors"
	"fmt"
	"testing"
)

// Every refusal a front end branches on survives a wire: its code names
// it, and the error made from the code on the other side is the same
// sentinel with the same words. A refusal for not being an approver stays
// that (and is still forbidden), not only "forbidden".
func TestErrorCodesRoundTrip(t *testing.T) {
	for _, c := range codes {
		err := fmt.Errorf("run r1: %w", c.err)
		code := ErrorCode(err)
		if code != c.code {
			t.Errorf("%v: code %q, want %q", c.err, code, c.code)
		}
		back := CodeError(code, err.Error())
		if !errors.Is(back, c.err) || back.Error() != err.Error() {
			t.Errorf("%q back: %v (is %v: %v)", code, back, c.err, errors.Is(back, c.err))
		}
	}
	if !errors.Is(CodeError(ErrorCode(ErrNotApprover), "x"), ErrForbidden) {
		t.Error("a refusal for not being an approver is no longer forbidden across the wire")
	}
	if ErrorCode(errors.New("disk full")) != "" {
		t.Error("an error that wraps no sentinel has a code")
	}
	if err := CodeError("from-a-newer-gonogo", "something"); err.Error() != "something" || ErrorCode(err) != "" {
		t.Errorf("an unknown code: %v", err)
	}
}
