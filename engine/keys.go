package engine

import (
	"fmt"
	"strings"
)

// A decision's idempotency key belongs to its run: the same key on another
// run is a new decision there. Within a run a key names one decision, so a
// retry with it is answered "already applied" (ErrDuplicate) only when it
// asks for that decision, and refused (ErrKeyReused) when it asks for
// another; the retry must not pass for a success it is not. A run's
// start (StartOptions.Key, StartAwaited) is not the run's yet when its key
// is checked, so start keys stay one across the store.

// DecidedUnder returns the decision run r recorded under key, or nil when
// it recorded none ("" records none).
func DecidedUnder(r *Run, key string) *Decision {
	if key == "" {
		return nil
	}
	for i := range r.Steps {
		for j := range r.Steps[i].Decisions {
			if d := &r.Steps[i].Decisions[j]; d.Key == key {
				return d
			}
		}
	}
	return nil
}

// KeyedBefore checks d against the decision r recorded under d.Key. It
// returns nil, nil when r recorded none; that decision and nil when it is
// the one d asks for (the same kind by the same person with the same
// feedback, on d's step and attempt, where a 0 in d stands for any); and
// that decision with an error wrapping ErrKeyReused, naming it, when the
// key was used for another.
func KeyedBefore(r *Run, d Decision) (*Decision, error) {
	rec := DecidedUnder(r, d.Key)
	if rec == nil || sameDecision(*rec, d) {
		return rec, nil
	}
	return rec, fmt.Errorf("key %q was used on run %s for %s, not for %s: %w",
		d.Key, r.ID, DescribeDecision(*rec), DescribeDecision(d), ErrKeyReused)
}

func sameDecision(rec, d Decision) bool {
	return rec.Kind == d.Kind && rec.Actor == d.Actor && rec.Feedback == d.Feedback &&
		unsetOr(d.Step, rec.Step) && unsetOr(d.Attempt, rec.Attempt) && unsetOr(d.Candidate, rec.Candidate)
}

// unsetOr reports whether a decision's number n (a step, attempt or
// candidate) matches the recorded one: 0 leaves it unsaid, and matches any.
func unsetOr(n, rec int) bool {
	return n == 0 || rec == n
}

// DescribeDecision names a decision in a sentence: "redo of step 2
// (attempt 1) by ana with feedback "more detail"". A step or attempt of 0
// is left out.
func DescribeDecision(d Decision) string {
	var b strings.Builder
	b.WriteString(string(d.Kind))
	if d.Step > 0 {
		fmt.Fprintf(&b, " of step %d", d.Step)
	}
	switch {
	case d.Candidate > 0:
		fmt.Fprintf(&b, " (candidate %d, attempt %d)", d.Candidate, d.Attempt)
	case d.Attempt > 0:
		fmt.Fprintf(&b, " (attempt %d)", d.Attempt)
	}
	if d.Actor != "" {
		fmt.Fprintf(&b, " by %s", d.Actor)
	}
	if d.Feedback != "" {
		b.WriteString(feedbackClause(d))
	}
	return b.String()
}

// feedbackClause is " with feedback "..."" (a pick's is a note), the text
// cut at 80 characters.
func feedbackClause(d Decision) string {
	fb := d.Feedback
	if r := []rune(fb); len(r) > 80 {
		fb = string(r[:80]) + "…"
	}
	what := "feedback"
	if d.Kind == DecidePick {
		what = "note"
	}
	return fmt.Sprintf(" with %s %q", what, fb)
}

// DecisionStoreKey is the key a store keeps for a decision's idempotency
// key on run id (Commit.Key), so the same key on another run is another
// key to the store; "" stays "".
func DecisionStoreKey(id RunID, key string) string {
	if key == "" {
		return ""
	}
	return "decision:" + string(id) + ":" + key
}
