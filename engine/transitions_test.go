package engine

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2031, 4, 2, 9, 0, 0, 0, time.UTC)

var allStatuses = []StepStatus{StepPending, StepQueued, StepRunning, StepWaiting,
	StepDone, StepSkipped, StepInterrupted, StepAborted}

var allTriggers = []trigger{trQueue, trStart, trPause, trAdvance, trInterrupt, trCancel, trRecord,
	trApprove, trEdit, trSkip, trRedo, trAbort, trCandidate, trPick}

var allDecisions = []DecisionKind{DecideApprove, DecideEdit, DecideSkip, DecideRedo, DecideAbort, DecidePick}

// testPlan is a plan (or chain, or workflow) of the named skills, in order.
func testPlan(input InputKind, skills ...string) Plan {
	p := Plan{Input: input, Source: "test-" + string(input)}
	for i, sk := range skills {
		p.Steps = append(p.Steps, PlanStep{Skill: sk, Effort: "effort " + sk, Prompt: "write the " + sk,
			Category: CategoryContent, Execution: ExecDelegate, Line: 10 * (i + 1)})
	}
	return p
}

// script drives a run through the real transition functions and keeps the
// journal they produce, the way the service does without a store.
type script struct {
	t       *testing.T
	r       *Run
	journal []Event
	now     time.Time
	keys    int
}

func newScript(t *testing.T, p Plan, opt StartOptions) *script {
	t.Helper()
	s := &script{t: t, r: &Run{}, now: t0}
	evs, err := NewRun("run-1", p, opt, s.now)
	s.apply(evs, err)
	return s
}

func (s *script) tick() time.Time {
	s.now = s.now.Add(time.Minute)
	return s.now
}

// apply folds the events a transition returned, failing the test on error.
func (s *script) apply(evs []Event, err error) {
	s.t.Helper()
	if err != nil {
		s.t.Fatalf("transition refused: %v", err)
	}
	r, err := Fold(s.r, evs)
	if err != nil {
		s.t.Fatalf("fold: %v", err)
	}
	s.r = r
	s.journal = append(s.journal, evs...)
}

func (s *script) step(n int) *Step { return s.r.Step(n) }

func (s *script) start(n int) {
	s.t.Helper()
	s.apply(Start(s.r, n, s.tick()))
}

func (s *script) finished(n int, res Result) Finished {
	st := s.step(n)
	f := Finished{Result: res, CostUSD: 0.25}
	if res == ResultProduced || res == ResultEmpty {
		f.Artifact, f.Size, f.Summary = true, 100+n, fmt.Sprintf("%s attempt %d", st.Skill, st.Latest().N)
		if len(s.r.Steps) > 1 {
			f.File = ArtifactFile(s.r.ID, n, st.Skill, st.Latest().N, true)
		}
	}
	if res == ResultFailed {
		f.Reason = "the agent exited with code 1"
	}
	return f
}

func (s *script) finish(n int, res Result) {
	s.t.Helper()
	s.apply(Finish(s.r, n, s.step(n).Latest().N, s.finished(n, res), s.tick()))
}

func (s *script) decision(n int, k DecisionKind) Decision {
	s.keys++
	a := 1
	if l := s.step(n).Latest(); l != nil {
		a = l.N
	}
	return Decision{Kind: k, Actor: "U-ana", Time: s.now, Step: n, Attempt: a, Key: fmt.Sprintf("key-%d", s.keys)}
}

func (s *script) decide(n int, k DecisionKind, feedback string) {
	s.t.Helper()
	d := s.decision(n, k)
	d.Feedback = feedback
	var edit *Edit
	if k == DecideEdit {
		edit = &Edit{Size: 42, File: ArtifactFile(s.r.ID, n, s.step(n).Skill, d.Attempt, true), Summary: "edited by hand"}
	}
	s.apply(Decide(s.r, d, edit, s.tick()))
}

func TestTransitionTableCoversEveryStatus(t *testing.T) {
	for _, st := range allStatuses {
		if _, ok := stepTable[st]; !ok {
			t.Errorf("status %s has no row in the transition table", st)
		}
		if got, err := ParseStepStatus(string(st)); err != nil || got != st {
			t.Errorf("ParseStepStatus(%q) = %q, %v", st, got, err)
		}
	}
}

// TestNext checks every status against every trigger: the allowed moves go
// where the design says, the others are refused, and a decision on a step
// that is not waiting says so with ErrNotWaiting.
func TestNext(t *testing.T) {
	allowed := map[StepStatus]map[trigger]StepStatus{
		StepPending:     {trQueue: StepQueued, trStart: StepRunning, trCancel: StepAborted},
		StepQueued:      {trStart: StepRunning, trCancel: StepAborted},
		StepRunning:     {trPause: StepWaiting, trAdvance: StepDone, trInterrupt: StepInterrupted, trCancel: StepAborted, trCandidate: StepRunning},
		StepWaiting:     {trApprove: StepDone, trEdit: StepDone, trSkip: StepSkipped, trRedo: StepQueued, trAbort: StepAborted, trCancel: StepAborted, trPick: StepDone},
		StepInterrupted: {trRedo: StepQueued, trAbort: StepAborted, trCancel: StepAborted},
		StepAborted:     {trRecord: StepAborted},
	}
	isDecision := func(tr trigger) bool {
		return slices.Contains(allDecisions, DecisionKind(tr))
	}
	for _, st := range allStatuses {
		for _, tr := range allTriggers {
			t.Run(fmt.Sprintf("%s/%s", st, tr), func(t *testing.T) {
				s := &Step{StepDef: &StepDef{N: 2, Skill: "deliver-prd"}, StepState: &StepState{Status: st}}
				got, err := next(s, tr)
				want, ok := allowed[st][tr]
				switch {
				case ok && err != nil:
					t.Fatalf("next = error %v, want %s", err, want)
				case ok && got != want:
					t.Fatalf("next = %s, want %s", got, want)
				case !ok && err == nil:
					t.Fatalf("next = %s, want a refusal", got)
				case !ok && isDecision(tr) && !errors.Is(err, ErrNotWaiting):
					t.Fatalf("refused decision error %v does not wrap ErrNotWaiting", err)
				case !ok && !isDecision(tr) && errors.Is(err, ErrNotWaiting):
					t.Fatalf("refused %s wraps ErrNotWaiting: %v", tr, err)
				case !ok && !strings.Contains(err.Error(), "step 2 (deliver-prd)"):
					t.Fatalf("refusal %q does not name the step", err)
				}
			})
		}
	}
}

func TestAllowed(t *testing.T) {
	all := []DecisionKind{DecideApprove, DecideEdit, DecideSkip, DecideRedo, DecideAbort}
	redoAbort := []DecisionKind{DecideRedo, DecideAbort}
	tests := []struct {
		status StepStatus
		result Result
		want   []DecisionKind
	}{
		{StepWaiting, ResultProduced, all},
		{StepWaiting, ResultEmpty, all},
		{StepWaiting, ResultNotExecuted, all},
		{StepWaiting, ResultFailed, redoAbort},
		{StepInterrupted, ResultFailed, redoAbort},
		{StepInterrupted, "", redoAbort},
		{StepPending, "", nil},
		{StepQueued, "", nil},
		{StepRunning, "", nil},
		{StepDone, ResultProduced, nil},
		{StepSkipped, ResultEmpty, nil},
		{StepAborted, ResultProduced, nil},
	}
	for _, tt := range tests {
		s := &Step{StepDef: &StepDef{N: 1}, StepState: &StepState{Status: tt.status}}
		if tt.result != "" {
			s.Attempts = []Attempt{{N: 1, Result: tt.result}}
		}
		if got := Allowed(s); !slices.Equal(got, tt.want) {
			t.Errorf("Allowed(%s after %q) = %v, want %v", tt.status, tt.result, got, tt.want)
		}
	}
	// A best-of round that has ended is picked from, unless no candidate
	// may be; approving the last candidate alone is not a choice.
	pick := []DecisionKind{DecidePick, DecideEdit, DecideSkip, DecideRedo, DecideAbort}
	for _, tt := range []struct {
		results []Result
		want    []DecisionKind
	}{
		{[]Result{ResultProduced, ResultFailed}, pick},
		{[]Result{ResultFailed, ResultEmpty}, pick},
		{[]Result{ResultFailed, ResultFailed}, redoAbort},
	} {
		s := &Step{StepDef: &StepDef{N: 1}, StepState: &StepState{Status: StepWaiting}}
		for i, res := range tt.results {
			s.Attempts = append(s.Attempts, Attempt{N: i + 1, Candidate: i + 1, Runner: "claude", Result: res, Finished: t0})
		}
		if got := Allowed(s); !slices.Equal(got, tt.want) {
			t.Errorf("Allowed(best-of round %v) = %v, want %v", tt.results, got, tt.want)
		}
	}
}

// stepIn returns a two-step checkpointed run whose step 1 is in the named
// situation, reached through the real transitions. Step 2 stays pending, so
// settling step 1 does not end the run.
func stepIn(t *testing.T, situation string) *script {
	t.Helper()
	s := newScript(t, testPlan(InputChain, "alpha", "beta"), StartOptions{StartedBy: "U-ana"})
	switch situation {
	case "pending":
	case "queued":
		s.apply(Queue(s.r, 1, s.tick()))
	case "running":
		s.start(1)
	case "waiting/PRODUCED", "waiting/EMPTY", "waiting/NOT-EXECUTED", "waiting/FAILED":
		s.start(1)
		s.finish(1, Result(strings.TrimPrefix(situation, "waiting/")))
	case "done":
		s.start(1)
		s.finish(1, ResultProduced)
		s.decide(1, DecideApprove, "")
	case "skipped":
		s.start(1)
		s.finish(1, ResultProduced)
		s.decide(1, DecideSkip, "")
	case "interrupted":
		s.start(1)
		s.apply(Interrupt(s.r, s.tick()), nil)
	case "aborted":
		s.start(1)
		s.apply(AbortRun(s.r, "U-ana", "stopped by hand", s.tick()))
	default:
		t.Fatalf("unknown situation %q", situation)
	}
	return s
}

// errRefused stands for a refusal that is neither ErrStale nor ErrNotWaiting.
var errRefused = errors.New("refused")

type outcome struct {
	to  StepStatus // step 1's status after the move
	err error      // nil, ErrStale, ErrNotWaiting or errRefused
}

// TestTransitionsByStatus drives the real transition functions (Queue,
// Start, Finish, Decide) from every status step 1 can be in.
func TestTransitionsByStatus(t *testing.T) {
	ok := func(s StepStatus) outcome { return outcome{to: s} }
	stale, notWaiting, refused := outcome{err: ErrStale}, outcome{err: ErrNotWaiting}, outcome{err: errRefused}
	anyResult := map[string]outcome{"queue": refused, "start": refused, "finish": stale,
		"approve": ok(StepDone), "edit": ok(StepDone), "skip": ok(StepSkipped), "redo": ok(StepQueued), "abort": ok(StepAborted)}
	settled := map[string]outcome{"queue": refused, "start": refused, "finish": stale,
		"approve": notWaiting, "edit": notWaiting, "skip": notWaiting, "redo": notWaiting, "abort": notWaiting}
	redoOrAbort := map[string]outcome{"queue": refused, "start": refused, "finish": stale,
		"approve": notWaiting, "edit": notWaiting, "skip": notWaiting, "redo": ok(StepQueued), "abort": ok(StepAborted)}
	table := map[string]map[string]outcome{
		"pending": {"queue": ok(StepQueued), "start": ok(StepRunning), "finish": stale,
			"approve": notWaiting, "edit": notWaiting, "skip": notWaiting, "redo": notWaiting, "abort": notWaiting},
		"queued": {"queue": refused, "start": ok(StepRunning), "finish": stale,
			"approve": notWaiting, "edit": notWaiting, "skip": notWaiting, "redo": notWaiting, "abort": notWaiting},
		"running": {"queue": refused, "start": refused, "finish": ok(StepWaiting),
			"approve": notWaiting, "edit": notWaiting, "skip": notWaiting, "redo": notWaiting, "abort": notWaiting},
		"waiting/PRODUCED":     anyResult,
		"waiting/EMPTY":        anyResult,
		"waiting/NOT-EXECUTED": anyResult,
		"waiting/FAILED":       redoOrAbort,
		"done":                 settled,
		"skipped":              settled,
		"interrupted":          redoOrAbort,
		// The run ended while step 1 ran: nothing may start or be decided
		// any more, but the attempt's result (and cost) is still recorded.
		"aborted": {"queue": refused, "start": stale, "finish": ok(StepAborted),
			"approve": stale, "edit": stale, "skip": stale, "redo": stale, "abort": stale},
	}
	ops := []string{"queue", "start", "finish", "approve", "edit", "skip", "redo", "abort"}
	for situation, row := range table {
		for _, op := range ops {
			t.Run(situation+"/"+op, func(t *testing.T) {
				s := stepIn(t, situation)
				before := s.r.Clone()
				var evs []Event
				var err error
				now := s.tick()
				switch op {
				case "queue":
					evs, err = Queue(s.r, 1, now)
				case "start":
					evs, err = Start(s.r, 1, now)
				case "finish":
					a := 1
					if l := s.step(1).Latest(); l != nil {
						a = l.N
					}
					evs, err = Finish(s.r, 1, a, Finished{Result: ResultProduced, Artifact: true, Size: 3}, now)
				default:
					d := s.decision(1, DecisionKind(op))
					evs, err = Decide(s.r, d, &Edit{Size: 7, Summary: "by hand"}, now)
				}
				if !reflect.DeepEqual(before, s.r) {
					t.Fatal("a transition changed the run it was given")
				}
				want := row[op]
				if want.err != nil {
					switch {
					case err == nil:
						t.Fatalf("%s on a %s step = %d events, want a refusal", op, situation, len(evs))
					case want.err == errRefused && (errors.Is(err, ErrStale) || errors.Is(err, ErrNotWaiting)):
						t.Fatalf("%s on a %s step: %v, want a plain refusal", op, situation, err)
					case want.err != errRefused && !errors.Is(err, want.err):
						t.Fatalf("%s on a %s step: %v, want %v", op, situation, err, want.err)
					}
					return
				}
				if err != nil {
					t.Fatalf("%s on a %s step refused: %v", op, situation, err)
				}
				s.apply(evs, nil)
				if got := s.step(1).Status; got != want.to {
					t.Fatalf("%s on a %s step: step 1 is %s, want %s", op, situation, got, want.to)
				}
				if op == "abort" && s.r.State != RunAborted {
					t.Fatalf("abort left the run %s", s.r.State)
				}
				if op == "abort" && s.step(2).Status != StepAborted {
					t.Fatalf("abort left step 2 %s", s.step(2).Status)
				}
			})
		}
	}
}

func TestDecideRefusals(t *testing.T) {
	t.Run("stale attempt", func(t *testing.T) {
		s := stepIn(t, "waiting/PRODUCED")
		old := s.decision(1, DecideApprove)
		s.decide(1, DecideRedo, "tighter")
		s.start(1)
		s.finish(1, ResultProduced)
		_, err := Decide(s.r, old, nil, s.tick())
		if !errors.Is(err, ErrStale) {
			t.Fatalf("approve of attempt 1 while attempt 2 waits: %v, want ErrStale", err)
		}
	})
	t.Run("stale attempt while the redo runs", func(t *testing.T) {
		s := stepIn(t, "waiting/PRODUCED")
		old := s.decision(1, DecideApprove)
		s.decide(1, DecideRedo, "")
		s.start(1)
		if _, err := Decide(s.r, old, nil, s.tick()); !errors.Is(err, ErrStale) {
			t.Fatalf("approve of attempt 1 while attempt 2 runs: %v, want ErrStale", err)
		}
	})
	t.Run("repeated key on the same step", func(t *testing.T) {
		s := stepIn(t, "waiting/PRODUCED")
		d := s.decision(1, DecideRedo)
		s.apply(Decide(s.r, d, nil, s.tick()))
		if _, err := Decide(s.r, d, nil, s.tick()); !errors.Is(err, ErrDuplicate) {
			t.Fatalf("the same redo twice: %v, want ErrDuplicate", err)
		}
	})
	t.Run("repeated key across steps", func(t *testing.T) {
		s := stepIn(t, "waiting/PRODUCED")
		d := s.decision(1, DecideApprove)
		s.apply(Decide(s.r, d, nil, s.tick()))
		s.start(2)
		s.finish(2, ResultProduced)
		d2 := s.decision(2, DecideApprove)
		d2.Key = d.Key
		if _, err := Decide(s.r, d2, nil, s.tick()); !errors.Is(err, ErrKeyReused) || errors.Is(err, ErrDuplicate) {
			t.Fatalf("step 2 decision reusing step 1's key: %v, want ErrKeyReused", err)
		}
	})
	t.Run("repeated key after the run finished", func(t *testing.T) {
		s := stepIn(t, "waiting/PRODUCED")
		d := s.decision(1, DecideAbort)
		s.apply(Decide(s.r, d, nil, s.tick()))
		if _, err := Decide(s.r, d, nil, s.tick()); !errors.Is(err, ErrDuplicate) {
			t.Fatalf("a redelivered abort: %v, want ErrDuplicate", err)
		}
	})
	t.Run("after the run completed", func(t *testing.T) {
		s := newScript(t, testPlan(InputChain, "alpha"), StartOptions{})
		s.start(1)
		s.finish(1, ResultProduced)
		last := s.decision(1, DecideApprove)
		s.apply(Decide(s.r, last, nil, s.tick()))
		if s.r.State != RunCompleted {
			t.Fatalf("run is %s, want completed", s.r.State)
		}
		for _, k := range allDecisions {
			if _, err := Decide(s.r, s.decision(1, k), &Edit{Size: 1}, s.tick()); !errors.Is(err, ErrStale) {
				t.Errorf("%s after completion: %v, want ErrStale", k, err)
			}
		}
	})
	t.Run("edit without a body", func(t *testing.T) {
		s := stepIn(t, "waiting/PRODUCED")
		for _, e := range []*Edit{nil, {Size: 0, File: "x.md"}} {
			evs, err := Decide(s.r, s.decision(1, DecideEdit), e, s.tick())
			if err == nil || !strings.Contains(err.Error(), "replacement artifact") {
				t.Errorf("edit with %+v: %d events, err %v; want a refusal asking for the replacement", e, len(evs), err)
			}
		}
	})
	t.Run("unknown decision kind", func(t *testing.T) {
		s := stepIn(t, "waiting/PRODUCED")
		if _, err := Decide(s.r, s.decision(1, "maybe"), nil, s.tick()); err == nil {
			t.Fatal("an unknown decision kind was accepted")
		}
	})
	t.Run("unknown step", func(t *testing.T) {
		s := stepIn(t, "waiting/PRODUCED")
		d := s.decision(1, DecideApprove)
		d.Step = 9
		if _, err := Decide(s.r, d, nil, s.tick()); !errors.Is(err, ErrNotFound) {
			t.Fatalf("decision on step 9: %v, want ErrNotFound", err)
		}
	})
}

func TestApplyRefusesOutOfSequence(t *testing.T) {
	s := stepIn(t, "running")
	fin, err := Finish(s.r, 1, 1, s.finished(1, ResultProduced), s.tick())
	if err != nil {
		t.Fatal(err)
	}
	t.Run("gap", func(t *testing.T) {
		ev := fin[0]
		ev.Seq++
		if err := Apply(s.r.Clone(), ev); err == nil {
			t.Fatal("an event after a gap was applied")
		}
	})
	t.Run("replay", func(t *testing.T) {
		r := s.r.Clone()
		if err := Apply(r, fin[0]); err != nil {
			t.Fatal(err)
		}
		if err := Apply(r, fin[0]); err == nil {
			t.Fatal("the same event was applied twice")
		}
	})
	t.Run("before run-started", func(t *testing.T) {
		ev := s.journal[1]
		ev.Seq = 1
		if err := Apply(&Run{}, ev); err == nil {
			t.Fatal("a step event was applied to a run that never started")
		}
	})
	t.Run("run-started without a run", func(t *testing.T) {
		if err := Apply(&Run{}, Event{Seq: 1, Type: EvRunStarted}); err == nil {
			t.Fatal("an empty run-started was applied")
		}
	})
	t.Run("unknown step", func(t *testing.T) {
		ev := fin[0]
		ev.Step = 7
		if err := Apply(s.r.Clone(), ev); err == nil {
			t.Fatal("an event for step 7 of 2 was applied")
		}
	})
	t.Run("attempt never started", func(t *testing.T) {
		ev := fin[0]
		ev.Attempt = 2
		if err := Apply(s.r.Clone(), ev); err == nil {
			t.Fatal("attempt 2 finished without starting")
		}
	})
	t.Run("unknown type", func(t *testing.T) {
		ev := fin[0]
		ev.Type = "step-teleported"
		if err := Apply(s.r.Clone(), ev); err == nil {
			t.Fatal("an unknown event type was applied")
		}
	})
	t.Run("fold leaves the input alone on error", func(t *testing.T) {
		before := s.r.Clone()
		bad := append([]Event(nil), fin...)
		bad[0].Seq += 5
		if _, err := Fold(s.r, bad); err == nil {
			t.Fatal("Fold accepted a gap")
		}
		if !reflect.DeepEqual(before, s.r) {
			t.Fatal("Fold changed its input")
		}
	})
	t.Run("rebuild of a journal with a hole", func(t *testing.T) {
		j := append(append([]Event(nil), s.journal...), fin...)
		j = append(j[:1], j[2:]...)
		if _, err := Rebuild(j); err == nil {
			t.Fatal("Rebuild papered over a missing event")
		}
		if _, err := Rebuild(nil); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Rebuild(nil) = %v, want ErrNotFound", err)
		}
	})
}

// TestRebuildLongHistory scripts a whole run with every kind of decision and
// checks the journal alone rebuilds the run at every point.
func TestRebuildLongHistory(t *testing.T) {
	p := testPlan(InputChain, "alpha", "beta", "gamma")
	p.Flags.Thread = true
	p.Context = "mobile checkout"
	p.Warnings = []string{"no domain"}
	s := newScript(t, p, StartOptions{StartedBy: "U-ana", Origin: Origin{Channel: "C1", Thread: "1700.1"}, BudgetUSD: 50})
	snapshots := map[uint64]*Run{s.r.Seq: s.r.Clone()}
	snap := func() { snapshots[s.r.Seq] = s.r.Clone() }
	state := func(want RunState) {
		t.Helper()
		snap()
		if s.r.State != want {
			t.Fatalf("after event %d (%s) the run is %s, want %s", s.r.Seq, s.journal[len(s.journal)-1].Type, s.r.State, want)
		}
	}
	state(RunRunning)

	// Step 1: produced, redone with feedback, produced again, edited.
	s.start(1)
	state(RunRunning)
	s.finish(1, ResultProduced)
	state(RunWaiting)
	s.decide(1, DecideRedo, "shorter, and name the owner")
	state(RunRunning)
	s.start(1)
	if got := s.step(1).Latest(); got.N != 2 || got.Feedback != "shorter, and name the owner" {
		t.Fatalf("attempt after redo = %+v, want attempt 2 carrying the feedback", got)
	}
	state(RunRunning)
	s.finish(1, ResultProduced)
	state(RunWaiting)
	s.decide(1, DecideEdit, "")
	state(RunRunning)

	// Step 2: empty, skipped.
	s.apply(SetMode(s.r, ModeGuardedAuto, s.tick()), nil)
	state(RunRunning)
	s.start(2)
	s.finish(2, ResultEmpty)
	state(RunWaiting)
	s.decide(2, DecideSkip, "")
	state(RunRunning)

	// Step 3, checkpointed again: failed, redone (no feedback), interrupted,
	// redone, aborted.
	s.apply(SetMode(s.r, ModeCheckpointed, s.tick()), nil)
	s.start(3)
	s.finish(3, ResultFailed)
	state(RunWaiting)
	s.decide(3, DecideRedo, "")
	s.start(3)
	if fb := s.step(3).Latest().Feedback; fb != "" {
		t.Fatalf("attempt 2 of step 3 carries feedback %q from nowhere", fb)
	}
	s.apply(Interrupt(s.r, s.tick()), nil)
	state(RunWaiting)
	s.decide(3, DecideRedo, "try again")
	s.start(3)
	if fb := s.step(3).Latest().Feedback; fb != "try again" {
		t.Fatalf("attempt 3 of step 3 carries feedback %q", fb)
	}
	s.finish(3, ResultProduced)
	state(RunWaiting)
	s.decide(3, DecideAbort, "")
	state(RunAborted)

	for i, ev := range s.journal {
		if ev.Seq != uint64(i+1) {
			t.Fatalf("journal entry %d has seq %d", i, ev.Seq)
		}
	}
	for seq, want := range snapshots {
		got, err := Rebuild(s.journal[:seq])
		if err != nil {
			t.Fatalf("rebuild through event %d: %v", seq, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("rebuild through event %d differs from the folded run:\n got %+v\nwant %+v", seq, got, want)
		}
	}

	r := s.r
	a1, a2 := r.Step(1).Attempts[0], r.Step(1).Attempts[1]
	if want := ArtifactFile(r.ID, 1, "alpha", 1, false); a1.File != want {
		t.Errorf("attempt 1 of step 1 is at %q, want it renamed to %q", a1.File, want)
	}
	if want := ArtifactFile(r.ID, 1, "alpha", 2, true); a2.File != want {
		t.Errorf("attempt 2 of step 1 is at %q, want %q", a2.File, want)
	}
	if !a2.Edited || a2.Size != 42 || a2.Summary != "edited by hand" || a1.Edited {
		t.Errorf("edit recorded as attempt1 %+v attempt2 %+v", a1, a2)
	}
	if r.Step(1).Status != StepDone || r.Step(2).Status != StepSkipped || r.Step(3).Status != StepAborted {
		t.Errorf("statuses %s %s %s, want done skipped aborted", r.Step(1).Status, r.Step(2).Status, r.Step(3).Status)
	}
	if got := r.Step(3).Attempts[1]; got.Result != ResultFailed || !strings.Contains(got.Reason, "interrupted") {
		t.Errorf("interrupted attempt = %+v, want FAILED with an interrupted reason", got)
	}
	if len(r.Step(3).Attempts) != 3 || len(r.Step(3).Decisions) != 3 {
		t.Errorf("step 3 has %d attempts and %d decisions, want 3 and 3", len(r.Step(3).Attempts), len(r.Step(3).Decisions))
	}
	if d := r.Step(1).Decisions[0]; d.Kind != DecideRedo || d.Actor != "U-ana" || d.Attempt != 1 || d.Key == "" || d.Feedback == "" {
		t.Errorf("first decision recorded as %+v", d)
	}
	if r.Mode != ModeCheckpointed || r.StartedBy != "U-ana" || r.Origin.Channel != "C1" || r.Plan.Context != "mobile checkout" {
		t.Errorf("run facts lost: mode %s starter %q origin %+v", r.Mode, r.StartedBy, r.Origin)
	}
	if want := 0.25 * 5; r.CostUSD != want {
		t.Errorf("cost = %v, want %v (five finished attempts; the interrupted one never finished)", r.CostUSD, want)
	}
	if !strings.Contains(r.Halt, "aborted by U-ana at step 3") {
		t.Errorf("halt = %q, want who aborted where", r.Halt)
	}
	if r.Updated != s.now || r.Created != t0 {
		t.Errorf("created %v updated %v, want %v and %v", r.Created, r.Updated, t0, s.now)
	}
}

func TestRunStartedCopiesThePlan(t *testing.T) {
	p := testPlan(InputChain, "alpha", "beta")
	p.Steps[0].PTokens = []string{"P1"}
	evs, err := NewRun("run-1", p, StartOptions{}, t0)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Rebuild(evs)
	if err != nil {
		t.Fatal(err)
	}
	p.Steps[0].Skill = "changed"
	p.Steps[0].PTokens[0] = "P9"
	if r.Step(1).Skill != "alpha" || r.Plan.Steps[0].PTokens[0] != "P1" {
		t.Fatal("the run shares memory with the plan it was started from")
	}
	if _, err := NewRun("run-2", testPlan(InputChain), StartOptions{}, t0); err == nil {
		t.Fatal("a run with no step was started")
	} else if r, ok := errors.AsType[*Refusal](err); !ok || r.Reason != RefuseNoRunnableSteps {
		t.Fatalf("NewRun of nothing: %v, want a no-runnable-steps refusal", err)
	}
}

func TestGuardedAuto(t *testing.T) {
	auto := func(t *testing.T, skills ...string) *script {
		p := testPlan(InputPlan, skills...)
		p.Domain, p.Flags.Auto = DomainComplicated, true
		s := newScript(t, p, StartOptions{})
		if s.r.Mode != ModeGuardedAuto {
			t.Fatalf("mode = %s, want guarded-auto", s.r.Mode)
		}
		return s
	}
	for _, res := range []Result{ResultProduced, ResultNotExecuted} {
		t.Run("advances on "+string(res), func(t *testing.T) {
			s := auto(t, "alpha", "beta")
			s.start(1)
			s.finish(1, res)
			if st := s.step(1); st.Status != StepDone || len(st.Decisions) != 0 {
				t.Fatalf("step 1 is %s with %d decisions, want done with none", st.Status, len(st.Decisions))
			}
			if got := Ready(s.r); !slices.Equal(got, []int{2}) {
				t.Fatalf("Ready = %v, want [2]", got)
			}
			s.start(2)
			n := len(s.journal)
			s.finish(2, res)
			if s.r.State != RunCompleted {
				t.Fatalf("run is %s after the last step, want completed", s.r.State)
			}
			if got := len(s.journal) - n; got != 2 || s.journal[len(s.journal)-1].Type != EvRunFinished {
				t.Fatalf("the last finish produced %d events, want step-finished and run-finished in one change", got)
			}
		})
	}
	t.Run("pauses on EMPTY", func(t *testing.T) {
		s := auto(t, "alpha", "beta")
		s.start(1)
		s.finish(1, ResultEmpty)
		if s.step(1).Status != StepWaiting || s.r.State != RunWaiting || Ready(s.r) != nil {
			t.Fatalf("step 1 %s, run %s, ready %v: want a pause", s.step(1).Status, s.r.State, Ready(s.r))
		}
	})
	t.Run("halts on FAILED", func(t *testing.T) {
		s := auto(t, "alpha", "beta")
		s.start(1)
		s.finish(1, ResultFailed)
		if s.step(1).Status != StepWaiting || s.r.State != RunWaiting {
			t.Fatalf("step 1 %s, run %s: want a halt", s.step(1).Status, s.r.State)
		}
		if s.r.Halt != "the agent exited with code 1" {
			t.Fatalf("halt = %q, want the failure reason", s.r.Halt)
		}
		if got := Allowed(s.step(1)); !slices.Equal(got, []DecisionKind{DecideRedo, DecideAbort}) {
			t.Fatalf("a FAILED step allows %v", got)
		}
	})
	t.Run("force-auto still halts", func(t *testing.T) {
		p := testPlan(InputChain, "alpha", "beta")
		p.Flags.ForceAuto = true
		s := newScript(t, p, StartOptions{})
		s.start(1)
		s.finish(1, ResultFailed)
		if s.step(1).Status != StepWaiting {
			t.Fatalf("force-auto passed a FAILED step: %s", s.step(1).Status)
		}
	})
	t.Run("checkpointed pauses on PRODUCED", func(t *testing.T) {
		s := newScript(t, testPlan(InputPlan, "alpha", "beta"), StartOptions{})
		s.start(1)
		s.finish(1, ResultProduced)
		if s.step(1).Status != StepWaiting || s.r.Halt != "" {
			t.Fatalf("step 1 %s halt %q, want a plain checkpoint", s.step(1).Status, s.r.Halt)
		}
	})
	t.Run("a gate overrides the mode", func(t *testing.T) {
		p := testPlan(InputWorkflow, "alpha", "beta")
		p.Steps[0].Gate, p.Steps[1].Gate = GateNever, GateAlways
		p.Flags.Auto = true
		s := newScript(t, p, StartOptions{})
		s.start(1)
		s.finish(1, ResultProduced)
		s.start(2)
		s.finish(2, ResultProduced)
		if s.step(1).Status != StepDone || s.step(2).Status != StepWaiting {
			t.Fatalf("gates never/always gave %s/%s, want done/waiting", s.step(1).Status, s.step(2).Status)
		}
	})
	t.Run("mode change takes effect", func(t *testing.T) {
		s := newScript(t, testPlan(InputPlan, "alpha", "beta"), StartOptions{})
		if evs := SetMode(s.r, ModeCheckpointed, s.tick()); evs != nil {
			t.Fatalf("SetMode to the same mode = %v, want nothing", evs)
		}
		s.apply(SetMode(s.r, ModeGuardedAuto, s.tick()), nil)
		s.start(1)
		s.finish(1, ResultProduced)
		if s.step(1).Status != StepDone {
			t.Fatalf("after a switch to guarded-auto step 1 is %s", s.step(1).Status)
		}
	})
}

func TestBudgetPause(t *testing.T) {
	p := testPlan(InputPlan, "alpha", "beta", "gamma")
	p.Domain, p.Flags.Auto = DomainClear, true
	s := newScript(t, p, StartOptions{BudgetUSD: 1})
	fin := func(n int, cost float64) {
		s.start(n)
		f := s.finished(n, ResultProduced)
		f.CostUSD = cost
		s.apply(Finish(s.r, n, s.step(n).Latest().N, f, s.tick()))
	}
	fin(1, 0.5)
	fin(2, 0.5) // exactly the budget is not over it
	if s.step(2).Status != StepDone {
		t.Fatalf("step 2 at exactly the budget is %s, want done", s.step(2).Status)
	}
	fin(3, 0.01)
	if s.step(3).Status != StepWaiting || s.r.State != RunWaiting {
		t.Fatalf("over budget: step 3 %s, run %s, want a pause", s.step(3).Status, s.r.State)
	}
	if !strings.Contains(s.r.Halt, "budget exceeded") || !strings.Contains(s.r.Halt, "$1.01") {
		t.Fatalf("halt = %q, want the budget and the cost", s.r.Halt)
	}
	if l := s.step(3).Latest(); l.Result != ResultProduced {
		t.Fatalf("an over-budget attempt is %s, want it still PRODUCED", l.Result)
	}
	s.decide(3, DecideApprove, "")
	if s.r.State != RunCompleted || s.r.Halt != "" {
		t.Fatalf("after approving, run %s halt %q", s.r.State, s.r.Halt)
	}
}

func TestResolveMode(t *testing.T) {
	plan := func(d Domain, ambiguous bool, f Flags) Plan {
		return Plan{Input: InputPlan, Domain: d, DomainAmbiguous: ambiguous, Flags: f}
	}
	chain := func(f Flags) Plan { return Plan{Input: InputChain, Flags: f} }
	auto, force, both := Flags{Auto: true}, Flags{ForceAuto: true}, Flags{Auto: true, ForceAuto: true}
	tests := []struct {
		name    string
		p       Plan
		want    Mode
		warning string // a word the warning must hold; "" for none
	}{
		{"default plan", plan(DomainClear, false, Flags{}), ModeCheckpointed, ""},
		{"default chain", chain(Flags{}), ModeCheckpointed, ""},
		{"dry run alone", plan(DomainClear, false, Flags{DryRun: true}), ModeCheckpointed, ""},
		{"auto on Clear", plan(DomainClear, false, auto), ModeGuardedAuto, ""},
		{"auto on Complicated", plan(DomainComplicated, false, auto), ModeGuardedAuto, ""},
		{"auto on Complex", plan(DomainComplex, false, auto), ModeCheckpointed, "Complex"},
		{"auto on Chaotic", plan(DomainChaotic, false, auto), ModeCheckpointed, "Chaotic"},
		{"auto on unknown domain", plan("", false, auto), ModeCheckpointed, "no Cynefin domain"},
		{"auto on ambiguous domain", plan(DomainClear, true, auto), ModeCheckpointed, "ambiguous"},
		{"auto on a chain", chain(auto), ModeCheckpointed, "chains"},
		{"force-auto on Complex", plan(DomainComplex, false, force), ModeGuardedAuto, ""},
		{"force-auto on Chaotic", plan(DomainChaotic, false, both), ModeGuardedAuto, ""},
		{"force-auto on unknown", plan("", false, force), ModeGuardedAuto, ""},
		{"force-auto on ambiguous", plan("", true, force), ModeGuardedAuto, ""},
		{"force-auto on a chain", chain(force), ModeGuardedAuto, ""},
		{"force-auto on Clear", plan(DomainClear, false, force), ModeGuardedAuto, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, w := ResolveMode(tt.p)
			if got != tt.want {
				t.Errorf("mode = %s, want %s", got, tt.want)
			}
			switch {
			case tt.warning == "" && w != "":
				t.Errorf("unexpected warning %q", w)
			case tt.warning != "" && (!strings.Contains(w, tt.warning) || !strings.Contains(w, "--force-auto")):
				t.Errorf("warning %q, want one naming %q and --force-auto", w, tt.warning)
			}
		})
	}
}

func TestRunModeName(t *testing.T) {
	if got := RunModeName(ModeGuardedAuto, true); got != "dry-run" {
		t.Errorf("dry run named %q", got)
	}
	if got := RunModeName(ModeGuardedAuto, false); got != "guarded-auto" {
		t.Errorf("guarded auto named %q", got)
	}
}

func TestReadyFollowsDependencies(t *testing.T) {
	s := newScript(t, testPlan(InputPlan, "alpha", "beta", "gamma"), StartOptions{})
	ready := func(want ...int) {
		t.Helper()
		if got := Ready(s.r); !slices.Equal(got, want) {
			t.Fatalf("Ready = %v, want %v", got, want)
		}
	}
	ready(1)
	s.start(1)
	ready()
	s.finish(1, ResultProduced)
	ready()
	s.decide(1, DecideRedo, "")
	ready(1) // the redo is queued and may start again
	s.start(1)
	s.finish(1, ResultProduced)
	s.decide(1, DecideApprove, "")
	ready(2)
	s.start(2)
	s.finish(2, ResultFailed)
	ready()
	s.decide(2, DecideRedo, "")
	s.start(2)
	s.finish(2, ResultEmpty)
	s.decide(2, DecideSkip, "")
	ready(3)
	s.apply(AbortRun(s.r, "U-bo", "enough", s.tick()))
	ready()

	// Workflow steps without dependencies are all ready at once; a named
	// dependency holds its dependant back.
	p := testPlan(InputWorkflow, "alpha", "beta", "gamma")
	p.Steps[0].ID, p.Steps[1].ID, p.Steps[2].ID = "a", "b", "c"
	p.Steps[2].DependsOn = []string{"a"}
	w := newScript(t, p, StartOptions{})
	if got := Ready(w.r); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("workflow Ready = %v, want [1 2]", got)
	}
	w.start(1)
	w.start(2)
	w.finish(1, ResultProduced)
	w.decide(1, DecideApprove, "")
	if got := Ready(w.r); !slices.Equal(got, []int{3}) {
		t.Fatalf("workflow Ready after a = %v, want [3]", got)
	}
	if w.r.State != RunRunning {
		t.Fatalf("a run with a running step is %s", w.r.State)
	}
}

func TestThreadFrom(t *testing.T) {
	tests := []struct {
		input  InputKind
		thread bool
		want   []int
	}{
		{InputChain, true, []int{0, 1, 2}},
		{InputChain, false, []int{0, 0, 0}},
		{InputPlan, true, []int{0, 0, 0}},
		{InputPlan, false, []int{0, 0, 0}},
	}
	for _, tt := range tests {
		p := testPlan(tt.input, "alpha", "beta", "gamma")
		p.Flags.Thread = tt.thread
		s := newScript(t, p, StartOptions{})
		var got []int
		for _, st := range s.r.Steps {
			got = append(got, st.ThreadFrom)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s with thread=%v: ThreadFrom = %v, want %v", tt.input, tt.thread, got, tt.want)
		}
		if s.r.Thread != tt.thread {
			t.Errorf("%s: run.Thread = %v", tt.input, s.r.Thread)
		}
	}
}

// Interrupt takes every running step when none is named (a crash) and only
// the running steps named otherwise (a lost worker); the rest stay as they
// are.
func TestInterruptNamedSteps(t *testing.T) {
	tests := []struct {
		name  string
		steps []int
		want  []int // the steps interrupted, in order
	}{
		{"none named: every running step", nil, []int{1, 3}},
		{"one running step", []int{3}, []int{3}},
		{"both running steps, in any order", []int{3, 1}, []int{1, 3}},
		{"a step that is not running", []int{2}, nil},
		{"a step the run does not have", []int{9}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newScript(t, testPlan(InputPlan, "alpha", "beta", "gamma"), StartOptions{})
			s.start(1)
			s.start(3)
			before := s.r
			evs := Interrupt(s.r, s.tick(), tt.steps...)
			var got []int
			for i, ev := range evs {
				if ev.Type != EvStepInterrupted || ev.Attempt != 1 || ev.Seq != before.Seq+uint64(i)+1 || ev.Reason == "" {
					t.Errorf("event %+v, want step-interrupted of attempt 1 at seq %d with a reason", ev, before.Seq+uint64(i)+1)
				}
				got = append(got, ev.Step)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("interrupted steps %v, want %v", got, tt.want)
			}
			s.apply(evs, nil)
			for n := 1; n <= 3; n++ {
				want := before.Step(n).Status
				if slices.Contains(tt.want, n) {
					want = StepInterrupted
				}
				if st := s.step(n).Status; st != want {
					t.Errorf("step %d is %s, want %s", n, st, want)
				}
			}
		})
	}
}

// Recover is the whole change a store commits on open: nothing for a run
// with no step running, else every running step interrupted, folded into
// the run, after the run's last event.
func TestRecover(t *testing.T) {
	s := newScript(t, testPlan(InputPlan, "alpha", "beta", "gamma"), StartOptions{})
	if c, ok, err := Recover(s.r, s.tick(), time.Time{}); ok || err != nil || len(c.Events) != 0 {
		t.Fatalf("Recover with nothing running = %+v, %v, %v", c, ok, err)
	}
	s.start(1)
	s.start(3)
	now := s.tick()
	c, ok, err := Recover(s.r, now, time.Time{})
	if !ok || err != nil {
		t.Fatalf("Recover with steps running: ok %v, %v", ok, err)
	}
	if c.After != s.r.Seq || len(c.Events) != 2 || c.Events[0].Step != 1 || c.Events[1].Step != 3 || !c.Events[0].Time.Equal(now) {
		t.Fatalf("Recover = after %d, events %+v; want steps 1 and 3 after %d", c.After, c.Events, s.r.Seq)
	}
	want, err := Fold(s.r, c.Events)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Run, want) || c.Run.Step(1).Status != StepInterrupted || c.Run.Step(3).Status != StepInterrupted {
		t.Fatalf("Recover's run is not the run with its events folded in: %+v", c.Run)
	}
}

// An interrupted attempt was lost at its last sign of life, not when the
// next gonogo found it: the latest of its start, the run's last change and
// the store's pulse, never after now. The event is recorded now.
func TestRecoverSaysWhenTheAttemptWasLost(t *testing.T) {
	p := testPlan(InputWorkflow, "alpha", "beta")
	s := newScript(t, p, StartOptions{})
	s.start(1)
	started := s.now
	s.start(2)
	s.finish(2, ResultProduced) // the run's last change, while step 1 ran
	lastChange := s.now
	found := lastChange.Add(9 * time.Hour)
	for _, tt := range []struct {
		name        string
		pulse, want time.Time
	}{
		{"no pulse: the run's last change", time.Time{}, lastChange},
		{"a pulse after it", lastChange.Add(3 * time.Minute), lastChange.Add(3 * time.Minute)},
		{"a pulse of an earlier gonogo", started.Add(-time.Hour), lastChange},
		{"a pulse from a clock ahead", found.Add(time.Hour), found},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, ok, err := Recover(s.r, found, tt.pulse)
			if !ok || err != nil || len(c.Events) != 1 {
				t.Fatalf("Recover: %v, %v, %+v", ok, err, c.Events)
			}
			ev := c.Events[0]
			if !ev.Time.Equal(found) || !ev.Lost.Equal(tt.want) || !LostAt(ev).Equal(tt.want) {
				t.Fatalf("event at %v, lost %v; want recorded at %v, lost %v", ev.Time, ev.Lost, found, tt.want)
			}
			if a := c.Run.Step(1).Latest(); !a.Finished.Equal(tt.want) || a.Finished.Before(a.Started) {
				t.Fatalf("the attempt finished %v, want %v (started %v)", a.Finished, tt.want, a.Started)
			}
		})
	}
	// An event recorded before gonogo kept the time says when it was found.
	if old := (Event{Type: EvStepInterrupted, Time: found}); !LostAt(old).Equal(found) {
		t.Fatalf("LostAt of an event without Lost = %v", LostAt(old))
	}
}

func TestInterruptAndAbortRun(t *testing.T) {
	s := newScript(t, testPlan(InputChain, "alpha", "beta"), StartOptions{})
	if evs := Interrupt(s.r, s.tick()); len(evs) != 0 {
		t.Fatalf("Interrupt with nothing running = %v", evs)
	}
	s.start(1)
	s.apply(Interrupt(s.r, s.tick()), nil)
	if s.step(1).Status != StepInterrupted || s.r.State != RunWaiting || !strings.Contains(s.r.Halt, "interrupted") {
		t.Fatalf("after Interrupt: step %s, run %s, halt %q", s.step(1).Status, s.r.State, s.r.Halt)
	}
	s.decide(1, DecideRedo, "")
	s.start(1)
	s.apply(AbortRun(s.r, "U-bo", "stopped from the terminal", s.tick()))
	if s.r.State != RunAborted || s.step(1).Status != StepAborted || s.step(2).Status != StepAborted {
		t.Fatalf("after AbortRun: run %s, steps %s %s", s.r.State, s.step(1).Status, s.step(2).Status)
	}
	if s.r.Halt != "stopped from the terminal" {
		t.Fatalf("halt = %q", s.r.Halt)
	}
	if _, err := AbortRun(s.r, "U-bo", "again", s.tick()); !errors.Is(err, ErrStale) {
		t.Fatalf("second AbortRun: %v, want ErrStale", err)
	}
	if evs := SetMode(s.r, ModeGuardedAuto, s.tick()); evs != nil {
		t.Fatal("SetMode changed a finished run")
	}
	if _, err := Start(s.r, 2, s.tick()); !errors.Is(err, ErrStale) {
		t.Fatalf("Start on an aborted run: %v, want ErrStale", err)
	}
}

func TestAbortKeepsSettledSteps(t *testing.T) {
	s := newScript(t, testPlan(InputChain, "alpha", "beta", "gamma"), StartOptions{})
	s.start(1)
	s.finish(1, ResultProduced)
	s.decide(1, DecideApprove, "")
	s.start(2)
	s.finish(2, ResultProduced)
	s.decide(2, DecideAbort, "")
	want := []StepStatus{StepDone, StepAborted, StepAborted}
	for i, w := range want {
		if got := s.r.Steps[i].Status; got != w {
			t.Errorf("step %d is %s, want %s", i+1, got, w)
		}
	}
	if !s.step(1).Latest().Artifact {
		t.Error("abort dropped step 1's artifact")
	}
}

func TestArtifactFile(t *testing.T) {
	if got := ArtifactFile("20310402-090000-abcdef", 3, "deliver-prd", 2, true); got != "runs/20310402-090000-abcdef/03-deliver-prd.md" {
		t.Errorf("latest = %q", got)
	}
	if got := ArtifactFile("r", 12, "x", 2, false); got != "runs/r/12-x.attempt-2.md" {
		t.Errorf("earlier = %q", got)
	}
}
