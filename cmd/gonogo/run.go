package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/gonogo/gonogo/engine"
	settings "github.com/gonogo/gonogo/internal/config"
	"github.com/gonogo/gonogo/internal/datadir"
	"github.com/gonogo/gonogo/internal/demo"
	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/parse"
)

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
	return terminal.Fail(e.stderr, cmd, err)
}

func newRunCmd(a *cli) *cobra.Command {
	f := &runFlags{}
	c := &cobra.Command{
		Use:   "run [flags] PLAN.md | --chain 'EXPR' | --workflow NAME [--arg k=v ...] [--context TEXT]",
		Short: "Run a plan, a chain of skills or a workflow in the terminal",
		Long: `Run a plan, a chain of skills or a named workflow in the terminal, stopping at
each checkpoint for a decision. On a terminal gonogo asks; otherwise it reads one
decision per line from stdin (approve, skip, redo [feedback], abort, edit PATH, and
pick N [note] for a --best-of step's candidate N), and end of input leaves the run
waiting for gonogo resume.

` + exitCodes,
		RunE: a.action(f, cmdRun),
	}
	a.addRunFlags(c, f)
	a.addBestOfFlag(c, f)
	a.addInputFlags(c, f)
	return c
}

func cmdRun(ctx context.Context, e env, cfg config, f *runFlags) int {
	e = printableOut(e)
	in, err := loadInput(e, f, cfg)
	if ref, ok := errors.AsType[*engine.Refusal](err); ok {
		terminal.PrintRefusal(e.stderr, in.kind, ref)
		return terminal.ExitRefused
	}
	if err != nil {
		if hint := runInstead(ctx, e, f); hint != "" {
			err = fmt.Errorf("%w; %s", err, hint)
		}
	}
	if err == nil {
		in.plan, err = bestOf(f, in.plan)
	}
	if err != nil {
		return fail(e, "run", err)
	}
	return startAndDrive(ctx, e, cfg, f, in, "run")
}

// startAndDrive starts a run of in and drives it; cmd (run, demo) names
// the command in messages and to other gonogos.
func startAndDrive(ctx context.Context, e env, cfg config, f *runFlags, in input, cmd string) int {
	e = printableOut(e)
	tc, err := settings.LoadTemporal(ctx, e.lookup)
	if err != nil {
		return fail(e, cmd, err)
	}
	if tc.Addr != "" {
		return startOnTemporal(ctx, e, cfg, f, tc, in)
	}
	if err := requireAgents(f, in.plan); err != nil {
		return fail(e, cmd, err)
	}
	box := terminal.NewInbox()
	a, err := startApp(ctx, e, cfg, f, in.catalog, box, cmd)
	if err != nil {
		return fail(e, cmd, err)
	}
	defer a.close()
	for _, w := range in.plan.Warnings {
		fmt.Fprintf(e.stderr, "warning: %s\n", w)
	}
	r, err := a.svc.Start(ctx, in.plan, in.opts)
	if err != nil {
		return fail(e, cmd, err)
	}
	a.carry(r.ID)
	terminal.PrintHeader(e.stdout, r.Plan, r.ID, engine.RunModeName(r.Mode, r.DryRun))
	return newTerminal(e, a.svc, box, f.data, cfg, false).Drive(ctx, r)
}

// peekRun reads a stored run before resume starts anything: whether it is
// a dry run and whether gonogo demo started it. A run that is not there
// is nil, left for resume to report.
func peekRun(ctx context.Context, data string, id engine.RunID) (*engine.Run, error) {
	r, err := datadir.Peek(ctx, data, id)
	if h, ok := errors.AsType[*datadir.HeldError](err); ok {
		return nil, fmt.Errorf("%s holds %s and carries out its runs; decide from here with gonogo decide %s%s, or stop it first: %w", h.Holder, data, id, terminal.DataFlag(data), engine.ErrLocked)
	}
	return r, err
}

func newResumeCmd(a *cli) *cobra.Command {
	f := &runFlags{}
	c := &cobra.Command{
		Use:   "resume [flags] RUN",
		Short: "Continue a waiting or interrupted run",
		Long: `Continue a run that waits for a decision, was interrupted or paused, in the mode it was
started with unless --auto or --force-auto is given again (a paused run: --checkpointed
goes on checkpointed). RUN is an id from gonogo runs. A paused run held by another gonogo
is resumed there.
The run goes on with the runner, agent, skills, workflows folder and policy recorded when
it started, whatever the environment says now; --runner, --runner-cmd and --skills
replace them, and the change is journaled. When what was recorded is gone, resume refuses
(exit 2) before touching the run and names the flag that points at a replacement.

` + exitCodes,
		RunE:              a.action(f, cmdResume),
		ValidArgsFunction: a.completeRunIDs(f),
	}
	// --thread is one of the flags DESIGN.md gives run, check and resume
	// alike; a run keeps whether it is threaded, so resume takes the flag
	// and says on stderr that it changes nothing.
	a.addModeFlags(c, f)
	c.Flags().BoolVar(&f.Thread, "thread", false, "changes nothing: a run keeps whether it is threaded (taken as run and check take it)")
	a.addAgentFlags(c, f, dryRunUsage)
	c.Flags().BoolVar(&f.checkpointed, "checkpointed", false, "a paused run goes on checkpointed, whatever its mode")
	return c
}

func cmdResume(ctx context.Context, e env, cfg config, f *runFlags) int {
	e = printableOut(e)
	if len(f.positional) != 1 {
		return fail(e, "resume", usagef("expected one run id (see gonogo runs)"))
	}
	id := engine.RunID(f.positional[0])
	if f.changed != nil && f.changed("thread") {
		fmt.Fprintln(e.stderr, "note: a run keeps whether it is threaded, as it started; --thread changes nothing on resume")
	}
	tc, err := settings.LoadTemporal(ctx, e.lookup)
	if err != nil {
		return fail(e, "resume", err)
	}
	if tc.Addr != "" {
		return resumeOnTemporal(ctx, e, cfg, f, tc, id)
	}
	if code, done := resumeHeld(ctx, e, f, id, actor(e)); done {
		return code
	}
	return resumeHere(ctx, e, cfg, f, id)
}

// resumeHere resumes run id from the store in the data directory, which
// this gonogo opens, holds and carries the run out of.
func resumeHere(ctx context.Context, e env, cfg config, f *runFlags, id engine.RunID) int {
	peek, err := peekRun(ctx, f.data, id)
	if err == nil {
		err = settings.CheckpointedUnpaused(f.checkpointed, peek)
	}
	if err != nil {
		return fail(e, "resume", err)
	}
	cat, setup, cleanup, err := prepareResume(e, peek, f, &cfg)
	if err != nil {
		return fail(e, "resume", err)
	}
	defer cleanup()
	box := terminal.NewInbox()
	// Dry runs stay dry whatever --runner says; their steps never reach it.
	a, err := startApp(ctx, e, cfg, f, cat, box, "resume")
	if err != nil {
		return fail(e, "resume", err)
	}
	defer a.close()
	a.carry(id)
	r, err := a.svc.Load(ctx, id)
	if errors.Is(err, engine.ErrNotFound) {
		return fail(e, "resume", fmt.Errorf("no run %s in %s (see gonogo runs)", id, f.data))
	}
	if err != nil {
		return fail(e, "resume", err)
	}
	terminal.PrintHeader(e.stdout, r.Plan, r.ID, engine.RunModeName(r.Mode, r.DryRun))
	d := newTerminal(e, a.svc, box, f.data, cfg, false)
	if r.Finished() {
		return d.Finish(r)
	}
	if r, err = restart(ctx, e, a.svc, d, r, setup, f); err != nil {
		return fail(e, "resume", err)
	}
	d.Waiting(ctx, r)
	return d.Drive(ctx, r)
}

// restart sets run r going again: with the setup resume settled (journaled
// when it changed), in the mode asked for, unpaused when a person paused
// it.
func restart(ctx context.Context, e env, svc backend, d *terminal.Driver, r *engine.Run, setup *engine.Setup, f *runFlags) (*engine.Run, error) {
	if err := terminal.RecordSetup(ctx, e.stdout, svc, r, setup, actor(e)); err != nil {
		return nil, err
	}
	mode := terminal.ResumeMode(e.stderr, r, f.Auto, f.ForceAuto)
	d.Interrupted(r)
	r, err := svc.Resume(ctx, r.ID, mode)
	if err == nil && r.PausedByPerson() {
		r, err = svc.Unpause(ctx, r.ID, actor(e), pausedMode(f))
	}
	return r, err
}

// prepareResume settles, before anything is started, how a stored run
// (peek; nil when there is none, left for resume to report) goes on: dry
// or not as it started, its setup (see settleSetup), and its skills. A demo
// run goes on with the demo's stand-in agent and skills; cleanup removes
// them.
func prepareResume(e env, peek *engine.Run, f *runFlags, cfg *config) (engine.Catalog, *engine.Setup, func(), error) {
	none := func() {}
	dry, err := settings.KeepKind(peek, f.DryRun)
	if err != nil {
		return nil, nil, none, err
	}
	f.DryRun = dry
	if peek != nil && peek.Input == engine.InputPlan && peek.Plan.Source == demo.Source {
		c, _, cleanup, err := demo.Unpack(exampleFS)
		if err != nil {
			return nil, nil, none, err
		}
		f.runnerOverride = exampleRunner()
		return c, nil, cleanup, nil
	}
	setup, err := settleSetup(e, peek, f, cfg)
	if err != nil {
		return nil, nil, none, err
	}
	c, err := cfg.SetupSkills(f.skills, setup)
	switch {
	case err == nil:
		return c, setup, none, nil
	case errors.Is(err, os.ErrNotExist):
		return parse.NewCatalog(nil), setup, none, nil
	}
	return nil, nil, none, err
}

// settleSetup is the setup an unfinished stored run goes on with (see
// settings.Config.SettleSetup: as recorded when it started, except where
// a flag given to resume (--runner, --runner-cmd, --skills) says
// otherwise), and sets f and cfg to what it decided.
func settleSetup(e env, peek *engine.Run, f *runFlags, cfg *config) (*engine.Setup, error) {
	given := func(name string) bool { return f.changed != nil && f.changed(name) }
	setup, err := cfg.SettleSetup(e.stderr, peek, settings.Overrides{
		Runner: f.runner, RunnerCmd: f.runnerCmd, Skills: f.skills,
		RunnerGiven: given("runner"), RunnerCmdGiven: given("runner-cmd"), SkillsGiven: given("skills"),
	})
	if setup != nil && peek.Setup != nil {
		f.runner, f.runnerCmd = setup.Runner, setup.RunnerCmd
	}
	return setup, err
}
