package engine

import (
	"errors"
	"strings"
	"testing"
)

func TestKeyedBefore(t *testing.T) {
	r := &Run{ID: "20260101-000000-aaaa", Steps: []Step{
		{&StepDef{N: 1}, &StepState{Decisions: []Decision{{Kind: DecideRedo, Actor: "ana", Step: 1, Attempt: 1, Key: "k1", Feedback: "more"}}}},
		{&StepDef{N: 2}, &StepState{Decisions: []Decision{{Kind: DecideApprove, Actor: "ana", Step: 2, Attempt: 1, Key: "k2"}}}},
	}}
	cases := []struct {
		name   string
		d      Decision
		rec    string // the key of the decision returned, "" for none
		reused bool
	}{
		{"no key", Decision{Kind: DecideRedo, Actor: "ana", Step: 1}, "", false},
		{"a key the run has not seen", Decision{Kind: DecideRedo, Actor: "ana", Step: 1, Key: "k3"}, "", false},
		{"the same decision", Decision{Kind: DecideRedo, Actor: "ana", Step: 1, Attempt: 1, Key: "k1", Feedback: "more"}, "k1", false},
		{"the same decision, step and attempt left open", Decision{Kind: DecideRedo, Actor: "ana", Key: "k1", Feedback: "more"}, "k1", false},
		{"another kind", Decision{Kind: DecideSkip, Actor: "ana", Key: "k1"}, "k1", true},
		{"another person", Decision{Kind: DecideRedo, Actor: "bo", Key: "k1", Feedback: "more"}, "k1", true},
		{"other feedback", Decision{Kind: DecideRedo, Actor: "ana", Key: "k1"}, "k1", true},
		{"another step", Decision{Kind: DecideApprove, Actor: "ana", Step: 1, Key: "k2"}, "k2", true},
		{"another attempt", Decision{Kind: DecideApprove, Actor: "ana", Step: 2, Attempt: 2, Key: "k2"}, "k2", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec, err := KeyedBefore(r, c.d)
			switch {
			case c.rec == "" && rec != nil, c.rec != "" && (rec == nil || rec.Key != c.rec):
				t.Fatalf("recorded %+v, want the decision under %q", rec, c.rec)
			case errors.Is(err, ErrKeyReused) != c.reused || (!c.reused && err != nil):
				t.Fatalf("err %v, want reused %v", err, c.reused)
			case c.reused && !strings.Contains(err.Error(), DescribeDecision(*rec)):
				t.Fatalf("%v does not name the recorded decision %q", err, DescribeDecision(*rec))
			}
		})
	}
}

func TestDecisionStoreKeyIsTheRuns(t *testing.T) {
	if a, b := DecisionStoreKey("run-a", "k"), DecisionStoreKey("run-b", "k"); a == b {
		t.Fatalf("the same key on two runs is one store key %q", a)
	}
	if k := DecisionStoreKey("run-a", ""); k != "" {
		t.Fatalf("no key became %q", k)
	}
}
