package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// wfSkills are the skills the workflow tests run; each has its own script
// in the fake runner.
var wfSkills = []string{"plan", "left", "right", "join", "slow", "flaky", "backup", "triage", "split", "task", "fix", "verify", "last"}

type wfSource map[string]WorkflowSpec

func (w wfSource) Workflow(name string) (WorkflowSpec, error) {
	if s, ok := w[name]; ok {
		return s, nil
	}
	return WorkflowSpec{}, fmt.Errorf("no workflow named %q: %w", name, ErrNotFound)
}

// newWorkflowHarness is newHarness with the workflow skills installed, a
// working directory for file conditions and the named workflows route
// steps may continue with.
func newWorkflowHarness(t *testing.T, maxParallel int, gated bool, flows wfSource) (*harness, string) {
	dir := t.TempDir()
	h := newHarnessWith(t, maxParallel, gated, func(h *harness, c *ServiceConfig) {
		for _, n := range wfSkills {
			h.cat.skills[n] = Skill{Name: n, Instructions: "Instructions of " + n + "."}
		}
		c.Probe, c.Workflows = dirProbe{dir: dir}, flows
	})
	return h, dir
}

func (h *harness) workflow(flags Flags, args map[string]string, steps ...WorkflowStep) Plan {
	h.t.Helper()
	p, err := PreflightWorkflow(WorkflowSpec{Name: "test-flow", Steps: steps}, args, "", flags, h.cat, DefaultPolicy())
	if err != nil {
		h.t.Fatal(err)
	}
	return p
}

// ws is a workflow step that advances on success.
func ws(id, skill string, deps ...string) WorkflowStep {
	return WorkflowStep{ID: id, Skill: skill, DependsOn: deps, Gate: GateNever, Line: 1}
}

// retrying is s with on_error retry n times, waiting backoff (doubling).
func retrying(s WorkflowStep, n int, backoff time.Duration) WorkflowStep {
	s.OnError = ErrorPolicy{Kind: OnErrorRetry, Retries: n, Backoff: backoff}
	return s
}

// decomposing is a "split" step whose tasks run with the skill "task".
func decomposing(id string) WorkflowStep {
	s := ws(id, "split")
	s.Decompose = "task"
	return s
}

// routing is a "triage" step whose output names the workflow to go on with.
func routing(id string) WorkflowStep {
	s := ws(id, "triage")
	s.Route = true
	return s
}

// run starts a workflow of steps and waits until the service is idle.
func (h *harness) run(flags Flags, steps ...WorkflowStep) RunID {
	h.t.Helper()
	id := h.start(h.workflow(flags, nil, steps...))
	synctest.Wait()
	return id
}

func (h *harness) script(skill string, outs ...Outcome) {
	h.runner.mu.Lock()
	defer h.runner.mu.Unlock()
	h.runner.script[skill] = append(h.runner.script[skill], outs...)
}

func failed(why string) Outcome { return Outcome{AgentError: why} }

func produced(text string) Outcome { return Outcome{Artifact: []byte(text)} }

// jobsFor lists the runner jobs for step n, in order.
func (h *harness) jobsFor(n int) []Job {
	var out []Job
	for _, j := range h.runner.calls() {
		if j.Step == n {
			out = append(out, j)
		}
	}
	return out
}

func TestWorkflowDiamondRunsBranchesInParallelAndJoinsTheirOutputs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := newWorkflowHarness(t, 4, true, nil)
		join := ws("d", "join", "b", "c")
		join.Prompt = "Left said: {{steps.b.output}}\nRight said: {{steps.c.output}}\nRun {{run.id}} on {{today}}."
		id := h.start(h.workflow(Flags{}, nil, ws("a", "plan"), ws("b", "left", "a"), ws("c", "right", "a"), join))
		h.script("left", produced("LEFT-OUTPUT"))
		h.script("right", produced("RIGHT-OUTPUT"))

		synctest.Wait()
		h.expect(id, RunRunning, "running/", "pending", "pending", "pending")
		h.runner.gate <- struct{}{} // a finishes
		synctest.Wait()
		h.expect(id, RunRunning, "done/PRODUCED", "running/", "running/", "pending")
		if _, most := h.runner.now(); most != 2 {
			t.Fatalf("at most %d steps ran at once, want the two branches together", most)
		}
		h.runner.gate <- struct{}{}
		synctest.Wait()
		r := h.load(id)
		if r.Step(4).Status != StepPending || r.StepsDone() != 2 {
			t.Fatalf("with one branch done, the join is %s and %d steps are done", r.Step(4).Status, r.StepsDone())
		}
		h.runner.gate <- struct{}{}
		synctest.Wait()
		h.runner.gate <- struct{}{}
		synctest.Wait()
		h.expect(id, RunCompleted, "done/PRODUCED", "done/PRODUCED", "done/PRODUCED", "done/PRODUCED")
		h.checkJournal(id)

		d := h.jobsFor(4)[0]
		today := time.Now().UTC().Format("2006-01-02")
		for _, want := range []string{"Left said: LEFT-OUTPUT", "Right said: RIGHT-OUTPUT", "Run " + string(id) + " on " + today} {
			if !strings.Contains(d.Prompt, want) {
				t.Errorf("join prompt lacks %q:\n%s", want, d.Prompt)
			}
		}
	})
}

func TestWorkflowBranchWaitingAtAGateDoesNotStopTheOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := newWorkflowHarness(t, 4, false, nil)
		gated := ws("b", "left", "a")
		gated.Gate = GateAlways
		id := h.run(Flags{}, ws("a", "plan"), gated, ws("c", "right", "a"), ws("e", "slow", "c"), ws("d", "join", "b", "e"))
		// b waits for the team; c and e ran on; d needs b.
		h.expect(id, RunWaiting, "done/PRODUCED", "waiting/PRODUCED", "done/PRODUCED", "done/PRODUCED", "pending")
		h.decide(id, 2, DecideApprove, "", nil)
		synctest.Wait()
		h.expect(id, RunCompleted, "done/PRODUCED", "done/PRODUCED", "done/PRODUCED", "done/PRODUCED", "done/PRODUCED")
		h.checkJournal(id)
	})
}

func TestWorkflowRetriesWithBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := newWorkflowHarness(t, 4, false, nil)
		flaky := retrying(ws("f", "flaky"), 3, 10*time.Second)
		h.script("flaky", failed("rate limited"), failed("rate limited"), produced("finally"))
		start := time.Now()
		id := h.run(Flags{}, flaky, ws("n", "last", "f"))
		r := h.expect(id, RunWaiting, "waiting/FAILED", "pending")
		if due, n, of, ok := RetryDue(r.Step(1)); !ok || n != 1 || of != 3 || !due.Equal(r.Step(1).Latest().Finished.Add(10*time.Second)) {
			t.Fatalf("RetryDue = %v %d/%d %v, want retry 1 of 3 in 10s", due, n, of, ok)
		}
		time.Sleep(10*time.Second + time.Millisecond)
		synctest.Wait()
		h.expect(id, RunWaiting, "waiting/FAILED", "pending")
		time.Sleep(20*time.Second + time.Millisecond) // the wait doubles
		synctest.Wait()
		r = h.expect(id, RunCompleted, "done/PRODUCED", "done/PRODUCED")
		s := r.Step(1)
		var offsets []time.Duration
		for _, a := range s.Attempts {
			offsets = append(offsets, a.Started.Sub(start).Round(time.Second))
		}
		if !slices.Equal(offsets, []time.Duration{0, 10 * time.Second, 30 * time.Second}) {
			t.Fatalf("attempts started at %v, want 0s 10s 30s", offsets)
		}
		for _, d := range s.Decisions {
			if d.Actor != RetryActor || d.Kind != DecideRedo || d.Key != RetryKey(id, 1, d.Attempt) {
				t.Fatalf("retry recorded as %+v", d)
			}
		}
		h.checkJournal(id)
	})
}

func TestWorkflowRetriesRunOutAndTheRunHalts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := newWorkflowHarness(t, 4, false, nil)
		flaky := retrying(ws("f", "flaky"), 1, time.Second)
		h.script("flaky", failed("down"), failed("still down"), produced("after a person's redo"))
		id := h.run(Flags{}, flaky)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		r := h.expect(id, RunWaiting, "waiting/FAILED")
		if _, _, _, ok := RetryDue(r.Step(1)); ok {
			t.Fatal("a retry is still due after the only one was spent")
		}
		if got := Allowed(r.Step(1)); !slices.Equal(got, []DecisionKind{DecideRedo, DecideAbort}) {
			t.Fatalf("a halted step allows %v", got)
		}
		if !strings.Contains(r.Step(1).Latest().Reason, "still down") {
			t.Fatalf("halt names %q, want the agent's error", r.Step(1).Latest().Reason)
		}
		// A person's redo counts the retries again from zero.
		h.decide(id, 1, DecideRedo, "", nil)
		synctest.Wait()
		h.expect(id, RunCompleted, "done/PRODUCED")
		if n := len(h.jobsFor(1)); n != 3 {
			t.Fatalf("the step ran %d times, want 3", n)
		}
	})
}

func TestWorkflowGateOnError(t *testing.T) {
	for _, answer := range []DecisionKind{DecideEdit, DecideRedo, DecideSkip, DecideAbort} {
		t.Run(string(answer), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h, _ := newWorkflowHarness(t, 4, false, nil)
				fix := ws("x", "fix")
				fix.OnError = ErrorPolicy{Kind: OnErrorGate}
				h.script("fix", failed("could not reach the tracker"))
				id := h.run(Flags{}, fix, ws("n", "last", "x"))
				r := h.expect(id, RunWaiting, "waiting/FAILED", "pending")
				if got := Allowed(r.Step(1)); !slices.Equal(got, []DecisionKind{DecideEdit, DecideSkip, DecideRedo, DecideAbort}) {
					t.Fatalf("gate on error allows %v", got)
				}
				var body []byte
				if answer == DecideEdit {
					body = []byte("# Fixed by hand\n\nThe tracker export, pasted in.\n")
				}
				h.decide(id, 1, answer, "", body)
				synctest.Wait()
				switch answer {
				case DecideEdit:
					r = h.expect(id, RunCompleted, "done/FAILED", "done/PRODUCED")
					got, err := h.store.Artifact(t.Context(), id, 1, 1)
					if err != nil || string(got) != string(body) || !r.Step(1).Latest().Edited {
						t.Fatalf("the edit was not kept: %q %v", got, err)
					}
				case DecideRedo:
					h.expect(id, RunCompleted, "done/PRODUCED", "done/PRODUCED")
				case DecideSkip:
					h.expect(id, RunCompleted, "skipped/FAILED", "done/PRODUCED")
				case DecideAbort:
					h.expect(id, RunAborted, "aborted/FAILED", "aborted")
				}
				h.checkJournal(id)
			})
		})
	}
}

func TestWorkflowOptionalStepFailsAndTheRunGoesOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := newWorkflowHarness(t, 4, false, nil)
		opt := ws("o", "flaky")
		opt.Optional = true
		next := ws("n", "last", "o")
		next.Prompt = "Optional said: [{{steps.o.output}}]"
		h.script("flaky", failed("no data this week"))
		id := h.run(Flags{}, opt, next)
		r := h.expect(id, RunCompleted, "skipped/FAILED", "done/PRODUCED")
		if !strings.Contains(r.Step(1).Latest().Reason, "no data this week") {
			t.Fatalf("the failure is not recorded: %+v", r.Step(1).Latest())
		}
		if !strings.Contains(h.jobsFor(2)[0].Prompt, "Optional said: []") {
			t.Fatalf("a skipped step's output is not empty:\n%s", h.jobsFor(2)[0].Prompt)
		}
		h.checkJournal(id)
	})
}

func TestWorkflowFallbackRunsAfterRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := newWorkflowHarness(t, 4, false, nil)
		s := retrying(ws("s", "flaky"), 1, time.Second)
		s.Fallback = "backup"
		h.script("flaky", failed("primary down"), failed("primary still down"))
		h.script("backup", produced("# From the backup skill\n\nDone another way.\n"))
		id := h.run(Flags{}, s, ws("n", "last", "s"))
		time.Sleep(2 * time.Second)
		synctest.Wait()
		r := h.expect(id, RunCompleted, "done/PRODUCED", "done/PRODUCED")
		var skills []string
		for _, j := range h.jobsFor(1) {
			skills = append(skills, j.Skill)
		}
		if !slices.Equal(skills, []string{"flaky", "flaky", "backup"}) {
			t.Fatalf("the step ran %v, want flaky twice (one retry) then backup", skills)
		}
		if a := r.Step(1).Latest(); a.Skill != "backup" || AttemptSkill(r.Step(1), a) != "backup" {
			t.Fatalf("the fallback attempt is recorded as %+v", a)
		}
		if p := h.jobsFor(1)[2].Prompt; !strings.Contains(p, "Instructions of backup") || strings.Contains(p, "Instructions of flaky") {
			t.Fatalf("the fallback ran with the wrong instructions:\n%s", p)
		}
		h.checkJournal(id)
	})
}

func TestWorkflowFallbackFailingToo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := newWorkflowHarness(t, 4, false, nil)
		s := ws("s", "flaky")
		s.Fallback = "backup"
		s.Optional = true
		h.script("flaky", failed("primary down"))
		h.script("backup", failed("backup down"))
		id := h.run(Flags{}, s, ws("n", "last", "s"))
		// Fallback first, then optional: the run goes on without the step.
		h.expect(id, RunCompleted, "skipped/FAILED", "done/PRODUCED")
		if n := len(h.jobsFor(1)); n != 2 {
			t.Fatalf("the step ran %d times, want the skill and its fallback once each", n)
		}
	})
}

func TestWorkflowConditions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, dir := newWorkflowHarness(t, 4, false, nil)
		pre := ws("p", "plan")
		pre.Pre = []Condition{{Kind: CondFileExists, Path: "docs/brief.md", Line: 7}}
		post := ws("q", "verify")
		post.Post = []Condition{{Kind: CondOutputContains, Text: "Acceptance criteria"}}
		h.script("verify", produced("# Stories\n\nNo criteria here.\n"))
		id := h.run(Flags{}, pre, post)
		r := h.expect(id, RunWaiting, "waiting/FAILED", "waiting/FAILED")
		if got := r.Step(1).Latest().Reason; got != "precondition failed: file docs/brief.md does not exist (condition at line 7)" {
			t.Fatalf("precondition failure reads %q", got)
		}
		if n := len(h.jobsFor(1)); n != 0 {
			t.Fatal("the agent ran although the precondition failed")
		}
		q := r.Step(2).Latest()
		if !strings.HasPrefix(q.Reason, `postcondition failed: the output does not contain "Acceptance criteria"`) || !q.Artifact {
			t.Fatalf("postcondition failure recorded as %+v; the output must be kept to show why", q)
		}
		// The team fixes the cause and redoes both.
		if err := os.MkdirAll(filepath.Join(dir, "docs"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "docs", "brief.md"), []byte("brief"), 0o644); err != nil {
			t.Fatal(err)
		}
		h.script("verify", produced("# Stories\n\n## Acceptance criteria\n\n- works\n"))
		h.decide(id, 1, DecideRedo, "", nil)
		h.decide(id, 2, DecideRedo, "", nil)
		synctest.Wait()
		h.expect(id, RunCompleted, "done/PRODUCED", "done/PRODUCED")
	})
}

func TestWorkflowStepTimeoutAndOptionsReachTheRunner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := newWorkflowHarness(t, 4, false, nil)
		s := ws("s", "plan")
		s.Timeout = 90 * time.Second
		s.Options = map[string]string{"model": "small"}
		h.start(h.workflow(Flags{}, nil, s))
		synctest.Wait()
		j := h.jobsFor(1)[0]
		if j.Timeout != 90*time.Second || j.Options["model"] != "small" {
			t.Fatalf("job carries timeout %s and options %v", j.Timeout, j.Options)
		}
	})
}

func TestWorkflowArgsAndInterpolation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := newWorkflowHarness(t, 4, false, nil)
		a := ws("a", "plan")
		a.Prompt = "Plan {{feature}}."
		b := ws("b", "last", "a")
		b.Prompt = "Build on:\n{{steps.a.output}}"
		p, err := PreflightWorkflow(WorkflowSpec{Name: "w", Args: []WorkflowArg{{Name: "feature", Required: true}}, Steps: []WorkflowStep{a, b}},
			map[string]string{"feature": "checkout"}, "", Flags{}, h.cat, DefaultPolicy())
		if err != nil {
			t.Fatal(err)
		}
		h.script("plan", produced("THE PLAN TEXT"))
		id := h.start(p)
		synctest.Wait()
		r := h.expect(id, RunCompleted, "done/PRODUCED", "done/PRODUCED")
		if r.Plan.Args["feature"] != "checkout" {
			t.Fatalf("the run lost its arguments: %v", r.Plan.Args)
		}
		if !strings.Contains(h.jobsFor(1)[0].Prompt, "Plan checkout.") || !strings.Contains(h.jobsFor(2)[0].Prompt, "Build on:\nTHE PLAN TEXT") {
			t.Fatalf("prompts not interpolated:\n%s\n---\n%s", h.jobsFor(1)[0].Prompt, h.jobsFor(2)[0].Prompt)
		}
	})
}

func TestWorkflowThreadFollowsDependencies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := newWorkflowHarness(t, 4, false, nil)
		id := h.run(Flags{Thread: true}, ws("a", "plan"), ws("b", "left", "a"), ws("c", "right", "a"), ws("d", "join", "b", "c"))
		r := h.expect(id, RunCompleted, "done/PRODUCED", "done/PRODUCED", "done/PRODUCED", "done/PRODUCED")
		var from []int
		for _, s := range r.Steps {
			from = append(from, s.ThreadFrom)
		}
		// b and c take a's artifact; d joins two branches and takes none.
		if !slices.Equal(from, []int{0, 1, 1, 0}) {
			t.Fatalf("steps are threaded from %v, want [0 1 1 0]", from)
		}
	})
}

func TestWorkflowRoute(t *testing.T) {
	flows := wfSource{"bugfix": {Name: "bugfix", Steps: []WorkflowStep{
		ws("repro", "fix"),
		{ID: "patch", Skill: "verify", DependsOn: []string{"repro"}, Gate: GateNever, Prompt: "Patch what {{steps.repro.output}} shows, for {{area}}.", Line: 3},
	}, Args: []WorkflowArg{{Name: "area", Required: true}}}}
	for _, tc := range []struct{ name, output string }{
		{"json", `{"workflow": "bugfix"}`},
		{"fenced json", "I looked at it.\n\n```json\n{\"workflow\": \"bugfix\"}\n```\n"},
		{"name", "bugfix\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h, _ := newWorkflowHarness(t, 4, false, flows)
				route := routing("t")
				args := map[string]string{"area": "payments"}
				p, err := PreflightWorkflow(WorkflowSpec{Name: "intake", Args: []WorkflowArg{{Name: "area"}}, Steps: []WorkflowStep{route, ws("z", "last", "t")}},
					args, "", Flags{}, h.cat, DefaultPolicy())
				if err != nil {
					t.Fatal(err)
				}
				h.script("triage", produced(tc.output))
				h.script("fix", produced("REPRO-STEPS"))
				id := h.start(p)
				synctest.Wait()
				r := h.expect(id, RunCompleted, "done/PRODUCED", "done/PRODUCED", "done/PRODUCED", "done/PRODUCED")
				var ids []string
				for _, s := range r.Steps {
					ids = append(ids, fmt.Sprintf("%s(parent %d, deps %v)", s.ID, s.Parent, s.DependsOn))
				}
				want := []string{"t(parent 0, deps [])", "z(parent 0, deps [1 3 4])", "t.repro(parent 1, deps [1])", "t.patch(parent 1, deps [3])"}
				if !slices.Equal(ids, want) {
					t.Fatalf("steps %q, want %q", ids, want)
				}
				// z waited for the routed steps: it ran last.
				jobs := h.runner.calls()
				if jobs[len(jobs)-1].Step != 2 {
					t.Fatalf("step z ran before the routed workflow finished: %v", jobs)
				}
				if p := h.jobsFor(4)[0].Prompt; !strings.Contains(p, "Patch what REPRO-STEPS shows, for payments.") {
					t.Fatalf("routed prompt not interpolated:\n%s", p)
				}
				h.checkJournal(id)
			})
		})
	}
}

func TestWorkflowRouteBadOutputFailsTheStep(t *testing.T) {
	flows := wfSource{"needs-arg": {Name: "needs-arg", Args: []WorkflowArg{{Name: "ticket", Required: true}}, Steps: []WorkflowStep{ws("a", "fix")}}}
	for _, tc := range []struct{ output, want string }{
		{`{"workflow": "bugfix"`, "route: the output is not the JSON gonogo reads"},
		{`{"workflow": 7}`, "cannot unmarshal number"},
		{`{"flow": "bugfix"}`, "names no workflow"},
		{"Let me think about which workflow fits best.", "route: the output must be a workflow name"},
		{"nowhere", `no workflow named "nowhere"`},
		{"needs-arg", `required argument "ticket"`},
	} {
		t.Run(tc.output, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h, _ := newWorkflowHarness(t, 4, false, flows)
				route := routing("t")
				h.script("triage", produced(tc.output))
				id := h.run(Flags{}, route)
				r := h.expect(id, RunWaiting, "waiting/FAILED")
				if got := r.Step(1).Latest().Reason; !strings.Contains(got, tc.want) {
					t.Fatalf("reason %q, want it to contain %q", got, tc.want)
				}
				if len(r.Steps) != 1 {
					t.Fatal("a failed route added steps")
				}
			})
		})
	}
}

func TestWorkflowDecompose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := newWorkflowHarness(t, 8, true, nil)
		split := decomposing("s")
		tasks := `{"tasks": [
			{"name": "Design the API", "group": "backend"},
			{"name": "Write the client", "group": "frontend", "depends_on": ["Design the API"]},
			{"name": "Write the docs", "group": "docs"},
			{"name": "Ship it", "depends_on": ["Write the client", "Write the docs"]}
		]}`
		h.script("split", produced("```json\n"+tasks+"\n```"))
		// Tasks follow the run's mode, like any step without a gate.
		id := h.run(Flags{Auto: true}, split, ws("z", "last", "s"))
		h.runner.gate <- struct{}{} // the split step
		synctest.Wait()
		r := h.expect(id, RunRunning, "done/PRODUCED", "pending", "running/", "pending", "running/", "pending")
		if _, most := h.runner.now(); most != 2 {
			t.Fatalf("%d tasks ran at once, want the two independent ones", most)
		}
		var got []string
		for _, s := range r.Steps[2:] {
			got = append(got, fmt.Sprintf("%s|%s|%s|%v|%d", s.ID, s.Effort, s.Skill, s.DependsOn, s.Parent))
		}
		want := []string{
			"s.design-the-api|backend › Design the API|task|[1]|1",
			"s.write-the-client|frontend › Write the client|task|[3]|1",
			"s.write-the-docs|docs › Write the docs|task|[1]|1",
			"s.ship-it|Ship it|task|[4 5]|1",
		}
		if !slices.Equal(got, want) {
			t.Fatalf("sub-steps\n%q\nwant\n%q", got, want)
		}
		if p := h.jobsFor(3)[0].Prompt; !strings.Contains(p, "Task: Design the API\nGroup: backend") {
			t.Fatalf("task prompt:\n%s", p)
		}
		for range 5 {
			h.runner.gate <- struct{}{}
			synctest.Wait()
		}
		h.expect(id, RunCompleted, "done/PRODUCED", "done/PRODUCED", "done/PRODUCED", "done/PRODUCED", "done/PRODUCED", "done/PRODUCED")
		if jobs := h.runner.calls(); jobs[len(jobs)-1].Step != 2 {
			t.Fatal("the step after the decompose step ran before its tasks")
		}
		h.checkJournal(id)
	})
}

func TestWorkflowDecomposeBadOutputFailsTheStep(t *testing.T) {
	for _, tc := range []struct{ output, want string }{
		{`{"tasks": [{"name": "a",}]}`, "(line 1, column 25)"},
		{"Here are the tasks: design, build, ship.", "decompose: the output is not the JSON gonogo reads"},
		{`{"tasks": []}`, "lists no tasks"},
		{`{"items": [{"name": "a"}]}`, `has no "tasks" list`},
		{`{"tasks": [{"group": "x"}]}`, "task 1 has no name"},
		{`{"tasks": [{"name": "a", "depends_on": ["b"]}]}`, `task "a" depends on "b", which is not a task of the list`},
		{`{"tasks": [{"name": "a", "depends_on": ["b"]}, {"name": "b", "depends_on": ["a"]}]}`, "cycle"},
		{`{"tasks": [{"name": "a"}, {"name": "a"}]}`, `two tasks are named "a"`},
		{`{"tasks": [{"name": "a", "depends_on": "b"}]}`, "cannot unmarshal string"},
		{`{"tasks": [{"name": "a"}]} {"tasks": []}`, "after top-level value"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h, _ := newWorkflowHarness(t, 4, false, nil)
				split := decomposing("s")
				h.script("split", produced(tc.output))
				id := h.run(Flags{}, split)
				r := h.expect(id, RunWaiting, "waiting/FAILED")
				if got := r.Step(1).Latest().Reason; !strings.Contains(got, tc.want) {
					t.Fatalf("reason %q, want it to contain %q", got, tc.want)
				}
			})
		})
	}
}

func TestWorkflowDecomposeAtACheckpoint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := newWorkflowHarness(t, 4, false, nil)
		split := decomposing("s")
		split.Gate = GateAlways
		h.script("split", produced(`{"tasks": [{"name": "one"}]}`))
		id := h.run(Flags{Auto: true}, split)
		h.expect(id, RunWaiting, "waiting/PRODUCED")
		// An edit that is not a task list is refused, and changes nothing.
		d := h.decision(id, 1, DecideEdit)
		if _, err := h.svc.Decide(t.Context(), id, d, []byte("just do it all")); err == nil || !strings.Contains(err.Error(), "decompose:") {
			t.Fatalf("a bad edit of a decompose step was taken: %v", err)
		}
		h.expect(id, RunWaiting, "waiting/PRODUCED")
		// The team's edit replaces the agent's list.
		h.decide(id, 1, DecideEdit, "", []byte(`{"tasks": [{"name": "alpha"}, {"name": "beta", "depends_on": ["alpha"]}]}`))
		synctest.Wait()
		r := h.expect(id, RunCompleted, "done/PRODUCED", "done/PRODUCED", "done/PRODUCED")
		if r.Step(2).ID != "s.alpha" || r.Step(3).ID != "s.beta" {
			t.Fatalf("the edited task list was not used: %s %s", r.Step(2).ID, r.Step(3).ID)
		}
		h.checkJournal(id)
	})
}

func TestWorkflowExpansionLimits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := newWorkflowHarness(t, 4, false, nil)
		split := decomposing("s")
		var b strings.Builder
		b.WriteString(`{"tasks": [`)
		for i := range MaxTasks + 1 {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"name": "t%d"}`, i)
		}
		b.WriteString("]}")
		h.script("split", produced(b.String()))
		id := h.run(Flags{}, split)
		r := h.expect(id, RunWaiting, "waiting/FAILED")
		if got := r.Step(1).Latest().Reason; !strings.Contains(got, "at most 100") {
			t.Fatalf("reason %q", got)
		}
	})
}

func TestWorkflowRetryIsScheduledAgainOnResume(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := newWorkflowHarness(t, 4, false, nil)
		flaky := retrying(ws("f", "flaky"), 2, time.Minute)
		h.script("flaky", failed("down"))
		id := h.run(Flags{}, flaky)
		h.expect(id, RunWaiting, "waiting/FAILED")
		h.stop() // gonogo stops during the backoff

		svc, stop := startService(t, ServiceConfig{Store: h.store, Catalog: h.cat, Runner: h.runner, MaxParallel: 4})
		defer stop()
		if _, err := svc.Resume(t.Context(), id, ""); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute + time.Millisecond)
		synctest.Wait()
		h.expect(id, RunCompleted, "done/PRODUCED")
		if n := len(h.jobsFor(1)); n != 2 {
			t.Fatalf("the step ran %d times, want 2", n)
		}
	})
}

func TestWorkflowRetryLosesToAPersonsDecision(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := newWorkflowHarness(t, 4, false, nil)
		flaky := retrying(ws("f", "flaky"), 2, time.Minute)
		h.script("flaky", failed("down"))
		id := h.run(Flags{}, flaky)
		h.decide(id, 1, DecideAbort, "", nil)
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		r := h.expect(id, RunAborted, "aborted/FAILED")
		if n := len(r.Step(1).Attempts); n != 1 {
			t.Fatalf("a retry ran after the abort: %d attempts", n)
		}
	})
}

// dirProbe answers file conditions from a directory and every command
// condition with cmd, or by running until its time is up when hang is set
// (the runner package tests the real probe).
type dirProbe struct {
	dir  string
	cmd  CommandResult
	hang bool
}

func (p dirProbe) Exists(_ context.Context, path string) (bool, error) {
	_, err := os.Stat(filepath.Join(p.dir, filepath.FromSlash(path)))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

func (p dirProbe) Command(ctx context.Context, _ []string, _ []byte) CommandResult {
	if p.hang {
		<-ctx.Done()
		return CommandResult{Err: ctx.Err()}
	}
	return p.cmd
}

func TestCheckConditions(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "present.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := []byte("```json\n{\"status\": \"ok\", \"count\": 3, \"items\": [{\"id\": \"a\"}]}\n```")
	sh := []string{"sh", "-c", "exit 3"}
	for _, tc := range []struct {
		c    Condition
		p    Probe
		want string // "" when the condition holds
	}{
		{Condition{Kind: CondFileExists, Path: "present.md"}, dirProbe{dir: dir}, ""},
		{Condition{Kind: CondFileExists, Path: "missing.md"}, dirProbe{dir: dir}, "file missing.md does not exist"},
		{Condition{Kind: CondFileAbsent, Path: "missing.md"}, dirProbe{dir: dir}, ""},
		{Condition{Kind: CondFileAbsent, Path: "present.md"}, dirProbe{dir: dir}, "file present.md exists, and must not"},
		{Condition{Kind: CondFileExists, Path: "present.md/x"}, dirProbe{dir: dir}, "file present.md/x cannot be checked"},
		{Condition{Kind: CondFileExists, Path: "present.md"}, nil, "file present.md cannot be checked: this gonogo cannot check file or command conditions"},
		{Condition{Kind: CondOutputContains, Text: `"status"`}, nil, ""},
		{Condition{Kind: CondOutputContains, Text: "nope"}, nil, `the output does not contain "nope"`},
		{Condition{Kind: CondOutputMatches, Pattern: `count": \d+`}, nil, ""},
		{Condition{Kind: CondOutputMatches, Pattern: `^#`}, nil, "the output does not match /^#/"},
		{Condition{Kind: CondJSONField, Field: "status", Value: "ok"}, nil, ""},
		{Condition{Kind: CondJSONField, Field: "count", Value: "3"}, nil, ""},
		{Condition{Kind: CondJSONField, Field: "items.0.id", Value: "a"}, nil, ""},
		{Condition{Kind: CondJSONField, Field: "status", Value: "done"}, nil, `the output's JSON field status is "ok", not "done"`},
		{Condition{Kind: CondJSONField, Field: "items.4.id", Value: "a"}, nil, "the output's JSON has no field items.4.id"},
		{Condition{Kind: CondCommand, Command: sh}, dirProbe{}, ""},
		{Condition{Kind: CondCommand, Command: sh}, dirProbe{cmd: CommandResult{ExitCode: 3, Stderr: "warming up\nbroken build\n"}}, "command `sh -c exit 3` exited 3: broken build"},
		{Condition{Kind: CondCommand, Command: sh}, dirProbe{cmd: CommandResult{Err: os.ErrNotExist}}, "command `sh -c exit 3` could not run"},
		{Condition{Kind: CondCommand, Command: sh}, nil, "could not run: this gonogo cannot check file or command conditions"},
		{Condition{Kind: CondCommand}, dirProbe{}, "the command condition names no program"},
		{Condition{Kind: CondOutputContains, Text: "nope", Line: 9}, nil, `the output does not contain "nope" (condition at line 9)`},
	} {
		err := CheckConditions(context.Background(), []Condition{tc.c}, out, tc.p)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.c, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: got %v, want %q", tc.c, err, tc.want)
		}
	}
	if err := CheckConditions(context.Background(), []Condition{{Kind: CondJSONField, Field: "a", Value: "b"}}, []byte("{not json"), nil); err == nil ||
		!strings.Contains(err.Error(), "the output is not JSON") {
		t.Errorf("bad JSON: %v", err)
	}
}

// A command condition that does not finish is given a minute.
func TestCommandConditionTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := dirProbe{hang: true}
		start := time.Now()
		err := CheckConditions(t.Context(), []Condition{{Kind: CondCommand, Command: []string{"sleep", "3600"}}}, nil, p)
		if err == nil || err.Error() != "command `sleep 3600` did not finish within 1m0s" {
			t.Fatalf("got %v", err)
		}
		if waited := time.Since(start); waited != time.Minute {
			t.Fatalf("waited %s", waited)
		}
	})
}

func TestWorkflowPersonsCancelHaltsWithoutFallback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := newWorkflowHarness(t, 4, true, nil)
		s := ws("s", "flaky")
		s.Fallback, s.Optional = "backup", true
		s.OnError = ErrorPolicy{Kind: OnErrorRetry, Retries: 2, Backoff: time.Second}
		id := h.run(Flags{}, s)
		if err := h.svc.Cancel(t.Context(), id, 1, 1, "U-ana"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		time.Sleep(time.Minute)
		synctest.Wait()
		r := h.expect(id, RunWaiting, "waiting/FAILED")
		if l := r.Step(1).Latest(); !l.Final || !strings.Contains(l.Reason, "cancelled by U-ana") {
			t.Fatalf("the cancelled attempt is %+v", l)
		}
		if n := len(h.runner.calls()); n != 1 {
			t.Fatalf("%d attempts ran after a person's cancel", n)
		}
	})
}

func TestWorkflowBudgetStopsRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := newWorkflowHarness(t, 4, false, nil)
		s := retrying(ws("s", "flaky"), 5, time.Second)
		s.Fallback = "backup"
		h.script("flaky", Outcome{AgentError: "down", CostUSD: 0.6}, Outcome{AgentError: "down", CostUSD: 0.6})
		r, err := h.svc.Start(t.Context(), h.workflow(Flags{}, nil, s), StartOptions{StartedBy: "U-ana", BudgetUSD: 1})
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		time.Sleep(time.Hour)
		synctest.Wait()
		got := h.expect(r.ID, RunWaiting, "waiting/FAILED")
		if n := len(h.runner.calls()); n != 2 {
			t.Fatalf("%d attempts ran on a $1 budget at $0.60 each", n)
		}
		if l := got.Step(1).Latest(); !l.Final || !strings.Contains(l.Reason, "budget exceeded") {
			t.Fatalf("the halt is %+v", l)
		}
		if _, _, _, ok := RetryDue(got.Step(1)); ok {
			t.Fatal("a retry is due past the budget")
		}
	})
}

func TestWorkflowPersonsRedoStartsOverWithTheStepsOwnSkill(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := newWorkflowHarness(t, 4, false, nil)
		s := ws("s", "flaky")
		s.Fallback = "backup"
		h.script("flaky", failed("down"), produced("# Up again\n\nThe skill's own output.\n"))
		h.script("backup", failed("down too"))
		id := h.run(Flags{}, s)
		h.expect(id, RunWaiting, "waiting/FAILED")
		h.decide(id, 1, DecideRedo, "", nil)
		synctest.Wait()
		h.expect(id, RunCompleted, "done/PRODUCED")
		var skills []string
		for _, j := range h.runner.calls() {
			skills = append(skills, j.Skill)
		}
		if !slices.Equal(skills, []string{"flaky", "backup", "flaky"}) {
			t.Fatalf("ran %v", skills)
		}
		h.checkJournal(id)
	})
}

func TestWorkflowRouteGivesOnlyDeclaredArgs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		flows := wfSource{"sub": {Name: "sub", Args: []WorkflowArg{{Name: "area"}}, Steps: []WorkflowStep{{ID: "x", Skill: "fix", Gate: GateNever, Prompt: "Fix {{area}}.", Line: 1}}}}
		h, _ := newWorkflowHarness(t, 4, false, flows)
		route := routing("t")
		p, err := PreflightWorkflow(WorkflowSpec{Name: "intake", Args: []WorkflowArg{{Name: "area"}, {Name: "topic"}}, Steps: []WorkflowStep{route}},
			map[string]string{"area": "payments", "topic": "refunds"}, "", Flags{}, h.cat, DefaultPolicy())
		if err != nil {
			t.Fatal(err)
		}
		h.script("triage", produced("sub"))
		id := h.start(p)
		synctest.Wait()
		h.expect(id, RunCompleted, "done/PRODUCED", "done/PRODUCED")
		if p := h.jobsFor(2)[0].Prompt; !strings.Contains(p, "Fix payments.") {
			t.Fatalf("routed prompt:\n%s", p)
		}
	})
}

func TestWorkflowThreadAroundAddedSteps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := newWorkflowHarness(t, 4, false, nil)
		split := decomposing("s")
		h.script("split", produced(`{"tasks": [{"name": "one"}]}`))
		id := h.run(Flags{Thread: true, Auto: true}, split, ws("z", "last", "s"))
		r := h.expect(id, RunCompleted, "done/PRODUCED", "done/PRODUCED", "done/PRODUCED")
		// The task is not handed the task list; z joins s and the task,
		// and is handed neither.
		if r.Step(3).ThreadFrom != 0 || r.Step(2).ThreadFrom != 0 {
			t.Fatalf("threaded from %d and %d", r.Step(3).ThreadFrom, r.Step(2).ThreadFrom)
		}
		h.checkJournal(id)
	})
}

func TestWorkflowThreadPastAnOptionalStepThatGaveUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := newWorkflowHarness(t, 4, false, nil)
		opt := ws("o", "flaky", "a")
		opt.Optional = true
		h.script("flaky", failed("no data"))
		id := h.run(Flags{Thread: true}, ws("a", "plan"), opt, ws("n", "last", "o"))
		h.expect(id, RunCompleted, "done/PRODUCED", "skipped/FAILED", "done/PRODUCED")
		if p := h.jobsFor(3)[0].Prompt; strings.Contains(p, "## Input") {
			t.Fatalf("the step after a given-up optional step was handed something:\n%s", p)
		}
	})
}
