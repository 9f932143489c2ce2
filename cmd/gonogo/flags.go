package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/completion"
	settings "github.com/gonogo/gonogo/internal/config"
	"github.com/gonogo/gonogo/internal/runner"
)

// runFlags are the flags of every command: each command defines the ones
// it takes, and reads them all, resolved against the environment.
type runFlags struct {
	engine.Flags
	json         bool
	chain        string
	chainSet     bool
	workflow     string
	args         []string
	context      string
	skills       string
	data         string
	runner       string
	runnerCmd    string
	maxPlanBytes settings.ByteSize
	positional   []string
	// checkpointed: resume a paused run in checkpointed mode.
	checkpointed bool
	// bestOf: every step runs on these runners at once (run --best-of).
	bestOf string

	runnerOverride engine.Runner // the demo's stand-in for an agent

	// changed reports whether a flag was given on the command line (resume
	// keeps a run's recorded setup but for the flags given).
	changed func(name string) bool
}

// Flags are read anywhere among the arguments (before and after the plan
// file), as people type them; "--" ends them. Help shows the built-in
// defaults, never the environment gonogo happens to run in: a flag left
// out takes its variable's value in resolve.

// Each command defines only the flags it reads: a flag a command would
// ignore is refused as unknown (see flagError), never accepted and dropped.

// addRunFlags defines the flags of run: the mode, --thread, and the agent
// flags.
func (a *cli) addRunFlags(c *cobra.Command, f *runFlags) {
	a.addModeFlags(c, f)
	a.addThreadFlag(c, f)
	a.addAgentFlags(c, f, dryRunUsage)
}

// addBestOfFlag defines --best-of.
func (a *cli) addBestOfFlag(c *cobra.Command, f *runFlags) {
	c.Flags().StringVar(&f.bestOf, "best-of", "", "run each step on several runners at once, `NAMES` such as claude,codex; pick one result")
	a.completeFlag(c, "best-of", cobra.NoFileCompletions)
}

// bestOf applies --best-of to p, after checking its names and those of
// the steps' own best_of: against the runners gonogo has; an unknown name
// is a usage error (exit 2).
func bestOf(f *runFlags, p engine.Plan) (engine.Plan, error) {
	names := engine.ParseBestOf(f.bestOf)
	if f.bestOf != "" {
		if err := engine.CheckBestOf(names, runner.Names()); err != nil {
			return p, usagef("--best-of %s: %v", f.bestOf, err)
		}
	}
	for _, s := range p.Steps {
		if err := engine.CheckBestOf(s.Rules.BestOf, runner.Names()); err != nil {
			return p, usagef("step %q: %v", s.ID, err)
		}
	}
	return engine.BestOf(p, names), nil
}

// addModeFlags defines --auto and --force-auto.
func (a *cli) addModeFlags(c *cobra.Command, f *runFlags) {
	fs := c.Flags()
	fs.BoolVar(&f.Auto, "auto", false, "guarded auto: no pauses, but halt on FAILED and pause on EMPTY")
	fs.BoolVar(&f.ForceAuto, "force-auto", false, "guarded auto also for chains and Complex, Chaotic or unclassified plans")
}

func (a *cli) addThreadFlag(c *cobra.Command, f *runFlags) {
	c.Flags().BoolVar(&f.Thread, "thread", false, "each step gets the previous step's confirmed artifact (chains, workflows)")
}

func (a *cli) addDryRunFlag(c *cobra.Command, f *runFlags, usage string) {
	c.Flags().BoolVar(&f.DryRun, "dry-run", false, usage)
}

const dryRunUsage = "run no agent: each step reports NOT EXECUTED - dry run"

// addAgentFlags defines what says which agent runs, on which skills, over
// which data: --dry-run (described by dryRun), --skills, --data, --runner
// and --runner-cmd.
func (a *cli) addAgentFlags(c *cobra.Command, f *runFlags, dryRun string) {
	a.addDryRunFlag(c, f, dryRun)
	a.addSkillsFlag(c, f)
	a.addDataFlag(c, f)
	a.addRunnerFlags(c, f)
}

// addInputFlags defines the inputs of run and check besides a plan file.
func (a *cli) addInputFlags(c *cobra.Command, f *runFlags) {
	fs := c.Flags()
	a.addChainFlag(c, f, "chain of skills `EXPR`: 'a -> b, c then d [-- context]'")
	fs.StringVar(&f.workflow, "workflow", "", "workflow `NAME`: NAME.yaml in GONOGO_WORKFLOWS_DIR")
	a.completeFlag(c, "workflow", a.completeWorkflows)
	fs.StringArrayVar(&f.args, "arg", nil, "workflow argument `k=v` (repeatable)")
	a.completeFlag(c, "arg", cobra.NoFileCompletions)
	fs.StringVar(&f.context, "context", "", "workflow context `TEXT`, given to every step")
	a.completeFlag(c, "context", cobra.NoFileCompletions)
	f.maxPlanBytes = a.defaults.MaxPlanBytes
	fs.Var(&f.maxPlanBytes, "max-plan-bytes", "largest plan accepted, e.g. 512KiB (env GONOGO_MAX_PLAN_BYTES)")
	a.completeFlag(c, "max-plan-bytes", cobra.NoFileCompletions)
}

// addChainFlag defines --chain. Its value is kept exactly as given, commas
// and dashes included.
func (a *cli) addChainFlag(c *cobra.Command, f *runFlags, usage string) {
	c.Flags().StringVar(&f.chain, "chain", "", usage)
	a.completeFlag(c, "chain", a.completeChain(f))
}

func (a *cli) addSkillsFlag(c *cobra.Command, f *runFlags) {
	c.Flags().StringVar(&f.skills, "skills", a.defaults.SkillsDir,
		"skills directory `DIR` (env GONOGO_SKILLS_DIR; default ~/.claude/skills and .claude/skills, else skills)")
	a.completeFlag(c, "skills", completion.Dirs)
}

func (a *cli) addDataFlag(c *cobra.Command, f *runFlags) {
	c.Flags().StringVar(&f.data, "data", a.defaults.DataDir, "data directory `DIR`: store and artifacts (env GONOGO_DATA_DIR)")
	a.completeFlag(c, "data", completion.Dirs)
}

func (a *cli) addRunnerFlags(c *cobra.Command, f *runFlags) {
	fs := c.Flags()
	fs.StringVar(&f.runner, "runner", a.defaults.Runner, "agent runner `NAME`: "+strings.Join(runner.Names(), ", ")+" (env GONOGO_RUNNER)")
	a.completeFlag(c, "runner", completion.Runners)
	fs.StringVar(&f.runnerCmd, "runner-cmd", a.defaults.RunnerCmd, "agent executable `PATH` (env GONOGO_RUNNER_CMD; default: the runner's own, "+runner.DefaultClaudeCmd+", "+runner.DefaultCodexCmd+" or "+runner.DefaultGeminiCmd+")")
}

func (a *cli) addJSONFlag(c *cobra.Command, f *runFlags) {
	c.Flags().BoolVar(&f.json, "json", false, "print JSON")
}

// resolve gives every flag left out its environment variable's value (a
// flag wins over its variable), and takes the arguments.
func (f *runFlags) resolve(c *cobra.Command, cfg config, args []string) {
	fs := c.Flags()
	given := func(name string) bool {
		fl := fs.Lookup(name)
		return fl != nil && fl.Changed
	}
	for _, v := range []struct {
		name string
		dst  *string
		env  string
	}{{"data", &f.data, cfg.DataDir}, {"skills", &f.skills, cfg.SkillsDir}, {"runner", &f.runner, cfg.Runner}, {"runner-cmd", &f.runnerCmd, cfg.RunnerCmd}} {
		if !given(v.name) {
			*v.dst = v.env
		}
	}
	if !given("max-plan-bytes") {
		f.maxPlanBytes = cfg.MaxPlanBytes
	}
	f.chainSet = given("chain")
	f.changed = given
	f.positional = args
}

// oneOf refuses anything but one input (a plan file, --chain or
// --workflow), and a flag given that is not for that input.
func oneOf(f *runFlags) error {
	switch given := inputs(f); {
	case len(given) == 0:
		return usagef("name a plan file, --chain 'EXPR' or --workflow NAME")
	case len(given) > 1:
		return usagef("give one input: a plan file, --chain or --workflow (got %s)", strings.Join(given, " and "))
	case len(f.positional) > 1:
		return usagef("one plan file at a time (got %d: %s)", len(f.positional), strings.Join(f.positional, ", "))
	}
	return flagsFit(f)
}

// flagsFit refuses a flag that is not for the input given.
func flagsFit(f *runFlags) error {
	switch {
	case f.context != "" && f.workflow == "":
		return usagef("--context is for --workflow: a chain's context follows \"--\" in the expression, a plan carries its own")
	case len(f.args) > 0 && f.workflow == "":
		return usagef("--arg is for --workflow: a chain or a plan takes no arguments")
	case f.changed != nil && f.changed("max-plan-bytes") && len(f.positional) == 0:
		return usagef("--max-plan-bytes is for a plan file: a chain or a workflow is not one")
	}
	return nil
}

func inputs(f *runFlags) []string {
	var out []string
	if len(f.positional) > 0 {
		out = append(out, fmt.Sprintf("plan %s", f.positional[0]))
	}
	if f.chainSet {
		out = append(out, "--chain")
	}
	if f.workflow != "" {
		out = append(out, "--workflow")
	}
	return out
}
