package main

import (
	"context"
	"embed"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/demo"
	"github.com/gonogo/gonogo/internal/intake"
)

// The built-in example: a plan about a made-up product and three skills,
// each with a sample artifact.
//
//go:embed example
var exampleFS embed.FS

// exampleRunner is the demo's stand-in for an agent.
func exampleRunner() demo.Runner {
	return demo.Runner{Example: exampleFS, Delay: 900 * time.Millisecond}
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
	s, cleanup, err := demo.Take(exampleFS, cfg.Policy, cfg.RunBudgetUSD, intake.Request{Flags: f.Flags, StartedBy: actor(e)})
	if err != nil {
		return fail(e, "demo", err)
	}
	defer cleanup()
	if f.DryRun {
		fmt.Fprintln(e.stdout, "gonogo demo: the built-in example plan, as a dry run: nothing runs, and each step reports NOT EXECUTED - dry run.")
	} else {
		fmt.Fprintln(e.stdout, "gonogo demo: the built-in example plan. Its steps return each skill's sample artifact; no agent runs.")
	}
	f.runnerOverride = exampleRunner()
	return startAndDrive(ctx, e, cfg, f, input{kind: engine.InputPlan, plan: s.Plan, opts: s.Options, catalog: s.Catalog}, "demo")
}
