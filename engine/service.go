package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// ServiceConfig wires a Service to its adapters.
type ServiceConfig struct {
	Store       Store
	Catalog     Catalog
	Runner      Runner
	Notifier    Notifier // may be nil
	MaxParallel int      // steps executing at once across all runs; 0 = number of CPUs
	Now         func() time.Time
	Log         *slog.Logger

	// For workflows: the directory file conditions and command conditions
	// are relative to ("" is the current directory), the workflows a route
	// step may continue with (nil: none), and the policy steps added at run
	// time are checked against (the zero Policy: DefaultPolicy).
	WorkDir   string
	Workflows WorkflowSource
	Policy    *Policy

	// RateLimit is how an agent's rate limit or overload is waited out;
	// the zero value is DefaultRateLimit.
	RateLimit RateLimit
	// Setup is recorded with every run started without one of its own
	// (StartOptions.Setup): how this service carries out steps.
	Setup *Setup

	// Members says who a person acting on a run is, for the rule of who
	// may decide (see MayDecide); nil is LocalOperator. Approvers are
	// the approvers of runs recorded before runs kept their own (see
	// ApproversOf).
	Members   Members
	Approvers []string
}

// Service carries out transitions: it commits each one to the Store before
// it acts on it (starts a runner, tells the Notifier), runs steps on the
// Runner with at most MaxParallel at a time across all runs, and queues the
// rest. Run owns the executions it starts; they end before Run returns.
type Service struct {
	store    Store
	catalog  Catalog
	runner   Runner
	notifier Notifier
	now      func() time.Time
	log      *slog.Logger

	slots   int // runner slots; busy counts the taken ones
	workDir string
	expand  Expander
	limit   RateLimit
	setup   *Setup

	members   Members  // who a person is: ServiceConfig.Members
	approvers []string // ServiceConfig.Approvers

	mu      sync.Mutex
	busy    int
	live    map[RunID]*runLock
	queue   []queued // steps waiting for a slot, oldest first
	running map[execKey]context.CancelCauseFunc
	retries map[execKey]*time.Timer // automatic retries waiting for their backoff
	due     map[execKey]*time.Timer // checkpoints waiting for their next deadline
	base    context.Context
	stop    context.CancelFunc
	wg      sync.WaitGroup
	closed  bool
}

type queued struct {
	run  RunID
	step int
}

type execKey struct {
	run     RunID
	step    int
	attempt int
}

// NewService returns a Service; call Run to let it execute steps.
func NewService(cfg ServiceConfig) *Service {
	n := cfg.MaxParallel
	if n <= 0 {
		n = runtime.NumCPU()
	}
	now := cfg.Now
	if now == nil {
		now = func() time.Time { return time.Now().UTC() }
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	pol := DefaultPolicy()
	if cfg.Policy != nil {
		pol = *cfg.Policy
	}
	limit := cfg.RateLimit
	if limit == (RateLimit{}) {
		limit = DefaultRateLimit()
	}
	members := cfg.Members
	if members == nil {
		members = LocalOperator
	}
	base, stop := context.WithCancel(context.Background())
	return &Service{
		members: members, approvers: slices.Clone(cfg.Approvers), due: map[execKey]*time.Timer{},
		limit: limit,
		store: cfg.Store, catalog: cfg.Catalog, runner: cfg.Runner, notifier: cfg.Notifier,
		now: now, log: log, slots: n, workDir: cfg.WorkDir,
		expand: Expander{Workflows: cfg.Workflows, Catalog: cfg.Catalog, Policy: pol},
		live:   map[RunID]*runLock{}, running: map[execKey]context.CancelCauseFunc{}, retries: map[execKey]*time.Timer{},
		base: base, stop: stop, setup: cfg.Setup.Clone(),
	}
}

// Run lets the service execute steps until ctx ends, then stops every
// execution it started and waits for them. A step stopped this way is not
// recorded as finished: the store marks it interrupted when it is next
// opened, and it is offered for redo.
func (s *Service) Run(ctx context.Context) error {
	<-ctx.Done()
	s.Close()
	return nil
}

// Close stops the executions the service started and waits for them.
func (s *Service) Close() {
	s.mu.Lock()
	s.closed = true
	for k, t := range s.retries {
		t.Stop()
		delete(s.retries, k)
	}
	s.stopDeadlinesLocked()
	s.mu.Unlock()
	s.stop()
	s.wg.Wait()
}

// NewRunID returns a new run id: the UTC time, so ids sort by creation, and
// 48 random bits so two runs started in the same second almost never
// collide (Start draws again when they do).
func NewRunID(now time.Time) RunID {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return RunID(now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:]))
}

// runLock serializes the transitions of one run. It lives only while
// someone holds or waits for it, so the map does not grow with every run
// (or every unknown id) ever named.
type runLock struct {
	mu    sync.Mutex
	users int
}

func (s *Service) lock(id RunID) func() {
	s.mu.Lock()
	l, ok := s.live[id]
	if !ok {
		l = &runLock{}
		s.live[id] = l
	}
	l.users++
	s.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		s.mu.Lock()
		if l.users--; l.users == 0 {
			delete(s.live, id)
		}
		s.mu.Unlock()
	}
}

// commit folds evs into r, commits the change, tells the notifier, and
// returns the run as it now stands.
func (s *Service) commit(ctx context.Context, r *Run, evs []Event, c Commit) (*Run, error) {
	if len(evs) == 0 {
		return r, nil
	}
	after, err := Fold(r, evs)
	if err != nil {
		return nil, err
	}
	c.Run, c.Events, c.After = after, evs, r.Seq
	if err := s.store.Commit(ctx, c); err != nil {
		if !errors.Is(err, ErrFilesPending) {
			return nil, err
		}
		// The change is durable; only its files wait for the next open.
		s.log.Warn("artifact file not written", "run", r.ID, "err", err)
	}
	if s.notifier != nil {
		// after is never changed again (Fold makes new runs), so every
		// notice can share it.
		for _, ev := range evs {
			s.notifier.Notify(Notice{Run: after, Event: ev})
		}
	}
	return after, nil
}

// Start records a new run of p and begins its first step.
func (s *Service) Start(ctx context.Context, p Plan, opt StartOptions) (*Run, error) {
	if opt.Setup == nil {
		opt.Setup = s.setup
	}
	var r *Run
	for try := 0; ; try++ {
		id := NewRunID(s.now())
		evs, err := NewRun(id, p, opt, s.now())
		if err != nil {
			return nil, err
		}
		evs[0].Key = opt.Key
		unlock := s.lock(id)
		r, err = s.commit(ctx, &Run{}, evs, Commit{Key: opt.Key})
		unlock()
		if err == nil {
			break
		}
		// The store refuses a new run whose id it holds already (ErrStale):
		// two starts drew the same id; draw another.
		if !errors.Is(err, ErrStale) || errors.Is(err, ErrDuplicate) || try == 3 {
			return nil, fmt.Errorf("start run: %w", err)
		}
	}
	return s.advanceAfter(ctx, r), nil
}

// Resume picks a run up again after gonogo restarted: it starts the steps
// that are ready, and with a mode given (resume --auto) changes how the run
// advances. Steps waiting for a decision keep waiting.
func (s *Service) Resume(ctx context.Context, id RunID, mode Mode) (*Run, error) {
	unlock := s.lock(id)
	r, err := s.store.Load(ctx, id)
	if err == nil && mode != "" {
		r, err = s.commit(ctx, r, SetMode(r, mode, s.now()), Commit{})
	}
	unlock()
	if err != nil {
		return nil, err
	}
	return s.advanceAfter(ctx, r), nil
}

// ChangeSetup records that a run goes on with setup to, changed by actor;
// a setup equal to the recorded one records nothing. It returns the run as
// it stands.
func (s *Service) ChangeSetup(ctx context.Context, id RunID, to Setup, actor string) (*Run, error) {
	unlock := s.lock(id)
	defer unlock()
	r, err := s.store.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	evs, err := ChangeSetup(r, to, actor, s.now())
	if err != nil {
		return nil, err
	}
	return s.commit(ctx, r, evs, Commit{})
}

// Load returns the current state of a run.
func (s *Service) Load(ctx context.Context, id RunID) (*Run, error) {
	return s.store.Load(ctx, id)
}

// List returns the runs in the store, newest first.
func (s *Service) List(ctx context.Context) ([]RunSummary, error) {
	return s.store.List(ctx)
}

// Notes returns what a front end noted with a run.
func (s *Service) Notes(ctx context.Context, id RunID) (map[string]string, error) {
	return s.store.Notes(ctx, id)
}

// SetNotes merges notes into a run's; an empty value deletes its key.
func (s *Service) SetNotes(ctx context.Context, id RunID, set map[string]string) error {
	return s.store.SetNotes(ctx, id, set)
}

// Artifact returns the current artifact of a step attempt.
func (s *Service) Artifact(ctx context.Context, id RunID, step, attempt int) ([]byte, error) {
	return s.store.Artifact(ctx, id, step, attempt)
}

// Decide applies a decision and, when the run can go on, starts what comes
// next. body is the replacement artifact of an edit. The decision is
// durable before Decide returns; a person who may not decide
// (ErrNotApprover), a repeated key or a stale attempt is refused
// (ErrDuplicate, ErrStale) and changes nothing.
func (s *Service) Decide(ctx context.Context, id RunID, d Decision, body []byte) (*Run, error) {
	unlock := s.lock(id)
	r, err := s.decide(ctx, id, d, body)
	unlock()
	if err != nil {
		return nil, err
	}
	if d.Kind == DecideAbort {
		s.cancelRun(id, fmt.Errorf("run aborted by %s", d.Actor))
		return r, nil
	}
	return s.advanceAfter(ctx, r), nil
}

// Record applies a decision as Decide does, under the same rules, but
// starts nothing: it is for a run no service is carrying out (gonogo decide
// while no other gonogo holds the data directory). The run goes on from it
// when it is next resumed.
func (s *Service) Record(ctx context.Context, id RunID, d Decision, body []byte) (*Run, error) {
	unlock := s.lock(id)
	defer unlock()
	return s.decide(ctx, id, d, body)
}

func (s *Service) decide(ctx context.Context, id RunID, d Decision, body []byte) (*Run, error) {
	r, err := s.store.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := s.MayDecide(ctx, r, d.Actor); err != nil {
		return nil, err
	}
	if d.Time.IsZero() {
		d.Time = s.now()
	}
	var edit *Edit
	c := Commit{Key: d.Key}
	if d.Kind == DecideEdit {
		st := r.Step(d.Step)
		if st == nil {
			return nil, fmt.Errorf("run %s has no step %d: %w", id, d.Step, ErrNotFound)
		}
		if !hasContent(body) {
			return nil, fmt.Errorf("step %d: the replacement artifact is empty", d.Step)
		}
		edit = &Edit{Size: len(body), Summary: Summarize(body)}
		if len(r.Steps) > 1 {
			edit.File = ArtifactFile(id, st.N, st.Skill, d.Attempt, true)
			c.Files = append(makeWay(id, st, d.Attempt, edit.File), FileWrite{Path: edit.File, Body: body})
		}
		c.Artifacts = []ArtifactWrite{{Step: d.Step, Attempt: d.Attempt, Body: body}}
	}
	if d.Kind == DecideSkip {
		// A skipped step has no artifact file; the attempt's file is kept
		// under its attempt name, like an earlier attempt's.
		if st := r.Step(d.Step); st != nil {
			if l := st.Latest(); l != nil && l.File != "" && l.File == ArtifactFile(id, st.N, st.Skill, l.N, true) {
				c.Files = []FileWrite{{From: l.File, Path: ArtifactFile(id, st.N, st.Skill, l.N, false)}}
			}
		}
	}
	var added []PlanStep
	if st := r.Step(d.Step); st != nil && (d.Kind == DecideApprove || d.Kind == DecideEdit) && (st.Rules.Route || st.Rules.Decompose != "") {
		// A decision the step cannot take is refused as such, before its
		// output is read.
		if _, err := Decide(r, d, edit, d.Time); err != nil {
			return nil, err
		}
		if added, err = s.expansion(ctx, r, st, d, body); err != nil {
			return nil, err
		}
	}
	evs, err := DecideExpand(r, d, edit, added, d.Time)
	if err != nil {
		return nil, err
	}
	return s.commit(ctx, r, evs, c)
}

// expansion reads the steps a route or decompose step adds when a person
// approves its output or edits it: the edited text is read as the agent's
// would be, and an edit that does not say what to add is refused, so a
// person can correct an agent's bad JSON.
func (s *Service) expansion(ctx context.Context, r *Run, st *Step, d Decision, body []byte) ([]PlanStep, error) {
	out := body
	if d.Kind == DecideApprove {
		l := st.Latest()
		if l == nil || !l.Artifact || r.DryRun {
			return nil, nil
		}
		var err error
		if out, err = s.store.Artifact(ctx, r.ID, st.N, l.N); err != nil {
			return nil, fmt.Errorf("step %d: read its output: %w", st.N, err)
		}
	}
	added, err := s.expand.Expand(r, st, out)
	if err != nil {
		return nil, fmt.Errorf("step %d (%s): %w", st.N, st.ID, err)
	}
	return added, nil
}

// Abort ends a run on an actor's word whatever its steps are doing: running
// steps are stopped, and everything produced is kept.
func (s *Service) Abort(ctx context.Context, id RunID, actor string) (*Run, error) {
	unlock := s.lock(id)
	r, err := s.store.Load(ctx, id)
	if err == nil {
		err = s.MayDecide(ctx, r, actor)
	}
	if err == nil {
		var evs []Event
		if evs, err = AbortRun(r, actor, "aborted by "+actor, s.now()); err == nil {
			r, err = s.commit(ctx, r, evs, Commit{})
		}
	}
	unlock()
	if err != nil {
		return nil, err
	}
	s.cancelRun(id, fmt.Errorf("run aborted by %s", actor))
	return r, nil
}

// makeWay renames the file of any other attempt of st that sits at path,
// the step's latest-artifact name, to its attempt name, before attempt's
// artifact is written there. Apply makes the same move in the run.
func makeWay(id RunID, st *Step, attempt int, path string) []FileWrite {
	var out []FileWrite
	for _, a := range st.Attempts {
		if a.N != attempt && a.File == path {
			out = append(out, FileWrite{From: path, Path: ArtifactFile(id, st.N, st.Skill, a.N, false)})
		}
	}
	return out
}

// Cancel stops a running step attempt (the Cancel button). The attempt ends
// FAILED with the reason, and the run halts on it for redo or abort.
func (s *Service) Cancel(ctx context.Context, id RunID, step, attempt int, actor string) error {
	if err := s.mayAct(ctx, id, actor); err != nil {
		return err
	}
	s.mu.Lock()
	cancel, ok := s.running[execKey{id, step, attempt}]
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("step %d attempt %d is not running: %w", step, attempt, ErrStale)
	}
	cancel(fmt.Errorf("cancelled by %s", actor))
	return nil
}

func (s *Service) cancelRun(id RunID, cause error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, t := range s.retries {
		if k.run == id {
			t.Stop()
			delete(s.retries, k)
		}
	}
	for k, cancel := range s.running {
		if k.run == id {
			cancel(cause)
		}
	}
	kept := s.queue[:0]
	for _, q := range s.queue {
		if q.run != id {
			kept = append(kept, q)
		}
	}
	s.queue = kept
}

// advanceAfter advances a run after a change that is already durable: the
// change stands whatever happens next, so a failure to start the next step
// (gonogo is stopping, say) is logged and the run returned as committed;
// resume picks the step up.
func (s *Service) advanceAfter(ctx context.Context, r *Run) *Run {
	next, err := s.advance(ctx, r.ID)
	if err != nil {
		if s.base.Err() == nil && ctx.Err() == nil {
			s.log.Error("start the next step", "run", r.ID, "err", err)
		}
		return r
	}
	return next
}

// advance starts every ready step of a run that can have a runner slot and
// queues the others; it returns the run as it then stands.
func (s *Service) advance(ctx context.Context, id RunID) (*Run, error) {
	return s.advanceHeld(ctx, id, 0)
}

// advanceHeld is advance for a run whose step held already has a runner
// slot reserved for it (it was at the head of the queue when a slot came
// free); a reservation the step cannot use is handed on.
func (s *Service) advanceHeld(ctx context.Context, id RunID, held int) (*Run, error) {
	unlock := s.lock(id)
	defer unlock()
	defer func() {
		if held != 0 {
			s.release()
		}
	}()
	r, err := s.store.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	for _, n := range Ready(r) {
		got := n == held
		if got {
			held = 0
		} else {
			got = s.take(queued{id, n})
		}
		if !got {
			if r.Step(n).Status == StepPending {
				evs, err := Queue(r, n, s.now())
				if err != nil {
					return nil, err
				}
				if r, err = s.commit(ctx, r, evs, Commit{}); err != nil {
					return nil, err
				}
			}
			continue
		}
		if r, err = s.startStep(ctx, r, n); err != nil {
			s.release()
			return nil, err
		}
	}
	s.scheduleRetries(r)
	s.scheduleDeadlines(r)
	return r, nil
}

// scheduleRetries sets a timer for each step of r that waits for an
// automatic retry; when it fires, the service redoes the step as
// RetryActor, with a key that makes the redo count once. A retry is due
// from the stored run, so one that was waiting when gonogo stopped is
// scheduled again on resume.
func (s *Service) scheduleRetries(r *Run) {
	for i := range r.Steps {
		st := &r.Steps[i]
		due, _, _, ok := RetryDue(st)
		if !ok {
			continue
		}
		key := execKey{r.ID, st.N, st.Latest().N}
		if r.Paused && r.PausedBy != RateLimitActor {
			// A person holds the run; resuming it schedules the retry.
			continue
		}
		s.mu.Lock()
		if _, set := s.retries[key]; set || s.closed {
			s.mu.Unlock()
			continue
		}
		rk := retryKey{key, RetryActorFor(st)}
		s.retries[key] = time.AfterFunc(max(due.Sub(s.now()), 0), func() { s.retry(rk) })
		s.mu.Unlock()
	}
}

// retryKey is an automatic retry: the attempt it follows and who makes it.
type retryKey struct {
	execKey
	actor string
}

func (s *Service) retry(k retryKey) {
	s.mu.Lock()
	delete(s.retries, k.execKey)
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	d := Decision{Kind: DecideRedo, Actor: k.actor, Step: k.step, Attempt: k.attempt, Key: RetryKey(k.run, k.step, k.attempt)}
	_, err := s.Decide(s.base, k.run, d, nil)
	switch {
	case err == nil, s.base.Err() != nil:
	case errors.Is(err, ErrDuplicate), errors.Is(err, ErrStale), errors.Is(err, ErrNotWaiting):
		// A person decided first, or the retry was made already.
	case errors.Is(err, ErrPaused):
		// A person paused the run: the retry is scheduled again when it
		// is resumed.
	default:
		s.log.Error("retry step", "run", k.run, "step", k.step, "err", err)
	}
}

// take claims a runner slot for q when one is free and no step queued
// before q waits for it; otherwise it queues q (once) and hands free slots
// to the queue's head. Slots go to queued steps oldest first, so a run that
// keeps advancing cannot starve the others.
func (s *Service) take(q queued) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy < s.slots && (len(s.queue) == 0 || s.queue[0] == q) {
		s.busy++
		s.queue = slices.DeleteFunc(s.queue, func(x queued) bool { return x == q })
		return true
	}
	if !slices.Contains(s.queue, q) {
		s.queue = append(s.queue, q)
	}
	s.dispatchLocked()
	return false
}

// release frees a runner slot and hands it to the oldest queued step.
func (s *Service) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy--
	s.dispatchLocked()
}

// dispatchLocked reserves free slots for the oldest queued steps and
// advances their runs. A queued entry may be spent already (its step
// started another way, or its run ended): advanceHeld then hands the slot
// on.
func (s *Service) dispatchLocked() {
	for !s.closed && s.busy < s.slots && len(s.queue) > 0 {
		q := s.queue[0]
		s.queue = s.queue[1:]
		s.busy++
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if _, err := s.advanceHeld(s.base, q.run, q.step); err != nil && s.base.Err() == nil {
				s.log.Error("start queued step", "run", q.run, "step", q.step, "err", err)
			}
		}()
	}
}

// startStep commits the start of an attempt (the caller holds a slot and
// the run's lock) and hands the execution to a goroutine the service owns.
func (s *Service) startStep(ctx context.Context, r *Run, n int) (*Run, error) {
	// The execution is owned before its start is committed, so Close
	// either refuses it here or waits for it.
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errors.New("gonogo is shutting down")
	}
	s.wg.Add(1)
	s.mu.Unlock()
	evs, err := Start(r, n, s.now())
	if err == nil {
		r, err = s.commit(ctx, r, evs, Commit{})
	}
	if err != nil {
		s.wg.Done()
		return nil, err
	}
	st := r.Step(n)
	attempt := st.Latest().N
	job, ferr := s.prepare(ctx, r, st)
	ectx, cancel := context.WithCancelCause(s.base)
	key := execKey{r.ID, n, attempt}
	s.mu.Lock()
	s.running[key] = cancel
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		recorded := s.execute(ectx, r, n, attempt, job, ferr)
		s.mu.Lock()
		delete(s.running, key)
		s.mu.Unlock()
		cancel(nil)
		s.release()
		if recorded {
			if _, err := s.advance(s.base, r.ID); err != nil && s.base.Err() == nil {
				s.log.Error("advance run", "run", r.ID, "err", err)
			}
		}
	}()
	return r, nil
}

// prepare composes the job for an attempt. An error here (a threaded step
// that produced nothing, a skill that vanished) fails the attempt without
// running anything.
func (s *Service) prepare(ctx context.Context, r *Run, st *Step) (Job, error) {
	l := st.Latest()
	job := Job{Run: r.ID, Step: st.N, Attempt: l.N, Skill: st.Skill, DryRun: r.DryRun,
		Timeout: st.Rules.Timeout, Options: st.Rules.Options}
	if skill := AttemptSkill(st, l); skill != st.Skill {
		// The fallback runs as the step, with its own instructions.
		ps, why, _ := resolve(skill, s.catalog, s.expand.Policy)
		if why != "" && !r.DryRun {
			return job, fmt.Errorf("the fallback: %s", why)
		}
		c, d := *st, *st.StepDef
		d.Skill, d.Category, d.Execution, d.Leaf = skill, ps.Category, ps.Execution, ps.Leaf
		c.StepDef = &d
		st, job.Skill = &c, skill
	}
	if strings.Contains(st.Prompt, "{{") {
		prompt, err := s.interpolate(ctx, r, st.Prompt)
		if err != nil {
			return job, err
		}
		c, d := *st, *st.StepDef
		d.Prompt = prompt
		c.StepDef = &d
		st = &c
	}
	if len(st.Rules.Pre) > 0 && !r.DryRun {
		if err := CheckConditions(ctx, st.Rules.Pre, s.workDir, nil); err != nil {
			return job, fmt.Errorf("precondition failed: %w", err)
		}
	}
	in := PromptInput{Run: r, Step: st, Feedback: l.Feedback}
	sk, err := s.catalog.Skill(st.Skill)
	if err != nil && !r.DryRun {
		return job, fmt.Errorf("skill `%s` is no longer installed: %w", st.Skill, err)
	}
	in.Skill, job.SkillDir = sk, SkillDir(sk)
	if st.Leaf != "" && !r.DryRun {
		if in.Leaf, err = s.catalog.Agent(st.Leaf); err != nil {
			return job, fmt.Errorf("leaf agent `%s` of `%s` is not installed: %w", st.Leaf, st.Skill, err)
		}
	}
	if st.ThreadFrom > 0 && !r.DryRun { // a dry run has no artifact to hand on
		if in.Step, in.Threaded, err = s.threaded(ctx, r, st); err != nil {
			return job, err
		}
		st = in.Step
	}
	if len(st.Attempts) > 1 && in.Feedback != "" {
		prev := st.Attempts[len(st.Attempts)-2]
		if prev.Artifact {
			in.Previous, _ = s.store.Artifact(ctx, r.ID, st.N, prev.N)
		}
	}
	job.Prompt = ComposePrompt(in)
	return job, nil
}

// interpolate fills in the references a workflow prompt keeps until its
// step runs: {{run.id}}, {{today}} (the UTC date, YYYY-MM-DD) and
// {{steps.ID.output}}, the confirmed output of an upstream step (empty
// when that step was skipped or produced nothing).
func (s *Service) interpolate(ctx context.Context, r *Run, prompt string) (string, error) {
	var ferr error
	out := expandPromptRefs(prompt, func(name string) (string, bool) {
		switch name {
		case "run.id":
			return string(r.ID), true
		case "today":
			return s.now().UTC().Format("2006-01-02"), true
		}
		id, ok := stepRef(name)
		if !ok {
			return "", false
		}
		var from *Step
		for i := range r.Steps {
			if r.Steps[i].ID == id {
				from = &r.Steps[i]
			}
		}
		if from == nil {
			return "", false
		}
		l := from.Latest()
		if from.Status != StepDone || l == nil || !l.Artifact || r.DryRun {
			return "", true
		}
		body, err := s.store.Artifact(ctx, r.ID, from.N, l.N)
		if err != nil && ferr == nil {
			ferr = fmt.Errorf("read the output of step %q for {{%s}}: %w", id, name, err)
		}
		return strings.TrimSpace(string(body)), true
	})
	return out, ferr
}

// execute runs one attempt, judges it and records the result; it reports
// whether the result was recorded.
func (s *Service) execute(ctx context.Context, r *Run, n, attempt int, job Job, prepErr error) bool {
	st := r.Step(n)
	var out Outcome
	switch {
	case prepErr != nil:
		out.Err = prepErr
	case r.DryRun:
		out.NotRun = true
	default:
		started := s.now()
		out = s.runner.Run(ctx, job, func(p Progress) {
			if s.notifier == nil {
				return
			}
			if p.Elapsed == 0 {
				p.Elapsed = s.now().Sub(started)
			}
			s.notifier.Notify(Notice{Run: r, Event: Event{Type: EvStepStarted, Step: n, Attempt: attempt}, Progress: &p})
		})
	}
	if s.base.Err() != nil {
		// gonogo is stopping: leave the step running in the store, so it is
		// marked interrupted and offered for redo when the store reopens.
		return false
	}
	cancelled := false
	if cause := context.Cause(ctx); cause != nil && out.Err != nil && !errors.Is(cause, context.Canceled) {
		out.Err, cancelled = cause, true
	}
	sk, _ := s.catalog.Skill(job.Skill)
	res, reason := Judge(out, sk)
	f := Finished{Result: res, Reason: reason, CostUSD: out.CostUSD, Usage: out.Usage, Cancelled: cancelled,
		ErrorKind: out.AgentErrorKind, RateLimit: s.limit}
	keep := res == ResultProduced || res == ResultEmpty
	if res == ResultProduced {
		// The output was judged good; the step's own checks come next. An
		// output that fails them is kept, so the team can see why.
		if err := CheckConditions(ctx, st.Rules.Post, s.workDir, out.Artifact); err != nil {
			f.Result, f.Reason = ResultFailed, "postcondition failed: "+err.Error()
		} else if f.Added, err = s.expand.Expand(r, st, out.Artifact); err != nil {
			f.Result, f.Reason = ResultFailed, err.Error()
		}
	}
	var c Commit
	if hasContent(out.Artifact) && keep {
		f.Artifact, f.Size, f.Summary = true, len(out.Artifact), Summarize(out.Artifact)
		c.Artifacts = []ArtifactWrite{{Step: n, Attempt: attempt, Body: out.Artifact}}
		switch {
		case len(r.Steps) == 1:
		case f.Result == ResultFailed:
			// Output kept to show why it failed is not the step's
			// artifact: it goes under the attempt's name.
			f.File = ArtifactFile(r.ID, n, st.Skill, attempt, false)
			c.Files = []FileWrite{{Path: f.File, Body: out.Artifact}}
		default:
			f.File = ArtifactFile(r.ID, n, st.Skill, attempt, true)
			c.Files = append(makeWay(r.ID, st, attempt, f.File), FileWrite{Path: f.File, Body: out.Artifact})
		}
	}
	unlock := s.lock(r.ID)
	cur, err := s.store.Load(s.base, r.ID)
	if err == nil {
		var evs []Event
		if evs, err = Finish(cur, n, attempt, f, s.now()); err == nil {
			_, err = s.commit(s.base, cur, evs, c)
		}
	}
	unlock()
	if err != nil {
		if !errors.Is(err, ErrStale) {
			s.log.Error("record step result", "run", r.ID, "step", n, "attempt", attempt, "err", err)
			if s.notifier != nil {
				s.notifier.Notify(Notice{Run: r, Event: Event{Type: EvStepFinished, Step: n, Attempt: attempt},
					Err: fmt.Errorf("step %d: could not record its result: %w", n, err)})
			}
		}
		return false
	}
	return true
}

// threaded returns the threaded step st as it runs, handed the confirmed
// artifact ThreadSource names (past skipped steps), and that artifact; or
// st handed nothing when there is none.
func (s *Service) threaded(ctx context.Context, r *Run, st *Step) (*Step, []byte, error) {
	from, _ := ThreadSource(r, st)
	if from == nil {
		return withoutThread(st), nil, nil
	}
	if from.N != st.ThreadFrom {
		st = threadedFrom(st, from.N)
	}
	l := from.Latest()
	if from.Status != StepDone || l == nil || !l.Artifact {
		return st, nil, fmt.Errorf("step %d (%s) takes the artifact of step %d (%s), which has no confirmed artifact; redo step %d or abort",
			st.N, st.Skill, from.N, from.Skill, st.N)
	}
	body, err := s.store.Artifact(ctx, r.ID, from.N, l.N)
	if err != nil {
		return st, nil, fmt.Errorf("read the artifact of step %d: %w", from.N, err)
	}
	return st, body, nil
}

// withoutThread is a copy of st that is handed no artifact.
func withoutThread(st *Step) *Step { return threadedFrom(st, 0) }

// threadedFrom is a copy of st that is handed the artifact of step n.
func threadedFrom(st *Step, n int) *Step {
	c, d := *st, *st.StepDef
	d.ThreadFrom = n
	c.StepDef = &d
	return &c
}
