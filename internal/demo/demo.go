// Package demo is what gonogo demo runs instead of an agent: the built-in
// example (a plan about a made-up product and three skills, each with a
// sample artifact, embedded by the command) unpacked to a temporary
// folder with its skills loaded (Unpack), and Runner, which "produces"
// each skill's sample artifact (references/EXAMPLE.md) after a short
// pause, so the progress line shows. It runs no agent and reaches no
// network.
//
// It may import engine and parse. A run the demo starts records Source as
// its plan's source and RunnerName as its runner, so that gonogo resume
// goes on with the same stand-in.
//
//	cat, dir, cleanup, err := demo.Unpack(exampleFS) // exampleFS holds example/plan.md and example/skills
//	defer cleanup()
//	svc := engine.NewService(engine.ServiceConfig{Catalog: cat, Runner: demo.Runner{Example: exampleFS, Delay: time.Second}, ...})
package demo

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/parse"
)

// Source names the built-in example as a run's source, so that gonogo
// resume continues a demo run with the demo's stand-in agent.
const Source = "built-in example (gonogo demo)"

// RunnerName is the runner a demo run records: the built-in stand-in that
// returns each skill's sample artifact.
const RunnerName = "demo (sample artifacts, no agent)"

// Runner stands in for an agent: each step's artifact is its skill's
// example/skills/SKILL/references/EXAMPLE.md in Example, returned after
// Delay, with three progress reports on the way.
type Runner struct {
	Example fs.FS
	Delay   time.Duration
}

func (x Runner) Run(ctx context.Context, job engine.Job, progress func(engine.Progress)) engine.Outcome {
	start := time.Now()
	for i := 1; i <= 3; i++ {
		select {
		case <-ctx.Done():
			return engine.Outcome{Err: fmt.Errorf("cancelled: %w", context.Cause(ctx))}
		case <-time.After(x.Delay / 3):
		}
		progress(engine.Progress{Turns: i, ToolCalls: i - 1, Elapsed: time.Since(start)})
	}
	body, err := fs.ReadFile(x.Example, "example/skills/"+job.Skill+"/references/EXAMPLE.md")
	if err != nil {
		return engine.Outcome{Err: fmt.Errorf("the example has no sample artifact for %s", job.Skill)}
	}
	return engine.Outcome{Artifact: body}
}

// Unpack copies example into a temporary directory and loads the skills
// of its example/skills; cleanup removes the directory.
func Unpack(example fs.FS) (cat *parse.Catalog, dir string, cleanup func(), err error) {
	dir, err = os.MkdirTemp("", "gonogo-example-")
	if err != nil {
		return nil, "", nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	if err := os.CopyFS(dir, example); err != nil {
		cleanup()
		return nil, "", nil, fmt.Errorf("unpack the example: %w", err)
	}
	cat, err = parse.LoadSkills(filepath.Join(dir, "example", "skills"))
	if err != nil {
		cleanup()
		return nil, "", nil, err
	}
	return cat, dir, cleanup, nil
}
