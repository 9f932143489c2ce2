package temporalbackend

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record"
)

// Activities carries out steps on a worker: what engine.Service does
// between committing a step's start and committing its result (prepare
// and execute), with the same attempt rules, on this worker's runner,
// catalog and probe. Register it with RegisterSteps.
type Activities struct {
	Runner    engine.Runner
	Catalog   engine.Catalog
	Probe     engine.Probe // nil: file and command conditions fail
	Artifacts ArtifactStore
	// Workflows and Policy are what route and decompose steps expand
	// with, as for engine.ServiceConfig.
	Workflows engine.WorkflowSource
	Policy    *engine.Policy
	// RateLimit is how an agent's rate limit is waited out; the zero value
	// is engine.DefaultRateLimit.
	RateLimit engine.RateLimit
	// Setup is how this worker's Runner is set up: the agent each attempt
	// it runs records (see engine.Finished.Agent), whatever setup the
	// run was started with. nil: not known, and stats goes by the run's.
	Setup *engine.Setup
}

// RegisterWorkflow registers the run workflow, the envelope workflow
// (inbox.go) and the start key's claim workflow (claim.go) on a worker
// polling TaskQueue.
func RegisterWorkflow(r worker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(RunWorkflow, workflow.RegisterOptions{Name: WorkflowName})
	r.RegisterWorkflowWithOptions(EnvelopeWorkflow, workflow.RegisterOptions{Name: EnvelopeWorkflowName})
	r.RegisterWorkflowWithOptions(claimWorkflow, workflow.RegisterOptions{Name: ClaimWorkflowName})
	r.RegisterWorkflowWithOptions(SlotsWorkflow, workflow.RegisterOptions{Name: SlotsWorkflowName})
}

// WorkflowWorkerOptions are the options of a worker polling TaskQueue. A
// worker that dies takes the runs it kept in memory with it: after a
// second, not Temporal's default five, the next change of such a run (a
// decision, a step's end) goes to another worker, which rebuilds it from
// history. A worker stopped on purpose tells the cluster, and its runs
// move at once.
func WorkflowWorkerOptions() worker.Options {
	return worker.Options{StickyScheduleToStartTimeout: time.Second}
}

// RegisterSteps registers the step activities on a worker polling
// StepQueue.
func RegisterSteps(r worker.ActivityRegistry, a *Activities) {
	r.RegisterActivityWithOptions(a.Step, activity.RegisterOptions{Name: StepActivity})
	r.RegisterActivityWithOptions(a.Expand, activity.RegisterOptions{Name: ExpandActivity})
}

func (a *Activities) policy() engine.Policy {
	if a.Policy != nil {
		return *a.Policy
	}
	return engine.DefaultPolicy()
}

func (a *Activities) expander() engine.Expander {
	return engine.Expander{Workflows: a.Workflows, Catalog: a.Catalog, Policy: a.policy()}
}

// Step runs one attempt: it prepares the job by the attempt rules, runs
// it (heartbeating the agent's progress, and regularly while it is
// silent, so that a lost worker is noticed and a cancel reaches the
// agent), judges the outcome, puts the artifact into the store and
// returns the verdict. An attempt cancelled through Temporal comes back
// Stopped, for the workflow to judge with its cause.
func (a *Activities) Step(ctx context.Context, in stepRecord) (verdictRecord, error) {
	if err := record.CheckVersion(in.V); err != nil {
		return verdictRecord{}, temporal.NewNonRetryableApplicationError(err.Error(), "version", nil)
	}
	r, _, err := record.UnmarshalRun(in.Run)
	if err != nil {
		return verdictRecord{}, temporal.NewNonRetryableApplicationError(err.Error(), "decode", nil)
	}
	st := r.Step(in.Step)
	at := startedAttempt(st, in.Attempt)
	if at == nil {
		return verdictRecord{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("step %d attempt %d is not one the step's latest start began", in.Step, in.Attempt), "stale", nil)
	}
	job, prepErr := a.prepare(ctx, r, st, in.Keys)
	// A best-of step's candidates share the job, each on its own runner,
	// as engine.Service hands them out.
	job.Attempt, job.Runner = at.N, at.Runner
	out, stopped := a.execute(ctx, r, job, prepErr)
	agent := engine.AttemptAgent(a.Setup, job.Runner)
	if stopped || ctx.Err() != nil {
		return verdictRecord{V: record.Version, Stopped: true, Outcome: toOutcomeRecord(out), Agent: agent}, nil
	}
	limit := a.RateLimit
	if limit == (engine.RateLimit{}) {
		limit = engine.DefaultRateLimit()
	}
	e := engine.AttemptEnd{Run: r, Step: in.Step, Attempt: in.Attempt, Outcome: out, RateLimit: limit}
	e.Skill, _ = a.Catalog.Skill(job.Skill)
	f := engine.JudgeAttempt(e)
	var post error
	if engine.PostconditionsDue(st, f) {
		post = engine.CheckConditions(ctx, st.Rules.Post, out.Artifact, a.Probe)
	}
	f, arts, _ := engine.SettleAttempt(e, f, post, a.expander())
	f.Agent = agent
	// The files bbolt writes under its data directory have no place here:
	// the artifact is kept in the store, under the attempt's own key.
	key := ""
	for _, art := range arts {
		key = agentKey(r.ID, st, art.Attempt)
		if err := a.Artifacts.Put(ctx, key, art.Body); err != nil {
			return verdictRecord{}, fmt.Errorf("keep the artifact of step %d attempt %d: %w", in.Step, in.Attempt, err)
		}
	}
	return toVerdict(f, key)
}

// startedAttempt is attempt n of st when the step's latest start began
// it (its latest attempt, or a candidate of its round); nil otherwise.
func startedAttempt(st *engine.Step, n int) *engine.Attempt {
	if st == nil {
		return nil
	}
	for _, a := range engine.StartedAttempts(st) {
		if a.N == n {
			return a
		}
	}
	return nil
}

// prepare composes the attempt's job as engine.Service.prepare does,
// reading earlier artifacts from the store by their current keys.
func (a *Activities) prepare(ctx context.Context, r *engine.Run, st *engine.Step, keys map[string]string) (engine.Job, error) {
	p, err := engine.PlanAttempt(r, st, a.Catalog, a.policy())
	if err != nil {
		return p.Job, err
	}
	read := make(map[engine.ArtifactRef]engine.ArtifactRead, len(p.Reads))
	for _, ref := range p.Reads {
		key, ok := keys[refKey(ref.Step, ref.Attempt)]
		if !ok {
			read[ref] = engine.ArtifactRead{Err: fmt.Errorf("step %d attempt %d has no artifact key: %w", ref.Step, ref.Attempt, engine.ErrNotFound)}
			continue
		}
		body, err := a.Artifacts.Get(ctx, key)
		read[ref] = engine.ArtifactRead{Body: body, Err: err}
	}
	var pre error
	if p.CheckPre {
		pre = engine.CheckConditions(ctx, p.Step.Rules.Pre, nil, a.Probe)
	}
	// {{today}} is the day the attempt started, as the workflow recorded
	// it, so that the same attempt composes the same prompt anywhere.
	return engine.ComposeJob(p, read, pre, a.Catalog, st.Latest().Started)
}

// execute runs the job on the runner, unless preparing it failed or the
// run is dry, heartbeating as it goes (see stepBeat). stopped says that
// the agent was stopped by a cancel or because the cluster no longer has
// the attempt.
func (a *Activities) execute(ctx context.Context, r *engine.Run, job engine.Job, prepErr error) (out engine.Outcome, stopped bool) {
	switch {
	case prepErr != nil:
		return engine.Outcome{Err: prepErr}, false
	case r.DryRun:
		return engine.Outcome{NotRun: true}, false
	}
	runCtx, hb := newStepBeat(ctx)
	out = a.Runner.Run(runCtx, job, hb.progress)
	stopped = runCtx.Err() != nil
	hb.stop()
	return out, stopped
}

// progressRecord is a heartbeat's details: the agent's latest progress.
type progressRecord struct {
	V         int     `json:"v"`
	Turns     int     `json:"turns,omitempty"`
	ToolCalls int     `json:"tool_calls,omitempty"`
	LastTool  string  `json:"last_tool,omitempty"`
	Status    string  `json:"status,omitempty"`
	CostUSD   float64 `json:"cost_usd,omitempty"`
	ElapsedNS int64   `json:"elapsed_ns,omitempty"`
}

// heartbeat keeps a Slack activity alive: it sends a heartbeat every third of the heartbeat timeout, so that Temporal knows the worker
// lives. (A step's heartbeats are a stepBeat's.)
type heartbeat struct {
	done chan struct{}
	wg   sync.WaitGroup
}

func newHeartbeat(ctx context.Context) *heartbeat {
	h := &heartbeat{done: make(chan struct{})}
	every := activity.GetInfo(ctx).HeartbeatTimeout / 3
	if every <= 0 {
		every = 10 * time.Second
	}
	h.wg.Go(func() {
		repeat(ctx, h.done, every, func() bool {
			activity.RecordHeartbeat(ctx, progressRecord{V: record.Version})
			return false
		})
	})
	return h
}

func (h *heartbeat) stop() {
	close(h.done)
	h.wg.Wait()
}

// expandRecord is the expand activity's input: the run, the route or
// decompose step, and the key of the output a person confirmed.
type expandRecord struct {
	V    int             `json:"v"`
	Run  json.RawMessage `json:"run"`
	Step int             `json:"step"`
	Key  string          `json:"key"`
}

// addedRecord is the expand activity's result: a steps-added event, in
// package record's encoding.
type addedRecord struct {
	V     int             `json:"v"`
	Added json.RawMessage `json:"added,omitempty"`
}

// Expand reads the steps a route or decompose step adds when a person
// approves its output or edits it, as engine.Service's expansion does: the
// output (the agent's, or the person's edit) is read from the store and
// expanded with this worker's workflows, catalog and policy. Output that
// does not say what to add is refused, so a person can correct an agent's
// bad JSON.
func (a *Activities) Expand(ctx context.Context, in expandRecord) (addedRecord, error) {
	if err := record.CheckVersion(in.V); err != nil {
		return addedRecord{}, temporal.NewNonRetryableApplicationError(err.Error(), "version", nil)
	}
	r, _, err := record.UnmarshalRun(in.Run)
	if err != nil {
		return addedRecord{}, temporal.NewNonRetryableApplicationError(err.Error(), "decode", nil)
	}
	st := r.Step(in.Step)
	if st == nil {
		return addedRecord{}, refusal(fmt.Errorf("run %s has no step %d: %w", r.ID, in.Step, engine.ErrNotFound))
	}
	out, err := a.Artifacts.Get(ctx, in.Key)
	if err != nil {
		return addedRecord{}, fmt.Errorf("step %d: read its output: %w", st.N, err)
	}
	added, err := a.expander().Expand(r, st, out)
	if err != nil {
		return addedRecord{}, refusal(fmt.Errorf("step %d (%s): %w", st.N, st.ID, err))
	}
	b, err := record.MarshalEvents([]engine.Event{{Type: engine.EvStepsAdded, Step: st.N, Added: added}})
	if err != nil {
		return addedRecord{}, err
	}
	return addedRecord{V: record.Version, Added: b}, nil
}
