package temporalbackend

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record"
)

// A cluster-wide limit on the steps that run at once (Config.MaxSteps)
// is kept by one slots workflow for each run task queue (SlotsWorkflow,
// id SlotsWorkflowPrefix + the queue), a semaphore every run workflow
// started with a limit asks: a ready step is queued (engine.Queue, as
// engine.Service queues a step past its MaxParallel) and asks for a slot
// for its next attempt; it starts once the slot is granted, and gives it
// back when the attempt's activity has ended. The count is the cluster's,
// not a worker's: it holds however many workers take steps.
//
// A step that no longer waits to start (its run paused, aborted or
// ended) gives its request or its slot back at once. The slots workflow
// asks each holder every slotCheckEvery whether it still holds its slot
// (the grant, sent again): a run's workflow that is gone (terminated by
// an operator) cannot answer, and its slot is freed.

const (
	// SlotsWorkflowName is the slots workflow's type; SlotsWorkflowPrefix
	// begins its id, which ends with the run task queue it serves.
	SlotsWorkflowName   = "gonogo.step-slots"
	SlotsWorkflowPrefix = "gonogo-step-slots-"

	// changeSlots gates asking for a slot before a step starts: runs
	// started without a limit, or before it, replay without.
	changeSlots = "gonogo-step-slots"

	sigAcquire = "acquire"
	sigRelease = "release"
	sigGranted = "slot-granted"
	// qrySlots reads the slots workflow's holders and waiting requests
	// (temporal workflow query --type slots).
	qrySlots = "slots"

	// slotCheckEvery is how often the slots workflow asks its holders
	// whether they hold their slot still.
	slotCheckEvery = time.Minute
	// slotRetryAfter is how long a run whose request the slots workflow
	// did not take (none runs) waits before it asks again.
	slotRetryAfter = 10 * time.Second
	// slotsHistoryLimit is how many history events the slots workflow
	// holds before it continues as new.
	slotsHistoryLimit = 10000
)

// SlotsWorkflowID is the id of the slots workflow of run task queue q.
func SlotsWorkflowID(q string) string { return SlotsWorkflowPrefix + q }

// slotRequest asks the slots workflow for a slot (acquire), or gives one
// back (release): Key names the attempt in the run's workflow.
type slotRequest struct {
	V        int    `json:"v"`
	Workflow string `json:"workflow"`
	Key      string `json:"key"`
	// Limit is the run's: a slot is granted while fewer than Limit are
	// held.
	Limit int `json:"limit,omitempty"`
}

// slotGrant tells a run's workflow that its request Key holds a slot.
type slotGrant struct {
	V   int    `json:"v"`
	Key string `json:"key"`
}

// slotsState is the slots workflow's input: empty at its start, what it
// held and queued when it continues as new.
type slotsState struct {
	V       int           `json:"v"`
	Holders []slotRequest `json:"holders,omitempty"`
	Waiting []slotRequest `json:"waiting,omitempty"`
}

// SlotsWorkflow grants the slots of one run task queue, in the order they
// were asked for, to the steps of every run started with a limit.
func SlotsWorkflow(ctx workflow.Context, st slotsState) error {
	if err := record.CheckVersion(st.V); err != nil {
		panic(err) // a newer gonogo's: it waits for a worker that reads it
	}
	s := &slots{st: st}
	if err := workflow.SetQueryHandler(ctx, qrySlots, func() (slotsState, error) { return s.st, nil }); err != nil {
		return err
	}
	acquire := workflow.GetSignalChannel(ctx, sigAcquire)
	release := workflow.GetSignalChannel(ctx, sigRelease)
	receive := func(c workflow.ReceiveChannel, apply func(slotRequest)) {
		var r slotRequest
		c.Receive(ctx, &r)
		if record.CheckVersion(r.V) == nil {
			apply(r)
		}
	}
	check := workflow.Now(ctx).Add(slotCheckEvery)
	for {
		if !workflow.Now(ctx).Before(check) {
			s.checkHolders(ctx)
			check = workflow.Now(ctx).Add(slotCheckEvery)
		}
		s.grant(ctx)
		if info := workflow.GetInfo(ctx); info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() >= slotsHistoryLimit {
			// What came in meanwhile goes with it, or it would be lost;
			// the new workflow grants first.
			var r slotRequest
			for acquire.ReceiveAsync(&r) {
				s.add(r)
			}
			for release.ReceiveAsync(&r) {
				s.remove(r)
			}
			return workflow.NewContinueAsNewError(ctx, SlotsWorkflowName, s.st)
		}
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(acquire, func(c workflow.ReceiveChannel, _ bool) { receive(c, s.add) })
		sel.AddReceive(release, func(c workflow.ReceiveChannel, _ bool) { receive(c, s.remove) })
		tctx, cancel := workflow.WithCancel(ctx)
		if len(s.st.Holders) > 0 {
			sel.AddFuture(workflow.NewTimer(tctx, max(check.Sub(workflow.Now(ctx)), time.Millisecond)), func(workflow.Future) {})
		}
		sel.Select(ctx)
		cancel()
	}
}

// slots is the slots workflow's state.
type slots struct{ st slotsState }

func sameRequest(a, b slotRequest) bool { return a.Workflow == b.Workflow && a.Key == b.Key }

// add queues a request; one asked again while it waits stays where it
// is, and one a holder asks again is granted again.
func (s *slots) add(r slotRequest) {
	if slices.ContainsFunc(s.st.Waiting, func(w slotRequest) bool { return sameRequest(w, r) }) {
		return
	}
	if i := slices.IndexFunc(s.st.Holders, func(h slotRequest) bool { return sameRequest(h, r) }); i >= 0 {
		s.st.Holders = slices.Delete(s.st.Holders, i, i+1)
	}
	s.st.Waiting = append(s.st.Waiting, r)
}

// remove frees a slot, or withdraws a request still waiting.
func (s *slots) remove(r slotRequest) {
	same := func(h slotRequest) bool { return sameRequest(h, r) }
	s.st.Holders = slices.DeleteFunc(s.st.Holders, same)
	s.st.Waiting = slices.DeleteFunc(s.st.Waiting, same)
}

// grant grants the waiting requests that fit, in order: a request fits
// while fewer slots than its limit are held. One whose run's workflow
// cannot be told (it is gone) is dropped.
func (s *slots) grant(ctx workflow.Context) {
	var still []slotRequest
	for _, r := range s.st.Waiting {
		if len(s.st.Holders) >= max(r.Limit, 1) {
			still = append(still, r)
			continue
		}
		if tell(ctx, r) {
			s.st.Holders = append(s.st.Holders, r)
		}
	}
	s.st.Waiting = still
}

// checkHolders grants each holder its slot again, which a run's workflow
// that holds it takes as said already; a holder that cannot be told
// (its workflow is gone) loses its slot.
func (s *slots) checkHolders(ctx workflow.Context) {
	s.st.Holders = slices.DeleteFunc(s.st.Holders, func(h slotRequest) bool { return !tell(ctx, h) })
}

// tell signals r's run workflow that r holds a slot, and reports whether
// it could.
func tell(ctx workflow.Context, r slotRequest) bool {
	err := workflow.SignalExternalWorkflow(ctx, r.Workflow, "", sigGranted, slotGrant{V: record.Version, Key: r.Key}).Get(ctx, nil)
	if err != nil {
		workflow.GetLogger(ctx).Info("a step slot's holder is gone; the slot is freed", "workflow", r.Workflow, "key", r.Key, "err", err)
	}
	return err == nil
}

// lease is a step's request for a slot, granted or not, and whether its
// attempt runs on it.
type lease struct {
	key              string
	granted, running bool
	// failed says the slots workflow did not take the request: it is
	// asked again after slotRetryAfter.
	failed bool
}

// slotted reports whether the run's steps wait for a slot.
func (f *flow) slotted() bool { return f.slotsV >= 1 && f.in.Slots != "" && f.in.MaxSteps > 0 }

// startSlots has a coroutine take the slots workflow's grants, for a run
// started with a limit under changeSlots.
func (f *flow) startSlots(ctx workflow.Context) {
	if f.in.Slots == "" || f.in.MaxSteps <= 0 {
		return
	}
	f.slotsV = workflow.GetVersion(ctx, changeSlots, workflow.DefaultVersion, 1)
	if f.slotsV < 1 {
		return
	}
	f.leases = map[int]*lease{}
	gctx, _ := workflow.NewDisconnectedContext(ctx)
	ch := workflow.GetSignalChannel(ctx, sigGranted)
	workflow.Go(gctx, func(ctx workflow.Context) {
		for {
			var g slotGrant
			ch.Receive(ctx, &g)
			f.granted(ctx, g)
		}
	})
}

// granted takes a grant: the step that asked may start; a grant no step
// waits for (its run moved on) is given back.
func (f *flow) granted(ctx workflow.Context, g slotGrant) {
	if record.CheckVersion(g.V) != nil {
		return
	}
	for _, l := range f.leases {
		if l.key == g.Key {
			if !l.granted {
				l.granted, f.changed = true, true
			}
			return
		}
	}
	f.signalSlots(ctx, sigRelease, g.Key)
}

// slotKey names a new request for the next attempt of step n, once: a
// request withdrawn (the run paused) and made again for the same attempt
// has a new key, so a late release, or a late grant, of the old one
// matches nothing the slots workflow or the run holds. The workflow
// run's id keeps keys apart across a continue-as-new, which restarts the
// count.
func (f *flow) slotKey(ctx workflow.Context, n int) string {
	f.slotAsks++
	return fmt.Sprintf("%s#%s.%d", refKey(n, len(f.run.Step(n).Attempts)+1), workflow.GetInfo(ctx).WorkflowExecution.RunID, f.slotAsks)
}

// haveSlot reports whether ready step n holds a slot to start on; one
// without asks for it (queued, as engine.Service queues a step with no
// free runner), once.
func (f *flow) haveSlot(ctx workflow.Context, n int) (bool, error) {
	if l := f.leases[n]; l != nil {
		return l.granted, nil
	}
	if f.run.Step(n).Status == engine.StepPending {
		if err := f.record(ctx, func(now time.Time) ([]engine.Event, error) { return engine.Queue(f.run, n, now) }); err != nil {
			return false, err
		}
	}
	l := &lease{key: f.slotKey(ctx, n)}
	f.leases[n] = l
	if err := f.signalSlots(ctx, sigAcquire, l.key); err != nil {
		workflow.GetLogger(ctx).Warn("ask for a step slot; asked again later", "run", f.run.ID, "step", n, "err", err)
		l.failed = true
		workflow.Go(ctx, func(ctx workflow.Context) {
			if workflow.Sleep(ctx, slotRetryAfter) == nil && f.leases[n] == l {
				delete(f.leases, n)
				f.changed = true
			}
		})
	}
	return false, nil
}

// signalSlots sends the slots workflow a request of the run's.
func (f *flow) signalSlots(ctx workflow.Context, name, key string) error {
	r := slotRequest{V: record.Version, Workflow: workflow.GetInfo(ctx).WorkflowExecution.ID, Key: key, Limit: f.in.MaxSteps}
	return workflow.SignalExternalWorkflow(ctx, f.in.Slots, "", name, r).Get(ctx, nil)
}

// dropUnready gives back the requests and slots of the steps that no
// longer wait to start (the run paused, aborted or ended) and run no
// attempt on them.
func (f *flow) dropUnready(ctx workflow.Context) {
	if !f.slotted() {
		return
	}
	ready := engine.Ready(f.run)
	for _, n := range slices.Sorted(maps.Keys(f.leases)) {
		l := f.leases[n]
		if l.running || slices.Contains(ready, n) {
			continue
		}
		delete(f.leases, n)
		if !l.failed {
			f.giveBack(ctx, n, l)
		}
	}
}

// releaseSlot gives back the slot step n's attempt ran on, once it ended.
func (f *flow) releaseSlot(ctx workflow.Context, n int) {
	if l := f.leases[n]; l != nil && l.running {
		delete(f.leases, n)
		f.giveBack(ctx, n, l)
	}
}

func (f *flow) giveBack(ctx workflow.Context, n int, l *lease) {
	if err := f.signalSlots(ctx, sigRelease, l.key); err != nil {
		// The slots workflow frees it when it next asks this run.
		workflow.GetLogger(ctx).Warn("give back a step slot", "run", f.run.ID, "step", n, "err", err)
	}
}

// slotStarted marks step n's slot as the one its attempt runs on.
func (f *flow) slotStarted(n int) {
	if l := f.leases[n]; l != nil {
		l.running = true
	}
}

// slotsWorkflow is the id of the slots workflow the runs started here ask, ""
// without a limit; it starts the workflow when none runs (after an
// operator ended it, say), which then counts only the slots asked for
// since.
func (b *Backend) slotsWorkflow(ctx context.Context) (string, error) {
	if b.cfg.MaxSteps <= 0 {
		return "", nil
	}
	id := SlotsWorkflowID(b.cfg.TaskQueue)
	_, err := b.cfg.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: b.cfg.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
	}, SlotsWorkflowName, slotsState{V: record.Version})
	if err != nil {
		return "", fmt.Errorf("the step slots workflow %s: %w", id, err)
	}
	return id, nil
}
