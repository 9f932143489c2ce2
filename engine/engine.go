package engine

import (
	"fmt"
	"slices"
	"time"
)

// The functions in this file are gonogo's transitions. Each validates a move
// against the run as it stands and returns the journal events describing it,
// stamped with the next sequence numbers; it changes nothing. Fold applies
// them. The Service commits them before it acts on them.

// StartOptions are the facts of a run that do not come from its plan.
type StartOptions struct {
	StartedBy string
	Origin    Origin
	BudgetUSD float64
	// Quorum is how many distinct people must approve a checkpoint; 0 and
	// 1 mean one. ExcludeStarter keeps the starter's own approval from
	// counting toward it.
	Quorum         int
	ExcludeStarter bool
	// Key is an idempotency key for the start itself (a redelivered Slack
	// command): a key the store has seen refuses the start with ErrDuplicate.
	Key string
	// Setup is how the run's steps are carried out, recorded with the run;
	// nil takes the service's (ServiceConfig.Setup).
	Setup *Setup
	// Oversight is who may decide besides the starter and the deadlines of
	// the run's checkpoints, recorded with the run; the zero value lets only
	// the starter (and the local operator) decide, with no deadline.
	Oversight Oversight
	// AwaitStart records the run without starting anything: it waits,
	// paused by AwaitStartActor, until a person who may decide starts it
	// (StartAwaited) or cancels it (CancelAwaited). See AwaitingStart.
	AwaitStart bool
}

// ResolveMode returns the mode a plan runs in for its flags, and a warning
// when the flags asked for more autonomy than the plan allows. --force-auto
// implies --auto. The Cynefin floor keeps Complex and Chaotic plans, plans
// whose domain is unknown or ambiguous, and every chain checkpointed unless
// --force-auto is given. A FAILED step halts and an EMPTY step pauses in
// every mode; no flag overrides that.
func ResolveMode(p Plan) (Mode, string) {
	f := p.Flags
	if !f.Auto && !f.ForceAuto {
		return ModeCheckpointed, ""
	}
	if f.ForceAuto {
		return ModeGuardedAuto, ""
	}
	if warning := autoRefused(p); warning != "" {
		return ModeCheckpointed, warning
	}
	return ModeGuardedAuto, ""
}

// autoRefused is why the Cynefin floor keeps p checkpointed despite
// --auto, or "" when p may run in guarded auto.
func autoRefused(p Plan) string {
	if p.Input == InputChain {
		return "--auto ignored: chains stay checkpointed unless --force-auto"
	}
	if p.Input != InputPlan {
		return ""
	}
	switch {
	case p.DomainAmbiguous:
		return "--auto ignored: the plan's Cynefin domain is ambiguous, so the run stays checkpointed unless --force-auto"
	case p.Domain == "":
		return "--auto ignored: the plan names no Cynefin domain, so the run stays checkpointed unless --force-auto"
	case p.Domain == DomainComplex || p.Domain == DomainChaotic:
		return fmt.Sprintf("--auto ignored: %s plans stay checkpointed unless --force-auto", p.Domain)
	}
	return ""
}

// RunModeName is the run mode as the check output and the run header name
// it: "dry-run" for dry runs, else the mode.
func RunModeName(m Mode, dryRun bool) string {
	if dryRun {
		return "dry-run"
	}
	return string(m)
}

func stamp(r *Run, now time.Time, evs ...Event) []Event {
	for i := range evs {
		evs[i].Seq = r.Seq + uint64(i) + 1
		evs[i].Time = now
	}
	return evs
}

// Fold returns a new run: r with evs applied; r is not changed. The new
// run shares with r what evs leave alone (the plan, and the attempts and
// decisions of steps the events do not name): a run the engine has folded
// is a value it never changes again, so sharing is safe, and a step costs
// the same in a run of 3 steps and of 300. Use Clone for a copy to change.
func Fold(r *Run, evs []Event) (*Run, error) {
	c := *r
	c.Steps = slices.Clone(r.Steps)
	ownChanged(&c, evs)
	for _, ev := range evs {
		if err := Apply(&c, ev); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

// ownChanged gives c its own copy of the state of each step evs change.
func ownChanged(c *Run, evs []Event) {
	var owned []int
	for _, ev := range evs {
		switch {
		case ev.Type == EvRunFinished || ev.Type == EvRunPaused:
			// An abort settles every step that is not; a pause holds the
			// queued ones.
			for n := 1; n <= len(c.Steps); n++ {
				owned = ownStep(c, owned, n)
			}
		case ev.Step >= 1 && ev.Step <= len(c.Steps):
			owned = ownStep(c, owned, ev.Step)
		}
	}
}

// ownStep gives c its own copy of step n's state, once, so that folding
// changes it without touching the runs c shares it with; owned lists the
// steps copied so far, and ownStep returns it with n added.
func ownStep(c *Run, owned []int, n int) []int {
	if slices.Contains(owned, n) {
		return owned
	}
	st := c.Steps[n-1].StepState.clone()
	c.Steps[n-1].StepState = &st
	return append(owned, n)
}

// Rebuild folds a whole journal into a run.
func Rebuild(journal []Event) (*Run, error) {
	r := &Run{}
	for _, ev := range journal {
		if err := Apply(r, ev); err != nil {
			return nil, err
		}
	}
	if r.ID == "" {
		return nil, fmt.Errorf("journal has no run-started event: %w", ErrNotFound)
	}
	return r, nil
}

// NewRun returns the event that starts a run of p.
func NewRun(id RunID, p Plan, opt StartOptions, now time.Time) ([]Event, error) {
	if len(p.Steps) == 0 {
		return nil, &Refusal{Reason: RefuseNoRunnableSteps, Source: p.Source, Message: "nothing to run: no runnable step"}
	}
	mode, _ := ResolveMode(p)
	st := &RunStart{
		ID: id, Plan: clonePlan(p), Mode: mode, DryRun: p.Flags.DryRun, Thread: p.Flags.Thread,
		ForceAuto: p.Flags.ForceAuto, BudgetUSD: opt.BudgetUSD, StartedBy: opt.StartedBy, Origin: opt.Origin,
		Quorum: max(opt.Quorum, 1), ExcludeStarter: opt.ExcludeStarter, Setup: opt.Setup.Clone(),
		Oversight: opt.Oversight.Clone(),
	}
	evs := stamp(&Run{}, now, Event{Type: EvRunStarted, Actor: opt.StartedBy, Start: st})
	if !opt.AwaitStart {
		return evs, nil
	}
	// The run is recorded as it will run, and paused before its first
	// step: a journal that says no more than a pause, which every reader
	// of journals understands already.
	r, err := Fold(&Run{}, evs)
	if err != nil {
		return nil, err
	}
	held, err := Pause(r, AwaitStartActor, awaitStartReason, now)
	if err != nil {
		return nil, err
	}
	return append(evs, held...), nil
}

// Ready lists the steps that may start now, in order: pending or queued
// steps whose dependencies are all settled, in a run that is not over or
// paused.
func Ready(r *Run) []int {
	if r.Finished() || r.Paused {
		return nil
	}
	var out []int
	for i := range r.Steps {
		s := &r.Steps[i]
		if notStarted(s) && depsSettled(r, s) {
			out = append(out, s.N)
		}
	}
	return out
}

// notStarted reports whether s waits to start: pending, or queued for a
// runner slot.
func notStarted(s *Step) bool {
	return s.Status == StepPending || s.Status == StepQueued
}

// depsSettled reports whether every step s depends on is settled.
func depsSettled(r *Run, s *Step) bool {
	for _, d := range s.DependsOn {
		if dep := r.Step(d); dep == nil || !dep.Settled() {
			return false
		}
	}
	return true
}

func step(r *Run, n int) (*Step, error) {
	s := r.Step(n)
	if s == nil {
		return nil, fmt.Errorf("run %s has no step %d: %w", r.ID, n, ErrNotFound)
	}
	return s, nil
}

// Queue marks a ready step as waiting for a free runner slot.
func Queue(r *Run, n int, now time.Time) ([]Event, error) {
	s, err := step(r, n)
	if err != nil {
		return nil, err
	}
	to, err := next(s, trQueue)
	if err != nil {
		return nil, err
	}
	return stamp(r, now, Event{Type: EvStepQueued, Step: n, Status: to}), nil
}

// Start begins a new attempt at step n. The attempt carries the feedback of
// the redo that asked for it, if any.
func Start(r *Run, n int, now time.Time) ([]Event, error) {
	if r.Finished() {
		return nil, fmt.Errorf("run %s is %s: %w", r.ID, r.State, ErrStale)
	}
	if r.Paused {
		return nil, fmt.Errorf("run %s: step %d cannot start: the run is %w", r.ID, n, ErrPaused)
	}
	s, err := step(r, n)
	if err != nil {
		return nil, err
	}
	to, err := next(s, trStart)
	if err != nil {
		return nil, err
	}
	ev := startEvent(s, to)
	if IsBestOf(s) {
		return stamp(r, now, candidateStarts(s, ev)...), nil
	}
	return stamp(r, now, ev), nil
}

// startEvent is the start of the next attempt at s, which moves it to
// to; it carries the feedback of the redo that asked for it, if any.
func startEvent(s *Step, to StepStatus) Event {
	ev := Event{Type: EvStepStarted, Step: s.N, Attempt: len(s.Attempts) + 1, Status: to, Skill: s.Using}
	if d := s.LastDecision(); d != nil && d.Kind == DecideRedo {
		ev.Feedback = d.Feedback
	}
	return ev
}

// Finished is what became of an attempt, as the service judged it.
type Finished struct {
	Result   Result
	Reason   string
	Summary  string
	Artifact bool
	Size     int
	File     string
	CostUSD  float64
	Usage    Usage
	// Added are the steps a route or decompose step's output adds to the
	// run once the step is done (the service reads them from the output).
	Added []PlanStep
	// Cancelled says a person stopped the attempt (the Cancel button).
	Cancelled bool
	// ErrorKind is the kind of error the agent reported; a rate limit or
	// an overload is waited out as RateLimit says.
	ErrorKind AgentErrorKind
	RateLimit RateLimit
	// Agent is the agent that ran the attempt, as stats names it (see
	// AttemptAgent): the backend that ran it knows, where the run's setup
	// only says what was asked for. "" when the backend does not know.
	Agent string
}

// Finish records the end of attempt a of step n. The step then waits for a
// decision (a checkpoint, a FAILED halt, an EMPTY pause, a budget pause, or
// a run a person paused) or, in guarded auto, advances; when that settles
// the last step, the run completes in the same change. An agent's rate
// limit or overload makes the step wait for an automatic redo and pauses
// the run until then.
func Finish(r *Run, n, a int, f Finished, now time.Time) ([]Event, error) {
	s, err := step(r, n)
	if err != nil {
		return nil, err
	}
	l := s.Latest()
	if c := Candidates(s); c != nil {
		return finishOfRound(r, s, c, a, f, now)
	}
	if !awaitsFinish(s, l, a) {
		return nil, staleFinish(s, a)
	}
	ev := finishedEvent(n, a, f)
	if s.Status == StepAborted {
		// The run was aborted while this attempt ran: its result and the
		// money it cost are kept; nothing moves on.
		if ev.Status, err = next(s, trRecord); err != nil {
			return nil, err
		}
		return stamp(r, now, ev), nil
	}
	t, paused := finishMove(r, s, l, f, &ev, now)
	if ev.Status, err = next(s, t); err != nil {
		return nil, err
	}
	if paused != nil {
		return stamp(r, now, ev, *paused), nil
	}
	return withSettle(r, now, f.Added, ev)
}

// finishOfRound records the end of attempt a of best-of step s, one of
// the candidates c of its latest round, unless that attempt has ended
// already or is none of them.
func finishOfRound(r *Run, s *Step, c []*Attempt, a int, f Finished, now time.Time) ([]Event, error) {
	if i := slices.IndexFunc(c, func(x *Attempt) bool { return x.N == a }); i < 0 || !awaitsFinish(s, c[i], a) {
		return nil, staleFinish(s, a)
	}
	return finishCandidate(r, s, a, f, now)
}

// staleFinish is the refusal of a finish for attempt a that s does not
// await.
func staleFinish(s *Step, a int) error {
	return fmt.Errorf("step %d attempt %d finished, but the step is %s: %w", s.N, a, s.Status, ErrStale)
}

// finishMove is the move step s makes as its latest attempt l ends as f
// says, completing ev on the way, and the run pause an agent's rate limit
// or overload brings (nil without one). The checks run in order: a
// checkpoint or the budget, the rate limit, the step's failure rules, and
// last a person's pause of the run.
func finishMove(r *Run, s *Step, l *Attempt, f Finished, ev *Event, now time.Time) (trigger, *Event) {
	t := trAdvance
	if checkpointOrBudget(r, s, f, ev) {
		t = trPause
	}
	paused, waits := rateLimited(r, s, ev, f, now)
	if f.Result == ResultFailed && !ev.Final && !waits {
		t = afterFailure(s, l, ev, t)
	}
	if t == trAdvance && r.PausedByPerson() {
		// A person paused the run: the step waits at a checkpoint, and
		// goes on if the run resumes in a mode that lets it.
		t, ev.Held = trPause, true
	}
	return t, paused
}

// awaitsFinish reports whether a is the latest attempt of s and still has
// no end: the step is running, or was aborted while the attempt ran. Any
// other finish is stale (a second report, or one for an older attempt).
func awaitsFinish(s *Step, l *Attempt, a int) bool {
	if l == nil || l.N != a || !l.Finished.IsZero() {
		return false
	}
	return s.Status == StepRunning || s.Status == StepAborted
}

// finishedEvent is the record of attempt a of step n ending as f says,
// before its new status is known.
func finishedEvent(n, a int, f Finished) Event {
	return Event{
		Type: EvStepFinished, Step: n, Attempt: a, Result: f.Result, Reason: f.Reason, Summary: f.Summary,
		Artifact: f.Artifact, Size: f.Size, File: f.File, CostUSD: f.CostUSD, Usage: f.Usage, ErrorKind: f.ErrorKind,
		Agent: f.Agent,
	}
}

// checkpointOrBudget reports whether s waits for a decision after f: at a
// checkpoint the run's mode sets, or because f takes the run over its
// budget, which ev's reason then says. A person's cancel, or a run over
// its budget, makes a failure final: no retry, fallback or giving up
// follows it.
func checkpointOrBudget(r *Run, s *Step, f Finished, ev *Event) bool {
	pause := pauses(r, s, f.Result)
	overBudget := r.BudgetUSD > 0 && r.CostUSD+f.CostUSD > r.BudgetUSD
	budget := fmt.Sprintf("budget exceeded: the run has cost $%.2f of its $%.2f budget", r.CostUSD+f.CostUSD, r.BudgetUSD)
	if !pause && overBudget {
		pause = true
		ev.Reason = budget
	}
	if f.Result == ResultFailed {
		ev.Final = f.Cancelled || overBudget
		if overBudget {
			ev.Reason += "; " + budget
		}
	}
	return pause
}

// afterFailure is the move a failed attempt l of s makes by the step's
// rules (t when they have none): its fallback next, or giving up on an
// optional step.
func afterFailure(s *Step, l *Attempt, ev *Event, t trigger) trigger {
	switch onFailure(s, AttemptSkill(s, l)) {
	case failFallback:
		ev.Skill = s.Rules.Fallback
		return trFallback
	case failGiveUp:
		return trGiveUp
	}
	return t
}

// failure is what becomes of a step whose attempt failed.
type failure int

const (
	failHalt     failure = iota // wait for the team (the blocker is named)
	failRetry                   // wait, and the service redoes it after the backoff
	failFallback                // run the fallback skill next, at once
	failGiveUp                  // an optional step: recorded, and the run goes on
)

// onFailure applies a workflow step's rules to a failed attempt that ran
// skill, in this order: the retries its on_error allows (for each skill it
// runs), then its fallback skill, then, for an optional step, going on
// without it; otherwise the run halts on it (with on_error gate, the team
// may also edit in the output or skip it).
func onFailure(s *Step, skill string) failure {
	switch {
	case s.Rules.OnError.Kind == OnErrorRetry && retriesUsed(s, skill) < s.Rules.OnError.Retries:
		return failRetry
	case s.Rules.Fallback != "" && skill != s.Rules.Fallback:
		return failFallback
	case s.Rules.Optional:
		return failGiveUp
	}
	return failHalt
}

// RetryActor is the actor of the redo decisions gonogo makes itself when a
// step's on_error asks for retries.
const RetryActor = "gonogo (retry)"

// maxBackoff caps the doubling wait between retries.
const maxBackoff = time.Hour

// AttemptSkill is the skill attempt a of s ran: the step's own, or its
// fallback. A nil attempt is the step's next one.
func AttemptSkill(s *Step, a *Attempt) string {
	switch {
	case a != nil && a.Skill != "":
		return a.Skill
	case a == nil && s.Using != "":
		return s.Using
	}
	return s.Skill
}

// retriesUsed counts the automatic retries of skill on s since a person
// last decided on the step: a person's redo starts the count again.
func retriesUsed(s *Step, skill string) int {
	n := 0
	for i := len(s.Decisions) - 1; i >= 0; i-- {
		d := s.Decisions[i]
		if d.Actor == RateLimitActor {
			continue
		}
		if d.Actor != RetryActor {
			break
		}
		if a := attempt(s, d.Attempt); a != nil && AttemptSkill(s, a) == skill {
			n++
		}
	}
	return n
}

// RetryDue reports whether s waits for an automatic retry (after an
// agent's rate limit, or as its on_error asks), when it is due and which
// retry it is (1-based) of how many. The service redoes the step then; a
// person may decide first.
func RetryDue(s *Step) (due time.Time, n, of int, ok bool) {
	l := s.Latest()
	if s.Status != StepWaiting || l == nil || l.Result != ResultFailed || l.Final {
		return time.Time{}, 0, 0, false
	}
	if !l.RetryAt.IsZero() {
		return l.RetryAt, rateLimitRetriesUsed(s) + 1, l.Retries, true
	}
	return onErrorRetryDue(s, l)
}

// onErrorRetryDue is RetryDue for a step whose latest attempt l FAILED
// without a rate limit: a retry its on_error allows, after the backoff.
func onErrorRetryDue(s *Step, l *Attempt) (due time.Time, n, of int, ok bool) {
	if s.Rules.OnError.Kind != OnErrorRetry {
		return time.Time{}, 0, 0, false
	}
	used := retriesUsed(s, AttemptSkill(s, l))
	if used >= s.Rules.OnError.Retries {
		return time.Time{}, 0, 0, false
	}
	return l.Finished.Add(backoff(s.Rules.OnError.Backoff, used)), used + 1, s.Rules.OnError.Retries, true
}

// RetryActorFor is who makes the automatic retry RetryDue reports for s.
func RetryActorFor(s *Step) string {
	if l := s.Latest(); l != nil && !l.RetryAt.IsZero() {
		return RateLimitActor
	}
	return RetryActor
}

// RetryKey is the idempotency key of the automatic retry of a step
// attempt, so a retry is applied once however often it is issued.
func RetryKey(id RunID, step, attempt int) string {
	return fmt.Sprintf("retry:%s:%d:%d", id, step, attempt)
}

// pauses says whether a step's result needs a decision before the run goes
// on: always for FAILED and EMPTY, and for anything else when the step's gate
// (or, without one, the run's mode) asks for a checkpoint.
func pauses(r *Run, s *Step, res Result) bool {
	switch {
	case res == ResultFailed || res == ResultEmpty:
		return true
	case s.Gate == GateAlways:
		return true
	case s.Gate == "":
		return r.Mode != ModeGuardedAuto
	}
	return false
}

// withSettle stamps ev, adds the steps a route or decompose step's output
// brings when ev makes it done, and appends run-finished when that leaves
// every step settled.
func withSettle(r *Run, now time.Time, added []PlanStep, ev Event) ([]Event, error) {
	evs := []Event{ev}
	expands := ev.Status == StepDone && len(added) > 0
	if expands {
		evs = append(evs, Event{Type: EvStepsAdded, Step: ev.Step, Added: added})
	}
	evs = stamp(r, now, evs...)
	// Added steps are not settled: they have yet to run.
	if !expands && completesRun(r, ev) {
		evs = append(evs, Event{Type: EvRunFinished, State: RunCompleted, Seq: evs[len(evs)-1].Seq + 1, Time: now})
	}
	return evs, nil
}

// completesRun reports whether ev completes r: it settles its step, and
// every other step is settled already.
func completesRun(r *Run, ev Event) bool {
	settles := ev.Status == StepDone || ev.Status == StepSkipped
	return settles && !r.Finished() && othersSettled(r, ev.Step)
}

// othersSettled reports whether every step but n is settled; it stops at
// the first that is not, which in a long run is rarely far.
func othersSettled(r *Run, n int) bool {
	for i := range r.Steps {
		if i+1 != n && !r.Steps[i].Settled() {
			return false
		}
	}
	return true
}

// SetMode changes how a run advances (resume with --auto or --force-auto).
// It returns nothing when the mode is unchanged.
func SetMode(r *Run, m Mode, now time.Time) []Event {
	if r.Mode == m || r.Finished() {
		return nil
	}
	return stamp(r, now, Event{Type: EvModeChanged, Mode: m})
}

// AbortRun ends a run on an actor's word when no step is waiting to take the
// decision (for example while steps are still pending or running).
func AbortRun(r *Run, actor, reason string, now time.Time) ([]Event, error) {
	if r.Finished() {
		return nil, fmt.Errorf("run %s is already %s: %w", r.ID, r.State, ErrStale)
	}
	return stamp(r, now, Event{Type: EvRunFinished, State: RunAborted, Actor: actor, Reason: reason}), nil
}

// ArtifactFile is where an attempt's artifact is written, relative to the
// data directory: runs/<id>/NN-<skill>.md for the step's latest artifact and
// runs/<id>/NN-<skill>.attempt-K.md for the earlier ones.
func ArtifactFile(id RunID, n int, skill string, attempt int, latest bool) string {
	if latest {
		return fmt.Sprintf("runs/%s/%02d-%s.md", id, n, skill)
	}
	return fmt.Sprintf("runs/%s/%02d-%s.attempt-%d.md", id, n, skill, attempt)
}
