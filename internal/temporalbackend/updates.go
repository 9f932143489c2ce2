package temporalbackend

import (
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record"
)

// An update's validator applies the engine's rules to the run as the
// workflow holds it, without changing anything: a refusal (a stale
// attempt, a step not waiting, a repeated key, a person who may not
// decide) is answered at once and nothing reaches history. The handler
// then records the same transition, which the validator has just seen
// succeed.

// register installs the workflow's queries and updates.
func (f *flow) register(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, qryRun, f.view); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, qryJournal, f.page); err != nil {
		return err
	}
	if err := f.registerNotes(ctx); err != nil {
		return err
	}
	for _, u := range f.updates() {
		handler := func(ctx workflow.Context, a actRecord) (runView, error) {
			if err := u.apply(ctx, a); err != nil {
				return runView{}, refusal(err)
			}
			v, err := f.view()
			v.Nonce = a.Nonce
			return v, err
		}
		validator := func(ctx workflow.Context, a actRecord) error {
			return refusal(f.check(u, workflow.Now(ctx).UTC(), a))
		}
		if err := workflow.SetUpdateHandlerWithOptions(ctx, u.name, handler,
			workflow.UpdateHandlerOptions{Validator: validator}); err != nil {
			return err
		}
	}
	return nil
}

// updateHandler is one of the workflow's updates: its validator and its
// handler. personal updates are a person's acts, checked with the rule of
// who may decide; a mode or setup change comes from whoever resumes the
// run, which engine.Service does not check either.
type updateHandler struct {
	name     string
	personal bool
	validate func(now time.Time, a actRecord) error
	apply    func(workflow.Context, actRecord) error
}

func (f *flow) updates() []updateHandler {
	return []updateHandler{
		{updDecide, true, f.validateDecide, f.decide},
		{updAbort, true, f.validateAbort, f.abort},
		{updCancel, true, f.validateCancel, f.cancel},
		{updPause, true, f.validatePause, f.pause},
		{updUnpause, true, f.validateUnpause, f.unpause},
		{updMode, false, f.validateMode, f.setMode},
		{updSetup, false, f.validateSetup, f.changeSetup},
		{updStartAwaited, true, f.validateStartAwaited, f.startAwaited},
		{updCancelAwaited, true, f.validateCancelAwaited, f.cancelAwaited},
	}
}

// check applies the engine's rules for update u, asked at now with a, to
// the workflow's run, changing nothing: nil when the update may go on.
func (f *flow) check(u updateHandler, now time.Time, a actRecord) error {
	if err := record.CheckVersion(a.V); err != nil {
		return err
	}
	if u.personal {
		if err := mayDecide(f.run, a); err != nil {
			return err
		}
	}
	return u.validate(now, a)
}

// mayDecide applies the engine's rule of who may act on r to what the
// caller's front end said of the person (the workflow cannot ask Slack).
func mayDecide(r *engine.Run, a actRecord) error {
	if engine.AutomaticActor(a.Actor) || a.Actor == engine.TimeoutActor {
		return nil
	}
	if !engine.MayDecide(r.StartedBy, engine.ApproversOf(r, nil), a.Actor, a.Member.member()) {
		return fmt.Errorf("%s on run %s: %w", a.Actor, r.ID, engine.ErrNotApprover)
	}
	return nil
}

// view is the run query: the run, its current artifact keys and the keys
// of every edit.
func (f *flow) view() (runView, error) {
	b, err := record.MarshalRun(f.run, nil)
	if err != nil {
		return runView{}, err
	}
	return runView{V: record.Version, Run: b, Keys: maps.Clone(f.keys), Edits: cloneEdits(f.edits)}, nil
}

// page is the journal query: up to journalPageSize events from seq from
// (1 for the first page).
func (f *flow) page(from uint64) (journalPage, error) {
	// Seqs run 1, 2, 3, ... without a gap: event seq s is journal[s-1].
	start := min(int(max(from, 1))-1, len(f.journal))
	evs := f.journal[start:]
	next := uint64(0)
	if len(evs) > journalPageSize {
		evs, next = evs[:journalPageSize], evs[journalPageSize].Seq
	}
	b, err := record.MarshalEvents(evs)
	if err != nil {
		return journalPage{}, err
	}
	return journalPage{V: record.Version, Events: json.RawMessage(b), Next: next}, nil
}

// decision is the decision a decide update asks for, with its edit.
func (f *flow) decision(a actRecord) (engine.Decision, *engine.Edit, error) {
	d, err := a.decision()
	if err != nil {
		return d, nil, err
	}
	if d.Kind != engine.DecideEdit {
		return d, nil, nil
	}
	var size int
	var summary string
	if a.Edit != nil {
		size, summary = a.Edit.Size, a.Edit.Summary
	}
	edit, err := engine.PrepareEdit(f.run, d, size, summary)
	return d, edit, err
}

// decisionTime is when a decision counts as taken: the caller's time when
// it says one, else now.
func decisionTime(d engine.Decision, now time.Time) time.Time {
	if d.Time.IsZero() {
		return now
	}
	return d.Time
}

func (f *flow) validateDecide(now time.Time, a actRecord) error {
	d, edit, err := f.decision(a)
	if err != nil {
		return err
	}
	_, err = engine.Decide(f.run, d, edit, decisionTime(d, now))
	return err
}

func (f *flow) decide(ctx workflow.Context, a actRecord) error {
	d, edit, err := f.decision(a)
	if err != nil {
		return err
	}
	var added []engine.PlanStep
	if st := f.run.Step(d.Step); expands(st) && (d.Kind == engine.DecideApprove || d.Kind == engine.DecideEdit) {
		key := ""
		if edit != nil {
			key = a.Edit.Key
		}
		if added, err = f.expansion(ctx, st, key); err != nil {
			return err
		}
	}
	if err := f.record(ctx, func(now time.Time) ([]engine.Event, error) {
		return engine.DecideExpand(f.run, d, edit, added, decisionTime(d, now))
	}); err != nil {
		return err
	}
	if edit != nil {
		f.keepEdit(d.Step, d.Attempt, a.Edit.Key)
	}
	if d.Kind == engine.DecideAbort {
		f.stopAll("run aborted by " + d.Actor)
	}
	return nil
}

func (f *flow) validateAbort(now time.Time, a actRecord) error {
	_, err := engine.AbortRun(f.run, a.Actor, "aborted by "+a.Actor, now)
	return err
}

func (f *flow) abort(ctx workflow.Context, a actRecord) error {
	if err := f.record(ctx, func(now time.Time) ([]engine.Event, error) {
		return engine.AbortRun(f.run, a.Actor, "aborted by "+a.Actor, now)
	}); err != nil {
		return err
	}
	f.stopAll("run aborted by " + a.Actor)
	return nil
}

// validateCancel refuses to cancel an attempt that is not under way, or
// that someone stopped already.
func (f *flow) validateCancel(_ time.Time, a actRecord) error {
	if f.runningAttempt(a.Step, a.Attempt) == nil {
		return fmt.Errorf("step %d attempt %d is not running: %w", a.Step, a.Attempt, engine.ErrStale)
	}
	return nil
}

// cancel stops the attempt; it fails with the reason once its activity
// has stopped the agent, and the run halts on it.
func (f *flow) cancel(ctx workflow.Context, a actRecord) error {
	if err := f.validateCancel(workflow.Now(ctx).UTC(), a); err != nil {
		return err
	}
	f.stop(f.runningAttempt(a.Step, a.Attempt), "cancelled by "+a.Actor)
	return nil
}

func (f *flow) validatePause(now time.Time, a actRecord) error {
	_, err := engine.Pause(f.run, a.Actor, "", now)
	return err
}

func (f *flow) pause(ctx workflow.Context, a actRecord) error {
	return f.record(ctx, func(now time.Time) ([]engine.Event, error) { return engine.Pause(f.run, a.Actor, "", now) })
}

func (f *flow) unpauseMode(a actRecord) (engine.Mode, error) {
	if !f.run.Paused || f.run.Finished() {
		return "", fmt.Errorf("run %s: %w (it is %s)", f.run.ID, engine.ErrNotPaused, f.run.State)
	}
	return parseOptional(a.Mode, engine.ParseMode)
}

func (f *flow) validateUnpause(now time.Time, a actRecord) error {
	m, err := f.unpauseMode(a)
	if err != nil {
		return err
	}
	_, err = engine.Unpause(f.run, a.Actor, m, nil, now)
	return err
}

// unpause resumes the run; a route or decompose step that the resumed mode
// lets go on brings its steps, read as on approval.
func (f *flow) unpause(ctx workflow.Context, a actRecord) error {
	m, err := f.unpauseMode(a)
	if err != nil {
		return err
	}
	added := map[int][]engine.PlanStep{}
	for _, n := range engine.Releasable(f.run, m) {
		if st := f.run.Step(n); expands(st) {
			if added[n], err = f.expansion(ctx, st, ""); err != nil {
				return err
			}
		}
	}
	return f.record(ctx, func(now time.Time) ([]engine.Event, error) { return engine.Unpause(f.run, a.Actor, m, added, now) })
}

// expands reports whether st is a route or decompose step, whose
// confirmed output adds steps.
func expands(st *engine.Step) bool {
	return st != nil && (st.Rules.Route || st.Rules.Decompose != "")
}

// expansion reads the steps st adds from the output under key (an edit),
// or from its latest attempt's output when key is "", on a worker (the
// expand activity: reading workflows is I/O). An attempt with no output,
// or a dry run, adds nothing, as on engine.Service.
func (f *flow) expansion(ctx workflow.Context, st *engine.Step, key string) ([]engine.PlanStep, error) {
	if key == "" {
		l := st.Latest()
		if l == nil || !l.Artifact || f.run.DryRun {
			return nil, nil
		}
		key = f.keys[refKey(st.N, l.N)]
	}
	run, err := record.MarshalRun(f.run, nil)
	if err != nil {
		return nil, err
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue: f.in.StepQueue, StartToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	var res addedRecord
	if err := workflow.ExecuteActivity(actx, ExpandActivity, expandRecord{V: record.Version, Run: run, Step: st.N, Key: key}).Get(ctx, &res); err != nil {
		return nil, fromRefusal(err)
	}
	if err := record.CheckVersion(res.V); err != nil {
		return nil, err
	}
	evs, err := record.UnmarshalEvents(res.Added)
	if err != nil {
		return nil, err
	}
	var added []engine.PlanStep
	for _, ev := range evs {
		added = append(added, ev.Added...)
	}
	return added, nil
}

func (f *flow) validateMode(_ time.Time, a actRecord) error {
	_, err := engine.ParseMode(a.Mode)
	return err
}

// setMode changes how the run advances (resume --auto); the loop then
// starts what the new mode lets go on.
func (f *flow) setMode(ctx workflow.Context, a actRecord) error {
	m, err := engine.ParseMode(a.Mode)
	if err != nil {
		return err
	}
	return f.record(ctx, func(now time.Time) ([]engine.Event, error) { return engine.SetMode(f.run, m, now), nil })
}

// setupOf decodes the setup a change-setup update carries, as the setup
// of a setup-changed event in package record's encoding.
func setupOf(a actRecord) (engine.Setup, error) {
	evs, err := record.UnmarshalEvents(a.Setup)
	if err != nil {
		return engine.Setup{}, err
	}
	if len(evs) != 1 || evs[0].Setup == nil {
		return engine.Setup{}, fmt.Errorf("a setup change carries no setup")
	}
	return *evs[0].Setup, nil
}

func (f *flow) validateSetup(now time.Time, a actRecord) error {
	to, err := setupOf(a)
	if err != nil {
		return err
	}
	_, err = engine.ChangeSetup(f.run, to, a.Actor, now)
	return err
}

func (f *flow) changeSetup(ctx workflow.Context, a actRecord) error {
	to, err := setupOf(a)
	if err != nil {
		return err
	}
	return f.record(ctx, func(now time.Time) ([]engine.Event, error) { return engine.ChangeSetup(f.run, to, a.Actor, now) })
}
