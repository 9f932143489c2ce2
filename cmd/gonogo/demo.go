package main

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/intake"
	"github.com/gonogo/gonogo/parse"
)

// The built-in example: a plan about a made-up product and three skills,
// each with a sample artifact.
//
//go:embed example
var exampleFS embed.FS

// exampleRunner stands in for an agent in the demo: it "produces" each
// skill's shipped sample artifact (references/EXAMPLE.md), after a short
// pause so the progress line shows. It runs no agent and reaches no network.
type exampleRunner struct{ delay time.Duration }

func (x exampleRunner) Run(ctx context.Context, job engine.Job, progress func(engine.Progress)) engine.Outcome {
	start := time.Now()
	for i := 1; i <= 3; i++ {
		select {
		case <-ctx.Done():
			return engine.Outcome{Err: fmt.Errorf("cancelled: %w", context.Cause(ctx))}
		case <-time.After(x.delay / 3):
		}
		progress(engine.Progress{Turns: i, ToolCalls: i - 1, Elapsed: time.Since(start)})
	}
	body, err := fs.ReadFile(exampleFS, "example/skills/"+job.Skill+"/references/EXAMPLE.md")
	if err != nil {
		return engine.Outcome{Err: fmt.Errorf("the example has no sample artifact for %s", job.Skill)}
	}
	return engine.Outcome{Artifact: body}
}

// demoSource names the built-in example as a run's source, so that
// gonogo resume continues a demo run with the demo's stand-in agent.
const demoSource = "built-in example (gonogo demo)"

// demoRunner is the runner a demo run records: the built-in stand-in that
// returns each skill's sample artifact.
const demoRunner = "demo (sample artifacts, no agent)"

// exampleCatalog unpacks the example into a temporary directory and loads
// its skills; cleanup removes the directory.
func exampleCatalog() (cat *parse.Catalog, dir string, cleanup func(), err error) {
	dir, err = os.MkdirTemp("", "gonogo-example-")
	if err != nil {
		return nil, "", nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	if err := os.CopyFS(dir, exampleFS); err != nil {
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

// cmdDemo runs the built-in example plan. Its steps are answered by the
// skills' sample artifacts, so it needs no agent and no Slack; everything
// else (checkpoints, the store, files on disk, resume) is the real thing.
// With --dry-run it runs nothing at all.
func newDemoCmd(a *cli) *cobra.Command {
	f := &runFlags{}
	c := &cobra.Command{
		Use:   "demo [flags]",
		Short: "Run the built-in example plan; no agent runs",
		Long: `Run the built-in example plan: its steps return each skill's sample artifact, so
no agent and no Slack are needed. Checkpoints, the store, the files on disk and
gonogo resume are the real thing. With --dry-run nothing runs at all.

` + exitCodes,
		RunE:              a.action(f, cmdDemo),
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	// The demo's skills and stand-in agent are built in, and its plan
	// takes no --thread: it has only the flags it reads.
	a.addModeFlags(c, f)
	a.addDryRunFlag(c, f, "run nothing: each step reports NOT EXECUTED - dry run")
	a.addDataFlag(c, f)
	return c
}

func cmdDemo(ctx context.Context, e env, cfg config, f *runFlags) int {
	dryRunner(f)
	if len(f.positional) > 0 {
		return fail(e, "demo", usagef("the demo runs the built-in example; use gonogo run for your own plan"))
	}
	cat, dir, cleanup, err := exampleCatalog()
	if err != nil {
		return fail(e, "demo", err)
	}
	defer cleanup()
	src, err := os.ReadFile(filepath.Join(dir, "example", "plan.md"))
	if err != nil {
		return fail(e, "demo", err)
	}
	pol, err := parse.LoadPolicy(cfg.Policy)
	if err != nil {
		return fail(e, "demo", err)
	}
	// The example is read with parse's own size limit, whatever
	// GONOGO_MAX_PLAN_BYTES says: it is not the user's plan.
	plan, opts, err := intake.Take(intake.Config{
		Catalog: func() (engine.Catalog, error) { return cat, nil },
		Policy:  pol, BudgetUSD: cfg.RunBudgetUSD,
	}, intake.Request{Input: engine.InputPlan, Plan: src, PlanName: demoSource, Flags: f.Flags, StartedBy: actor(e)})
	if err != nil {
		return fail(e, "demo", err)
	}
	if f.DryRun {
		fmt.Fprintln(e.stdout, "gonogo demo: the built-in example plan, as a dry run: nothing runs, and each step reports NOT EXECUTED - dry run.")
	} else {
		fmt.Fprintln(e.stdout, "gonogo demo: the built-in example plan. Its steps return each skill's sample artifact; no agent runs.")
	}
	f.runnerOverride = exampleRunner{delay: 900 * time.Millisecond}
	return startAndDrive(ctx, e, cfg, f, input{kind: engine.InputPlan, plan: plan, opts: opts, catalog: cat}, "demo")
}
