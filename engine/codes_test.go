package engine

import (
	"context"
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

// A front end words an error by one rule: every coded refusal but a
// missing run or step is the run's rules saying no, and anything else
// (a store that failed, a holder that did not answer) is not a refusal,
// whichever side of a wire it comes from. The decisions that do not fit
// their step are refusals in their own words.
func TestIsRefusal(t *testing.T) {
	for _, c := range codes {
		err := fmt.Errorf("run r1: %w", c.err)
		want := c.err != ErrNotFound
		if got := IsRefusal(err); got != want {
			t.Errorf("IsRefusal(%v) = %v, want %v", err, got, want)
		}
		if got := IsRefusal(CodeError(ErrorCode(err), err.Error())); got != want {
			t.Errorf("IsRefusal(%v across a wire) = %v, want %v", err, got, want)
		}
	}
	for _, err := range []error{nil, errors.New("disk full"), fmt.Errorf("commit: %w", ErrFilesPending), ErrLocked, context.DeadlineExceeded} {
		if IsRefusal(err) {
			t.Errorf("IsRefusal(%v) = true, want a failure", err)
		}
	}
	r := &Run{ID: "r1", Steps: []Step{{StepDef: &StepDef{N: 1, Skill: "deliver-prd"}, StepState: &StepState{}}}}
	_, err := EditOf(r, Decision{Kind: DecideEdit, Step: 1}, []byte(" \n\t"))
	if !IsRefusal(err) || !errors.Is(err, ErrInvalidDecision) || err.Error() != "step 1: the replacement artifact is empty" {
		t.Errorf("an empty edit: %v, want a refusal in its own words", err)
	}
	back := CodeError(ErrorCode(err), err.Error())
	if !errors.Is(back, ErrInvalidDecision) || back.Error() != err.Error() {
		t.Errorf("an empty edit across a wire: %v", back)
	}
}
