package engine

import (
	"cmp"
	"context"
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
	log := cmp.Or(cfg.Log, slog.New(slog.DiscardHandler))
	pol := DefaultPolicy()
	if cfg.Policy != nil {
		pol = *cfg.Policy
	}
	limit := cmp.Or(cfg.RateLimit, DefaultRateLimit())
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
		if !idTaken(err) || try == 3 {
			return nil, fmt.Errorf("start run: %w", err)
		}
	}
	return s.advanceAfter(ctx, r), nil
}

// idTaken reports whether the store refused a new run because it holds
// its id already (ErrStale): two starts drew the same id, and the start
// draws another. A start whose key the store has seen is no such case.
func idTaken(err error) bool {
	return errors.Is(err, ErrStale) && !errors.Is(err, ErrDuplicate)
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
	edit, c, err := decisionCommit(id, r, d, body)
	if err != nil {
		return nil, err
	}
	added, err := s.addedBy(ctx, r, d, edit, body)
	if err != nil {
		return nil, err
	}
	evs, err := DecideExpand(r, d, edit, added, d.Time)
	if err != nil {
		return nil, err
	}
	return s.commitPicked(ctx, r, evs, c)
}

// commitPicked commits evs with c and the file moves of the candidate a
// pick among evs makes the step's (by a person, or by guarded auto).
func (s *Service) commitPicked(ctx context.Context, r *Run, evs []Event, c Commit) (*Run, error) {
	moves, err := PickWrites(r, evs)
	if err != nil {
		return nil, err
	}
	c.Files = append(c.Files, moves...)
	return s.commit(ctx, r, evs, c)
}

// decisionCommit is the commit of decision d on run id (r) before its
// events: its key, and the files it moves or writes: an edit's
// replacement artifact (and the earlier attempt's file it makes way for),
// or a skipped step's file. It returns the edit an edit decision brings.
func decisionCommit(id RunID, r *Run, d Decision, body []byte) (*Edit, Commit, error) {
	c := Commit{Key: DecisionStoreKey(id, d.Key)}
	switch d.Kind {
	case DecideEdit:
		edit, err := EditOf(r, d, body)
		if err != nil {
			return nil, Commit{}, err
		}
		if edit.File != "" {
			c.Files = append(makeWay(id, r.Step(d.Step), d.Attempt, edit.File), FileWrite{Path: edit.File, Body: body})
		}
		c.Artifacts = []ArtifactWrite{{Step: d.Step, Attempt: d.Attempt, Body: body}}
		return edit, c, nil
	case DecideSkip:
		c.Files = skipFiles(r, d.Step)
	}
	return nil, c, nil
}

// addedBy reads the steps d adds to r: those of a route or decompose
// step's output that d approves or edits, none for any other decision.
// A decision the step cannot take is refused as such, before its output
// is read.
func (s *Service) addedBy(ctx context.Context, r *Run, d Decision, edit *Edit, body []byte) ([]PlanStep, error) {
	st := r.Step(d.Step)
	if st == nil || d.Kind != DecideApprove && d.Kind != DecideEdit || !expands(st) {
		return nil, nil
	}
	if _, err := Decide(r, d, edit, d.Time); err != nil {
		return nil, err
	}
	return s.expansion(ctx, r, st, d, body)
}

// skipFiles are the file moves of skipping step n of r: a skipped step
// has no artifact file; the attempt's file is kept under its attempt
// name, like an earlier attempt's.
func skipFiles(r *Run, n int) []FileWrite {
	st := r.Step(n)
	if st == nil {
		return nil
	}
	if l := st.Latest(); l != nil && l.File != "" && l.File == ArtifactFile(r.ID, st.N, st.Skill, l.N, true) {
		return []FileWrite{{From: l.File, Path: ArtifactFile(r.ID, st.N, st.Skill, l.N, false)}}
	}
	return nil
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
	// Under the run's lock an attempt's end is either recorded or not yet:
	// one recorded is no longer running, though its execution may not have
	// let go of it yet.
	unlock := s.lock(id)
	defer unlock()
	s.mu.Lock()
	cancel, ok := s.running[execKey{id, step, attempt}]
	s.mu.Unlock()
	if ok {
		ok, err := s.stillRunning(ctx, id, step, attempt)
		if err != nil {
			return err
		}
		if ok {
			cancel(fmt.Errorf("cancelled by %s", actor))
			return nil
		}
	}
	return fmt.Errorf("step %d attempt %d is not running: %w", step, attempt, ErrStale)
}

// stillRunning reports whether the store holds attempt n of step as not
// ended.
func (s *Service) stillRunning(ctx context.Context, id RunID, step, n int) (bool, error) {
	r, err := s.store.Load(ctx, id)
	if err != nil {
		return false, err
	}
	st := r.Step(step)
	if st == nil {
		return false, nil
	}
	a := attempt(st, n)
	return a != nil && a.Finished.IsZero(), nil
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
	s.queue = slices.DeleteFunc(s.queue, func(q queued) bool { return q.run == id })
}
