package engine

import (
	"testing"
	"time"
)

// A step's decision is what took its latest attempt forward: a redo of an
// earlier attempt is that attempt's history, a step that went on by itself
// (guarded auto, a pause let go in auto, automatic retries) reads auto,
// and a step nothing has decided yet reads nothing.
func TestStepDecision(t *testing.T) {
	auto := func(p Plan) Plan { p.Flags.ForceAuto = true; return p }
	chain := testPlan(InputChain, "deliver-prd", "deliver-user-stories")
	tests := []struct {
		name      string
		plan      Plan
		moves     func(s *script)
		want      DecisionKind // "" for none
		wantActor string
	}{
		{name: "FAILED, redone, PRODUCED in guarded auto", plan: auto(chain), want: DecidedAuto,
			moves: func(s *script) {
				s.start(1)
				s.finish(1, ResultFailed)
				s.decide(1, DecideRedo, "try again")
				s.start(1)
				s.finish(1, ResultProduced)
			}},
		{name: "paused, then let go as the run resumed in auto", plan: auto(chain), want: DecidedAuto,
			moves: func(s *script) {
				s.start(1)
				s.apply(Pause(s.r, "U-bob", "lunch", s.tick()))
				s.finish(1, ResultProduced)
				if !s.step(1).Held {
					s.t.Fatal("the step was not held by the pause")
				}
				s.apply(Unpause(s.r, "U-bob", "", nil, s.tick()))
			}},
		{name: "advanced in guarded auto", plan: auto(chain), want: DecidedAuto,
			moves: func(s *script) { s.start(1); s.finish(1, ResultProduced) }},
		{name: "approved at a checkpoint", plan: chain, want: DecideApprove, wantActor: "U-ana",
			moves: func(s *script) { s.start(1); s.finish(1, ResultProduced); s.decide(1, DecideApprove, "") }},
		{name: "redone, then approved", plan: chain, want: DecideApprove, wantActor: "U-ana",
			moves: func(s *script) {
				s.start(1)
				s.finish(1, ResultProduced)
				s.decide(1, DecideRedo, "shorter")
				s.start(1)
				s.finish(1, ResultProduced)
				s.decide(1, DecideApprove, "")
			}},
		{name: "edited", plan: chain, want: DecideEdit, wantActor: "U-ana",
			moves: func(s *script) { s.start(1); s.finish(1, ResultProduced); s.decide(1, DecideEdit, "") }},
		{name: "EMPTY, skipped", plan: auto(chain), want: DecideSkip, wantActor: "U-ana",
			moves: func(s *script) { s.start(1); s.finish(1, ResultEmpty); s.decide(1, DecideSkip, "") }},
		{name: "aborted here", plan: chain, want: DecideAbort, wantActor: "U-ana",
			moves: func(s *script) { s.start(1); s.finish(1, ResultProduced); s.decide(1, DecideAbort, "") }},
		{name: "redone, the redo running", plan: chain,
			moves: func(s *script) {
				s.start(1)
				s.finish(1, ResultFailed)
				s.decide(1, DecideRedo, "")
				s.start(1)
			}},
		{name: "redone, the redo FAILED again and waits", plan: auto(chain),
			moves: func(s *script) {
				s.start(1)
				s.finish(1, ResultFailed)
				s.decide(1, DecideRedo, "")
				s.start(1)
				s.finish(1, ResultFailed)
			}},
		{name: "redo decided, not started yet", plan: chain, want: DecideRedo, wantActor: "U-ana",
			moves: func(s *script) { s.start(1); s.finish(1, ResultFailed); s.decide(1, DecideRedo, "") }},
		{name: "never ran", plan: chain, moves: func(s *script) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newScript(t, tt.plan, StartOptions{})
			tt.moves(s)
			st := s.step(1)
			d := StepDecision(st)
			if tt.want == "" {
				if d != nil {
					t.Fatalf("decision %s by %q, want none", d.Kind, d.Actor)
				}
				return
			}
			if d == nil {
				t.Fatalf("no decision, want %s", tt.want)
			}
			if d.Kind != tt.want || d.Actor != tt.wantActor {
				t.Fatalf("decision %s by %q, want %s by %q", d.Kind, d.Actor, tt.want, tt.wantActor)
			}
			if l := st.Latest(); l != nil && d.Attempt != l.N {
				t.Fatalf("decision on attempt %d, the step's latest is %d", d.Attempt, l.N)
			}
		})
	}
}

// Gonogo's own redos after a rate limit are no decision of the step's: the
// attempt that went on after them did so by itself.
func TestStepDecisionAfterAutomaticRedos(t *testing.T) {
	p := testPlan(InputChain, "deliver-prd")
	p.Flags.ForceAuto = true
	s := newScript(t, p, StartOptions{})
	s.start(1)
	s.apply(Finish(s.r, 1, 1, Finished{Result: ResultFailed, Reason: "429", ErrorKind: AgentErrRateLimit,
		RateLimit: RateLimit{Wait: time.Minute, Tries: 3}}, s.tick()))
	d := s.decision(1, DecideRedo)
	d.Actor, d.Key = RateLimitActor, RetryKey(s.r.ID, 1, 1)
	s.apply(Decide(s.r, d, nil, s.tick()))
	s.start(1)
	s.finish(1, ResultProduced)
	if got := StepDecision(s.step(1)); got == nil || got.Kind != DecidedAuto || got.Actor != "" {
		t.Fatalf("decision %+v, want auto", got)
	}
}

// Nobody decides auto: it is a reading of the record, not a decision.
func TestAutoIsNoDecisionKind(t *testing.T) {
	if k, err := ParseDecisionKind(string(DecidedAuto)); err == nil {
		t.Fatalf("ParseDecisionKind(auto) = %q, want refused", k)
	}
}
