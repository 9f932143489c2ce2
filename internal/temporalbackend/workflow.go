package temporalbackend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record"
)

// Names Temporal knows gonogo's parts by. Changing one strands the runs
// started under the old name: they are part of the contract with history.
const (
	WorkflowName = "gonogo.run"
	StepActivity = "gonogo.step"
	// ExpandActivity reads the steps a route or decompose step adds when a
	// person confirms its output.
	ExpandActivity = "gonogo.expand"
	// TaskQueue is where run workflows are polled; StepQueue where step
	// activities are, so that the machines that run agents can differ
	// from those that keep workflows moving.
	TaskQueue = "gonogo"
	StepQueue = "gonogo-steps"

	updDecide  = "decide"
	updAbort   = "abort"
	updCancel  = "cancel"
	updPause   = "pause"
	updUnpause = "unpause"
	updMode    = "set-mode"
	updSetup   = "change-setup"
	qryRun     = "run"
	qryJournal = "journal"

	// stepMargin is added to a step's own limit for the activity's
	// start-to-close timeout: the runner enforces the step's limit and
	// reports a timeout as a FAILED attempt; Temporal's limit only catches
	// a worker that could not.
	stepMargin = time.Minute
	// journalPageSize is the most events one journal query returns.
	journalPageSize = 200
)

// activityIDFormat names a step attempt's activity: its step and attempt,
// which Backend.Progress reads back.
const activityIDFormat = "step-%d-attempt-%d"

// changeDispatch gates what the workflow asks Temporal to do (its
// activities and their options, timers, continuing as new). Version 1:
// one step activity per start of a step with the options start sets, an
// expand activity for a person's approval of a route or decompose step,
// timers for what nextDue finds. Version 2 (dispatchBestOf) starts one
// step activity per candidate of a best-of step's round, all at once. A
// later change raises the maximum and branches on f.dispatch, so that
// waiting runs replay what they did; the name is in every recorded
// history and never changes.
const changeDispatch = "gonogo-dispatch"

// dispatchBestOf is the changeDispatch version that carries out best-of
// steps; a workflow started before it never had one (Start refused them).
const dispatchBestOf workflow.Version = 2

// flow is a run workflow's state, rebuilt by replay: the run as its
// journal folds, the current artifact key of each attempt, and the
// attempts whose activities are under way.
type flow struct {
	in       startRecord
	run      *engine.Run
	journal  []engine.Event
	keys     map[string]string
	edits    map[string][]string  // every edit's key of each attempt, in order (edits.go)
	running  map[int][]*execution // by step: the attempts its latest start began
	changed  bool                 // something happened since the loop last looked
	dispatch workflow.Version     // of changeDispatch, fixed when the workflow started
	listing  workflow.Version     // of changeListing, fixed when the workflow started
	slack    workflow.Version     // of changeSlack, fixed when the workflow started
	slotsV   workflow.Version     // of changeSlots, for a run with a limit (slots.go)
	// leases are the slot requests of steps, for a run with a limit.
	leases map[int]*lease
	// slotAsks counts the slot requests this workflow run made, so that
	// each has a key of its own (slotKey).
	slotAsks int
	// notes are the run's notes (notes.go); syncs its thread's upkeep
	// (slack.go), nil for a run without one.
	notes map[string]string
	syncs *threadSyncs
	// published is the summary the run's memo shows and publishedState
	// the state its search attribute says (listing.go).
	published, publishedState string
}

// execution is one attempt's activity under way.
type execution struct {
	attempt int
	cancel  workflow.CancelFunc
	// cause is why a person, or an abort, stopped it; "" until then.
	cause string
	// ended says its activity has ended and its end is dealt with; lost
	// that it ended without a verdict the workflow could record (its
	// worker was lost): the step is interrupted once every attempt its
	// start began has ended.
	ended, lost bool
}

// RunWorkflow carries out one run: it starts the run's ready steps as
// activities, records their verdicts, takes decisions as updates, and
// returns once the run is over and no step is under way.
func RunWorkflow(ctx workflow.Context, in startRecord) (endRecord, error) {
	f, err := newFlow(in)
	if err != nil {
		// An input this release cannot read (a newer gonogo's) waits, as
		// a failed workflow task, for a worker that can.
		panic(err)
	}
	f.dispatch = workflow.GetVersion(ctx, changeDispatch, workflow.DefaultVersion, dispatchBestOf)
	// The first publish sets the run's memo and state whatever a start
	// or a continue-as-new gave the workflow.
	f.listing = workflow.GetVersion(ctx, changeListing, workflow.DefaultVersion, 1)
	f.slack = workflow.GetVersion(ctx, changeSlack, workflow.DefaultVersion, 1)
	if err := f.register(ctx); err != nil {
		return endRecord{}, err
	}
	f.startSyncs(ctx)
	f.startSlots(ctx)
	if err := f.loop(ctx); err != nil {
		var next *workflow.ContinueAsNewError
		if errors.As(err, &next) {
			return endRecord{}, err
		}
		if temporal.IsCanceledError(err) {
			return f.cancelled(ctx, err)
		}
		// A fault in gonogo itself (events it cannot fold, a record it
		// cannot read) must not end the run: a failed workflow is final.
		// A panic fails only this workflow task, which Temporal retries
		// until a release that can carry the run on replays it.
		panic(fmt.Sprintf("run %s: %v", f.run.ID, err))
	}
	if err := f.awaitThread(ctx); err != nil {
		return endRecord{}, err
	}
	// Updates under way finish before the workflow does, so no caller is
	// left without an answer.
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return endRecord{}, err
	}
	return endRecord{V: record.Version, State: string(f.run.State)}, nil
}

// newFlow is the state of a run workflow started with in.
func newFlow(in startRecord) (*flow, error) {
	if err := record.CheckVersion(in.V); err != nil {
		return nil, err
	}
	evs, err := record.UnmarshalEvents(in.Events)
	if err != nil {
		return nil, err
	}
	r, err := engine.Fold(&engine.Run{}, evs)
	if err != nil {
		return nil, err
	}
	keys := maps.Clone(in.Keys)
	if keys == nil {
		keys = map[string]string{}
	}
	notes := maps.Clone(in.Notes)
	if notes == nil {
		notes = map[string]string{}
	}
	return &flow{in: in, run: r, journal: evs, keys: keys, edits: cloneEdits(in.Edits), notes: notes, running: map[int][]*execution{}}, nil
}

// loop moves the run on until it is over: it acts on what is due, starts
// the steps that are ready, and waits for a step's end, an update, or the
// next due time.
func (f *flow) loop(ctx workflow.Context) error {
	moved := func() bool { return f.changed || f.over() }
	for {
		f.changed = false
		if err := f.actOnDue(ctx); err != nil {
			return err
		}
		if err := f.advance(ctx); err != nil {
			return err
		}
		if err := f.publish(ctx); err != nil {
			return err
		}
		if f.over() {
			return nil
		}
		if f.full(ctx) {
			return f.continueAsNew(ctx)
		}
		due, ok := f.nextDue()
		if !ok {
			if err := workflow.Await(ctx, moved); err != nil {
				return err
			}
			continue
		}
		// A due time that actOnDue could not act on (a refused retry) is
		// looked at again a second later, not in a busy loop.
		wait := due.Sub(workflow.Now(ctx))
		if wait <= 0 {
			wait = time.Second
		}
		if _, err := workflow.AwaitWithTimeout(ctx, wait, moved); err != nil {
			return err
		}
	}
}

// full reports whether the workflow should continue as new, and can: its
// history is long (Temporal suggests it, or it passed HistoryLimit), and
// nothing is under way that the new workflow would not know of (an
// attempt's activity, an update, a thread sync).
func (f *flow) full(ctx workflow.Context) bool {
	info := workflow.GetInfo(ctx)
	long := info.GetContinueAsNewSuggested() || (f.in.HistoryLimit > 0 && info.GetCurrentHistoryLength() >= f.in.HistoryLimit)
	return long && len(f.running) == 0 && len(f.leases) == 0 && !f.syncing() && workflow.AllHandlersFinished(ctx)
}

// continueAsNew carries the run on in a new workflow of the same id whose
// input is the run's whole journal, its artifact and edit keys and its notes: a long run's
// history stays short, and the new workflow folds what this one recorded.
func (f *flow) continueAsNew(ctx workflow.Context) error {
	b, err := record.MarshalEvents(f.journal)
	if err != nil {
		return err
	}
	in := f.in
	in.Events, in.Keys, in.Edits, in.Notes = b, maps.Clone(f.keys), cloneEdits(f.edits), maps.Clone(f.notes)
	return workflow.NewContinueAsNewError(ctx, WorkflowName, in)
}

// cancelActor is who aborts a run whose workflow was cancelled through
// Temporal itself (an operator's temporal workflow cancel), not by gonogo.
const cancelActor = "gonogo (workflow cancelled)"

// cancelled ends a run whose workflow was cancelled: the run is aborted
// in its journal, as if a person had aborted it, its attempts under way
// are stopped and recorded, and the workflow ends cancelled. Without this
// the run would stay running or waiting in a workflow nothing moves.
func (f *flow) cancelled(ctx workflow.Context, cause error) (endRecord, error) {
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	if !f.run.Finished() {
		reason := "aborted: its Temporal workflow was cancelled"
		if err := f.record(dctx, func(now time.Time) ([]engine.Event, error) {
			return engine.AbortRun(f.run, cancelActor, reason, now)
		}); err != nil {
			return endRecord{}, err
		}
	}
	f.stopAll("run aborted by " + cancelActor)
	if err := workflow.Await(dctx, func() bool { return len(f.running) == 0 }); err != nil {
		return endRecord{}, err
	}
	f.dropUnready(dctx)
	if err := f.awaitThread(dctx); err != nil {
		return endRecord{}, err
	}
	return endRecord{}, cause
}

// over reports whether the workflow has nothing left to do.
func (f *flow) over() bool { return f.run.Finished() && len(f.running) == 0 }

// sideRecord is one transition as history records it: its events, or the
// refusal it met.
type sideRecord struct {
	V      int    `json:"v"`
	Events []byte `json:"events,omitempty"` // record.MarshalEvents
	Err    string `json:"err,omitempty"`
	Kind   string `json:"kind,omitempty"`
}

// record computes a transition once and keeps its outcome in history
// (workflow.SideEffect): on replay the events recorded are folded again,
// whatever the rules of the release replaying them say. The events are
// folded into the run and appended to the journal.
func (f *flow) record(ctx workflow.Context, transition func(now time.Time) ([]engine.Event, error)) error {
	var rec sideRecord
	err := workflow.SideEffect(ctx, func(ctx workflow.Context) any {
		evs, err := transition(workflow.Now(ctx).UTC())
		if err != nil {
			app := refusal(err)
			var a *temporal.ApplicationError
			_ = errors.As(app, &a)
			return sideRecord{V: record.Version, Err: err.Error(), Kind: a.Type()}
		}
		b, err := record.MarshalEvents(evs)
		if err != nil {
			return sideRecord{V: record.Version, Err: err.Error(), Kind: "encode"}
		}
		return sideRecord{V: record.Version, Events: b}
	}).Get(&rec)
	if err != nil {
		return err
	}
	if err := record.CheckVersion(rec.V); err != nil {
		return err
	}
	if rec.Err != "" {
		return fromRefusal(temporal.NewApplicationError(rec.Err, rec.Kind))
	}
	evs, err := record.UnmarshalEvents(rec.Events)
	if err != nil || len(evs) == 0 {
		return err
	}
	after, err := engine.Fold(f.run, evs)
	if err != nil {
		return err
	}
	f.run, f.journal, f.changed = after, append(f.journal, evs...), true
	f.threadChanged()
	return nil
}

// advance starts every ready step; in a run with a limit, every ready
// step that holds a slot (slots.go), and the others ask for one.
func (f *flow) advance(ctx workflow.Context) error {
	f.dropUnready(ctx)
	for _, n := range engine.Ready(f.run) {
		if f.slotted() {
			if ok, err := f.haveSlot(ctx, n); err != nil {
				return err
			} else if !ok {
				continue
			}
		}
		if err := f.record(ctx, func(now time.Time) ([]engine.Event, error) { return engine.Start(f.run, n, now) }); err != nil {
			return err
		}
		f.slotStarted(n)
		if err := f.start(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// start dispatches each attempt the latest start of step n began as an
// activity of its own (one, or every candidate of a best-of round, all at
// once, as engine.Service runs them), and has a coroutine record each
// verdict when it ends. The step's slot, when the run has a limit, is one
// for the whole round, as on engine.Service: the last to end gives it
// back.
func (f *flow) start(ctx workflow.Context, n int) error {
	st := f.run.Step(n)
	attempts := []*engine.Attempt{st.Latest()}
	if f.dispatch >= dispatchBestOf {
		attempts = engine.StartedAttempts(st)
	}
	run, err := record.MarshalRun(f.run, nil)
	if err != nil {
		return err
	}
	for _, a := range attempts {
		f.startAttempt(ctx, st, a.N, run)
	}
	return nil
}

// startAttempt dispatches attempt a of step st as an activity, with the
// run as run encodes it.
func (f *flow) startAttempt(ctx workflow.Context, st *engine.Step, a int, run json.RawMessage) {
	n := st.N
	in := stepRecord{V: record.Version, Run: run, Step: n, Attempt: a, Keys: maps.Clone(f.keys)}
	limit := st.Rules.Timeout
	if limit <= 0 {
		limit = time.Duration(f.in.StepTimeoutNS)
	}
	actx, cancel := workflow.WithCancel(ctx)
	actx = workflow.WithActivityOptions(actx, workflow.ActivityOptions{
		TaskQueue:           f.in.StepQueue,
		ActivityID:          fmt.Sprintf(activityIDFormat, n, a),
		StartToCloseTimeout: limit + stepMargin,
		HeartbeatTimeout:    time.Duration(f.in.HeartbeatNS),
		// An attempt is never tried again by Temporal: a lost worker
		// leaves the step interrupted and offered for redo, as a crash
		// does on one machine.
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1},
		// A cancelled attempt still reports what it cost.
		WaitForCancellation: true,
	})
	ex := &execution{attempt: a, cancel: cancel}
	f.running[n] = append(f.running[n], ex)
	fut := workflow.ExecuteActivity(actx, StepActivity, in)
	// The coroutine that records the attempt's end runs on a context the
	// workflow's own cancellation does not end, so that an attempt under
	// way when it comes is still recorded (see cancelled).
	rctx, _ := workflow.NewDisconnectedContext(ctx)
	workflow.Go(rctx, func(gctx workflow.Context) {
		var v verdictRecord
		err := fut.Get(gctx, &v)
		if err := f.finish(gctx, n, ex, v, err); err != nil {
			workflow.GetLogger(gctx).Error("record step result", "step", n, "attempt", a, "err", err)
		}
		ex.ended = true
		f.changed = true
		if !f.startEnded(n) {
			return // another candidate of the round runs on
		}
		if f.lostAny(n) {
			// Every attempt the start began that has no end is lost: the
			// engine interrupts each once, and the step waits for a redo
			// of the whole start.
			if err := f.record(gctx, func(now time.Time) ([]engine.Event, error) { return engine.Interrupt(f.run, now, n), nil }); err != nil {
				workflow.GetLogger(gctx).Error("record step result", "step", n, "attempt", a, "err", err)
			}
		}
		// The attempts are no longer under way once their ends are
		// recorded: a workflow that continues as new has them in its
		// journal.
		f.releaseSlot(gctx, n)
		delete(f.running, n)
	})
}

// startEnded reports whether every attempt the latest start of step n
// began has ended.
func (f *flow) startEnded(n int) bool {
	return !slices.ContainsFunc(f.running[n], func(ex *execution) bool { return !ex.ended })
}

// lostAny reports whether an attempt of step n's latest start ended
// without a verdict.
func (f *flow) lostAny(n int) bool {
	return slices.ContainsFunc(f.running[n], func(ex *execution) bool { return ex.lost })
}

// finish records how an attempt's activity ended: its verdict; the
// verdict on a stopped attempt, judged with the stopper's cause; or, when
// the activity failed without one (its worker was lost, it timed out),
// nothing yet: the attempt is lost, and the step is interrupted once
// every attempt of its start has ended (see start), so that the other
// candidates of a best-of round keep what they bring back.
func (f *flow) finish(ctx workflow.Context, n int, ex *execution, v verdictRecord, actErr error) error {
	var fin engine.Finished
	switch {
	case ex.cause != "" && (actErr != nil || v.Stopped):
		fin = f.judgeStopped(n, ex, v.Outcome)
		fin.Agent = v.Agent // "" when the activity brought back no verdict
	case actErr != nil || v.Stopped:
		// Stopped with nobody's cause: the worker stopped under it.
		ex.lost = true
		return nil
	default:
		var err error
		if fin, err = v.finished(); err != nil {
			// A verdict this release cannot read (a newer worker's) leaves
			// the attempt without an outcome it can record: interrupted,
			// and offered for redo.
			workflow.GetLogger(ctx).Error("read a step's verdict", "step", n, "attempt", ex.attempt, "err", err)
			ex.lost = true
			return nil
		}
	}
	if err := f.record(ctx, func(now time.Time) ([]engine.Event, error) {
		return engine.Finish(f.run, n, ex.attempt, fin, now)
	}); err != nil {
		return err
	}
	if v.Key != "" && fin.Artifact {
		f.keys[refKey(n, ex.attempt)] = v.Key
	}
	return nil
}

// judgeStopped is the verdict on an attempt a person or an abort stopped,
// by the engine's rules, as engine.Service judges one: a stopped attempt
// fails with the stopper's reason, so it keeps no artifact and needs no
// postconditions or expansion.
func (f *flow) judgeStopped(n int, ex *execution, rec *outcomeRecord) engine.Finished {
	out := rec.outcome()
	if out.Err == nil {
		out.Err = context.Canceled // stopped before the agent ran
	}
	e := engine.AttemptEnd{Run: f.run, Step: n, Attempt: ex.attempt, Outcome: out, Cancel: errors.New(ex.cause)}
	fin := engine.JudgeAttempt(e)
	fin, _, _ = engine.SettleAttempt(e, fin, nil, engine.Expander{})
	return fin
}

// stopAll stops every attempt under way, with cause.
func (f *flow) stopAll(cause string) {
	for _, n := range slices.Sorted(maps.Keys(f.running)) {
		for _, ex := range f.running[n] {
			if !ex.ended {
				f.stop(ex, cause)
			}
		}
	}
}

// runningAttempt is attempt a of step n while its activity is under way
// and nobody stopped it; nil otherwise.
func (f *flow) runningAttempt(n, a int) *execution {
	for _, ex := range f.running[n] {
		if ex.attempt == a && !ex.ended && ex.cause == "" {
			return ex
		}
	}
	return nil
}

func (f *flow) stop(ex *execution, cause string) {
	if ex.cause == "" {
		ex.cause = cause
	}
	ex.cancel()
}

// heldByPerson says a person paused the run: automatic retries wait for
// it to be resumed, as engine.Service's do.
func (f *flow) heldByPerson() bool {
	return f.run.PausedByPerson()
}

// nextDue is when gonogo itself next acts on the run: an automatic retry
// (RetryDue) or a decision deadline (DeadlineDue), both read from the run
// as engine.Service reads them; false when nothing is due.
func (f *flow) nextDue() (time.Time, bool) {
	var next time.Time
	earlier := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	for i := range f.run.Steps {
		st := &f.run.Steps[i]
		if due, _, _, ok := engine.RetryDue(st); ok && !f.heldByPerson() {
			earlier(due)
		}
		if due, ok := engine.DeadlineDue(f.run, st); ok {
			earlier(due)
		}
	}
	return next, !next.IsZero()
}

// dueRetry is the automatic retry due by now, as the redo decision
// engine.Service makes for it.
func (f *flow) dueRetry(now time.Time) (engine.Decision, bool) {
	if f.heldByPerson() {
		return engine.Decision{}, false
	}
	for i := range f.run.Steps {
		st := &f.run.Steps[i]
		if due, _, _, ok := engine.RetryDue(st); ok && !due.After(now) {
			a := st.Latest().N
			return engine.Decision{Kind: engine.DecideRedo, Actor: engine.RetryActorFor(st), Step: st.N, Attempt: a,
				Key: engine.RetryKey(f.run.ID, st.N, a)}, true
		}
	}
	return engine.Decision{}, false
}

// actOnDue carries out what is due by now, one change at a time: the
// automatic retries, then the reminders and timeouts of decision
// deadlines (engine.Overdue), an abort on timeout decided as
// engine.TimeoutActor. Nothing is recorded when nothing is due. A
// refusal (a person decided first) is logged, as engine.Service logs it.
func (f *flow) actOnDue(ctx workflow.Context) error {
	for range len(f.run.Steps) + 1 {
		due, ok := f.nextDue()
		if !ok || due.After(workflow.Now(ctx)) {
			return nil
		}
		err := f.record(ctx, func(now time.Time) ([]engine.Event, error) {
			if d, ok := f.dueRetry(now); ok {
				return engine.Decide(f.run, d, nil, now)
			}
			evs, aborts := engine.Overdue(f.run, now)
			if len(aborts) > 0 {
				return engine.Decide(f.run, aborts[0], nil, now)
			}
			return evs, nil
		})
		if err != nil {
			workflow.GetLogger(ctx).Warn("act on a due retry or deadline", "run", f.run.ID, "err", err)
			return nil
		}
		if f.run.State == engine.RunAborted {
			f.stopAll("run aborted by " + engine.TimeoutActor)
		}
	}
	return nil
}
