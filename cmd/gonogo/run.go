package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/parse"
)

// terminalLike is a reader or writer that says whether it is a terminal;
// tests stand in for one with it.
type terminalLike interface{ Terminal() bool }

func isTerminal(v any) bool {
	if t, ok := v.(terminalLike); ok {
		return t.Terminal()
	}
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// dryRunner makes --runner dry-run (or GONOGO_RUNNER=dry-run) a dry run,
// shown and recorded as one, as --dry-run: its steps run nothing either way.
func dryRunner(f *runFlags) {
	if f.runner == "dry-run" {
		f.DryRun = true
	}
}

// fail prints an error and returns its exit code: 1 for a refusal, 2 for
// anything else.
func fail(e env, cmd string, err error) int {
	if r, ok := refusal(err); ok {
		fmt.Fprintf(e.stderr, "gonogo %s: REFUSED (%s): %s\nNothing was run.\n", cmd, r.Reason, r.Error())
		return exitRefused
	}
	fmt.Fprintf(e.stderr, "gonogo %s: %v\n", cmd, err)
	return exitUsage
}

func newRunCmd(a *cli) *cobra.Command {
	f := &runFlags{}
	c := &cobra.Command{
		Use:   "run [flags] PLAN.md | --chain 'EXPR' | --workflow NAME [--arg k=v ...] [--context TEXT]",
		Short: "Run a plan, a chain of skills or a workflow in the terminal",
		Long: `Run a plan, a chain of skills or a named workflow in the terminal, stopping at
each checkpoint for a decision. On a terminal gonogo asks; otherwise it reads one
decision per line from stdin (approve, skip, redo [feedback], abort, edit PATH), and
end of input leaves the run waiting for gonogo resume.

` + exitCodes,
		RunE: a.action(f, cmdRun),
	}
	a.addRunFlags(c, f)
	a.addInputFlags(c, f)
	return c
}

func cmdRun(ctx context.Context, e env, cfg config, f *runFlags) int {
	in, err := loadInput(f, cfg)
	if ref, ok := refusal(err); ok {
		printRefusal(e.stderr, in.kind, ref)
		return exitRefused
	}
	if err != nil {
		return fail(e, "run", err)
	}
	return startAndDrive(ctx, e, cfg, f, in)
}

func startAndDrive(ctx context.Context, e env, cfg config, f *runFlags, in input) int {
	if err := requireAgent(f); err != nil {
		return fail(e, "run", err)
	}
	box := newInbox()
	a, err := startApp(ctx, e, cfg, f, in.catalog, box)
	if err != nil {
		return fail(e, "run", err)
	}
	defer a.close()
	for _, w := range in.plan.Warnings {
		fmt.Fprintf(e.stderr, "warning: %s\n", w)
	}
	r, err := a.svc.Start(ctx, in.plan, engine.StartOptions{StartedBy: actor(e), BudgetUSD: cfg.RunBudgetUSD})
	if err != nil {
		return fail(e, "run", err)
	}
	printHeader(e.stdout, r.Plan, r.ID, engine.RunModeName(r.Mode, r.DryRun))
	return newDriver(e, a, box, f.data, cfg).drive(ctx, r)
}

// peekRun reads a stored run before resume starts anything: whether it is
// a dry run and whether gonogo demo started it. A run that is not there
// is nil, left for resume to report.
func peekRun(ctx context.Context, data string, id engine.RunID) (*engine.Run, error) {
	db, err := openStore(data)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	r, err := db.Load(ctx, id)
	if err != nil {
		return nil, nil
	}
	return r, nil
}

func newResumeCmd(a *cli) *cobra.Command {
	f := &runFlags{}
	c := &cobra.Command{
		Use:   "resume [flags] RUN",
		Short: "Continue a waiting or interrupted run",
		Long: `Continue a run that waits for a decision or was interrupted, in the mode it was
started with unless --auto or --force-auto is given again. RUN is an id from gonogo runs.

` + exitCodes,
		RunE:              a.action(f, cmdResume),
		ValidArgsFunction: a.completeRunIDs(f),
	}
	a.addRunFlags(c, f)
	return c
}

func cmdResume(ctx context.Context, e env, cfg config, f *runFlags) int {
	if len(f.positional) != 1 {
		return fail(e, "resume", usagef("expected one run id (see gonogo runs)"))
	}
	id := engine.RunID(f.positional[0])
	var cat engine.Catalog = parse.NewCatalog(nil)
	peek, err := peekRun(ctx, f.data, id)
	if err != nil {
		return fail(e, "resume", err)
	}
	if peek != nil && f.DryRun != peek.DryRun {
		// A run keeps the kind it started as: a real run is never
		// continued dry, and a dry run never reaches an agent.
		if f.DryRun {
			fmt.Fprintln(e.stderr, "warning: --dry-run ignored: this run was started for real")
		}
		f.DryRun = peek.DryRun
	}
	if peek != nil && !peek.DryRun && f.runner == "dry-run" {
		return fail(e, "resume", usagef("this run was started for real: the dry-run runner would record its steps as not executed; resume it with --runner claude or --runner command"))
	}
	if peek != nil && peek.Input == engine.InputPlan && peek.Plan.Source == demoSource {
		// A demo run goes on with the demo's stand-in agent and skills.
		c, _, cleanup, err := exampleCatalog()
		if err != nil {
			return fail(e, "resume", err)
		}
		defer cleanup()
		cat, f.runnerOverride = c, exampleRunner{delay: 900 * time.Millisecond}
	} else if c, err := cfg.loadSkills(f.skills); err == nil {
		cat = c
	} else if !errors.Is(err, os.ErrNotExist) {
		return fail(e, "resume", err)
	}
	warnAgent(e, f)
	box := newInbox()
	// Dry runs stay dry whatever --runner says; their steps never reach it.
	a, err := startApp(ctx, e, cfg, f, cat, box)
	if err != nil {
		return fail(e, "resume", err)
	}
	defer a.close()
	r, err := a.svc.Load(ctx, id)
	if err != nil {
		if errors.Is(err, engine.ErrNotFound) {
			return fail(e, "resume", fmt.Errorf("no run %s in %s (see gonogo runs)", id, f.data))
		}
		return fail(e, "resume", err)
	}
	printHeader(e.stdout, r.Plan, r.ID, engine.RunModeName(r.Mode, r.DryRun))
	d := newDriver(e, a, box, f.data, cfg)
	if r.Finished() {
		return d.finish(r)
	}
	var mode engine.Mode
	if f.Auto || f.ForceAuto {
		p := r.Plan
		p.Flags.Auto, p.Flags.ForceAuto = f.Auto || f.ForceAuto, f.ForceAuto
		var warn string
		mode, warn = engine.ResolveMode(p)
		if warn != "" {
			fmt.Fprintf(e.stderr, "warning: %s\n", warn)
		}
	}
	d.interrupted(r)
	r, err = a.svc.Resume(ctx, id, mode)
	if err != nil {
		return fail(e, "resume", err)
	}
	d.waiting(ctx, r)
	return d.drive(ctx, r)
}
