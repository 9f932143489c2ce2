//go:build temporal

package temporalbackend

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/worker"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/hangguard"
)

// candidateRunner runs a best-of step's candidates as their runners are
// scripted: out[runner] is what each run of that runner brings back, in
// turn (the last one repeated); a job on no named runner (a step that is
// no best-of one) produces a default artifact. Every job of a round waits
// until round jobs have started, so a round that ran one candidate after
// the other would never end; hold keeps jobs running until their
// activity is cancelled.
type candidateRunner struct {
	mu      sync.Mutex
	out     map[string][]engine.Outcome
	round   int
	started int
	all     chan struct{}
	hold    bool
	jobs    []engine.Job
}

func newCandidateRunner(round int, out map[string][]engine.Outcome) *candidateRunner {
	return &candidateRunner{out: out, round: round, all: make(chan struct{})}
}

func (c *candidateRunner) Run(ctx context.Context, job engine.Job, progress func(engine.Progress)) engine.Outcome {
	c.mu.Lock()
	c.jobs = append(c.jobs, job)
	hold := c.hold
	var out engine.Outcome
	script, candidate := c.out[job.Runner]
	if candidate {
		out = script[0]
		if len(script) > 1 {
			c.out[job.Runner] = script[1:]
		}
		if c.started++; c.started == c.round {
			close(c.all)
		}
	}
	all := c.all
	c.mu.Unlock()
	progress(engine.Progress{Turns: 1, LastTool: "Read"})
	if !candidate {
		return engine.Outcome{Artifact: fmt.Appendf(nil, "# %s\n\nStep %d's artifact.\n", job.Skill, job.Step), CostUSD: 0.1}
	}
	select {
	case <-all:
	case <-ctx.Done():
		return engine.Outcome{Err: ctx.Err(), ExitCode: -1}
	}
	if hold {
		<-ctx.Done()
		return engine.Outcome{Err: ctx.Err(), ExitCode: -1}
	}
	return out
}

// nextRound lets the next round of candidates start, each job of it
// waiting again for all of them, and not held unless hold.
func (c *candidateRunner) nextRound(hold bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.started, c.all, c.hold = 0, make(chan struct{}), hold
}

// runners lists step n's jobs as attempt:runner, sorted.
func (c *candidateRunner) runners(n int) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, j := range c.jobs {
		if j.Step == n {
			out = append(out, fmt.Sprintf("%d:%s", j.Attempt, j.Runner))
		}
	}
	slices.Sort(out)
	return out
}

// prompt is the prompt of step n's latest job.
func (c *candidateRunner) prompt(n int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.jobs) - 1; i >= 0; i-- {
		if c.jobs[i].Step == n {
			return c.jobs[i].Prompt
		}
	}
	return ""
}

func produced(body string) engine.Outcome {
	return engine.Outcome{Artifact: []byte(body), CostUSD: 0.2}
}

func failed(why string) engine.Outcome {
	return engine.Outcome{ExitCode: 1, Stderr: why, CostUSD: 0.01}
}

// bestOfEnv is temporalEnv whose steps run on r, heartbeating within
// heartbeat.
func bestOfEnv(t *testing.T, r engine.Runner, heartbeat time.Duration) *env {
	t.Helper()
	e := &env{t: t, name: "temporal", runner: newFakeRunner(), cat: testCatalog(append(skills, fallbackSkill)...), ts: sharedServer(t), q: newQueues()}
	e.acts = &Activities{Runner: r, Catalog: e.cat, Artifacts: newMemArtifacts(), RateLimit: testRateLimit, Workflows: testWorkflows}
	e.flows = e.newFlowWorker()
	e.steps = e.worker(e.q.steps, func(r worker.Registry) { RegisterSteps(r, e.acts) })
	e.b = New(e.config(func(c *Config) { c.Heartbeat = heartbeat }))
	return e
}

// startBestOf starts the chain with its first step run on claude and
// codex at once; auto runs it in guarded auto.
func (e *env) startBestOf(auto bool) engine.RunID {
	e.t.Helper()
	return e.startWith(func(p *engine.Plan, _ *engine.StartOptions) {
		*p = engine.BestOf(*p, []string{"claude", "codex"})
		p.Steps[1].Rules.BestOf = nil
		p.Flags.Thread, p.Flags.ForceAuto = true, auto
	})
}

// picking waits until step n's round of candidates first..first+1 has
// ended and waits for a pick (or, with all FAILED, a redo).
func picking(t testing.TB, b backendUnderTest, id engine.RunID, n, first int) *engine.Run {
	t.Helper()
	return waitFor(t, b, id, fmt.Sprintf("waiting for a pick on step %d", n), func(r *engine.Run) bool {
		c := engine.Candidates(r.Step(n))
		return engine.Picking(r.Step(n)) && len(c) == 2 && c[0].N == first
	})
}

func candidates(r *engine.Run, n int) []string {
	var out []string
	for _, a := range engine.Candidates(r.Step(n)) {
		out = append(out, fmt.Sprintf("%d:%s/%s", a.N, a.Runner, a.Result))
	}
	return out
}

// TestBestOfPickIsTheStepsArtifact: both candidates run at once, each on
// its runner and judged alone (one PRODUCED, one EMPTY); the step waits
// for a pick, and the picked candidate's artifact is the step's: the one
// the next step reads and the run's artifact shows.
func TestBestOfPickIsTheStepsArtifact(t *testing.T) {
	cr := newCandidateRunner(2, map[string][]engine.Outcome{
		"claude": {produced("# Claude's PRD\n\nA full draft.\n")},
		"codex":  {{Artifact: []byte("  \n"), CostUSD: 0.2}},
	})
	e := bestOfEnv(t, cr, testHeartbeat)
	id := e.startBestOf(false)
	r := picking(t, e.b, id, 1, 1)
	if got, want := candidates(r, 1), []string{"1:claude/PRODUCED", "2:codex/EMPTY"}; !slices.Equal(got, want) {
		t.Fatalf("candidates %v, want %v", got, want)
	}
	st := r.Step(1)
	if got, want := engine.Allowed(st), []engine.DecisionKind{engine.DecidePick, engine.DecideEdit, engine.DecideSkip, engine.DecideRedo, engine.DecideAbort}; !slices.Equal(got, want) {
		t.Fatalf("step 1 allows %v, want %v", got, want)
	}
	if r.CostUSD != 0.4 {
		t.Errorf("the run cost $%.2f, want both candidates' $0.40", r.CostUSD)
	}
	if runners := cr.runners(1); !slices.Equal(runners, []string{"1:claude", "2:codex"}) {
		t.Fatalf("step 1's jobs ran as %v, want attempt 1 on claude and 2 on codex", runners)
	}
	d, err := engine.PickDecision(r, 1, 1, "U-ana", "the full one")
	if err != nil {
		t.Fatal(err)
	}
	d.Key = "pick-1"
	if _, err := e.b.Decide(t.Context(), id, d, nil); err != nil {
		t.Fatalf("pick: %v", err)
	}
	r = waiting(t, e.b, id, 2, 1)
	st = r.Step(1)
	if l := st.Latest(); st.Status != engine.StepDone || l.N != 1 || l.Runner != "claude" || !l.Picked {
		t.Fatalf("step 1 %s stands on %+v, want done on claude's attempt 1", st.Status, l)
	}
	if sd := engine.StepDecision(st); sd.Kind != engine.DecidePick || sd.Candidate != 1 || sd.Actor != "U-ana" || sd.Feedback != "the full one" {
		t.Fatalf("step 1's decision %+v, want U-ana's pick of candidate 1", sd)
	}
	if b, err := e.b.Artifact(t.Context(), id, 1, st.Latest().N); err != nil || !strings.Contains(string(b), "Claude's PRD") {
		t.Fatalf("step 1's artifact %q, %v; want the picked candidate's", b, err)
	}
	if next := cr.prompt(2); !strings.Contains(next, "Claude's PRD") {
		t.Fatalf("step 2 was not handed the pick; its prompt:\n%s", next)
	}
	e.decide(id, 2, engine.DecideApprove, "", nil)
	if r := ended(t, e.b, id); r.State != engine.RunCompleted {
		t.Errorf("run ended %s, want completed", describe(r))
	}
}

// TestBestOfAllFailedOnlyRedoOrAbort: with every candidate FAILED nothing
// can be picked or approved; a redo runs one new round, of two.
func TestBestOfAllFailedOnlyRedoOrAbort(t *testing.T) {
	cr := newCandidateRunner(2, map[string][]engine.Outcome{
		"claude": {failed("boom"), produced("# Claude's PRD\n\nSecond try.\n")},
		"codex":  {failed("bang"), produced("# Codex's PRD\n\nSecond try.\n")},
	})
	e := bestOfEnv(t, cr, testHeartbeat)
	id := e.startBestOf(false)
	r := picking(t, e.b, id, 1, 1)
	if got, want := candidates(r, 1), []string{"1:claude/FAILED", "2:codex/FAILED"}; !slices.Equal(got, want) {
		t.Fatalf("candidates %v, want %v", got, want)
	}
	if got, want := engine.Allowed(r.Step(1)), []engine.DecisionKind{engine.DecideRedo, engine.DecideAbort}; !slices.Equal(got, want) {
		t.Fatalf("step 1 allows %v, want %v", got, want)
	}
	pick := engine.Decision{Kind: engine.DecidePick, Actor: "U-ana", Step: 1, Attempt: 1, Candidate: 1, Key: "pick-failed"}
	if _, err := e.b.Decide(t.Context(), id, pick, nil); !errors.Is(err, engine.ErrNotWaiting) {
		t.Fatalf("a pick of a FAILED candidate: %v, want refused", err)
	}
	if err := e.decideAs(id, 1, engine.DecideApprove, "U-ana"); !errors.Is(err, engine.ErrNotWaiting) {
		t.Fatalf("an approval: %v, want ErrNotWaiting", err)
	}
	cr.nextRound(false)
	e.decide(id, 1, engine.DecideRedo, "", nil)
	r = picking(t, e.b, id, 1, 3)
	if got, want := candidates(r, 1), []string{"3:claude/PRODUCED", "4:codex/PRODUCED"}; !slices.Equal(got, want) || len(r.Step(1).Attempts) != 4 {
		t.Fatalf("after the redo: %d attempts, candidates %v; want 4, %v", len(r.Step(1).Attempts), got, want)
	}
	if _, err := e.b.Abort(t.Context(), id, "U-ana"); err != nil {
		t.Fatal(err)
	}
	if r := ended(t, e.b, id); r.State != engine.RunAborted {
		t.Errorf("run ended %s, want aborted", describe(r))
	}
}

// TestBestOfGuardedAutoPicksALoneProduced: in guarded auto, one candidate
// PRODUCED and the other FAILED: gonogo picks the one itself and the run
// goes on without anyone deciding.
func TestBestOfGuardedAutoPicksALoneProduced(t *testing.T) {
	cr := newCandidateRunner(2, map[string][]engine.Outcome{
		"claude": {failed("boom")},
		"codex":  {produced("# Codex's PRD\n\nThe only draft.\n")},
	})
	e := bestOfEnv(t, cr, testHeartbeat)
	id := e.startBestOf(true)
	r := ended(t, e.b, id)
	if r.State != engine.RunCompleted {
		t.Fatalf("run ended %s, want completed", describe(r))
	}
	st := r.Step(1)
	if l := st.Latest(); l.N != 2 || l.Runner != "codex" || !l.Picked {
		t.Fatalf("step 1 stands on %+v, want codex's attempt 2, picked", l)
	}
	if sd := engine.StepDecision(st); sd.Kind != engine.DecidePick || sd.Actor != engine.AutoPickActor || sd.Candidate != 2 {
		t.Fatalf("step 1's decision %+v, want %s's pick of candidate 2", sd, engine.AutoPickActor)
	}
	if b, err := e.b.Artifact(t.Context(), id, 1, 2); err != nil || !strings.Contains(string(b), "Codex's PRD") {
		t.Fatalf("step 1's artifact %q, %v; want codex's", b, err)
	}
}

// TestBestOfLostWorkerInterruptsEachCandidateOnce: the worker running
// both candidates goes away; each is interrupted once, and a redo on
// another worker runs one new round.
func TestBestOfLostWorkerInterruptsEachCandidateOnce(t *testing.T) {
	cr := newCandidateRunner(2, map[string][]engine.Outcome{
		"claude": {produced("# Claude's PRD\n\nLost.\n"), produced("# Claude's PRD\n\nAgain.\n")},
		"codex":  {produced("# Codex's PRD\n\nLost.\n"), produced("# Codex's PRD\n\nAgain.\n")},
	})
	cr.hold = true
	e := bestOfEnv(t, cr, 2*time.Second)
	cr.mu.Lock()
	both := cr.all
	cr.mu.Unlock()
	id := e.startBestOf(false)
	select {
	case <-both:
	case <-hangguard.Context(t).Done():
		t.Fatal("the two candidates never ran at once")
	}
	e.steps.Stop()
	r := waitFor(t, e.b, id, "interrupted", func(r *engine.Run) bool { return r.Step(1).Status == engine.StepInterrupted })
	var lost []int
	for _, ev := range e.journal(id) {
		if ev.Type == engine.EvStepInterrupted {
			lost = append(lost, ev.Attempt)
		}
	}
	if !slices.Equal(lost, []int{1, 2}) || !engine.WorkerLost(r.Step(1)) {
		t.Fatalf("interrupted attempts %v (worker lost %v), want 1 and 2 once each", lost, engine.WorkerLost(r.Step(1)))
	}
	cr.nextRound(false)
	e.worker(e.q.steps, func(r worker.Registry) { RegisterSteps(r, e.acts) })
	e.decide(id, 1, engine.DecideRedo, "", nil)
	r = picking(t, e.b, id, 1, 3)
	if got, want := candidates(r, 1), []string{"3:claude/PRODUCED", "4:codex/PRODUCED"}; !slices.Equal(got, want) || len(r.Step(1).Attempts) != 4 {
		t.Fatalf("after the redo: %d attempts, candidates %v; want 4, %v", len(r.Step(1).Attempts), got, want)
	}
}

// TestBestOfRoundHoldsOneStepSlot: under GONOGO_TEMPORAL_MAX_STEPS=1 a
// best-of round runs both candidates at once on the step's one slot, as
// engine.Service runs them on one runner slot, and gives the slot back
// only when its last candidate has ended: another run's step starts after
// that, not after the first candidate's end.
func TestBestOfRoundHoldsOneStepSlot(t *testing.T) {
	e := temporalEnv(t)
	queue := e.q.steps + "-limited"
	gate := &gateRunner{started: make(chan engine.Job, 8), tokens: make(chan struct{})}
	acts := &Activities{Runner: gate, Catalog: e.cat, Artifacts: e.acts.Artifacts, RateLimit: testRateLimit, Workflows: testWorkflows}
	e.worker(queue, func(r worker.Registry) { RegisterSteps(r, acts) })
	b := New(e.config(func(c *Config) { c.StepQueue, c.MaxSteps = queue, 1 }))
	p, err := engine.PreflightChain(engine.ChainExpr{Source: "deliver-prd", Names: []string{"deliver-prd"}, Context: "limits"},
		e.cat, engine.DefaultPolicy())
	if err != nil {
		t.Fatal(err)
	}
	start := func(p engine.Plan) engine.RunID {
		t.Helper()
		r, err := b.Start(t.Context(), p, engine.StartOptions{StartedBy: "U-ana"})
		if err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	ctx := hangguard.Context(t)
	next := func() engine.Job {
		t.Helper()
		select {
		case j := <-gate.started:
			return j
		case <-ctx.Done():
			t.Fatal("no step started")
			return engine.Job{}
		}
	}
	round := start(engine.BestOf(p, []string{"claude", "codex"}))
	next()
	next()
	other := start(p)
	gate.tokens <- struct{}{}
	waitFor(t, b, round, "one candidate ended", func(r *engine.Run) bool {
		return slices.ContainsFunc(engine.Candidates(r.Step(1)), func(a *engine.Attempt) bool { return !a.Finished.IsZero() })
	})
	gate.tokens <- struct{}{}
	if j := next(); j.Run != other {
		t.Fatalf("run %s started a step, want %s", j.Run, other)
	}
	close(gate.tokens)
	picking(t, b, round, 1, 1)
	waiting(t, b, other, 1, 1)
	if ended := endedBeforeRelease(t, e, round); ended != 2 {
		t.Errorf("the round gave its slot back after %d of its candidates ended, want 2", ended)
	}
	if most, _ := gate.counts(); most != 2 {
		t.Errorf("%d agents ran at once, want the round's 2", most)
	}
}

// endedBeforeRelease counts the step activities of run id's workflow that
// had ended when it first gave a slot back, as its history orders them.
func endedBeforeRelease(t *testing.T, e *env, id engine.RunID) int {
	t.Helper()
	it := e.ts.GetDefaultClient().GetWorkflowHistory(t.Context(), string(id), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	ended := 0
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED:
			ended++
		case enumspb.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED:
			if ev.GetSignalExternalWorkflowExecutionInitiatedEventAttributes().GetSignalName() == sigRelease {
				return ended
			}
		}
	}
	t.Fatalf("run %s never gave its slot back", id)
	return 0
}

// TestBestOfCancelStopsOneCandidate: a cancel names one candidate's
// attempt and stops that one alone; the other runs on until cancelled in
// turn, and a candidate cancelled twice is refused as stale.
func TestBestOfCancelStopsOneCandidate(t *testing.T) {
	cr := newCandidateRunner(2, map[string][]engine.Outcome{"claude": {produced("x")}, "codex": {produced("y")}})
	cr.hold = true
	e := bestOfEnv(t, cr, testHeartbeat)
	cr.mu.Lock()
	both := cr.all
	cr.mu.Unlock()
	id := e.startBestOf(false)
	select {
	case <-both:
	case <-hangguard.Context(t).Done():
		t.Fatal("the two candidates never ran at once")
	}
	if err := e.b.Cancel(t.Context(), id, 1, 2, "U-ana"); err != nil {
		t.Fatalf("cancel candidate 2: %v", err)
	}
	r := waitFor(t, e.b, id, "candidate 2 cancelled", func(r *engine.Run) bool {
		c := engine.Candidates(r.Step(1))
		return len(c) == 2 && !c[1].Finished.IsZero()
	})
	if c := engine.Candidates(r.Step(1)); c[1].Result != engine.ResultFailed || !c[0].Finished.IsZero() || r.Step(1).Status != engine.StepRunning {
		t.Fatalf("after the cancel: step %s, candidates %v; want candidate 2 FAILED and 1 running", r.Step(1).Status, candidates(r, 1))
	}
	if err := e.b.Cancel(t.Context(), id, 1, 2, "U-ana"); !errors.Is(err, engine.ErrStale) {
		t.Fatalf("cancel candidate 2 again: %v, want ErrStale", err)
	}
	if err := e.b.Cancel(t.Context(), id, 1, 1, "U-ana"); err != nil {
		t.Fatalf("cancel candidate 1: %v", err)
	}
	r = picking(t, e.b, id, 1, 1)
	if got, want := engine.Allowed(r.Step(1)), []engine.DecisionKind{engine.DecideRedo, engine.DecideAbort}; !slices.Equal(got, want) {
		t.Fatalf("with both cancelled step 1 allows %v, want %v", got, want)
	}
}
