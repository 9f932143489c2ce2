package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// memStore is the in-memory Store the engine's tests run the service on.
// It keeps the whole Store contract, checked by engine/storetest
// (store_contract_test.go), so what the service does against it, it does
// against bbolt: a change computed against an older journal is stale, a
// seen key is a duplicate, events must follow the journal without a gap,
// and restart recovers running steps as opening a store does. Its files
// are a map, not a data directory.
type memStore struct {
	mu       sync.Mutex
	runs     map[RunID]*Run
	journals map[RunID][]Event
	arts     map[artKey][][]byte // every version of an attempt's artifact, oldest first
	files    map[string][]byte   // the data directory
	fileLog  []FileWrite
	keys     map[string]bool
	notes    map[RunID]map[string]string

	// Hooks that let a test order the service's goroutines: beforeCommit
	// runs on the committing goroutine before the change is applied,
	// afterLoad on the loading goroutine with the run it loaded.
	beforeCommit func(Commit)
	afterLoad    func(*Run)
}

type artKey struct {
	run           RunID
	step, attempt int
}

func newMemStore() *memStore {
	return &memStore{runs: map[RunID]*Run{}, journals: map[RunID][]Event{}, arts: map[artKey][][]byte{},
		files: map[string][]byte{}, keys: map[string]bool{}, notes: map[RunID]map[string]string{}}
}

func (m *memStore) Commit(_ context.Context, c Commit) error {
	if c.Run == nil || len(c.Events) == 0 {
		return errors.New("commit without a run or events")
	}
	m.mu.Lock()
	hook := m.beforeCommit
	m.mu.Unlock()
	if hook != nil {
		hook(c)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	id := c.Run.ID
	cur, held := m.runs[id]
	var seq uint64
	if held {
		seq = cur.Seq
	}
	switch {
	case !held && c.After != 0:
		return fmt.Errorf("run %s is not in the store, but the change follows its event %d: %w: %w", id, c.After, ErrStale, ErrNotFound)
	case held && c.After == 0:
		return fmt.Errorf("run %s already exists: %w", id, ErrStale)
	case c.After != seq:
		return fmt.Errorf("run %s is at event %d, the change was computed at %d: %w", id, seq, c.After, ErrStale)
	}
	if c.Key != "" && m.keys[c.Key] {
		return fmt.Errorf("key %s: %w", c.Key, ErrDuplicate)
	}
	for i, ev := range c.Events {
		if ev.Seq != seq+uint64(i)+1 {
			return fmt.Errorf("run %s: event %d does not follow %d", id, ev.Seq, seq+uint64(i))
		}
	}
	if last := c.Events[len(c.Events)-1].Seq; c.Run.Seq != last {
		return fmt.Errorf("run %s: snapshot at %d, events end at %d", id, c.Run.Seq, last)
	}
	m.runs[id] = c.Run.Clone()
	m.journals[id] = append(m.journals[id], c.Events...)
	for _, a := range c.Artifacts {
		k := artKey{id, a.Step, a.Attempt}
		m.arts[k] = append(m.arts[k], slices.Clone(a.Body))
	}
	for _, f := range c.Files {
		m.fileLog = append(m.fileLog, f)
		if f.From != "" {
			m.files[f.Path] = m.files[f.From]
			delete(m.files, f.From)
			continue
		}
		m.files[f.Path] = slices.Clone(f.Body)
	}
	if c.Key != "" {
		m.keys[c.Key] = true
	}
	return nil
}

func (m *memStore) Load(_ context.Context, id RunID) (*Run, error) {
	m.mu.Lock()
	r, ok := m.runs[id]
	hook := m.afterLoad
	if ok {
		r = r.Clone()
	}
	m.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("run %s: %w", id, ErrNotFound)
	}
	if hook != nil {
		hook(r.Clone())
	}
	return r, nil
}

func (m *memStore) hooks(beforeCommit func(Commit), afterLoad func(*Run)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.beforeCommit, m.afterLoad = beforeCommit, afterLoad
}

func (m *memStore) Artifact(_ context.Context, id RunID, step, attempt int) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	vs := m.arts[artKey{id, step, attempt}]
	if len(vs) == 0 {
		return nil, fmt.Errorf("artifact of run %s step %d attempt %d: %w", id, step, attempt, ErrNotFound)
	}
	return slices.Clone(vs[len(vs)-1]), nil
}

func (m *memStore) List(context.Context) ([]RunSummary, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]RunSummary, 0, len(m.runs))
	for _, r := range m.runs {
		out = append(out, r.Summary())
	}
	slices.SortFunc(out, NewestFirst)
	return out, nil
}

func (m *memStore) Notes(_ context.Context, id RunID) (map[string]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.runs[id] == nil {
		return nil, fmt.Errorf("run %s: %w", id, ErrNotFound)
	}
	out := map[string]string{}
	maps.Copy(out, m.notes[id])
	return out, nil
}

func (m *memStore) SetNotes(_ context.Context, id RunID, set map[string]string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.runs[id] == nil {
		return fmt.Errorf("run %s: %w", id, ErrNotFound)
	}
	n := m.notes[id]
	if n == nil {
		n = map[string]string{}
		m.notes[id] = n
	}
	for k, v := range set {
		if v == "" {
			delete(n, k)
		} else {
			n[k] = v
		}
	}
	return nil
}

// restart does what opening a real store does after gonogo stopped: it
// commits Recover's change for every run, before anything reads the store
// again.
func (m *memStore) restart(now time.Time) error {
	m.mu.Lock()
	runs := slices.Collect(maps.Values(m.runs))
	m.mu.Unlock()
	slices.SortFunc(runs, func(a, b *Run) int { return strings.Compare(string(a.ID), string(b.ID)) })
	for _, r := range runs {
		c, ok, err := Recover(r, now, time.Time{})
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if err := m.Commit(context.Background(), c); err != nil {
			return err
		}
	}
	return nil
}

func (m *memStore) journal(id RunID) []Event {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.journals[id])
}

func (m *memStore) versions(id RunID, step, attempt int) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.arts[artKey{id, step, attempt}])
}

func (m *memStore) file(path string) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[path]
	return b, ok
}

func (m *memStore) fileWrites() []FileWrite {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.fileLog)
}

// fakeRunner returns scripted outcomes per skill (a default artifact once a
// skill's script runs out), records every job, counts how many run at once,
// and with gate set holds each call until the test sends on gate.
type fakeRunner struct {
	gate chan struct{}

	mu         sync.Mutex
	script     map[string][]Outcome
	jobs       []Job
	running    int
	maxRunning int
	cancelled  int
}

func (f *fakeRunner) Run(ctx context.Context, job Job, progress func(Progress)) Outcome {
	f.mu.Lock()
	f.jobs = append(f.jobs, job)
	f.running++
	f.maxRunning = max(f.maxRunning, f.running)
	out := Outcome{Artifact: fmt.Appendf(nil, "# %s, attempt %d\n\nThe %s artifact, written for %s.\n", job.Skill, job.Attempt, job.Skill, job.Run), CostUSD: 0.1}
	key := job.Skill
	if q := f.script[job.Runner+"/"+job.Skill]; len(q) > 0 {
		key = job.Runner + "/" + job.Skill // a best-of candidate's own script
	}
	if q := f.script[key]; len(q) > 0 {
		out, f.script[key] = q[0], q[1:]
	}
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.running--
		f.mu.Unlock()
	}()
	progress(Progress{Turns: 1, ToolCalls: 2, LastTool: "Read"})
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			f.mu.Lock()
			f.cancelled++
			f.mu.Unlock()
			return Outcome{Err: ctx.Err(), ExitCode: -1}
		}
	}
	return out
}

func (f *fakeRunner) calls() []Job {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.jobs)
}

func (f *fakeRunner) now() (running, maxRunning int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.running, f.maxRunning
}

// recordingNotifier keeps every notice and checks that each committed
// event it hears of is already in the store.
type recordingNotifier struct {
	store *memStore

	mu       sync.Mutex
	notices  []Notice
	problems []string
}

func (n *recordingNotifier) Notify(no Notice) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.notices = append(n.notices, no)
	if no.Progress != nil || no.Err != nil {
		return
	}
	j := n.store.journal(no.Run.ID)
	if uint64(len(j)) < no.Event.Seq || j[no.Event.Seq-1].Type != no.Event.Type {
		n.problems = append(n.problems, fmt.Sprintf("told of event %d (%s) before it was stored", no.Event.Seq, no.Event.Type))
	}
	if no.Run.Seq < no.Event.Seq {
		n.problems = append(n.problems, fmt.Sprintf("event %d came with a run at %d", no.Event.Seq, no.Run.Seq))
	}
}

func (n *recordingNotifier) events(id RunID) []Event {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []Event
	for _, no := range n.notices {
		if no.Progress == nil && no.Err == nil && no.Run.ID == id {
			out = append(out, no.Event)
		}
	}
	return out
}

func (n *recordingNotifier) progress() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := 0
	for _, no := range n.notices {
		if no.Progress != nil {
			c++
		}
	}
	return c
}

// startService makes a service of cfg and runs it until the returned stop
// is called or the test ends; stop returns once Run has.
func startService(tb testing.TB, cfg ServiceConfig) (*Service, func()) {
	svc := NewService(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := svc.Run(ctx); err != nil {
			tb.Errorf("service: %v", err)
		}
	}()
	stop := sync.OnceFunc(func() {
		cancel()
		<-done
	})
	tb.Cleanup(stop)
	return svc, stop
}

type harness struct {
	t      *testing.T
	store  *memStore
	runner *fakeRunner
	notes  *recordingNotifier
	cat    *memCatalog
	svc    *Service
	stop   func() // stops the service's Run and waits for it
	keys   int
}

// newHarness returns a service over an in-memory store, a fake runner and a
// recording notifier. Call it inside a synctest bubble: the service's
// goroutines then belong to the bubble and synctest.Wait says when they are
// all idle. The service runs until the test ends or h.stop is called.
func newHarness(t *testing.T, maxParallel int, gated bool) *harness {
	return newHarnessWith(t, maxParallel, gated, nil)
}

// newHarnessWith is newHarness with adjust given the harness and the
// service's configuration before the service is made.
func newHarnessWith(t *testing.T, maxParallel int, gated bool, adjust func(*harness, *ServiceConfig)) *harness {
	h := &harness{t: t, store: newMemStore(), runner: &fakeRunner{script: map[string][]Outcome{}}, cat: testCatalog(true)}
	if gated {
		h.runner.gate = make(chan struct{})
	}
	h.notes = &recordingNotifier{store: h.store}
	cfg := ServiceConfig{Store: h.store, Catalog: h.cat, Runner: h.runner, Notifier: h.notes, MaxParallel: maxParallel}
	if adjust != nil {
		adjust(h, &cfg)
	}
	h.svc, h.stop = startService(t, cfg)
	t.Cleanup(func() {
		h.stop()
		h.notes.mu.Lock()
		defer h.notes.mu.Unlock()
		for _, p := range h.notes.problems {
			t.Error(p)
		}
	})
	return h
}

func (h *harness) chain(flags Flags, names ...string) Plan {
	h.t.Helper()
	p, err := PreflightChain(ChainExpr{Source: strings.Join(names, " -> "), Names: names, Flags: flags, Context: "mobile checkout"}, h.cat, DefaultPolicy())
	if err != nil {
		h.t.Fatal(err)
	}
	return p
}

func (h *harness) start(p Plan) RunID {
	h.t.Helper()
	r, err := h.svc.Start(h.t.Context(), p, StartOptions{StartedBy: "U-ana", Origin: Origin{Channel: "C1", Thread: "1.1"}})
	if err != nil {
		h.t.Fatalf("start: %v", err)
	}
	return r.ID
}

func (h *harness) load(id RunID) *Run {
	h.t.Helper()
	r, err := h.store.Load(h.t.Context(), id)
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

// decision is a decision on the latest attempt of step n, with a new key.
func (h *harness) decision(id RunID, n int, k DecisionKind) Decision {
	h.t.Helper()
	h.keys++
	a := 0
	if l := h.load(id).Step(n).Latest(); l != nil {
		a = l.N
	}
	return Decision{Kind: k, Actor: "U-ana", Step: n, Attempt: a, Key: fmt.Sprintf("slack-%d", h.keys)}
}

func (h *harness) decide(id RunID, n int, k DecisionKind, feedback string, body []byte) *Run {
	h.t.Helper()
	d := h.decision(id, n, k)
	d.Feedback = feedback
	r, err := h.svc.Decide(h.t.Context(), id, d, body)
	if err != nil {
		h.t.Fatalf("%s step %d: %v", k, n, err)
	}
	return r
}

// expect checks the run's state and its steps' statuses and latest results.
func (h *harness) expect(id RunID, state RunState, steps ...string) *Run {
	h.t.Helper()
	r := h.load(id)
	var got []string
	for _, s := range r.Steps {
		e := string(s.Status)
		if l := s.Latest(); l != nil {
			e += "/" + string(l.Result)
		}
		got = append(got, e)
	}
	if r.State != state || !slices.Equal(got, steps) {
		h.t.Fatalf("run is %s with steps %q, want %s with %q (halt %q)", r.State, got, state, steps, r.Halt)
	}
	return r
}

// checkJournal checks the journal is contiguous, rebuilds the stored
// snapshot, and was told to the notifier event by event.
func (h *harness) checkJournal(id RunID) []Event {
	h.t.Helper()
	j := h.store.journal(id)
	for i, ev := range j {
		if ev.Seq != uint64(i+1) {
			h.t.Fatalf("journal entry %d has seq %d", i, ev.Seq)
		}
	}
	rebuilt, err := Rebuild(j)
	if err != nil {
		h.t.Fatal(err)
	}
	if stored := h.load(id); !reflect.DeepEqual(rebuilt, stored) {
		h.t.Fatalf("the journal does not rebuild the stored run:\nrebuilt %+v\nstored  %+v", rebuilt, stored)
	}
	told := h.notes.events(id)
	if len(told) != len(j) {
		h.t.Fatalf("notifier heard of %d events, the journal has %d", len(told), len(j))
	}
	for i := range told {
		if told[i].Seq != j[i].Seq || told[i].Type != j[i].Type {
			h.t.Fatalf("notice %d is event %d (%s), journal has %d (%s)", i, told[i].Seq, told[i].Type, j[i].Seq, j[i].Type)
		}
	}
	return j
}

func TestServiceCheckpointedChain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, false)
		id := h.start(h.chain(Flags{}, "deliver-prd", "deliver-user-stories", "define-problem-statement"))
		synctest.Wait()
		h.expect(id, RunWaiting, "waiting/PRODUCED", "pending", "pending")
		r := h.decide(id, 1, DecideApprove, "", nil)
		// The decision is durable and the next step started before Decide returns.
		if r.Step(1).Status != StepDone || r.Step(2).Status != StepRunning {
			t.Fatalf("Decide returned steps %s/%s, want done/running", r.Step(1).Status, r.Step(2).Status)
		}
		synctest.Wait()
		h.expect(id, RunWaiting, "done/PRODUCED", "waiting/PRODUCED", "pending")
		h.decide(id, 2, DecideApprove, "", nil)
		synctest.Wait()
		h.expect(id, RunWaiting, "done/PRODUCED", "done/PRODUCED", "waiting/PRODUCED")
		h.decide(id, 3, DecideApprove, "", nil)
		synctest.Wait()
		r = h.expect(id, RunCompleted, "done/PRODUCED", "done/PRODUCED", "done/PRODUCED")

		j := h.checkJournal(id)
		if last := j[len(j)-1]; last.Type != EvRunFinished || last.State != RunCompleted {
			t.Fatalf("last event %+v, want run-finished completed", last)
		}
		jobs := h.runner.calls()
		if len(jobs) != 3 {
			t.Fatalf("runner ran %d jobs, want 3", len(jobs))
		}
		for i, job := range jobs {
			s := r.Step(i + 1)
			if job.Run != id || job.Step != s.N || job.Attempt != 1 || job.Skill != s.Skill || job.DryRun {
				t.Errorf("job %d = %+v", i, job)
			}
			if !strings.Contains(job.Prompt, "Instructions of "+s.Skill) || !strings.Contains(job.Prompt, "mobile checkout") {
				t.Errorf("job %d prompt lacks the skill's instructions or the context:\n%s", i, job.Prompt)
			}
			if strings.Contains(job.Prompt, "## Input") {
				t.Errorf("job %d got a threaded artifact without --thread", i)
			}
			path := ArtifactFile(id, s.N, s.Skill, 1, true)
			if b, ok := h.store.file(path); !ok || !strings.Contains(string(b), "# "+s.Skill+", attempt 1") {
				t.Errorf("file %s = %q, %v", path, b, ok)
			}
			if l := s.Latest(); l.File != path || !l.Artifact || l.Summary != s.Skill+", attempt 1" || l.Size == 0 || l.CostUSD != 0.1 {
				t.Errorf("attempt of step %d recorded as %+v", s.N, l)
			}
			if d := s.LastDecision(); d == nil || d.Actor != "U-ana" || d.Key == "" || d.Attempt != 1 || d.Time.IsZero() {
				t.Errorf("decision on step %d recorded as %+v", s.N, d)
			}
		}
		if h.notes.progress() != 3 {
			t.Errorf("notifier heard %d progress notices, want 3", h.notes.progress())
		}
		if r.StartedBy != "U-ana" || r.Origin.Channel != "C1" {
			t.Errorf("run starter and origin lost: %q %+v", r.StartedBy, r.Origin)
		}
	})
}

func TestServiceGuardedAutoPlan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, false)
		doc := planDoc(blk(50, "deliver-prd"), blk(60, "utility-pm-critic"), blk(70, "deliver-user-stories"))
		p, err := PreflightPlan(doc, h.cat, DefaultPolicy(), Flags{Auto: true})
		if err != nil {
			t.Fatal(err)
		}
		id := h.start(p)
		synctest.Wait()
		r := h.expect(id, RunCompleted, "done/PRODUCED", "done/PRODUCED", "done/PRODUCED")
		if r.Mode != ModeGuardedAuto {
			t.Fatalf("mode = %s", r.Mode)
		}
		for _, s := range r.Steps {
			if len(s.Decisions) != 0 {
				t.Errorf("step %d needed decisions %+v", s.N, s.Decisions)
			}
		}
		jobs := h.runner.calls()
		if len(jobs) != 3 || !strings.Contains(jobs[1].Prompt, `<agent name="pm-critic">`) || !strings.Contains(jobs[1].Prompt, "You are pm-critic.") {
			t.Fatalf("the dispatch step's prompt does not inline its leaf:\n%s", jobs[1].Prompt)
		}
		if !strings.Contains(jobs[0].Prompt, "prompt at 50") {
			t.Errorf("the plan step's prompt is missing:\n%s", jobs[0].Prompt)
		}
		if r.CostUSD < 0.29 || r.CostUSD > 0.31 {
			t.Errorf("run cost %v, want 0.3", r.CostUSD)
		}
		h.checkJournal(id)
	})
}

func TestServiceEmptyPausesInAuto(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, false)
		h.runner.script["deliver-user-stories"] = []Outcome{{CostUSD: 0.2}}
		id := h.start(h.chain(Flags{ForceAuto: true}, "deliver-prd", "deliver-user-stories", "define-problem-statement"))
		synctest.Wait()
		r := h.expect(id, RunWaiting, "done/PRODUCED", "waiting/EMPTY", "pending")
		if r.Mode != ModeGuardedAuto || r.Halt == "" {
			t.Fatalf("mode %s halt %q, want guarded-auto paused with a reason", r.Mode, r.Halt)
		}
		h.decide(id, 2, DecideSkip, "", nil)
		synctest.Wait()
		h.expect(id, RunCompleted, "done/PRODUCED", "skipped/EMPTY", "done/PRODUCED")
		if _, ok := h.store.file(ArtifactFile(id, 2, "deliver-user-stories", 1, true)); ok {
			t.Error("a step with no artifact has a file")
		}
		h.checkJournal(id)
	})
}

func TestServiceFailedHalts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, false)
		h.runner.script["deliver-prd"] = []Outcome{{ExitCode: 2, Stderr: "reading plan\nfatal: model overloaded\n", Artifact: []byte("# half")}}
		p := testPlan(InputPlan, "deliver-prd", "deliver-user-stories")
		p.Domain, p.Flags.Auto = DomainClear, true
		id := h.start(p)
		synctest.Wait()
		r := h.expect(id, RunWaiting, "waiting/FAILED", "pending")
		reason := r.Step(1).Latest().Reason
		if !strings.Contains(reason, "exited with code 2") || !strings.Contains(reason, "model overloaded") || r.Halt != reason {
			t.Fatalf("reason %q halt %q", reason, r.Halt)
		}
		if r.Step(1).Latest().Artifact {
			t.Error("a FAILED attempt stored its partial output as the artifact")
		}
		for _, k := range []DecisionKind{DecideApprove, DecideSkip} {
			if _, err := h.svc.Decide(t.Context(), id, h.decision(id, 1, k), nil); !errors.Is(err, ErrNotWaiting) {
				t.Errorf("%s of a FAILED step: %v, want ErrNotWaiting", k, err)
			}
		}
		h.decide(id, 1, DecideRedo, "", nil)
		synctest.Wait()
		h.expect(id, RunCompleted, "done/PRODUCED", "done/PRODUCED")
		h.checkJournal(id)
	})
}

func TestServiceRedoWithFeedback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, false)
		id := h.start(h.chain(Flags{}, "deliver-prd", "deliver-user-stories"))
		synctest.Wait()
		first := ArtifactFile(id, 1, "deliver-prd", 1, true)
		if _, ok := h.store.file(first); !ok {
			t.Fatalf("attempt 1 was not written to %s", first)
		}
		h.decide(id, 1, DecideRedo, "Add a rollout section.", nil)
		synctest.Wait()
		r := h.expect(id, RunWaiting, "waiting/PRODUCED", "pending")
		jobs := h.runner.calls()
		if len(jobs) != 2 || jobs[1].Step != 1 || jobs[1].Attempt != 2 {
			t.Fatalf("jobs %+v, want step 1 attempt 2 second", jobs)
		}
		for _, want := range []string{"Add a rollout section.", "# deliver-prd, attempt 1", "## Your previous attempt", "## Reviewer feedback"} {
			if !strings.Contains(jobs[1].Prompt, want) {
				t.Errorf("the redo prompt lacks %q:\n%s", want, jobs[1].Prompt)
			}
		}
		if got := r.Step(1).Latest().Feedback; got != "Add a rollout section." {
			t.Errorf("attempt 2 feedback = %q", got)
		}
		// The earlier attempt made way for the new one on disk.
		old := ArtifactFile(id, 1, "deliver-prd", 1, false)
		if b, ok := h.store.file(old); !ok || !strings.Contains(string(b), "attempt 1") {
			t.Errorf("attempt 1 at %s = %q, %v", old, b, ok)
		}
		if b, ok := h.store.file(first); !ok || !strings.Contains(string(b), "attempt 2") {
			t.Errorf("latest at %s = %q, %v", first, b, ok)
		}
		if a := r.Step(1).Attempts; a[0].File != old || a[1].File != first {
			t.Errorf("attempt files %q and %q, want %q and %q", a[0].File, a[1].File, old, first)
		}
		// A redo without feedback does not resend the previous attempt.
		h.decide(id, 1, DecideRedo, "", nil)
		synctest.Wait()
		if p := h.runner.calls()[2].Prompt; strings.Contains(p, "previous attempt") || strings.Contains(p, "attempt 2") {
			t.Errorf("a redo without feedback got the previous attempt:\n%s", p)
		}
		h.checkJournal(id)
	})
}

func TestServiceEditAndThread(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, false)
		id := h.start(h.chain(Flags{Thread: true}, "deliver-prd", "deliver-user-stories"))
		synctest.Wait()
		body := []byte("# Edited PRD\n\nWritten by hand after review.\n")
		if _, err := h.svc.Decide(t.Context(), id, h.decision(id, 1, DecideEdit), []byte(" \n")); err == nil {
			t.Fatal("an edit with a blank body was accepted")
		}
		h.decide(id, 1, DecideEdit, "", body)
		synctest.Wait()
		r := h.expect(id, RunWaiting, "done/PRODUCED", "waiting/PRODUCED")
		if got, err := h.svc.Artifact(t.Context(), id, 1, 1); err != nil || string(got) != string(body) {
			t.Fatalf("stored artifact after the edit = %q, %v", got, err)
		}
		if h.store.versions(id, 1, 1) != 2 {
			t.Errorf("the agent's original was not kept as the first version")
		}
		path := ArtifactFile(id, 1, "deliver-prd", 1, true)
		if b, _ := h.store.file(path); string(b) != string(body) {
			t.Errorf("file %s = %q after the edit", path, b)
		}
		if a := r.Step(1).Latest(); !a.Edited || a.Size != len(body) || a.Summary != "Edited PRD" || a.File != path {
			t.Errorf("edited attempt recorded as %+v", a)
		}
		prompt := h.runner.calls()[1].Prompt
		if !strings.Contains(prompt, "## Input: the confirmed artifact of step 1 (`deliver-prd`)") ||
			!strings.Contains(prompt, "Written by hand after review.") || strings.Contains(prompt, "# deliver-prd, attempt 1") {
			t.Errorf("step 2 did not get the edited artifact:\n%s", prompt)
		}
		h.checkJournal(id)
	})
}

func TestServiceSingleStepWritesNoFile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, false)
		id := h.start(h.chain(Flags{}, "deliver-prd"))
		synctest.Wait()
		h.decide(id, 1, DecideEdit, "", []byte("# Mine\n"))
		synctest.Wait()
		r := h.expect(id, RunCompleted, "done/PRODUCED")
		if w := h.store.fileWrites(); len(w) != 0 {
			t.Fatalf("a single-step run wrote files %+v", w)
		}
		if r.Step(1).Latest().File != "" {
			t.Fatalf("a single-step attempt names file %q", r.Step(1).Latest().File)
		}
		if got, _ := h.svc.Artifact(t.Context(), id, 1, 1); string(got) != "# Mine\n" {
			t.Fatalf("stored artifact = %q", got)
		}
	})
}

// Past a skipped step, a threaded step takes the nearest earlier confirmed
// artifact, or runs without one when there is none: a skip never leaves a
// step that cannot run.
func TestServiceThreadAfterSkip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, false)
		id := h.start(h.chain(Flags{Thread: true}, "deliver-prd", "deliver-user-stories", "define-problem-statement"))
		synctest.Wait()
		h.decide(id, 1, DecideApprove, "", nil)
		synctest.Wait()
		h.decide(id, 2, DecideSkip, "", nil)
		synctest.Wait()
		h.expect(id, RunWaiting, "done/PRODUCED", "skipped/PRODUCED", "waiting/PRODUCED")
		calls := h.runner.calls()
		if len(calls) != 3 {
			t.Fatalf("the runner ran %d times, want 3", len(calls))
		}
		p := calls[2].Prompt
		if !strings.Contains(p, "## Input: the confirmed artifact of step 1 (`deliver-prd`)") || strings.Contains(p, "deliver-user-stories, attempt") {
			t.Errorf("step 3 was not handed step 1's artifact past the skipped step 2:\n%s", p)
		}
		h.checkJournal(id)
	})
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, false)
		id := h.start(h.chain(Flags{Thread: true}, "deliver-prd", "deliver-user-stories"))
		synctest.Wait()
		h.decide(id, 1, DecideSkip, "", nil)
		synctest.Wait()
		h.expect(id, RunWaiting, "skipped/PRODUCED", "waiting/PRODUCED")
		if p := h.runner.calls()[1].Prompt; strings.Contains(p, "## Input") {
			t.Errorf("step 2 was handed an input though no step before it confirmed one:\n%s", p)
		}
		r := h.load(id)
		if from, passed := ThreadSource(r, r.Step(2)); from != nil || len(passed) != 1 || passed[0].N != 1 {
			t.Errorf("ThreadSource(step 2) = %v, %v; want none, past step 1", from, passed)
		}
	})
}

func TestServiceDryRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, false)
		id := h.start(h.chain(Flags{DryRun: true}, "deliver-prd", "deliver-user-stories"))
		synctest.Wait()
		r := h.expect(id, RunWaiting, "waiting/NOT-EXECUTED", "pending")
		if r.Step(1).Latest().Reason != "NOT EXECUTED - dry run" || !r.DryRun {
			t.Fatalf("dry-run attempt = %+v", r.Step(1).Latest())
		}
		h.decide(id, 1, DecideApprove, "", nil)
		synctest.Wait()
		h.expect(id, RunWaiting, "done/NOT-EXECUTED", "waiting/NOT-EXECUTED")
		h.decide(id, 2, DecideApprove, "", nil)
		synctest.Wait()
		h.expect(id, RunCompleted, "done/NOT-EXECUTED", "done/NOT-EXECUTED")
		if n := len(h.runner.calls()); n != 0 {
			t.Fatalf("a dry run called the runner %d times", n)
		}
		if w := h.store.fileWrites(); len(w) != 0 {
			t.Fatalf("a dry run wrote files %+v", w)
		}
		h.checkJournal(id)
	})
}

// A dry run of a threaded chain has no artifact to hand on, and must still
// report every step NOT EXECUTED rather than fail the second one.
func TestServiceDryRunThreaded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, false)
		id := h.start(h.chain(Flags{DryRun: true, Thread: true, ForceAuto: true}, "deliver-prd", "deliver-user-stories"))
		synctest.Wait()
		h.expect(id, RunCompleted, "done/NOT-EXECUTED", "done/NOT-EXECUTED")
	})
}

func TestServiceAbortWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, false)
		id := h.start(h.chain(Flags{}, "deliver-prd", "deliver-user-stories"))
		synctest.Wait()
		h.decide(id, 1, DecideAbort, "", nil)
		synctest.Wait()
		r := h.expect(id, RunAborted, "aborted/PRODUCED", "aborted")
		if !strings.Contains(r.Halt, "aborted by U-ana") {
			t.Errorf("halt = %q", r.Halt)
		}
		if _, err := h.svc.Decide(t.Context(), id, h.decision(id, 1, DecideApprove), nil); !errors.Is(err, ErrStale) {
			t.Fatalf("a decision after the abort: %v, want ErrStale", err)
		}
		if got, err := h.svc.Artifact(t.Context(), id, 1, 1); err != nil || len(got) == 0 {
			t.Fatalf("the abort lost step 1's artifact: %v", err)
		}
		if _, ok := h.store.file(ArtifactFile(id, 1, "deliver-prd", 1, true)); !ok {
			t.Fatal("the abort removed step 1's file")
		}
		if n := len(h.runner.calls()); n != 1 {
			t.Fatalf("runner ran %d times, want 1", n)
		}
		h.checkJournal(id)
	})
}

func TestServiceDuplicateKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, false)
		id := h.start(h.chain(Flags{}, "deliver-prd", "deliver-user-stories"))
		synctest.Wait()
		d := h.decision(id, 1, DecideApprove)
		if _, err := h.svc.Decide(t.Context(), id, d, nil); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		n := len(h.store.journal(id))
		if _, err := h.svc.Decide(t.Context(), id, d, nil); !errors.Is(err, ErrDuplicate) {
			t.Fatalf("the same click twice: %v, want ErrDuplicate", err)
		}
		again := h.decision(id, 2, DecideEdit)
		again.Key = d.Key
		_, err := h.svc.Decide(t.Context(), id, again, []byte("# other"))
		if !errors.Is(err, ErrKeyReused) || errors.Is(err, ErrDuplicate) || !strings.Contains(err.Error(), "approve of step 1 (attempt 1) by U-ana") {
			t.Fatalf("a key reused on step 2: %v, want ErrKeyReused naming the approval of step 1", err)
		}
		synctest.Wait()
		if got := len(h.store.journal(id)); got != n {
			t.Fatalf("refused decisions changed the journal: %d events, want %d", got, n)
		}
		h.expect(id, RunWaiting, "done/PRODUCED", "waiting/PRODUCED")
	})
}

// A decision's key belongs to its run: the same key on another run is a
// new decision there, which the store records too.
func TestServiceKeyBelongsToItsRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, false)
		a := h.start(h.chain(Flags{}, "deliver-prd", "deliver-user-stories"))
		b := h.start(h.chain(Flags{}, "deliver-prd", "deliver-user-stories"))
		synctest.Wait()
		for _, id := range []RunID{a, b} {
			d := h.decision(id, 1, DecideApprove)
			d.Key = "cli-1"
			if _, err := h.svc.Decide(t.Context(), id, d, nil); err != nil {
				t.Fatalf("run %s: %v", id, err)
			}
		}
		synctest.Wait()
		for _, id := range []RunID{a, b} {
			if rec := DecidedUnder(h.load(id), "cli-1"); rec == nil || rec.Step != 1 || rec.Kind != DecideApprove {
				t.Errorf("run %s recorded %+v under the key, want its approval of step 1", id, rec)
			}
		}
	})
}

// Five guarded-auto runs share two runner slots: never more than two steps
// execute at once, the others wait as queued in the store, and every run
// completes.
func TestServiceMaxParallel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const runs, steps, slots = 5, 2, 2
		h := newHarness(t, slots, true)
		p := testPlan(InputPlan, "deliver-prd", "deliver-user-stories")
		p.Domain, p.Flags.Auto = DomainComplicated, true
		ids := make([]RunID, runs)
		var wg sync.WaitGroup
		for i := range ids {
			wg.Go(func() {
				r, err := h.svc.Start(t.Context(), p, StartOptions{StartedBy: "U-ana"})
				if err != nil {
					t.Error(err)
					return
				}
				ids[i] = r.ID
			})
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		synctest.Wait()
		count := func() (running, queued, completed int) {
			for _, id := range ids {
				r := h.load(id)
				if r.State == RunCompleted {
					completed++
				}
				for _, s := range r.Steps {
					switch s.Status {
					case StepRunning:
						running++
					case StepQueued:
						queued++
					}
				}
			}
			return
		}
		if running, queued, _ := count(); running != slots || queued != runs-slots {
			t.Fatalf("store shows %d running and %d queued steps, want %d and %d", running, queued, slots, runs-slots)
		}
		for released := 0; ; released++ {
			running, queued, completed := count()
			if now, most := h.runner.now(); most > slots || now != running {
				t.Fatalf("runner: %d at once now, %d at most; store shows %d running", now, most, running)
			}
			if completed == runs {
				break
			}
			if running == 0 {
				t.Fatalf("after %d releases nothing runs, %d steps are queued and %d of %d runs completed", released, queued, completed, runs)
			}
			h.runner.gate <- struct{}{}
			synctest.Wait()
		}
		if n := len(h.runner.calls()); n != runs*steps {
			t.Fatalf("runner ran %d jobs, want %d", n, runs*steps)
		}
		for _, id := range ids {
			h.expect(id, RunCompleted, "done/PRODUCED", "done/PRODUCED")
			h.checkJournal(id)
		}
	})
}

// A step that finds every runner slot taken is queued, and must start when
// a slot frees, however the two interleave. Here the only slot frees
// exactly between the step's failed claim and its record as queued.
func TestServiceQueuedStepStartsWhenTheSlotFreesMeanwhile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 1, true)
		p := testPlan(InputPlan, "deliver-prd")
		p.Domain, p.Flags.Auto = DomainClear, true
		a := h.start(p)
		synctest.Wait() // a's step holds the only slot
		freed := make(chan struct{})
		var once sync.Once
		h.store.hooks(func(c Commit) {
			if c.Run.ID != a && c.Events[0].Type == EvStepQueued {
				h.runner.gate <- struct{}{} // a's step ends now...
				<-freed                     // ...and gives its slot back
			}
		}, func(r *Run) {
			// The service loads a completed run again only after the
			// execution that completed it released its slot.
			if r.ID == a && r.State == RunCompleted {
				once.Do(func() { close(freed) })
			}
		})
		b := h.start(p)
		synctest.Wait()
		h.expect(a, RunCompleted, "done/PRODUCED")
		h.expect(b, RunRunning, "running/")
		h.runner.gate <- struct{}{}
		synctest.Wait()
		h.expect(b, RunCompleted, "done/PRODUCED")
	})
}

func TestServiceCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, true)
		id := h.start(h.chain(Flags{}, "deliver-prd", "deliver-user-stories"))
		synctest.Wait()
		h.expect(id, RunRunning, "running/", "pending")
		if err := h.svc.Cancel(t.Context(), id, 1, 2, "U-bo"); !errors.Is(err, ErrStale) {
			t.Fatalf("cancel of an attempt that is not running: %v, want ErrStale", err)
		}
		if err := h.svc.Cancel(t.Context(), id, 1, 1, "U-bo"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		r := h.expect(id, RunWaiting, "waiting/FAILED", "pending")
		if reason := r.Step(1).Latest().Reason; !strings.Contains(reason, "cancelled by U-bo") {
			t.Fatalf("reason %q, want who cancelled", reason)
		}
		if got := Allowed(r.Step(1)); !slices.Equal(got, []DecisionKind{DecideRedo, DecideAbort}) {
			t.Fatalf("a cancelled step allows %v", got)
		}
		if err := h.svc.Cancel(t.Context(), id, 1, 1, "U-bo"); !errors.Is(err, ErrStale) {
			t.Fatalf("a second cancel: %v, want ErrStale", err)
		}
		h.checkJournal(id)
	})
}

// Stopping the service stops the agent but records nothing: the step stays
// running in the store, to be marked interrupted when the store reopens.
func TestServiceCloseLeavesStepRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, true)
		id := h.start(h.chain(Flags{}, "deliver-prd", "deliver-user-stories"))
		synctest.Wait()
		n := len(h.store.journal(id))
		h.stop()
		h.expect(id, RunRunning, "running/", "pending")
		if got := len(h.store.journal(id)); got != n {
			t.Fatalf("closing added %d events", got-n)
		}
		if h.runner.cancelled != 1 {
			t.Fatalf("the runner saw %d cancellations, want 1", h.runner.cancelled)
		}

		// The store reopens: the running step is interrupted and a new
		// service offers it for redo.
		if err := h.store.restart(t0); err != nil {
			t.Fatal(err)
		}
		runner := &fakeRunner{script: map[string][]Outcome{}}
		svc, stop := startService(t, ServiceConfig{Store: h.store, Catalog: h.cat, Runner: runner, MaxParallel: 1})
		defer stop()
		if _, err := svc.Resume(t.Context(), id, ""); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		h.expect(id, RunWaiting, "interrupted/FAILED", "pending")
		d := h.decision(id, 1, DecideRedo)
		if _, err := svc.Decide(t.Context(), id, d, nil); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		h.expect(id, RunWaiting, "waiting/PRODUCED", "pending")
		if jobs := runner.calls(); len(jobs) != 1 || jobs[0].Attempt != 2 {
			t.Fatalf("after the restart the runner ran %+v, want attempt 2", jobs)
		}
	})
}

// Steps started before Run begins wait for it, and a cancel given in the
// meantime is not lost: the execution starts cancelled.
func TestServiceExecutesOnceRunRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 4, true) // the harness's service stays idle here
		runner := &fakeRunner{script: map[string][]Outcome{}, gate: make(chan struct{})}
		svc := NewService(ServiceConfig{Store: h.store, Catalog: h.cat, Runner: runner, MaxParallel: 4})
		r, err := svc.Start(t.Context(), h.chain(Flags{}, "deliver-prd"), StartOptions{StartedBy: "U-ana"})
		if err != nil {
			t.Fatal(err)
		}
		other, err := svc.Start(t.Context(), h.chain(Flags{}, "deliver-prd"), StartOptions{StartedBy: "U-ana"})
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		h.expect(r.ID, RunRunning, "running/")
		if n := len(runner.calls()); n != 0 {
			t.Fatalf("the runner ran %d jobs before Run", n)
		}
		if err := svc.Cancel(t.Context(), other.ID, 1, 1, "U-bo"); err != nil {
			t.Fatalf("cancel before Run: %v", err)
		}

		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- svc.Run(ctx) }()
		synctest.Wait()
		h.expect(other.ID, RunWaiting, "waiting/FAILED")
		if got := h.load(other.ID).Step(1).Latest().Reason; !strings.Contains(got, "cancelled by U-bo") {
			t.Fatalf("the cancelled step reads %q", got)
		}
		runner.gate <- struct{}{}
		synctest.Wait()
		h.expect(r.ID, RunWaiting, "waiting/PRODUCED")

		// Once Run has returned, nothing starts.
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		again, err := svc.Start(t.Context(), h.chain(Flags{}, "deliver-prd"), StartOptions{StartedBy: "U-ana"})
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		h.expect(again.ID, RunRunning, "pending")
	})
}

// Run ids come from the configured source, read once a start with the
// clock's reading; two starts given the same id draw again.
func TestServiceRunIDsComeFromItsSource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		ids := []RunID{"run-a", "run-a", "run-b"}
		var saw []time.Time
		h := newHarnessWith(t, 4, false, func(_ *harness, c *ServiceConfig) {
			c.Now = func() time.Time { return t0 }
			c.NewID = func(now time.Time) RunID {
				mu.Lock()
				defer mu.Unlock()
				saw = append(saw, now)
				id := ids[0]
				ids = ids[1:]
				return id
			}
		})
		if first := h.start(h.chain(Flags{}, "deliver-prd")); first != "run-a" {
			t.Fatalf("first run %s", first)
		}
		if second := h.start(h.chain(Flags{}, "deliver-prd")); second != "run-b" {
			t.Fatalf("second run %s, want run-b after run-a was taken", second)
		}
		if len(saw) != 3 || !saw[0].Equal(t0) {
			t.Fatalf("the source was read %d times, with %v", len(saw), saw)
		}
		synctest.Wait()
	})
}
