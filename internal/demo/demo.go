package demo

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/intake"
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

// Start is what a demo run starts from.
type Start struct {
	Catalog *parse.Catalog
	Plan    engine.Plan
	Options engine.StartOptions
}

// Take unpacks example and takes its plan in through the intake, as a
// plan file named Source, under the policy in policyFile and with req's
// flags and starter. The plan is read with parse's own size limit,
// whatever GONOGO_MAX_PLAN_BYTES says: it is not the user's plan. A
// refusal comes back as the intake gives it. cleanup removes the unpacked
// example once the run is done with its skills; on an error nothing is
// left to clean.
func Take(example fs.FS, policyFile string, budgetUSD float64, req intake.Request) (Start, func(), error) {
	cat, dir, cleanup, err := Unpack(example)
	if err != nil {
		return Start{}, nil, err
	}
	s, err := take(cat, dir, policyFile, budgetUSD, req)
	if err != nil {
		cleanup()
		return Start{}, nil, err
	}
	return s, cleanup, nil
}

func take(cat *parse.Catalog, dir, policyFile string, budgetUSD float64, req intake.Request) (Start, error) {
	src, err := os.ReadFile(filepath.Join(dir, "example", "plan.md"))
	if err != nil {
		return Start{}, err
	}
	pol, err := parse.LoadPolicy(policyFile)
	if err != nil {
		return Start{}, err
	}
	req.Input, req.Plan, req.PlanName = engine.InputPlan, src, Source
	plan, opts, err := intake.Take(intake.Config{
		Catalog: func() (engine.Catalog, error) { return cat, nil },
		Policy:  pol, BudgetUSD: budgetUSD,
	}, req)
	return Start{Catalog: cat, Plan: plan, Options: opts}, err
}
