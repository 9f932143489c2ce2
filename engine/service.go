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
	// Now is the clock and NewID the source of run ids (nil: the UTC wall
	// clock, NewRunID): the service reads them and hands what they give
	// to the rules, which never draw either themselves.
	Now   func() time.Time
	NewID func(now time.Time) RunID
	Log   *slog.Logger

	// For workflows: what answers file and command conditions (nil: they
	// fail; see Probe), the workflows a route step may continue with (nil:
	// none), and the policy steps added at run time are checked against
	// (the zero Policy: DefaultPolicy).
	Probe     Probe
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
// rest.
//
// Its methods may be called from any goroutine, before Run too. The work
// they leave to be done later (an execution, a queued step's start, an
// automatic retry) is handed to Run, which starts it with Run's context
// and waits for it: nothing the service started outlives Run.
type Service struct {
	store    Store
	catalog  Catalog
	runner   Runner
	notifier Notifier
	now      func() time.Time
	newID    func(now time.Time) RunID
	log      *slog.Logger

	slots  int // runner slots; busy counts the taken ones
	probe  Probe
	expand Expander
	limit  RateLimit
	setup  *Setup

	members   Members  // who a person is: ServiceConfig.Members
	approvers []string // ServiceConfig.Approvers

	mu      sync.Mutex
	busy    int
	live    map[RunID]*runLock
	queue   []queued // steps waiting for a slot, oldest first
	running map[execKey]context.CancelCauseFunc
	retries map[execKey]*time.Timer // automatic retries waiting for their backoff

	// work is what the service's own goroutines are to do, handed over
	// for Run to start; owed counts the work promised (reserve) and not
	// handed over yet, which Run waits for once it is stopping; wake
	// tells Run there is work. Once stopping, nothing more is promised.
	work     []func(context.Context)
	owed     int
	wake     chan struct{}
	stopping bool
	due      map[execKey]*time.Timer // checkpoints waiting for their next deadline
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
	newID := cfg.NewID
	if newID == nil {
		newID = NewRunID
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
	return &Service{
		members: members, approvers: slices.Clone(cfg.Approvers), due: map[execKey]*time.Timer{},
		limit: limit,
		store: cfg.Store, catalog: cfg.Catalog, runner: cfg.Runner, notifier: cfg.Notifier,
		now: now, newID: newID, log: log, slots: n, probe: cfg.Probe,
		expand: Expander{Workflows: cfg.Workflows, Catalog: cfg.Catalog, Policy: pol},
		live:   map[RunID]*runLock{}, running: map[execKey]context.CancelCauseFunc{}, retries: map[execKey]*time.Timer{},
		wake: make(chan struct{}, 1), setup: cfg.Setup.Clone(),
	}
}

// errStopping refuses to start work once Run is stopping.
var errStopping = errors.New("gonogo is shutting down")

// Run carries out the work the service's methods hand it (executions,
// starts of queued steps, automatic retries), each in a goroutine given
// ctx, until ctx ends. Then it refuses new work, stops the retry timers,
// and waits for the work under way, whose executions see ctx end and stop
// their agents. A step stopped this way is not recorded as finished: it
// stays running in the store, is marked interrupted when the store is next
// opened, and is offered for redo. Call Run once; steps start only while
// it runs.
func (s *Service) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	done := ctx.Done()
	for {
		select {
		case <-s.wake:
		case <-done:
			done = nil // stopping: from now on, wait only for work owed
		}
		s.mu.Lock()
		if done == nil && !s.stopping {
			s.stopping = true
			for k, t := range s.retries {
				t.Stop()
				delete(s.retries, k)
			}
			s.stopDeadlinesLocked()
		}
		work := s.work
		s.work = nil
		finished := s.stopping && s.owed == 0
		s.mu.Unlock()
		for _, f := range work {
			wg.Go(func() { f(ctx) })
		}
		if finished {
			wg.Wait()
			return nil
		}
	}
}

// reserveLocked promises Run a piece of work, so that Run, once stopping,
// waits for it to be handed over; it is false once Run is stopping. Every
// promise is settled with handLocked.
func (s *Service) reserveLocked() bool {
	if s.stopping {
		return false
	}
	s.owed++
	return true
}

// handLocked gives Run the work promised by reserveLocked; nil settles
// the promise with no work.
func (s *Service) handLocked(f func(context.Context)) {
	s.owed--
	if f != nil {
		s.work = append(s.work, f)
	}
	select {
	case s.wake <- struct{}{}:
	default: // Run is woken already
	}
}

// spawnLocked hands Run work at once; false once Run is stopping.
func (s *Service) spawnLocked(f func(context.Context)) bool {
	if !s.reserveLocked() {
		return false
	}
	s.handLocked(f)
	return true
}

// isStopping reports whether Run is stopping, so that errors caused by
// the shutdown are not logged as failures.
func (s *Service) isStopping() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopping
}

// NewRunID returns a new run id: the UTC time, so ids sort by creation, and
// 48 random bits so two runs started in the same second almost never
// collide (Start draws again when they do). It is the service's id source
// unless ServiceConfig.NewID names another.
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
		now := s.now()
		id := s.newID(now)
		evs, err := NewRun(id, p, opt, now)
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
// (ErrNotApprover), a decision its run applied already under its key, a
// key the run used for another decision or a stale attempt is refused
// (ErrDuplicate, ErrKeyReused, ErrStale) and changes nothing.
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
	c := Commit{Key: DecisionStoreKey(id, d.Key)}
	if d.Kind == DecideEdit {
		if edit, err = EditOf(r, d, body); err != nil {
			return nil, err
		}
		if edit.File != "" {
			c.Files = append(makeWay(id, r.Step(d.Step), d.Attempt, edit.File), FileWrite{Path: edit.File, Body: body})
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
	r, err := s.personally(ctx, id, actor, Commit{}, func(r *Run) ([]Event, error) {
		return AbortRun(r, actor, "aborted by "+actor, s.now())
	})
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
		if !s.isStopping() && ctx.Err() == nil {
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
		if r.PausedByPerson() {
			// A person holds the run; resuming it schedules the retry.
			continue
		}
		s.mu.Lock()
		if _, set := s.retries[key]; set || s.stopping {
			s.mu.Unlock()
			continue
		}
		rk := retryKey{key, RetryActorFor(st)}
		s.retries[key] = time.AfterFunc(max(due.Sub(s.now()), 0), func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			delete(s.retries, rk.execKey)
			s.spawnLocked(func(ctx context.Context) { s.retry(ctx, rk) })
		})
		s.mu.Unlock()
	}
}

// retryKey is an automatic retry: the attempt it follows and who makes it.
type retryKey struct {
	execKey
	actor string
}

// retry redoes the attempt k follows, when its backoff is over.
func (s *Service) retry(ctx context.Context, k retryKey) {
	d := Decision{Kind: DecideRedo, Actor: k.actor, Step: k.step, Attempt: k.attempt, Key: RetryKey(k.run, k.step, k.attempt)}
	_, err := s.Decide(ctx, k.run, d, nil)
	switch {
	case err == nil, ctx.Err() != nil:
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
// has Run advance their runs. A queued entry may be spent already (its
// step started another way, or its run ended): advanceHeld then hands the
// slot on.
func (s *Service) dispatchLocked() {
	for !s.stopping && s.busy < s.slots && len(s.queue) > 0 {
		q := s.queue[0]
		s.queue = s.queue[1:]
		s.busy++
		s.spawnLocked(func(ctx context.Context) {
			if _, err := s.advanceHeld(ctx, q.run, q.step); err != nil && ctx.Err() == nil {
				s.log.Error("start queued step", "run", q.run, "step", q.step, "err", err)
			}
		})
	}
}

// startStep commits the start of an attempt (the caller holds a slot and
// the run's lock) and hands the execution to Run.
func (s *Service) startStep(ctx context.Context, r *Run, n int) (*Run, error) {
	// The execution is promised to Run before its start is committed, so
	// a stopping Run either refuses it here or waits for it: nothing is
	// committed after Run returns.
	s.mu.Lock()
	ok := s.reserveLocked()
	s.mu.Unlock()
	if !ok {
		return nil, errStopping
	}
	evs, err := Start(r, n, s.now())
	if err == nil {
		r, err = s.commit(ctx, r, evs, Commit{})
	}
	if err != nil {
		s.mu.Lock()
		s.handLocked(nil)
		s.mu.Unlock()
		return nil, err
	}
	st := r.Step(n)
	attempt := st.Latest().N
	job, ferr := s.prepare(ctx, r, st)
	// Cancel and an abort may stop the attempt before Run has started it:
	// halted keeps their cause until the execution's context exists.
	halted, halt := context.WithCancelCause(context.Background())
	key := execKey{r.ID, n, attempt}
	s.mu.Lock()
	s.running[key] = halt
	s.handLocked(func(runCtx context.Context) {
		ectx, cancel := context.WithCancelCause(runCtx)
		unhook := context.AfterFunc(halted, func() { cancel(context.Cause(halted)) })
		recorded := s.execute(runCtx, ectx, r, n, attempt, job, ferr)
		unhook()
		s.mu.Lock()
		delete(s.running, key)
		s.mu.Unlock()
		cancel(nil)
		halt(nil)
		s.release()
		if recorded {
			if _, err := s.advance(runCtx, r.ID); err != nil && runCtx.Err() == nil {
				s.log.Error("advance run", "run", r.ID, "err", err)
			}
		}
	})
	s.mu.Unlock()
	return r, nil
}

// prepare composes the job for an attempt: the rules are PlanAttempt and
// ComposeJob; prepare reads what they ask for. An error here (a threaded
// step that produced nothing, a skill that vanished) fails the attempt
// without running anything.
func (s *Service) prepare(ctx context.Context, r *Run, st *Step) (Job, error) {
	p, err := PlanAttempt(r, st, s.catalog, s.expand.Policy)
	if err != nil {
		return p.Job, err
	}
	read := make(map[ArtifactRef]ArtifactRead, len(p.Reads))
	for _, ref := range p.Reads {
		body, err := s.store.Artifact(ctx, r.ID, ref.Step, ref.Attempt)
		read[ref] = ArtifactRead{Body: body, Err: err}
	}
	var pre error
	if p.CheckPre {
		pre = CheckConditions(ctx, p.Step.Rules.Pre, nil, s.probe)
	}
	return ComposeJob(p, read, pre, s.catalog, s.now())
}

// execute runs one attempt in ctx (which a cancel or an abort ends with
// its cause), judges it and records the result; it reports whether the
// result was recorded. runCtx is Run's: when it ends, gonogo is stopping.
func (s *Service) execute(runCtx, ctx context.Context, r *Run, n, attempt int, job Job, prepErr error) bool {
	st := r.Step(n)
	var out Outcome
	switch {
	case prepErr != nil:
		out.Err = prepErr
	case r.DryRun:
		out.NotRun = true
	default:
		started := s.now()
		stop := s.pulse()
		out = s.runner.Run(ctx, job, func(p Progress) {
			if s.notifier == nil {
				return
			}
			if p.Elapsed == 0 {
				p.Elapsed = s.now().Sub(started)
			}
			s.notifier.Notify(Notice{Run: r, Event: Event{Type: EvStepStarted, Step: n, Attempt: attempt}, Progress: &p})
		})
		stop()
	}
	if runCtx.Err() != nil {
		// gonogo is stopping: leave the step running in the store, so it is
		// marked interrupted and offered for redo when the store reopens.
		return false
	}
	e := AttemptEnd{Run: r, Step: n, Attempt: attempt, Outcome: out, RateLimit: s.limit}
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		e.Cancel = cause // a person's cancel or an abort, with its reason
	}
	e.Skill, _ = s.catalog.Skill(job.Skill)
	f := JudgeAttempt(e)
	var post error
	if PostconditionsDue(st, f) {
		post = CheckConditions(ctx, st.Rules.Post, out.Artifact, s.probe)
	}
	var c Commit
	f, c.Artifacts, c.Files = SettleAttempt(e, f, post, s.expand)
	unlock := s.lock(r.ID)
	cur, err := s.store.Load(runCtx, r.ID)
	if err == nil {
		var evs []Event
		if evs, err = Finish(cur, n, attempt, f, s.now()); err == nil {
			_, err = s.commit(runCtx, cur, evs, c)
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
