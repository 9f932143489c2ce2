package temporalbackend

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record"
)

// Config wires a Backend.
type Config struct {
	Client    client.Client
	Artifacts ArtifactStore
	// TaskQueue and StepQueue default to TaskQueue and StepQueue.
	TaskQueue string
	StepQueue string
	// StepTimeout is the limit of a step that sets none (default 30m);
	// Heartbeat how long a silent worker is trusted (default 10s). A
	// cancel reaches the agent with a heartbeat's answer; a running step
	// beats every second whatever Heartbeat is (beat.go), so a Cancel or
	// an abort stops an agent within about a second.
	StepTimeout time.Duration
	Heartbeat   time.Duration
	// HistoryLimit is how many events a run's workflow history holds
	// before the run continues in a new workflow of the same id; 0 leaves
	// it to Temporal's suggestion.
	HistoryLimit int
	// SlackQueue is the task queue the serve replicas of a Slack app poll
	// (SlackQueue): the workflow of a run started with one, whose origin
	// is a Slack channel, schedules its thread syncs there and stays open
	// after the run ends until its thread shows the end (slack.go). ""
	// schedules none: nothing would take them.
	SlackQueue string
	// Now and NewID are the clock and the source of run ids, as for
	// engine.ServiceConfig: the workflow draws neither.
	Now   func() time.Time
	NewID func(now time.Time) engine.RunID
	// Members says who a person acting on a run is; nil is
	// engine.LocalOperator.
	Members engine.Members
	// MaxSteps limits the steps of the runs started here that run at
	// once, across the cluster, counted with those of every other run
	// started with a limit on the same TaskQueue (slots.go); 0 sets none.
	MaxSteps int
}

// Backend is gonogo's engine as front ends call it, carried out by run
// workflows on a Temporal cluster: it starts runs, reads them through
// queries, or from their workflow's history when no worker answers one
// (read.go), acts on them through updates, and answers with the engine's
// sentinel errors, so that a front end branches the same way as on
// engine.Service.
type Backend struct {
	cfg Config

	mu sync.Mutex
	// polledAt is when the cluster last said whether a workflow worker
	// polls, and polledAnswer what it said (read.go).
	polledAt     time.Time
	polledAnswer bool
}

// New returns a Backend.
func New(cfg Config) *Backend {
	if cfg.TaskQueue == "" {
		cfg.TaskQueue = TaskQueue
	}
	if cfg.StepQueue == "" {
		cfg.StepQueue = StepQueue
	}
	if cfg.StepTimeout <= 0 {
		cfg.StepTimeout = 30 * time.Minute
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = 10 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return time.Now().UTC() }
	}
	if cfg.NewID == nil {
		cfg.NewID = engine.NewRunID
	}
	if cfg.Members == nil {
		cfg.Members = engine.LocalOperator
	}
	return &Backend{cfg: cfg}
}

// Start records a new run of p as a workflow, which begins its first
// step. The run id and the start time are drawn here, outside the
// workflow, and its first events made by engine.NewRun. A start key
// (opt.Key) is claimed first (claim.go): a key another start claimed is
// refused with engine.ErrDuplicate, as engine.Service refuses it.
func (b *Backend) Start(ctx context.Context, p engine.Plan, opt engine.StartOptions) (*engine.Run, error) {
	if opt.Key != "" {
		r, err := b.startClaimed(ctx, p, opt)
		if err != nil && timedOut(err) && !errors.Is(err, context.DeadlineExceeded) {
			// The cluster did not answer in time: the caller may try
			// again, and the key makes it start one run.
			err = fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
		}
		return r, err
	}
	for try := 0; ; try++ {
		now := b.cfg.Now()
		r, err := b.start(ctx, p, opt, b.cfg.NewID(now), now)
		// Two starts drew the same id (Temporal keeps it taken): draw
		// another, as engine.Service does.
		if err == nil || !errors.Is(err, engine.ErrStale) || try == 3 {
			return r, err
		}
	}
}

// start starts run id of p, drawn at now, as a workflow; an id Temporal
// holds already is engine.ErrStale.
func (b *Backend) start(ctx context.Context, p engine.Plan, opt engine.StartOptions, id engine.RunID, now time.Time) (*engine.Run, error) {
	evs, err := engine.NewRun(id, p, opt, now)
	if err != nil {
		return nil, err
	}
	evs[0].Key = opt.Key
	enc, err := record.MarshalEvents(evs)
	if err != nil {
		return nil, err
	}
	in := startRecord{V: record.Version, Events: enc, StepQueue: b.cfg.StepQueue,
		StepTimeoutNS: int64(b.cfg.StepTimeout), HeartbeatNS: int64(b.cfg.Heartbeat), HistoryLimit: b.cfg.HistoryLimit,
		SlackQueue: b.cfg.SlackQueue}
	if in.Slots, err = b.slotsWorkflow(ctx); err != nil {
		return nil, err
	}
	in.MaxSteps = b.cfg.MaxSteps
	r, err := engine.Fold(&engine.Run{}, evs)
	if err != nil {
		return nil, err
	}
	sum, err := summaryOf(r)
	if err != nil {
		return nil, err
	}
	_, err = b.cfg.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: string(id), TaskQueue: b.cfg.TaskQueue,
		TypedSearchAttributes:    startAttributes(r),
		Memo:                     map[string]any{memoSummary: json.RawMessage(sum)},
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		// Without it the SDK answers a taken id with the run holding it,
		// as if this start had made it.
		WorkflowExecutionErrorWhenAlreadyStarted: true,
	}, WorkflowName, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return nil, fmt.Errorf("start run %s: the id is taken: %w", id, engine.ErrStale)
	}
	if timedOut(err) {
		// The cluster did not answer in time: the caller may try again
		// (a keyed start starts one run).
		return nil, fmt.Errorf("start run %s: %w: %w", id, context.DeadlineExceeded, err)
	}
	if err != nil {
		return nil, fmt.Errorf("start run %s: %w", id, missingAttributes(err))
	}
	return r, nil
}

// queryTries is how many times a query whose wait ran out on the cluster
// (no workflow worker answered in time: one busy or just lost) is asked.
const queryTries = 3

// cutOffTries is how many times a query or an update cut off on its way
// (its workflow worker stopping under it, a broken connection: cancelled
// or unavailable while the caller still waits) is sent again, 100 ms more
// apart each time.
const cutOffTries = 5

// query asks run id's workflow query name, again when the cluster's wait
// ran out or the query was cut off on its way, as an update is sent again.
func (b *Backend) query(ctx context.Context, id engine.RunID, name string, args ...any) (converter.EncodedValue, error) {
	return asked(ctx, func() (converter.EncodedValue, error) {
		return b.cfg.Client.QueryWorkflow(ctx, string(id), "", name, args...)
	})
}

// asked makes a query's call, again (queryTries in all) when the
// cluster's wait ran out, and again (cutOffTries more, 100 ms more apart
// each time) when it was cut off on its way.
func asked[T any](ctx context.Context, call func() (T, error)) (T, error) {
	timeouts, cutOff := 0, 0
	for {
		res, err := call()
		switch {
		case err == nil || ctx.Err() != nil:
			return res, err
		case timedOut(err) && timeouts < queryTries-1:
			timeouts++
		case cutOffUpdate(err) && cutOff < cutOffTries:
			cutOff++
			if !pause(ctx, time.Duration(cutOff)*100*time.Millisecond) {
				return res, err
			}
		default:
			return res, err
		}
	}
}

// pause waits d, or less when ctx ends first; it reports whether it waited
// the whole of d.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// notFound maps Temporal's word that there is no such workflow to
// engine.ErrNotFound.
func (b *Backend) notFound(id engine.RunID, err error) error {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return fmt.Errorf("run %s: %w", id, engine.ErrNotFound)
	}
	return fmt.Errorf("run %s: %w", id, err)
}

// Follow tells n of every journal event of run from.ID after from, in
// order, each with the run as it stood right after that event (from with
// the events up to it folded in), and of the live progress of its running
// steps, until the run is over (its workflow has ended) or ctx ends. A
// workflow cannot reach a front end's process, so a front end that shows a
// run follows it: the Temporal stand-in for engine.Service's Notifier,
// with every committed change told once, late by at most every.
func (b *Backend) Follow(ctx context.Context, from *engine.Run, every time.Duration, n engine.Notifier) error {
	t := time.NewTicker(every)
	defer t.Stop()
	cur := from.Clone()
	for {
		// Whether the workflow has ended is asked before the journal is
		// read: a journal read after it ended is whole, so nothing the
		// run's last moments added is missed.
		over, err := b.over(ctx, cur.ID)
		if err != nil {
			return err
		}
		evs, err := b.journalFrom(ctx, cur.ID, cur.Seq+1)
		if err != nil {
			return err
		}
		for _, ev := range evs {
			next := cur.Clone()
			if err := engine.Apply(next, ev); err != nil {
				return fmt.Errorf("run %s: fold event %d: %w", cur.ID, ev.Seq, err)
			}
			cur = next
			n.Notify(engine.Notice{Run: cur, Event: ev})
		}
		if progress, err := b.Progress(ctx, cur.ID); err == nil {
			for _, step := range slices.Sorted(maps.Keys(progress)) {
				p := progress[step]
				n.Notify(engine.Notice{Run: cur, Event: engine.Event{Type: engine.EvStepStarted, Step: step}, Progress: &p})
			}
		}
		if over {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// over reports whether the run's workflow has ended: its journal is
// complete.
func (b *Backend) over(ctx context.Context, id engine.RunID) (bool, error) {
	desc, err := b.cfg.Client.DescribeWorkflowExecution(ctx, string(id), "")
	if err != nil {
		return false, b.notFound(id, err)
	}
	return desc.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil
}

// Progress is the live progress of each step of the run whose agent is
// running, by step number, as the step activities' last heartbeats carry
// it; a step whose agent has said nothing yet is absent.
func (b *Backend) Progress(ctx context.Context, id engine.RunID) (map[int]engine.Progress, error) {
	desc, err := b.cfg.Client.DescribeWorkflowExecution(ctx, string(id), "")
	if err != nil {
		return nil, b.notFound(id, err)
	}
	out := map[int]engine.Progress{}
	for _, pa := range desc.GetPendingActivities() {
		var step, attempt int
		if _, err := fmt.Sscanf(pa.GetActivityId(), activityIDFormat, &step, &attempt); err != nil || pa.GetHeartbeatDetails() == nil {
			continue
		}
		var p progressRecord
		if err := converter.GetDefaultDataConverter().FromPayloads(pa.GetHeartbeatDetails(), &p); err != nil || record.CheckVersion(p.V) != nil {
			continue
		}
		out[step] = engine.Progress{Turns: p.Turns, ToolCalls: p.ToolCalls, LastTool: p.LastTool, Status: p.Status,
			CostUSD: p.CostUSD, Elapsed: time.Duration(p.ElapsedNS)}
	}
	return out, nil
}

// Decide applies a decision through the run's workflow, and the workflow
// starts what comes next. body is the replacement artifact of an edit,
// put into the artifact store first. The update's id is the decision's
// key, which is the run's own as a workflow's update ids are, so a repeated
// decision is applied once; it is refused with engine.ErrDuplicate, as is
// one the workflow finds it has seen, and with engine.ErrKeyReused when the
// run recorded another decision under its key; a stale
// attempt (engine.ErrStale), a step not waiting (engine.ErrNotWaiting) and
// a person who may not decide (engine.ErrNotApprover) change nothing.
func (b *Backend) Decide(ctx context.Context, id engine.RunID, d engine.Decision, body []byte) (*engine.Run, error) {
	a := actRecord{Kind: string(d.Kind), Actor: d.Actor, Step: d.Step, Attempt: d.Attempt, Candidate: d.Candidate, Key: d.Key,
		Feedback: d.Feedback, Time: d.Time}
	var r *engine.Run
	if d.Kind == engine.DecideEdit {
		var err error
		if r, err = b.Load(ctx, id); err != nil {
			return nil, err
		}
		edit, err := engine.EditOf(r, d, body)
		if err != nil {
			return nil, err
		}
		key := editKey(id, r.Step(d.Step), d.Attempt, body)
		if err := b.cfg.Artifacts.Put(ctx, key, body); err != nil {
			return nil, fmt.Errorf("keep the edit of step %d: %w", d.Step, err)
		}
		a.Edit = &editRecord{Key: key, Size: edit.Size, Summary: edit.Summary}
	}
	return b.update(ctx, id, updDecide, d.Key, r, a)
}

// Record is Decide: on Temporal the run's workflow always carries out
// what is decided, whoever records it.
func (b *Backend) Record(ctx context.Context, id engine.RunID, d engine.Decision, body []byte) (*engine.Run, error) {
	return b.Decide(ctx, id, d, body)
}

// Abort ends a run on an actor's word whatever its steps are doing:
// attempts under way are cancelled, and everything produced is kept.
func (b *Backend) Abort(ctx context.Context, id engine.RunID, actor string) (*engine.Run, error) {
	return b.update(ctx, id, updAbort, "", nil, actRecord{Actor: actor})
}

// Cancel stops a running step attempt (the Cancel button): its activity
// is cancelled, which stops the agent; the attempt ends FAILED and the run
// halts on it.
func (b *Backend) Cancel(ctx context.Context, id engine.RunID, step, attempt int, actor string) error {
	_, err := b.update(ctx, id, updCancel, "", nil, actRecord{Actor: actor, Step: step, Attempt: attempt})
	return err
}

// Pause holds a moving run at its next checkpoint.
func (b *Backend) Pause(ctx context.Context, id engine.RunID, actor string) (*engine.Run, error) {
	return b.update(ctx, id, updPause, "", nil, actRecord{Actor: actor})
}

// Unpause resumes a paused run in mode m ("" the run's own).
func (b *Backend) Unpause(ctx context.Context, id engine.RunID, actor string, m engine.Mode) (*engine.Run, error) {
	return b.update(ctx, id, updUnpause, "", nil, actRecord{Actor: actor, Mode: string(m)})
}

// RecordUnpause is Unpause: the workflow carries the run on.
func (b *Backend) RecordUnpause(ctx context.Context, id engine.RunID, actor string, m engine.Mode) (*engine.Run, error) {
	return b.Unpause(ctx, id, actor, m)
}

// Resume picks a run up again. Its workflow never stopped, so only a mode
// given (resume --auto) changes anything: the run then advances in it.
func (b *Backend) Resume(ctx context.Context, id engine.RunID, mode engine.Mode) (*engine.Run, error) {
	if mode == "" {
		return b.Load(ctx, id)
	}
	return b.update(ctx, id, updMode, "", nil, actRecord{Mode: string(mode)})
}

// ChangeSetup records that a run goes on with setup to, changed by actor;
// a setup equal to the recorded one records nothing.
func (b *Backend) ChangeSetup(ctx context.Context, id engine.RunID, to engine.Setup, actor string) (*engine.Run, error) {
	enc, err := record.MarshalEvents([]engine.Event{{Type: engine.EvSetupChanged, Setup: &to}})
	if err != nil {
		return nil, err
	}
	return b.update(ctx, id, updSetup, "", nil, actRecord{Actor: actor, Setup: enc})
}

// update sends one update to the run's workflow, saying who acts, and
// returns the run as the workflow holds it after. r is the run, when the
// caller has loaded it already.
func (b *Backend) update(ctx context.Context, id engine.RunID, name, updateID string, r *engine.Run, a actRecord) (*engine.Run, error) {
	a.V, a.Nonce = record.Version, nonce()
	if name != updMode && name != updSetup {
		var err error
		if a.Member, err = b.member(ctx, id, r, a.Actor); err != nil {
			return nil, err
		}
	}
	if updateID == "" {
		// An update of no key of its own gets one, so that sending it
		// again (send) applies it once.
		updateID = name + "-" + a.Nonce
	}
	var v runView
	if err := b.send(ctx, id, client.UpdateWorkflowOptions{
		UpdateID: updateID, WorkflowID: string(id), UpdateName: name, Args: []any{a},
	}, &v); err != nil {
		return nil, err
	}
	if v.Nonce != a.Nonce {
		// Temporal answered with the outcome of an earlier update of the
		// same id: this one was applied already, unless the id is a
		// decision's key that the run recorded for another decision.
		if name == updDecide {
			if err := keyReused(v, a); err != nil {
				return nil, err
			}
		}
		return nil, fmt.Errorf("%s %s on run %s was already applied: %w", name, updateID, id, engine.ErrDuplicate)
	}
	return v.run()
}

// keyReused is the engine's answer (engine.KeyedBefore) to decision a
// whose key Temporal saw already, from the run as that update left it.
func keyReused(v runView, a actRecord) error {
	r, err := v.run()
	if err != nil {
		return err
	}
	d, err := a.decision()
	if err != nil {
		return err
	}
	_, err = engine.KeyedBefore(r, d)
	return err
}

// send sends one update to the run's workflow and waits for its outcome,
// read into out. A wait that runs out on the cluster's side (no workflow
// worker took the update in time: one that died, a busy cluster) sends it
// again: the same UpdateID makes that safe, Temporal applies it once and
// answers with its outcome.
//
// An update cut off on its way (the workflow worker that had it stopped,
// a connection to the cluster broken: it comes back cancelled or
// unavailable while ctx still runs) is sent again too, a few times, a
// moment apart.
func (b *Backend) send(ctx context.Context, id engine.RunID, opt client.UpdateWorkflowOptions, out any) error {
	opt.WaitForStage = client.WorkflowUpdateStageCompleted
	cutOff := 0
	for {
		h, err := b.cfg.Client.UpdateWorkflow(ctx, opt)
		if err == nil {
			err = h.Get(ctx, out)
		}
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
		case timedOut(err):
			continue
		case cutOffUpdate(err) && cutOff < cutOffTries:
			cutOff++
			pause(ctx, time.Duration(cutOff)*100*time.Millisecond)
			continue
		}
		return b.updateError(ctx, id, opt, err)
	}
}

// cutOffUpdate reports whether err is an update that did not reach an
// outcome because something on its way stopped, not a refusal: the
// caller's context is checked apart.
func cutOffUpdate(err error) bool {
	var canceled *serviceerror.Canceled
	var unavailable *serviceerror.Unavailable
	var aborted *serviceerror.Aborted
	return errors.Is(err, context.Canceled) || errors.As(err, &canceled) || errors.As(err, &unavailable) || errors.As(err, &aborted)
}

// timedOut reports whether err is a wait that ran out on the cluster's
// side, not a refusal.
func timedOut(err error) bool {
	var de *serviceerror.DeadlineExceeded
	return errors.As(err, &de) || errors.Is(err, context.DeadlineExceeded)
}

// updateError maps an update's failure to the engine's sentinels: a
// refusal by the workflow's rules, a run that does not exist, or a run
// whose workflow is over. A run whose workflow is over has ended: the act
// is refused as the workflow's validator would have refused it (a resume
// of a run not paused, a pause of a run not moving, a decision on a step
// that moved on), in the engine's words, as engine.Service refuses it;
// what its rules would still take is stale, nothing being left to carry
// it out.
func (b *Backend) updateError(ctx context.Context, id engine.RunID, opt client.UpdateWorkflowOptions, err error) error {
	if e := fromRefusal(err); e != err {
		return e
	}
	var nf *serviceerror.NotFound
	if !errors.As(err, &nf) {
		return fmt.Errorf("run %s: %w", id, err)
	}
	r, lerr := b.Load(ctx, id)
	if lerr != nil {
		return lerr
	}
	if a, ok := opt.Args[0].(actRecord); ok {
		f := &flow{run: r, running: map[int][]*execution{}, keys: map[string]string{}}
		for _, u := range f.updates() {
			if u.name != opt.UpdateName {
				continue
			}
			if err := f.check(u, b.cfg.Now(), a); err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("run %s is %s: %w", id, r.State, engine.ErrStale)
}

// member says who actor is, for the workflow to apply the engine's rule
// of who may decide: it asks Members as engine.Service does, about the
// run's approver groups unless actor is the starter or named.
func (b *Backend) member(ctx context.Context, id engine.RunID, r *engine.Run, actor string) (memberRecord, error) {
	if engine.AutomaticActor(actor) || actor == engine.TimeoutActor {
		return memberRecord{}, nil
	}
	var groups []string
	if r == nil {
		// Only a Members that may look at groups needs the run.
		probe, err := b.cfg.Members(ctx, actor, nil)
		if err != nil {
			return memberRecord{}, fmt.Errorf("who is %s: %w", actor, err)
		}
		if probe.Operator {
			return memberRecord{Operator: true}, nil
		}
		if r, err = b.Load(ctx, id); err != nil {
			return memberRecord{}, err
		}
	}
	approvers := engine.ApproversOf(r, nil)
	if actor != r.StartedBy && !slices.Contains(approvers, actor) {
		groups = approvers
	}
	m, err := b.cfg.Members(ctx, actor, groups)
	if err != nil {
		return memberRecord{}, fmt.Errorf("who is %s: %w", actor, err)
	}
	return memberRecord{Operator: m.Operator, Outsider: m.Outsider, Groups: m.Groups}, nil
}

// nonce is a caller's own mark on an update (see actRecord.Nonce).
func nonce() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
