package backendtest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/gonogo/gonogo/engine"
)

// skills are the chain every case runs: two content steps.
var skills = []string{"draft-brief", "write-stories"}

// memCatalog is the cases' skills, held in memory.
type memCatalog map[string]engine.Skill

func catalog() memCatalog {
	c := memCatalog{}
	for _, n := range skills {
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

func (c memCatalog) Names() []string { return slices.Sorted(maps.Keys(c)) }

func (c memCatalog) Agent(name string) (string, error) {
	return "", fmt.Errorf("agent %q: %w", name, engine.ErrNotFound)
}

// output is what the runner's agent writes for a job: it names the run,
// the step's skill and the attempt, so every artifact read back can be
// told from every other.
func output(id engine.RunID, skill string, attempt int) []byte {
	return fmt.Appendf(nil, "# %s, attempt %d\n\nThe %s artifact, written for run %s.\n", skill, attempt, skill, id)
}

// runner is the cases' agent: it answers each job with output, at once,
// or, for a held skill, once released or stopped. It keeps every job,
// tells started of each as it begins, and counts the jobs stopped.
type runner struct {
	mu        sync.Mutex
	jobs      []engine.Job
	hold      map[string]chan struct{}
	started   chan engine.Job
	cancelled int
}

func newRunner() *runner {
	return &runner{hold: map[string]chan struct{}{}, started: make(chan engine.Job, 64)}
}

// holdSkill makes skill's attempts wait until release is called.
func (f *runner) holdSkill(skill string) (release func()) {
	ch := make(chan struct{})
	f.mu.Lock()
	f.hold[skill] = ch
	f.mu.Unlock()
	return sync.OnceFunc(func() {
		f.mu.Lock()
		delete(f.hold, skill)
		f.mu.Unlock()
		close(ch)
	})
}

func (f *runner) Run(ctx context.Context, job engine.Job, progress func(engine.Progress)) engine.Outcome {
	f.mu.Lock()
	f.jobs = append(f.jobs, job)
	hold := f.hold[job.Skill]
	f.mu.Unlock()
	select {
	case f.started <- job:
	default: // nobody waits for this one
	}
	progress(engine.Progress{Turns: 1, ToolCalls: 1, LastTool: "Read"})
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			f.mu.Lock()
			f.cancelled++
			f.mu.Unlock()
			return engine.Outcome{Err: ctx.Err(), ExitCode: -1}
		}
	}
	return engine.Outcome{Artifact: output(job.Run, job.Skill, job.Attempt), CostUSD: 0.1}
}

// job is the job the runner was given for an attempt.
func (f *runner) job(id engine.RunID, step, attempt int) (engine.Job, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, j := range f.jobs {
		if j.Run == id && j.Step == step && j.Attempt == attempt {
			return j, true
		}
	}
	return engine.Job{}, false
}

func (f *runner) stopped() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cancelled
}

// notices is the Notifier the cases wait on: each change to a run wakes
// whoever waits on it.
type notices struct {
	mu      sync.Mutex
	changed map[engine.RunID]chan struct{}
}

func (n *notices) Notify(no engine.Notice) {
	if no.Run == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	close(n.next(no.Run.ID))
	n.changed[no.Run.ID] = make(chan struct{})
}

// next is the channel closed on the next change to run id; n.mu is
// held.
func (n *notices) next(id engine.RunID) chan struct{} {
	if n.changed == nil {
		n.changed = map[engine.RunID]chan struct{}{}
	}
	ch, ok := n.changed[id]
	if !ok {
		ch = make(chan struct{})
		n.changed[id] = ch
	}
	return ch
}

// after is closed on the next change to run id.
func (n *notices) after(id engine.RunID) <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.next(id)
}
