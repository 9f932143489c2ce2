//go:build temporal

package temporalbackend

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/hangguard"
)

// memArtifacts is the tests' ArtifactStore.
type memArtifacts struct {
	mu   sync.Mutex
	body map[string][]byte
}

func newMemArtifacts() *memArtifacts { return &memArtifacts{body: map[string][]byte{}} }

func (m *memArtifacts) Put(_ context.Context, key string, body []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.body[key]; ok && string(old) != string(body) {
		return fmt.Errorf("artifact %s is immutable", key)
	}
	m.body[key] = slices.Clone(body)
	return nil
}

func (m *memArtifacts) Get(_ context.Context, key string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.body[key]
	if !ok {
		return nil, fmt.Errorf("artifact %s: %w", key, engine.ErrNotFound)
	}
	return slices.Clone(b), nil
}

// memCatalog is a catalog of a few content skills.
type memCatalog map[string]engine.Skill

func testCatalog(names ...string) memCatalog {
	c := memCatalog{}
	for _, n := range names {
		c[n] = engine.Skill{Name: n, Instructions: "Instructions of " + n + ".", Path: "skills/" + n + "/SKILL.md"}
	}
	return c
}

func (c memCatalog) Skill(name string) (engine.Skill, error) {
	if s, ok := c[name]; ok {
		return s, nil
	}
	return engine.Skill{}, fmt.Errorf("skill %q: %w", name, engine.ErrNotFound)
}

func (c memCatalog) Names() []string {
	var out []string
	for n := range c {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (c memCatalog) Agent(name string) (string, error) {
	return "", fmt.Errorf("agent %q: %w", name, engine.ErrNotFound)
}

// fakeRunner writes an artifact naming the skill and attempt; a skill
// listed in hold waits until released or cancelled.
type fakeRunner struct {
	mu        sync.Mutex
	jobs      []engine.Job
	hold      map[string]chan struct{}
	fail      map[string]int    // attempts of a skill still to fail
	limited   map[string]int    // attempts of a skill still to meet a rate limit
	pad       int               // bytes added to every artifact
	output    map[string]string // a skill's artifact, when not the default
	started   chan engine.Job
	cancelled int
	cancels   chan engine.Job // a held attempt that was cancelled
}

func newFakeRunner() *fakeRunner {
	return &fakeRunner{hold: map[string]chan struct{}{}, fail: map[string]int{}, limited: map[string]int{}, output: map[string]string{}, started: make(chan engine.Job, 64), cancels: make(chan engine.Job, 64)}
}

// holdSkill makes the runner wait on skill's attempts until release.
func (f *fakeRunner) holdSkill(skill string) (release func()) {
	ch := make(chan struct{})
	f.mu.Lock()
	f.hold[skill] = ch
	f.mu.Unlock()
	return sync.OnceFunc(func() { close(ch) })
}

func (f *fakeRunner) Run(ctx context.Context, job engine.Job, progress func(engine.Progress)) engine.Outcome {
	f.mu.Lock()
	f.jobs = append(f.jobs, job)
	hold := f.hold[job.Skill]
	fail := f.fail[job.Skill] > 0
	if fail {
		f.fail[job.Skill]--
	}
	limited := f.limited[job.Skill] > 0
	if limited {
		f.limited[job.Skill]--
	}
	f.mu.Unlock()
	f.started <- job
	progress(engine.Progress{Turns: 1, ToolCalls: 2, LastTool: "Read"})
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			f.mu.Lock()
			f.cancelled++
			f.mu.Unlock()
			select {
			case f.cancels <- job:
			default: // nobody counts them
			}
			return engine.Outcome{Err: ctx.Err(), ExitCode: -1, CostUSD: 0.05}
		}
	}
	if limited {
		return engine.Outcome{ExitCode: 1, AgentError: "rate limit reached", AgentErrorKind: engine.AgentErrRateLimit}
	}
	if fail {
		return engine.Outcome{ExitCode: 1, Stderr: "the agent fell over", CostUSD: 0.01}
	}
	f.mu.Lock()
	pad := f.pad
	own, scripted := f.output[job.Skill]
	f.mu.Unlock()
	art := fmt.Appendf(nil, "# %s, attempt %d\n\nThe %s artifact, written for %s.\n", job.Skill, job.Attempt, job.Skill, job.Run)
	if scripted {
		art = []byte(own)
	}
	for len(art) < pad {
		art = append(art, "A line of the agent's long output.\n"...)
	}
	return engine.Outcome{Artifact: art, CostUSD: 0.1}
}

func (f *fakeRunner) calls() []engine.Job {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.jobs)
}

// backendUnderTest is what the scenarios drive, on Temporal and on bbolt.
type backendUnderTest interface {
	Start(ctx context.Context, p engine.Plan, opt engine.StartOptions) (*engine.Run, error)
	Load(ctx context.Context, id engine.RunID) (*engine.Run, error)
	Artifact(ctx context.Context, id engine.RunID, step, attempt int) ([]byte, error)
	Decide(ctx context.Context, id engine.RunID, d engine.Decision, body []byte) (*engine.Run, error)
	Abort(ctx context.Context, id engine.RunID, actor string) (*engine.Run, error)
	Cancel(ctx context.Context, id engine.RunID, step, attempt int, actor string) error
	Pause(ctx context.Context, id engine.RunID, actor string) (*engine.Run, error)
	Unpause(ctx context.Context, id engine.RunID, actor string, m engine.Mode) (*engine.Run, error)
	Resume(ctx context.Context, id engine.RunID, mode engine.Mode) (*engine.Run, error)
	Journal(ctx context.Context, id engine.RunID) ([]engine.Event, error)
}

var (
	_ backendUnderTest = (*Backend)(nil)
	_ backendUnderTest = (*engine.Service)(nil)
)

// waitFor polls the run until ok says it is as wanted; its bound only
// guards against a hang.
func waitFor(t testing.TB, b backendUnderTest, id engine.RunID, what string, ok func(*engine.Run) bool) *engine.Run {
	t.Helper()
	deadline := hangguard.Deadline(t)
	for {
		r, err := b.Load(t.Context(), id)
		if err == nil && ok(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s never became %s: last %v, %v", id, what, describe(r), err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waiting is waitFor until step n waits for a decision on its attempt a.
func waiting(t testing.TB, b backendUnderTest, id engine.RunID, n, a int) *engine.Run {
	t.Helper()
	return waitFor(t, b, id, fmt.Sprintf("waiting on step %d attempt %d", n, a), func(r *engine.Run) bool {
		st := r.Step(n)
		return st.Status == engine.StepWaiting && st.Latest().N == a
	})
}

func ended(t testing.TB, b backendUnderTest, id engine.RunID) *engine.Run {
	t.Helper()
	// An attempt stopped by an abort is recorded after the abort.
	return waitFor(t, b, id, "ended", func(r *engine.Run) bool {
		for _, s := range r.Steps {
			if l := s.Latest(); l != nil && l.Finished.IsZero() {
				return false
			}
		}
		return r.Finished()
	})
}

// describe is a run's state and its steps' statuses and latest results.
func describe(r *engine.Run) string {
	if r == nil {
		return "<none>"
	}
	var steps []string
	for _, s := range r.Steps {
		e := string(s.Status)
		if l := s.Latest(); l != nil {
			e += "/" + string(l.Result)
		}
		steps = append(steps, e)
	}
	return fmt.Sprintf("%s [%s]", r.State, strings.Join(steps, " "))
}

// shape is a journal as the conformance checks compare it: each event's
// type, step, attempt, decision and resulting status, without times,
// reasons or sizes.
func shape(evs []engine.Event) []string {
	var out []string
	for _, ev := range evs {
		s := fmt.Sprintf("%d %s", ev.Seq, ev.Type)
		if ev.Step > 0 {
			s += fmt.Sprintf(" step=%d/%d", ev.Step, ev.Attempt)
		}
		if ev.Decision != "" {
			s += " " + string(ev.Decision)
		}
		if ev.Status != "" {
			s += " ->" + string(ev.Status)
		}
		if ev.Result != "" {
			s += " " + string(ev.Result)
		}
		if ev.State != "" {
			s += " " + string(ev.State)
		}
		out = append(out, s)
	}
	return out
}
