package engine

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
)

// bestOfChain is a checkpointed (or guarded-auto, with auto) chain of
// deliver-prd then deliver-user-stories, threaded, whose steps run on
// claude and codex at once.
func (h *harness) bestOfChain(auto bool) Plan {
	h.t.Helper()
	return BestOf(h.chain(Flags{Thread: true, ForceAuto: auto}, "deliver-prd", "deliver-user-stories"), []string{"claude", "codex"})
}

// candidateResults lists step n's latest round as runner/result.
func candidateResults(r *Run, n int) []string {
	var out []string
	for _, a := range Candidates(r.Step(n)) {
		out = append(out, a.Runner+"/"+string(a.Result))
	}
	return out
}

func TestBestOfCandidatesRunInParallelAndAreJudgedAlone(t *testing.T) {
	for _, tt := range []struct {
		name          string
		claude, codex Outcome
		want          []string
		allowed       []DecisionKind
	}{
		{"one PRODUCED, one EMPTY", produced("# Claude's PRD\n\nA full draft.\n"), Outcome{Artifact: []byte("  \n")},
			[]string{"claude/PRODUCED", "codex/EMPTY"}, []DecisionKind{DecidePick, DecideEdit, DecideSkip, DecideRedo, DecideAbort}},
		{"both PRODUCED", produced("# Claude's PRD\n\nA full draft.\n"), produced("# Codex's PRD\n\nAnother draft.\n"),
			[]string{"claude/PRODUCED", "codex/PRODUCED"}, []DecisionKind{DecidePick, DecideEdit, DecideSkip, DecideRedo, DecideAbort}},
		{"one FAILED", failed("rate limited"), produced("# Codex's PRD\n\nAnother draft.\n"),
			[]string{"claude/FAILED", "codex/PRODUCED"}, []DecisionKind{DecidePick, DecideEdit, DecideSkip, DecideRedo, DecideAbort}},
		{"both FAILED", failed("boom"), failed("bang"),
			[]string{"claude/FAILED", "codex/FAILED"}, []DecisionKind{DecideRedo, DecideAbort}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, 1, true)
				h.script("claude/deliver-prd", tt.claude)
				h.script("codex/deliver-prd", tt.codex)
				id := h.start(h.bestOfChain(false))
				synctest.Wait()
				// One slot, yet both candidates run at once.
				if running, _ := h.runner.now(); running != 2 {
					t.Fatalf("%d candidates run at once, want 2", running)
				}
				h.runner.gate <- struct{}{}
				synctest.Wait()
				if st := h.load(id).Step(1); st.Status != StepRunning {
					t.Fatalf("with one candidate still running the step is %s, want running", st.Status)
				}
				h.runner.gate <- struct{}{}
				synctest.Wait()
				r := h.load(id)
				if got := candidateResults(r, 1); !slices.Equal(got, tt.want) {
					t.Fatalf("candidates = %v, want %v", got, tt.want)
				}
				if st := r.Step(1); st.Status != StepWaiting || !Picking(st) || !slices.Equal(Allowed(st), tt.allowed) {
					t.Fatalf("step 1 is %s (picking %v) allowing %v, want waiting for a pick allowing %v", st.Status, Picking(st), Allowed(st), tt.allowed)
				}
				var runners []string
				for _, j := range h.jobsFor(1) {
					runners = append(runners, j.Runner)
				}
				if slices.Sort(runners); !slices.Equal(runners, []string{"claude", "codex"}) {
					t.Fatalf("step 1 ran on %v, want claude and codex once each", runners)
				}
				var sum float64
				for _, a := range r.Step(1).Attempts {
					sum += a.CostUSD
				}
				if r.CostUSD != sum {
					t.Fatalf("run cost $%.2f, its candidates $%.2f", r.CostUSD, sum)
				}
				h.checkJournal(id)
			})
		})
	}
}

func TestBestOfPickIsTheStepsArtifact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 2, false)
		h.script("claude/deliver-prd", produced("# Claude's PRD\n\nFirst draft.\n"))
		h.script("codex/deliver-prd", produced("# Codex's PRD\n\nSecond draft.\n"))
		id := h.start(h.bestOfChain(false))
		synctest.Wait()
		r := h.load(id)
		// Before the pick neither candidate's output is the step's file.
		stepFile := ArtifactFile(id, 1, "deliver-prd", 2, true)
		if _, ok := h.store.file(stepFile); ok {
			t.Fatalf("%s written before anyone picked", stepFile)
		}
		// A FAILED candidate, or one that is not there, is refused.
		if _, err := PickDecision(r, 1, 3, "U-ana", ""); !errors.Is(err, ErrInvalidDecision) || !IsRefusal(err) ||
			err.Error() != "step 1 has candidates 1 to 2, not 3" {
			t.Fatalf("picking candidate 3 of 2: %v, want refused as not fitting the step, in its own words", err)
		}
		d, err := PickDecision(r, 1, 2, "U-ana", "tighter scope")
		if err != nil {
			t.Fatal(err)
		}
		d.Key = "pick-1"
		if _, err := h.svc.Decide(t.Context(), id, d, nil); err != nil {
			t.Fatalf("pick: %v", err)
		}
		// The same pick again is already applied; another under its key is refused.
		if _, err := h.svc.Decide(t.Context(), id, d, nil); !errors.Is(err, ErrDuplicate) {
			t.Fatalf("the pick again: %v, want ErrDuplicate", err)
		}
		other := d
		other.Attempt, other.Candidate = 1, 1
		if _, err := h.svc.Decide(t.Context(), id, other, nil); !errors.Is(err, ErrKeyReused) {
			t.Fatalf("another pick under the key: %v, want ErrKeyReused", err)
		}
		synctest.Wait()
		r = h.load(id)
		st := r.Step(1)
		if l := st.Latest(); st.Status != StepDone || l.N != 2 || l.Runner != "codex" || !l.Picked || l.File != stepFile {
			t.Fatalf("step 1 %s stands on %+v, want done on codex's attempt 2 at %s", st.Status, l, stepFile)
		}
		if sd := StepDecision(st); sd.Kind != DecidePick || sd.Candidate != 2 || sd.Feedback != "tighter scope" || sd.Actor != "U-ana" {
			t.Fatalf("step decision %+v, want U-ana's pick of candidate 2 with the note", sd)
		}
		if b, _ := h.store.file(stepFile); !strings.Contains(string(b), "Codex's PRD") {
			t.Fatalf("step file holds %q, want the picked candidate's", b)
		}
		if b, ok := h.store.file(ArtifactFile(id, 1, "deliver-prd", 1, false)); !ok || !strings.Contains(string(b), "Claude's PRD") {
			t.Fatalf("the other candidate's file holds %q, %v; want it kept under its attempt name", b, ok)
		}
		// --thread hands the pick on, and only it.
		next := h.jobsFor(2)
		if len(next) != 2 || !strings.Contains(next[0].Prompt, "Codex's PRD") || strings.Contains(next[0].Prompt, "Claude's PRD") {
			t.Fatalf("step 2's jobs %d; first prompt:\n%s", len(next), next[0].Prompt)
		}
		h.checkJournal(id)
	})
}

func TestBestOfGuardedAutoPicksOnlyALoneProducedCandidate(t *testing.T) {
	for _, tt := range []struct {
		name     string
		codex    Outcome
		budget   float64
		autoPick bool
	}{
		{"one PRODUCED", Outcome{Artifact: []byte(" ")}, 0, true},
		{"one PRODUCED, one FAILED", failed("boom"), 0, true},
		{"both PRODUCED", produced("# Codex\n\nAlso good.\n"), 0, false},
		// $0.10 and $0.10: the second candidate takes the run over.
		{"one PRODUCED, over budget", failed("boom"), 0.15, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, 2, false)
				h.script("claude/deliver-prd", Outcome{Artifact: []byte("# Claude\n\nGood.\n"), CostUSD: 0.1})
				tt.codex.CostUSD = 0.1
				h.script("codex/deliver-prd", tt.codex)
				r, err := h.svc.Start(t.Context(), h.bestOfChain(true), StartOptions{StartedBy: "U-ana", BudgetUSD: tt.budget})
				if err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				r = h.load(r.ID)
				st := r.Step(1)
				if r.CostUSD < 0.2 {
					t.Fatalf("run cost $%.2f, want both candidates' $0.20 counted", r.CostUSD)
				}
				d := StepDecision(st)
				if !tt.autoPick {
					if st.Status != StepWaiting || !Picking(st) {
						t.Fatalf("step 1 is %s (decision %+v), want it waiting for people to pick", st.Status, d)
					}
					return
				}
				if st.Status != StepDone || d == nil || d.Kind != DecidePick || d.Actor != AutoPickActor || st.Latest().Runner != "claude" {
					t.Fatalf("step 1 is %s with decision %+v, want claude's candidate picked by %s", st.Status, d, AutoPickActor)
				}
				h.checkJournal(r.ID)
			})
		})
	}
}

// TestBestOfInterruptedCandidatesAreRedoneOnce is a crash while two
// candidates run: both are interrupted, once each, and a redo starts one
// new round of two, not four.
func TestBestOfInterruptedCandidatesAreRedoneOnce(t *testing.T) {
	p := BestOf(testPlan(InputChain, "deliver-prd", "deliver-user-stories"), []string{"claude", "claude"})
	s := newScript(t, p, StartOptions{StartedBy: "U-ana"})
	s.start(1)
	if c := Candidates(s.step(1)); len(c) != 2 || c[0].Runner != "claude" || c[1].Runner != "claude" || c[1].N != 2 {
		t.Fatalf("candidates %+v, want claude twice as attempts 1 and 2", c)
	}
	c, ok, err := Recover(s.r, s.tick(), s.now)
	if err != nil || !ok {
		t.Fatalf("recover: %v %v", ok, err)
	}
	if len(c.Events) != 2 || c.Events[0].Attempt != 1 || c.Events[1].Attempt != 2 {
		t.Fatalf("recovery events %+v, want one per candidate", c.Events)
	}
	s.apply(c.Events, nil)
	st := s.step(1)
	if st.Status != StepInterrupted || !slices.Equal(Allowed(st), []DecisionKind{DecideRedo, DecideAbort}) {
		t.Fatalf("step 1 is %s allowing %v, want interrupted, offered for redo", st.Status, Allowed(st))
	}
	if _, again, _ := Recover(s.r, s.tick(), s.now); again {
		t.Fatal("a second recovery found something to interrupt")
	}
	s.decide(1, DecideRedo, "")
	s.start(1)
	if got := len(s.step(1).Attempts); got != 4 {
		t.Fatalf("after the redo step 1 has %d attempts, want 4 (two per round)", got)
	}
	if c := Candidates(s.step(1)); len(c) != 2 || c[0].N != 3 || c[0].Candidate != 1 {
		t.Fatalf("the redone round is %+v, want attempts 3 and 4", c)
	}
}

func TestCheckBestOf(t *testing.T) {
	known := []string{"claude", "codex", "gemini"}
	for _, tt := range []struct {
		in   string
		want string // "" for accepted
	}{
		{"", ""},
		{"claude,codex", ""},
		{"claude, claude", ""},
		{"claude,cursor", `unknown runner "cursor" (valid: claude, codex, gemini)`},
		{"claude", "name at least two"},
	} {
		err := CheckBestOf(ParseBestOf(tt.in), known)
		if (err == nil) != (tt.want == "") || err != nil && !strings.Contains(err.Error(), tt.want) {
			t.Errorf("CheckBestOf(%q) = %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestRunsOn(t *testing.T) {
	round := func(r StepRules) PlanStep { return PlanStep{Skill: "s", Rules: r} }
	two := []string{"codex", "gemini"}
	for _, c := range []struct {
		name  string
		steps []PlanStep
		want  bool
	}{
		{"a step with no round", []PlanStep{round(StepRules{BestOf: two}), round(StepRules{})}, true},
		{"every step a round on others", []PlanStep{round(StepRules{BestOf: two}), round(StepRules{BestOf: two})}, false},
		{"a round naming the run's own", []PlanStep{round(StepRules{BestOf: []string{"claude", "codex"}})}, true},
		{"a round that routes", []PlanStep{round(StepRules{BestOf: two, Route: true})}, true},
		{"a round that splits into tasks", []PlanStep{round(StepRules{BestOf: two, Decompose: "x"})}, true},
		{"a round with a fallback", []PlanStep{round(StepRules{BestOf: two, Fallback: "y"})}, true},
	} {
		if got := RunsOn(Plan{Steps: c.steps}, "claude"); got != c.want {
			t.Errorf("%s: RunsOn = %v, want %v", c.name, got, c.want)
		}
	}
}
