package runner

import (
	"context"
	"fmt"
	"sync"

	"github.com/gonogo/gonogo/engine"
)

// ByName carries out each job on the runner its Job.Runner names (a
// best-of step's candidate): Default for "" and for Name, the runner
// Default is; any other runner is made once with Config, but with that
// runner's own executable and none of Default's extra arguments, which
// were given for Default's agent.
type ByName struct {
	Default engine.Runner
	Name    string
	Config  Config

	mu   sync.Mutex
	made map[string]engine.Runner
}

// Run implements engine.Runner.
func (b *ByName) Run(ctx context.Context, job engine.Job, progress func(engine.Progress)) engine.Outcome {
	if job.Runner == "" || job.Runner == b.Name {
		return b.Default.Run(ctx, job, progress)
	}
	r, err := b.runner(job.Runner)
	if err != nil {
		return engine.Outcome{Err: fmt.Errorf("best-of candidate: %w", err)}
	}
	return r.Run(ctx, job, progress)
}

func (b *ByName) runner(name string) (engine.Runner, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if r, ok := b.made[name]; ok {
		return r, nil
	}
	cfg := b.Config
	cfg.Cmd, cfg.Args = "", nil
	r, err := New(name, cfg)
	if err != nil {
		return nil, err
	}
	if b.made == nil {
		b.made = map[string]engine.Runner{}
	}
	b.made[name] = r
	return r, nil
}
