//go:build temporal

package temporalbackend

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/server/temporaltest"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/hangguard"
	"github.com/gonogo/gonogo/storage"
)

// env is one backend under test, with the fakes it runs steps on.
type env struct {
	t      testing.TB
	name   string
	b      backendUnderTest
	runner *fakeRunner
	cat    memCatalog
	keys   int
	ts     *temporaltest.TestServer // nil on bbolt
	acts   *Activities
	q      queues        // its task queues on ts
	steps  worker.Worker // the worker polling its steps queue
	flows  worker.Worker // the worker polling its workflows queue
}

var skills = []string{"deliver-prd", "deliver-user-stories"}

// testRateLimit waits out an agent's rate limit quickly.
var testRateLimit = engine.RateLimit{Wait: time.Second, Tries: 2}

// fallbackSkill is installed too, for a step to fall back on.
const fallbackSkill = "define-problem-statement"

// nobodySpecial is a Members for which no one is the operator: only the
// starter and the run's approvers may decide.
func nobodySpecial(context.Context, string, []string) (engine.Member, error) {
	return engine.Member{}, nil
}

// testHeartbeat is how long the tests' backends trust a silent step
// worker: long enough that a machine loaded by the race detector and the
// in-process cluster never takes a live step for lost (its heartbeat RPCs
// can stall for seconds there). TestLostWorkerInterruptsStep, which is
// about a lost worker, uses a short one.
const testHeartbeat = 15 * time.Second

// shared is the in-process Temporal server the tests share: starting and
// stopping one takes seconds under the race detector, so each test gets
// task queues of its own on it instead (see queues), and a worker of
// another test never takes its tasks. Its namespace is set up once, as
// gonogo temporal setup prepares a cluster.
var shared struct {
	once sync.Once
	ts   *temporaltest.TestServer
	err  error
	seq  atomic.Int64
}

func sharedServer(t testing.TB) *temporaltest.TestServer {
	t.Helper()
	shared.once.Do(func() {
		quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		shared.ts = temporaltest.NewServer(temporaltest.WithBaseClientOptions(client.Options{Logger: sdklog.NewStructuredLogger(quiet)}))
		_, shared.err = Setup(context.Background(), shared.ts.GetDefaultClient(), shared.ts.GetDefaultNamespace(), DefaultRetention)
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.ts
}

// queues are a test's own task queues.
type queues struct{ flows, steps, slack string }

func newQueues() queues {
	p := fmt.Sprintf("test-%d-", shared.seq.Add(1))
	return queues{flows: p + TaskQueue, steps: p + StepQueue, slack: p + SlackQueue}
}

// temporalEnv is a worker for run workflows and one for steps on the
// shared in-process Temporal server, on task queues of the test's own, and
// a Backend on them.
func temporalEnv(t testing.TB) *env {
	t.Helper()
	return temporalEnvOn(t, sharedServer(t))
}

// temporalEnvAlone is temporalEnv on a server of its own, for a test that
// lists every run on it.
func temporalEnvAlone(t *testing.T) *env {
	t.Helper()
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	if _, err := Setup(context.Background(), ts.GetDefaultClient(), ts.GetDefaultNamespace(), DefaultRetention); err != nil {
		t.Fatal(err)
	}
	return temporalEnvOn(t, ts)
}

func temporalEnvOn(t testing.TB, ts *temporaltest.TestServer) *env {
	e := &env{t: t, name: "temporal", runner: newFakeRunner(), cat: testCatalog(append(skills, fallbackSkill)...), ts: ts, q: newQueues()}
	arts := newMemArtifacts()
	e.acts = &Activities{Runner: e.runner, Catalog: e.cat, Artifacts: arts, RateLimit: testRateLimit, Workflows: testWorkflows}
	e.flows = e.newFlowWorker()
	e.steps = e.worker(e.q.steps, func(r worker.Registry) { RegisterSteps(r, e.acts) })
	e.b = New(e.config(nil))
	return e
}

// config is the Backend configuration of the env's queues, changed by
// adjust when not nil.
func (e *env) config(adjust func(*Config)) Config {
	c := Config{Client: e.ts.GetDefaultClient(), Artifacts: e.acts.Artifacts, Heartbeat: testHeartbeat, Members: nobodySpecial,
		TaskQueue: e.q.flows, StepQueue: e.q.steps}
	if adjust != nil {
		adjust(&c)
	}
	return c
}

// worker starts a worker on queue, stopped when the test ends.
func (e *env) worker(queue string, register func(worker.Registry)) worker.Worker {
	return e.workerWith(queue, register, worker.Options{})
}

func (e *env) workerWith(queue string, register func(worker.Registry), opts worker.Options) worker.Worker {
	w := e.ts.NewWorkerWithOptions(queue, register, opts)
	e.t.Cleanup(w.Stop)
	return w
}

// newFlowWorker starts a worker for run workflows with the options gonogo
// worker uses (WorkflowWorkerOptions).
func (e *env) newFlowWorker() worker.Worker {
	return e.flowWorkerWith(WorkflowWorkerOptions())
}

// flowWorkerWith starts a worker for run workflows with opts.
func (e *env) flowWorkerWith(opts worker.Options) worker.Worker {
	return e.workerWith(e.q.flows, func(r worker.Registry) { RegisterWorkflow(r) }, opts)
}

// bboltEnv is engine.Service on bbolt in a temporary directory, with the
// same fakes: the reference the Temporal backend's journals are held to.
func bboltEnv(t testing.TB) *env {
	t.Helper()
	e := &env{t: t, name: "bbolt", runner: newFakeRunner(), cat: testCatalog(append(skills, fallbackSkill)...)}
	db, err := storage.Open(t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := engine.NewService(engine.ServiceConfig{Store: db, Catalog: e.cat, Runner: e.runner, MaxParallel: 4, Members: nobodySpecial,
		RateLimit: testRateLimit, Workflows: testWorkflows})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	e.b = svc
	return e
}

func (e *env) start() engine.RunID {
	e.t.Helper()
	return e.startWith(nil)
}

// approveBoth approves the run's two steps as each comes to wait.
func (e *env) approveBoth(id engine.RunID) {
	e.t.Helper()
	waiting(e.t, e.b, id, 1, 1)
	e.decide(id, 1, engine.DecideApprove, "", nil)
	waiting(e.t, e.b, id, 2, 1)
	e.decide(id, 2, engine.DecideApprove, "", nil)
}

// startWith starts a run of the chain, adjusted by adjust when not nil.
func (e *env) startWith(adjust func(*engine.Plan, *engine.StartOptions)) engine.RunID {
	e.t.Helper()
	r, err := e.tryStart(adjust)
	if err != nil {
		e.t.Fatalf("%s: start: %v", e.name, err)
	}
	return r.ID
}

// tryStart is startWith that returns the start's error.
func (e *env) tryStart(adjust func(*engine.Plan, *engine.StartOptions)) (*engine.Run, error) {
	e.t.Helper()
	p, err := engine.PreflightChain(engine.ChainExpr{Source: strings.Join(skills, " -> "), Names: skills, Context: "mobile checkout"},
		e.cat, engine.DefaultPolicy())
	if err != nil {
		e.t.Fatal(err)
	}
	opt := engine.StartOptions{StartedBy: "U-ana", Origin: engine.Origin{Channel: "C1", Thread: "1.1"},
		Oversight: engine.Oversight{Approvers: []string{"U-bob"}}}
	if adjust != nil {
		adjust(&p, &opt)
	}
	return e.b.Start(e.t.Context(), p, opt)
}

// decision is a decision by the starter on the latest attempt of step n,
// with a new key.
func (e *env) decision(id engine.RunID, n int, k engine.DecisionKind) engine.Decision {
	e.t.Helper()
	r, err := e.b.Load(e.t.Context(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	e.keys++
	a := 0
	if l := r.Step(n).Latest(); l != nil {
		a = l.N
	}
	return engine.Decision{Kind: k, Actor: "U-ana", Step: n, Attempt: a, Key: fmt.Sprintf("slack-%d", e.keys)}
}

func (e *env) decide(id engine.RunID, n int, k engine.DecisionKind, feedback string, body []byte) *engine.Run {
	e.t.Helper()
	d := e.decision(id, n, k)
	d.Feedback = feedback
	r, err := e.b.Decide(e.t.Context(), id, d, body)
	if err != nil {
		e.t.Fatalf("%s: %s step %d: %v", e.name, k, n, err)
	}
	return r
}

// decideAs is a decision by actor on the latest attempt of step n.
func (e *env) decideAs(id engine.RunID, n int, k engine.DecisionKind, actor string) error {
	e.t.Helper()
	d := e.decision(id, n, k)
	d.Actor = actor
	_, err := e.b.Decide(e.t.Context(), id, d, nil)
	return err
}

// failNext makes the next n attempts of skill fail.
func (e *env) failNext(skill string, n int) {
	e.runner.mu.Lock()
	defer e.runner.mu.Unlock()
	e.runner.fail[skill] = n
}

// prompt is the prompt the runner was given for an attempt.
func (e *env) prompt(n, a int) string {
	for _, j := range e.runner.calls() {
		if j.Step == n && j.Attempt == a {
			return j.Prompt
		}
	}
	e.t.Errorf("%s: step %d attempt %d never ran", e.name, n, a)
	return ""
}

func (e *env) journal(id engine.RunID) []engine.Event {
	e.t.Helper()
	evs, err := e.b.Journal(e.t.Context(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return evs
}

// scenario drives one run on a backend and returns its id.
type scenario struct {
	name  string
	run   func(e *env) engine.RunID
	state engine.RunState
}

var scenarios = []scenario{
	{"approve", func(e *env) engine.RunID {
		id := e.start()
		e.approveBoth(id)
		return id
	}, engine.RunCompleted},
	{"edit", func(e *env) engine.RunID {
		id := e.start()
		waiting(e.t, e.b, id, 1, 1)
		body := []byte("# PRD, as the team rewrote it\n\nShorter and better.\n")
		e.decide(id, 1, engine.DecideEdit, "", body)
		got, err := e.b.Artifact(e.t.Context(), id, 1, 1)
		if err != nil || string(got) != string(body) {
			e.t.Errorf("%s: artifact after the edit = %q, %v; want the edit", e.name, got, err)
		}
		// The audit trail's versions: the agent's original, then the edit.
		vs, err := e.b.(interface {
			ArtifactVersions(ctx context.Context, id engine.RunID, step, attempt int) ([][]byte, error)
		}).ArtifactVersions(e.t.Context(), id, 1, 1)
		if err != nil || len(vs) != 2 || string(vs[1]) != string(body) || string(vs[0]) == string(body) {
			e.t.Errorf("%s: versions after one edit = %q, %v; want the original and the edit", e.name, vs, err)
		}
		waiting(e.t, e.b, id, 2, 1)
		e.decide(id, 2, engine.DecideApprove, "", nil)
		return id
	}, engine.RunCompleted},
	{"skip", func(e *env) engine.RunID {
		id := e.start()
		waiting(e.t, e.b, id, 1, 1)
		e.decide(id, 1, engine.DecideSkip, "", nil)
		waiting(e.t, e.b, id, 2, 1)
		e.decide(id, 2, engine.DecideApprove, "", nil)
		return id
	}, engine.RunCompleted},
	{"redo-with-feedback", func(e *env) engine.RunID {
		id := e.start()
		waiting(e.t, e.b, id, 1, 1)
		e.decide(id, 1, engine.DecideRedo, "name the metrics", nil)
		waiting(e.t, e.b, id, 1, 2)
		var redo *engine.Job
		for _, j := range e.runner.calls() {
			if j.Step == 1 && j.Attempt == 2 {
				redo = &j
			}
		}
		switch {
		case redo == nil:
			e.t.Errorf("%s: the redo never ran", e.name)
		case !strings.Contains(redo.Prompt, "name the metrics") || !strings.Contains(redo.Prompt, "deliver-prd, attempt 1"):
			e.t.Errorf("%s: the redo's prompt lacks the feedback or the previous artifact:\n%s", e.name, redo.Prompt)
		}
		e.decide(id, 1, engine.DecideApprove, "", nil)
		waiting(e.t, e.b, id, 2, 1)
		e.decide(id, 2, engine.DecideApprove, "", nil)
		return id
	}, engine.RunCompleted},
	{"abort", func(e *env) engine.RunID {
		id := e.start()
		waiting(e.t, e.b, id, 1, 1)
		e.decide(id, 1, engine.DecideAbort, "", nil)
		return id
	}, engine.RunAborted},
	{"cancel-while-running", func(e *env) engine.RunID {
		release := e.runner.holdSkill("deliver-prd")
		defer release()
		id := e.start()
		<-e.runner.started
		if err := e.b.Cancel(e.t.Context(), id, 1, 1, "U-bob"); err != nil {
			e.t.Fatalf("%s: cancel: %v", e.name, err)
		}
		r := waiting(e.t, e.b, id, 1, 1)
		if l := r.Step(1).Latest(); l.Result != engine.ResultFailed || !strings.Contains(l.Reason, "cancelled by U-bob") {
			e.t.Errorf("%s: cancelled attempt is %s (%q), want FAILED, cancelled by U-bob", e.name, l.Result, l.Reason)
		}
		release()
		e.decide(id, 1, engine.DecideRedo, "", nil)
		waiting(e.t, e.b, id, 1, 2)
		if _, err := e.b.Abort(e.t.Context(), id, "U-ana"); err != nil {
			e.t.Fatalf("%s: abort: %v", e.name, err)
		}
		return id
	}, engine.RunAborted},
	{"retry-with-backoff", func(e *env) engine.RunID {
		e.runner.mu.Lock()
		e.runner.fail["deliver-prd"] = 1
		e.runner.mu.Unlock()
		id := e.startWith(func(p *engine.Plan, _ *engine.StartOptions) {
			p.Steps[0].Rules.OnError = engine.ErrorPolicy{Kind: engine.OnErrorRetry, Retries: 2, Backoff: 500 * time.Millisecond}
		})
		r := waiting(e.t, e.b, id, 1, 2)
		if d := r.Step(1).Decisions; len(d) != 1 || d[0].Actor != engine.RetryActor || d[0].Key != engine.RetryKey(id, 1, 1) {
			e.t.Errorf("%s: the retry was decided as %+v", e.name, d)
		}
		e.decide(id, 1, engine.DecideApprove, "", nil)
		waiting(e.t, e.b, id, 2, 1)
		e.decide(id, 2, engine.DecideApprove, "", nil)
		return id
	}, engine.RunCompleted},
	{"decision-timeout-aborts", func(e *env) engine.RunID {
		id := e.startWith(func(_ *engine.Plan, o *engine.StartOptions) {
			// Apart by more than Temporal's timers may be late (about a
			// second on the test server).
			o.Oversight.RemindAfter = time.Second
			o.Oversight.DecisionTimeout = 3 * time.Second
			o.Oversight.OnTimeout = engine.TimeoutAbort
		})
		r := ended(e.t, e.b, id)
		if d := r.Step(1).LastDecision(); d == nil || d.Actor != engine.TimeoutActor || r.Step(1).Latest().Reminded.IsZero() {
			e.t.Errorf("%s: step 1 was not reminded, then aborted on timeout: %+v", e.name, r.Step(1).Decisions)
		}
		return id
	}, engine.RunAborted},
	{"pause-while-running", func(e *env) engine.RunID {
		release := e.runner.holdSkill("deliver-prd")
		defer release()
		id := e.startWith(func(p *engine.Plan, _ *engine.StartOptions) { p.Flags.ForceAuto = true })
		<-e.runner.started
		if _, err := e.b.Pause(e.t.Context(), id, "U-bob"); err != nil {
			e.t.Fatalf("%s: pause: %v", e.name, err)
		}
		if _, err := e.b.Pause(e.t.Context(), id, "U-bob"); !errors.Is(err, engine.ErrPaused) {
			e.t.Errorf("%s: a second pause: got %v, want ErrPaused", e.name, err)
		}
		release()
		// The run is in guarded auto: the step waits only because the run
		// is paused, and goes on when it is resumed.
		waiting(e.t, e.b, id, 1, 1)
		if _, err := e.b.Unpause(e.t.Context(), id, "U-ana", ""); err != nil {
			e.t.Fatalf("%s: unpause: %v", e.name, err)
		}
		return id
	}, engine.RunCompleted},
	{"resume-in-auto", func(e *env) engine.RunID {
		id := e.start()
		waiting(e.t, e.b, id, 1, 1)
		if _, err := e.b.Resume(e.t.Context(), id, engine.ModeGuardedAuto); err != nil {
			e.t.Fatalf("%s: resume: %v", e.name, err)
		}
		e.decide(id, 1, engine.DecideApprove, "", nil)
		return id
	}, engine.RunCompleted},
	{"guarded-auto-halts-on-failed", func(e *env) engine.RunID {
		// Guarded auto runs on without checkpoints, but a FAILED step
		// halts the run for a person; their redo lets it go on.
		e.failNext("deliver-prd", 1)
		id := e.startWith(func(p *engine.Plan, _ *engine.StartOptions) { p.Flags.Auto, p.Flags.ForceAuto = true, true })
		r := waiting(e.t, e.b, id, 1, 1)
		if l := r.Step(1).Latest(); l.Result != engine.ResultFailed || r.Mode != engine.ModeGuardedAuto {
			e.t.Errorf("%s: halted on %s in mode %s, want FAILED in guarded auto", e.name, l.Result, r.Mode)
		}
		e.decide(id, 1, engine.DecideRedo, "", nil)
		return id
	}, engine.RunCompleted},
	{"quorum-exclude-starter", func(e *env) engine.RunID {
		id := e.startWith(func(_ *engine.Plan, o *engine.StartOptions) {
			o.Quorum, o.ExcludeStarter = 2, true
			o.Oversight.Approvers = []string{"U-bob", "U-cy"}
		})
		waiting(e.t, e.b, id, 1, 1)
		if err := e.decideAs(id, 1, engine.DecideApprove, "U-ana"); !errors.Is(err, engine.ErrForbidden) {
			e.t.Errorf("%s: the starter's approval: got %v, want ErrForbidden", e.name, err)
		}
		if err := e.decideAs(id, 1, engine.DecideApprove, "U-bob"); err != nil {
			e.t.Fatalf("%s: first approval: %v", e.name, err)
		}
		if err := e.decideAs(id, 1, engine.DecideApprove, "U-bob"); !errors.Is(err, engine.ErrDuplicate) {
			e.t.Errorf("%s: the same approver again: got %v, want ErrDuplicate", e.name, err)
		}
		waiting(e.t, e.b, id, 1, 1)
		if err := e.decideAs(id, 1, engine.DecideApprove, "U-cy"); err != nil {
			e.t.Fatalf("%s: second approval: %v", e.name, err)
		}
		waiting(e.t, e.b, id, 2, 1)
		if err := e.decideAs(id, 2, engine.DecideAbort, "U-cy"); err != nil {
			e.t.Fatalf("%s: abort: %v", e.name, err)
		}
		return id
	}, engine.RunAborted},
	{"dry-run", func(e *env) engine.RunID {
		id := e.startWith(func(p *engine.Plan, _ *engine.StartOptions) { p.Flags.DryRun = true })
		r := waiting(e.t, e.b, id, 1, 1)
		if l := r.Step(1).Latest(); l.Result != engine.ResultNotExecuted {
			e.t.Errorf("%s: a dry run's step is %s", e.name, l.Result)
		}
		e.decide(id, 1, engine.DecideApprove, "", nil)
		waiting(e.t, e.b, id, 2, 1)
		e.decide(id, 2, engine.DecideApprove, "", nil)
		if n := len(e.runner.calls()); n != 0 {
			e.t.Errorf("%s: a dry run called the agent %d times", e.name, n)
		}
		return id
	}, engine.RunCompleted},
	{"threaded-chain", func(e *env) engine.RunID {
		id := e.startWith(func(p *engine.Plan, _ *engine.StartOptions) { p.Flags.Thread = true })
		waiting(e.t, e.b, id, 1, 1)
		e.decide(id, 1, engine.DecideEdit, "", []byte("# PRD\n\nThe team's own words on checkout.\n"))
		waiting(e.t, e.b, id, 2, 1)
		if p := e.prompt(2, 1); !strings.Contains(p, "The team's own words on checkout.") {
			e.t.Errorf("%s: step 2 was not handed step 1's edited artifact:\n%s", e.name, p)
		}
		e.decide(id, 2, engine.DecideApprove, "", nil)
		return id
	}, engine.RunCompleted},
	{"fallback", func(e *env) engine.RunID {
		e.failNext("deliver-prd", 1)
		id := e.startWith(func(p *engine.Plan, _ *engine.StartOptions) { p.Steps[0].Rules.Fallback = fallbackSkill })
		r := waiting(e.t, e.b, id, 1, 2)
		if l := r.Step(1).Latest(); l.Skill != fallbackSkill || l.Result != engine.ResultProduced {
			e.t.Errorf("%s: attempt 2 ran %q (%s), want the fallback, PRODUCED", e.name, l.Skill, l.Result)
		}
		e.decide(id, 1, engine.DecideApprove, "", nil)
		waiting(e.t, e.b, id, 2, 1)
		e.decide(id, 2, engine.DecideApprove, "", nil)
		return id
	}, engine.RunCompleted},
	{"optional-give-up", func(e *env) engine.RunID {
		e.failNext("deliver-prd", 1)
		id := e.startWith(func(p *engine.Plan, _ *engine.StartOptions) { p.Steps[0].Rules.Optional = true })
		waiting(e.t, e.b, id, 2, 1)
		e.decide(id, 2, engine.DecideApprove, "", nil)
		return id
	}, engine.RunCompleted},
	{"budget-pause", func(e *env) engine.RunID {
		id := e.startWith(func(p *engine.Plan, o *engine.StartOptions) {
			p.Flags.ForceAuto = true
			o.BudgetUSD = 0.15
		})
		r := waiting(e.t, e.b, id, 2, 1)
		if !strings.Contains(r.Step(2).Latest().Reason, "budget exceeded") {
			e.t.Errorf("%s: step 2 waits, but not on the budget: %q", e.name, r.Step(2).Latest().Reason)
		}
		e.decide(id, 2, engine.DecideApprove, "", nil)
		return id
	}, engine.RunCompleted},
	{"rate-limit-wait", func(e *env) engine.RunID {
		e.runner.mu.Lock()
		e.runner.limited["deliver-prd"] = 1
		e.runner.mu.Unlock()
		id := e.start()
		r := waiting(e.t, e.b, id, 1, 2)
		if d := r.Step(1).Decisions; len(d) != 1 || d[0].Actor != engine.RateLimitActor {
			e.t.Errorf("%s: the rate limit was waited out by %+v", e.name, d)
		}
		if r.Paused {
			e.t.Errorf("%s: the run is still paused by %s", e.name, r.PausedBy)
		}
		e.decide(id, 1, engine.DecideApprove, "", nil)
		waiting(e.t, e.b, id, 2, 1)
		e.decide(id, 2, engine.DecideApprove, "", nil)
		return id
	}, engine.RunCompleted},
	{"decompose-at-a-checkpoint", func(e *env) engine.RunID {
		r := e.startSpec(`{"tasks": [{"name": "one"}]}`, engine.WorkflowSpec{Name: "split-flow", Steps: []engine.WorkflowStep{
			{ID: "s", Skill: "deliver-prd", Decompose: "deliver-user-stories", Line: 1},
		}})
		id := r.ID
		waiting(e.t, e.b, id, 1, 1)
		// An edit that is not a task list is refused, and changes nothing.
		d := e.decision(id, 1, engine.DecideEdit)
		if _, err := e.b.Decide(e.t.Context(), id, d, []byte("just do it all")); err == nil || !strings.Contains(err.Error(), "decompose:") {
			e.t.Errorf("%s: a bad edit of a decompose step was taken: %v", e.name, err)
		}
		// The team's edit replaces the agent's list.
		e.decide(id, 1, engine.DecideEdit, "", []byte(`{"tasks": [{"name": "alpha"}, {"name": "beta", "depends_on": ["alpha"]}]}`))
		r = waiting(e.t, e.b, id, 2, 1)
		if len(r.Steps) != 3 || r.Step(2).ID != "s.alpha" || r.Step(3).ID != "s.beta" {
			e.t.Fatalf("%s: the edited task list was not used: %s", e.name, describe(r))
		}
		e.decide(id, 2, engine.DecideApprove, "", nil)
		waiting(e.t, e.b, id, 3, 1)
		e.decide(id, 3, engine.DecideApprove, "", nil)
		return id
	}, engine.RunCompleted},
	{"route", func(e *env) engine.RunID {
		// The route step's output names the workflow whose steps follow
		// it, once a person approves it.
		r := e.startSpec(`{"workflow": "ship-flow"}`, engine.WorkflowSpec{Name: "triage", Steps: []engine.WorkflowStep{
			{ID: "r", Skill: "deliver-prd", Route: true, Line: 1},
		}})
		waiting(e.t, e.b, r.ID, 1, 1)
		e.decide(r.ID, 1, engine.DecideApprove, "", nil)
		r = waiting(e.t, e.b, r.ID, 2, 1)
		if len(r.Steps) != 2 || r.Step(2).ID != "r.ship" || r.Step(2).Skill != "deliver-user-stories" {
			e.t.Fatalf("%s: the routed workflow's steps did not follow: %s", e.name, describe(r))
		}
		e.decide(r.ID, 2, engine.DecideApprove, "", nil)
		return r.ID
	}, engine.RunCompleted},
	{"decompose-approved", func(e *env) engine.RunID {
		r := e.startSpec("```json\n"+`{"tasks": [{"name": "one"}]}`+"\n```", engine.WorkflowSpec{Name: "split-flow", Steps: []engine.WorkflowStep{
			{ID: "s", Skill: "deliver-prd", Decompose: "deliver-user-stories", Line: 1},
		}})
		waiting(e.t, e.b, r.ID, 1, 1)
		e.decide(r.ID, 1, engine.DecideApprove, "", nil)
		waiting(e.t, e.b, r.ID, 2, 1)
		e.decide(r.ID, 2, engine.DecideApprove, "", nil)
		return r.ID
	}, engine.RunCompleted},
	{"repeated-start-key", func(e *env) engine.RunID {
		// Two front ends carry out the same request to start a run: one
		// run starts, the other start is refused and starts nothing.
		keyed := func(_ *engine.Plan, o *engine.StartOptions) { o.Key = "envelope-1" }
		id := e.startWith(keyed)
		if r, err := e.tryStart(keyed); !errors.Is(err, engine.ErrDuplicate) {
			e.t.Errorf("%s: a second start with the key: %v, %v; want ErrDuplicate", e.name, r, err)
		}
		waiting(e.t, e.b, id, 1, 1)
		if n := len(e.runner.calls()); n != 1 {
			e.t.Errorf("%s: %d attempts ran, want the one run's first", e.name, n)
		}
		e.decide(id, 1, engine.DecideAbort, "", nil)
		return id
	}, engine.RunAborted},
	{"preview-start", func(e *env) engine.RunID {
		// A run recorded to await Start (a Slack preview) runs nothing
		// until someone presses Start; a second press is refused.
		id := e.startWith(func(_ *engine.Plan, o *engine.StartOptions) { o.AwaitStart = true })
		r := waitFor(e.t, e.b, id, "awaiting Start", engine.AwaitingStart)
		if n := len(e.runner.calls()); n != 0 || r.Step(1).Status != engine.StepPending {
			e.t.Errorf("%s: before Start: %d attempts ran, step 1 %s", e.name, n, r.Step(1).Status)
		}
		aw := e.b.(awaitedStarts)
		if _, err := aw.StartAwaited(e.t.Context(), id, "U-bob", "click-start"); err != nil {
			e.t.Fatalf("%s: start: %v", e.name, err)
		}
		if _, err := aw.StartAwaited(e.t.Context(), id, "U-bob", "click-start-2"); !errors.Is(err, engine.ErrNotAwaitingStart) {
			e.t.Errorf("%s: a second Start: %v, want ErrNotAwaitingStart", e.name, err)
		}
		e.approveBoth(id)
		return id
	}, engine.RunCompleted},
	{"preview-cancel", func(e *env) engine.RunID {
		id := e.startWith(func(_ *engine.Plan, o *engine.StartOptions) { o.AwaitStart = true })
		waitFor(e.t, e.b, id, "awaiting Start", engine.AwaitingStart)
		aw := e.b.(awaitedStarts)
		if _, err := aw.StartAwaited(e.t.Context(), id, "U-mallory", "click-start"); !errors.Is(err, engine.ErrNotApprover) {
			e.t.Errorf("%s: Start by an outsider: %v, want ErrNotApprover", e.name, err)
		}
		if _, err := aw.CancelAwaited(e.t.Context(), id, "U-bob"); err != nil {
			e.t.Fatalf("%s: cancel: %v", e.name, err)
		}
		if n := len(e.runner.calls()); n != 0 {
			e.t.Errorf("%s: %d attempts ran for a run cancelled at its preview", e.name, n)
		}
		return id
	}, engine.RunAborted},
	{"abort-while-running", func(e *env) engine.RunID {
		// Held until the test ends: only the abort stops it.
		e.t.Cleanup(e.runner.holdSkill("deliver-prd"))
		id := e.start()
		<-e.runner.started
		if _, err := e.b.Abort(e.t.Context(), id, "U-bob"); err != nil {
			e.t.Fatalf("%s: abort: %v", e.name, err)
		}
		return id
	}, engine.RunAborted},
}

// startSpec starts a run of spec, whose steps of skill deliver-prd answer
// output, as U-ana.
func (e *env) startSpec(output string, spec engine.WorkflowSpec) *engine.Run {
	e.t.Helper()
	e.runner.mu.Lock()
	e.runner.output["deliver-prd"] = output
	e.runner.mu.Unlock()
	p, err := engine.PreflightWorkflow(spec, nil, "", engine.Flags{}, e.cat, engine.DefaultPolicy())
	if err != nil {
		e.t.Fatal(err)
	}
	r, err := e.b.Start(e.t.Context(), p, engine.StartOptions{StartedBy: "U-ana"})
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// testWorkflows are the workflows a route step may continue with.
var testWorkflows = memWorkflows{"ship-flow": {Name: "ship-flow", Steps: []engine.WorkflowStep{
	{ID: "ship", Skill: "deliver-user-stories", Line: 1},
}}}

type memWorkflows map[string]engine.WorkflowSpec

func (m memWorkflows) Workflow(name string) (engine.WorkflowSpec, error) {
	w, ok := m[name]
	if !ok {
		return engine.WorkflowSpec{}, fmt.Errorf("workflow %q: %w", name, engine.ErrNotFound)
	}
	return w, nil
}

// awaitedStarts are a preview's buttons, on both backends.
type awaitedStarts interface {
	StartAwaited(ctx context.Context, id engine.RunID, actor, key string) (*engine.Run, error)
	CancelAwaited(ctx context.Context, id engine.RunID, actor string) (*engine.Run, error)
}

var (
	_ awaitedStarts = (*Backend)(nil)
	_ awaitedStarts = (*engine.Service)(nil)
)

// TestScenariosMatchBbolt runs each scenario on Temporal and on
// engine.Service over bbolt: the runs end alike and their journals have
// the same shape, event for event.
func TestScenariosMatchBbolt(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			var shapes [][]string
			for _, e := range []*env{bboltEnv(t), temporalEnv(t)} {
				id := sc.run(e)
				r := ended(t, e.b, id)
				if r.State != sc.state {
					t.Errorf("%s: run ended %s, want %s", e.name, describe(r), sc.state)
				}
				evs := e.journal(id)
				rebuilt, err := engine.Rebuild(evs)
				if err != nil || rebuilt.State != r.State || rebuilt.Seq != r.Seq {
					t.Errorf("%s: the journal rebuilds %v (%v), the run is %s at %d", e.name, describe(rebuilt), err, describe(r), r.Seq)
				}
				shapes = append(shapes, shape(evs))
			}
			if !slices.Equal(shapes[0], shapes[1]) {
				t.Errorf("journals differ:\nbbolt:\n  %s\ntemporal:\n  %s", strings.Join(shapes[0], "\n  "), strings.Join(shapes[1], "\n  "))
			}
		})
	}
}

// TestRefusals checks that each refusal is answered with the engine's
// sentinel and writes nothing, on Temporal as on bbolt.
func TestRefusals(t *testing.T) {
	for _, mk := range []func(testing.TB) *env{bboltEnv, temporalEnv} {
		e := mk(t)
		t.Run(e.name, func(t *testing.T) {
			e.t = t
			ctx := t.Context()
			id := e.start()
			waiting(t, e.b, id, 1, 1)
			first := e.decision(id, 1, engine.DecideRedo)
			if _, err := e.b.Decide(ctx, id, first, nil); err != nil {
				t.Fatal(err)
			}
			waiting(t, e.b, id, 1, 2)
			before := len(e.journal(id))

			stale := e.decision(id, 1, engine.DecideApprove)
			stale.Attempt = 1
			again := e.decision(id, 1, engine.DecideApprove)
			again.Key = first.Key
			stranger := e.decision(id, 1, engine.DecideApprove)
			stranger.Actor = "U-eve"
			notWaiting := e.decision(id, 2, engine.DecideApprove)
			for _, c := range []struct {
				name string
				d    engine.Decision
				want error
			}{
				{"stale attempt", stale, engine.ErrStale},
				{"key used for another decision", again, engine.ErrKeyReused},
				{"repeated update", first, engine.ErrDuplicate},
				{"non-approver", stranger, engine.ErrNotApprover},
				{"step not waiting", notWaiting, engine.ErrNotWaiting},
			} {
				_, err := e.b.Decide(ctx, id, c.d, nil)
				if !errors.Is(err, c.want) {
					t.Errorf("%s: got %v, want %v", c.name, err, c.want)
				}
			}
			if _, err := e.b.Decide(ctx, id, e.decision(id, 1, engine.DecideEdit), []byte("  ---\n")); err == nil {
				t.Error("an edit with no text was taken")
			}
			if _, err := e.b.Abort(ctx, id, "U-eve"); !errors.Is(err, engine.ErrNotApprover) {
				t.Errorf("abort by a non-approver: got %v, want ErrNotApprover", err)
			}
			if err := e.b.Cancel(ctx, id, 1, 2, "U-ana"); !errors.Is(err, engine.ErrStale) {
				t.Errorf("cancel of an attempt not running: got %v, want ErrStale", err)
			}
			if after := len(e.journal(id)); after != before {
				t.Errorf("refusals wrote %d events", after-before)
			}
			// An approver may decide; the repeated key still may not.
			ok := e.decision(id, 1, engine.DecideApprove)
			ok.Actor = "U-bob"
			if _, err := e.b.Decide(ctx, id, ok, nil); err != nil {
				t.Errorf("an approver's decision: %v", err)
			}
			if _, err := e.b.Decide(ctx, id, ok, nil); !errors.Is(err, engine.ErrDuplicate) {
				t.Errorf("the approver's decision again: got %v, want ErrDuplicate", err)
			}
			if _, err := e.b.Load(ctx, "20310402-090000-000000000000"); !errors.Is(err, engine.ErrNotFound) {
				t.Errorf("load of an unknown run: got %v, want ErrNotFound", err)
			}
		})
	}
}

// TestDecisionAfterEnd: a decision on a run whose workflow is over is
// stale, as on bbolt.
func TestDecisionAfterEnd(t *testing.T) {
	e := temporalEnv(t)
	id := e.start()
	waiting(t, e.b, id, 1, 1)
	d := e.decision(id, 1, engine.DecideAbort)
	if _, err := e.b.Decide(t.Context(), id, d, nil); err != nil {
		t.Fatal(err)
	}
	ended(t, e.b, id)
	late := e.decision(id, 1, engine.DecideApprove)
	if _, err := e.b.Decide(t.Context(), id, late, nil); !errors.Is(err, engine.ErrStale) {
		t.Errorf("decision after the end: got %v, want ErrStale", err)
	}
}

// TestLostWorkerInterruptsStep: when the worker running a step goes away,
// the step is interrupted and offered for redo, and a redo on another
// worker completes the run.
func TestLostWorkerInterruptsStep(t *testing.T) {
	e := temporalEnv(t)
	e.b = New(e.config(func(c *Config) { c.Heartbeat = 2 * time.Second }))
	t.Cleanup(e.runner.holdSkill("deliver-prd"))
	id := e.start()
	<-e.runner.started
	e.steps.Stop()
	r := waitFor(t, e.b, id, "interrupted", func(r *engine.Run) bool { return r.Step(1).Status == engine.StepInterrupted })
	if r.State != engine.RunWaiting {
		t.Errorf("after the lost worker the run is %s, want waiting", describe(r))
	}
	e.runner.mu.Lock()
	delete(e.runner.hold, "deliver-prd")
	e.runner.mu.Unlock()
	e.worker(e.q.steps, func(r worker.Registry) { RegisterSteps(r, e.acts) })
	e.decide(id, 1, engine.DecideRedo, "", nil)
	waiting(t, e.b, id, 1, 2)
	e.decide(id, 1, engine.DecideApprove, "", nil)
	waiting(t, e.b, id, 2, 1)
	e.decide(id, 2, engine.DecideApprove, "", nil)
	if r := ended(t, e.b, id); r.State != engine.RunCompleted {
		t.Errorf("run ended %s, want completed", describe(r))
	}
	var types []string
	for _, ev := range e.journal(id) {
		types = append(types, string(ev.Type))
	}
	if !slices.Contains(types, string(engine.EvStepInterrupted)) {
		t.Errorf("the journal has no step-interrupted event: %v", types)
	}
}

// TestAbortReachesARunningAgentAtOnce: an abort stops a running agent
// however long the heartbeat timeout is (a cancel reaches an activity only
// in a heartbeat's answer, and the SDK would hold heartbeats back to 0.8
// of the timeout). The timeout here is an hour, beyond the test's own
// deadline: an abort that waited for it would never stop the agent within
// the test, so the test needs no clock (the time an abort takes is
// BenchmarkDecide's).
func TestAbortReachesARunningAgentAtOnce(t *testing.T) {
	e := temporalEnv(t)
	e.b = New(e.config(func(c *Config) { c.Heartbeat = time.Hour }))
	t.Cleanup(e.runner.holdSkill("deliver-prd"))
	id := e.start()
	<-e.runner.started
	if _, err := e.b.Abort(t.Context(), id, "U-ana"); err != nil {
		t.Fatal(err)
	}
	r := ended(t, e.b, id)
	if r.State != engine.RunAborted {
		t.Errorf("after the abort the run is %s", describe(r))
	}
	e.runner.mu.Lock()
	cancelled := e.runner.cancelled
	e.runner.mu.Unlock()
	if cancelled != 1 {
		t.Errorf("the agent saw %d cancels, want 1", cancelled)
	}
}

// TestProgress: a running agent's progress reaches the client through the
// step activity's heartbeats.
func TestProgress(t *testing.T) {
	e := temporalEnv(t)
	t.Cleanup(e.runner.holdSkill("deliver-prd"))
	id := e.start()
	<-e.runner.started
	deadline := hangguard.Deadline(t)
	for {
		got, err := e.b.(*Backend).Progress(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if p, ok := got[1]; ok {
			if p.Turns != 1 || p.ToolCalls != 2 || p.LastTool != "Read" {
				t.Errorf("step 1's progress is %+v, want the runner's: 1 turn, 2 tool calls, Read", p)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no progress for step 1: %v", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestWorkflowWorkerLost: the worker that kept a waiting run's workflow
// stops; another takes the run up from its history and applies a
// decision. How soon is BenchmarkDecide's (a worker stopped on purpose
// tells the cluster, and its runs move at once; one that dies holds them
// for WorkflowWorkerOptions' sticky timeout).
func TestWorkflowWorkerLost(t *testing.T) {
	e := temporalEnv(t)
	e.flows.Stop()
	opts := WorkflowWorkerOptions()
	opts.Identity = "held"
	held := e.flowWorkerWith(opts)
	id := e.start()
	waiting(t, e.b, id, 1, 1)
	held.Stop()
	opts.Identity = "next"
	e.flowWorkerWith(opts)
	r, err := e.b.Decide(hangguard.Context(t), id, e.decision(id, 1, engine.DecideApprove), nil)
	if err != nil {
		t.Fatalf("the decision on the run the stopped worker held: %v", err)
	}
	if st := r.Step(1); st.Status != engine.StepDone {
		t.Errorf("after the decision step 1 is %s", st.Status)
	}
	if who := updateApplier(t, e.ts.GetDefaultClient(), id); who != "next" {
		t.Errorf("the decision was applied by worker %q, want the new one", who)
	}
	waiting(t, e.b, id, 2, 1)
}

// updateApplier is the identity of the worker that completed the
// workflow task accepting the run's first update.
func updateApplier(t *testing.T, c client.Client, id engine.RunID) string {
	t.Helper()
	who := ""
	it := c.GetWorkflowHistory(t.Context(), string(id), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			who = ev.GetWorkflowTaskCompletedEventAttributes().GetIdentity()
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
			return who
		}
	}
	t.Fatalf("run %s accepted no update", id)
	return ""
}

// notices keeps what a Notifier is told.
type notices struct {
	mu  sync.Mutex
	got []engine.Notice
}

func (n *notices) Notify(no engine.Notice) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if no.Progress != nil {
		return // live progress comes and goes; the events are what is checked
	}
	n.got = append(n.got, no)
}

// TestFollow: a front end following a run is told every journal event
// once, in order, each with the run as it stood right after it, until the
// run is over.
func TestFollow(t *testing.T) {
	e := temporalEnv(t)
	id := e.start()
	var n notices
	done := make(chan error, 1)
	start := &engine.Run{ID: id} // nothing folded yet: every event is told
	go func() { done <- e.b.(*Backend).Follow(t.Context(), start, 50*time.Millisecond, &n) }()
	waiting(t, e.b, id, 1, 1)
	e.decide(id, 1, engine.DecideApprove, "", nil)
	waiting(t, e.b, id, 2, 1)
	e.decide(id, 2, engine.DecideApprove, "", nil)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(hangguard.Limit(t)):
		t.Fatal("Follow did not return once the run was over")
	}
	journal := e.journal(id)
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.got) != len(journal) {
		t.Fatalf("told %d events, the journal has %d", len(n.got), len(journal))
	}
	for i, no := range n.got {
		if no.Event.Seq != journal[i].Seq || no.Event.Type != journal[i].Type || no.Run.Seq != no.Event.Seq {
			t.Errorf("notice %d: event %d %s with a run at %d; the journal has %d %s", i, no.Event.Seq, no.Event.Type, no.Run.Seq, journal[i].Seq, journal[i].Type)
		}
	}
}

// TestWorkflowCancelledAbortsTheRun: an operator who cancels a run's
// workflow through Temporal aborts the run, and the attempt under way is
// stopped and recorded, as on an abort.
func TestWorkflowCancelledAbortsTheRun(t *testing.T) {
	e := temporalEnv(t)
	t.Cleanup(e.runner.holdSkill("deliver-prd"))
	id := e.start()
	<-e.runner.started
	if err := e.ts.GetDefaultClient().CancelWorkflow(t.Context(), string(id), ""); err != nil {
		t.Fatal(err)
	}
	r := ended(t, e.b, id)
	if r.State != engine.RunAborted || r.Step(1).Status != engine.StepAborted || r.Step(1).Latest().Result != engine.ResultFailed {
		t.Errorf("after the workflow was cancelled the run is %s", describe(r))
	}
	evs := e.journal(id)
	if last := evs[len(evs)-1]; last.Type != engine.EvStepFinished {
		t.Errorf("the journal ends with %s, want the stopped attempt's step-finished", last.Type)
	}
}

// TestStartDrawsAgainOnATakenID: a run id Temporal holds already is drawn
// again, as engine.Service draws again on one its store holds.
func TestStartDrawsAgainOnATakenID(t *testing.T) {
	e := temporalEnv(t)
	first := e.start()
	ids := []engine.RunID{first, first, "20310402-090000-000000000001"}
	draws := 0
	b := New(e.config(func(c *Config) {
		c.Artifacts = newMemArtifacts()
		c.NewID = func(time.Time) engine.RunID { draws++; return ids[draws-1] }
	}))
	p, err := engine.PreflightChain(engine.ChainExpr{Source: "deliver-prd", Names: []string{"deliver-prd"}}, e.cat, engine.DefaultPolicy())
	if err != nil {
		t.Fatal(err)
	}
	r, err := b.Start(t.Context(), p, engine.StartOptions{StartedBy: "U-ana"})
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != ids[2] || draws != 3 {
		t.Fatalf("started run %s after %d draws; want %s after 3", r.ID, draws, ids[2])
	}
}

// TestContinueAsNew: a run whose history grows past the limit goes on in a
// new workflow of the same id, with its whole journal and its artifacts,
// and ends as it would have.
func TestContinueAsNew(t *testing.T) {
	e := temporalEnv(t)
	c := e.ts.GetDefaultClient()
	e.b = New(e.config(func(c *Config) { c.HistoryLimit = 40 }))
	id := e.start()
	firstRun := func() string {
		d, err := c.DescribeWorkflowExecution(t.Context(), string(id), "")
		if err != nil {
			t.Fatal(err)
		}
		return d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	}
	first := firstRun()
	waiting(t, e.b, id, 1, 1)
	for a := 1; a <= 4; a++ {
		e.decide(id, 1, engine.DecideRedo, fmt.Sprintf("try %d", a+1), nil)
		waiting(t, e.b, id, 1, a+1)
	}
	if firstRun() == first {
		t.Fatal("the run's workflow never continued as new")
	}
	// The redo of attempt 5 was shown attempt 4's artifact, kept by the
	// workflow before it continued.
	if p := e.prompt(1, 5); !strings.Contains(p, "deliver-prd, attempt 4") {
		t.Errorf("attempt 5 was not shown attempt 4's artifact:\n%s", p)
	}
	if got, err := e.b.Artifact(t.Context(), id, 1, 2); err != nil || !strings.Contains(string(got), "attempt 2") {
		t.Errorf("attempt 2's artifact after continuing: %q, %v", got, err)
	}
	e.decide(id, 1, engine.DecideApprove, "", nil)
	waiting(t, e.b, id, 2, 1)
	e.decide(id, 2, engine.DecideApprove, "", nil)
	r := ended(t, e.b, id)
	evs := e.journal(id)
	rebuilt, err := engine.Rebuild(evs)
	if err != nil || r.State != engine.RunCompleted || rebuilt.Seq != r.Seq || len(evs) != int(r.Seq) {
		t.Errorf("run %s at %d; its journal of %d events rebuilds %s (%v)", describe(r), r.Seq, len(evs), describe(rebuilt), err)
	}
}

// TestListReadsVisibility: runs are listed from Temporal's visibility
// store (their search attributes and memo), newest first, also while no
// worker could answer a query about them.
func TestListReadsVisibility(t *testing.T) {
	e := temporalEnvAlone(t)
	done := e.start()
	waiting(t, e.b, done, 1, 1)
	e.decide(done, 1, engine.DecideApprove, "", nil)
	waiting(t, e.b, done, 2, 1)
	e.decide(done, 2, engine.DecideApprove, "", nil)
	ended(t, e.b, done)
	waits := e.start()
	waiting(t, e.b, waits, 1, 1)
	e.flows.Stop()
	e.steps.Stop()

	b := e.b.(*Backend)
	want := map[engine.RunID]engine.RunState{done: engine.RunCompleted, waits: engine.RunWaiting}
	var got []engine.RunSummary
	deadline := hangguard.Deadline(t)
	for {
		var err error
		if got, err = b.List(t.Context(), 10); err != nil {
			t.Fatal(err)
		}
		ok := len(got) == 2
		for _, s := range got {
			ok = ok && want[s.ID] == s.State
		}
		if ok || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(got) != 2 || got[0].ID != waits || got[1].ID != done {
		t.Fatalf("listed %+v; want the waiting run, then the completed one", got)
	}
	if got[0].State != engine.RunWaiting || got[0].StepsTotal != len(skills) || got[0].StepsDone != 0 || got[0].Origin.Channel != "C1" {
		t.Errorf("the waiting run is listed as %+v", got[0])
	}
	if got[1].State != engine.RunCompleted || got[1].StepsDone != len(skills) {
		t.Errorf("the completed run is listed as %+v", got[1])
	}
	c := e.ts.GetDefaultClient()
	res, err := c.ListWorkflow(t.Context(), &workflowservice.ListWorkflowExecutionsRequest{
		Query: fmt.Sprintf("%s = 'waiting' AND %s = 'U-ana' AND %s = 'C1'", AttrState, AttrStarter, AttrChannel)})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.GetExecutions()); n != 1 || res.GetExecutions()[0].GetExecution().GetWorkflowId() != string(waits) {
		t.Errorf("filtering by state, starter and channel found %d runs, want the waiting one", n)
	}
}
