package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/gonogo/gonogo/engine"
)

// runFlags are the flags shared by run, check, resume and demo.
type runFlags struct {
	engine.Flags
	json         bool
	chain        string
	chainSet     bool
	workflow     string
	args         multiFlag
	context      string
	skills       string
	data         string
	runner       string
	runnerCmd    string
	maxPlanBytes byteSize
	positional   []string

	runnerOverride engine.Runner // the demo's stand-in for an agent
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

// parseFlags reads flags anywhere among the arguments (before and after
// the plan file), as people type them.
func parseFlags(name string, args []string, cfg config, withJSON bool) (*runFlags, error) {
	f := &runFlags{maxPlanBytes: cfg.MaxPlanBytes}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&f.Auto, "auto", false, "guarded auto: advance without pausing, but halt on FAILED and pause on EMPTY")
	fs.BoolVar(&f.ForceAuto, "force-auto", false, "guarded auto even for Complex, Chaotic or unclassified plans and for chains")
	fs.BoolVar(&f.DryRun, "dry-run", false, "everything but the runner: each step reports NOT EXECUTED - dry run")
	fs.BoolVar(&f.Thread, "thread", false, "chains: each step receives the previous step's confirmed artifact")
	fs.StringVar(&f.skills, "skills", cfg.SkillsDir, "skills directory (GONOGO_SKILLS_DIR)")
	fs.StringVar(&f.data, "data", cfg.DataDir, "data directory (GONOGO_DATA_DIR)")
	fs.StringVar(&f.runner, "runner", cfg.Runner, "claude, command or dry-run (GONOGO_RUNNER)")
	fs.StringVar(&f.runnerCmd, "runner-cmd", cfg.RunnerCmd, "the agent executable (GONOGO_RUNNER_CMD)")
	fs.Func("chain", "a chain expression: 'a -> b, c then d [-- context]'", func(s string) error {
		f.chain, f.chainSet = s, true
		return nil
	})
	fs.StringVar(&f.workflow, "workflow", "", "a named workflow")
	fs.Var(&f.args, "arg", "a workflow argument, k=v (repeatable)")
	fs.StringVar(&f.context, "context", "", "a workflow's shared context, given to every step")
	fs.Var(&f.maxPlanBytes, "max-plan-bytes", "largest plan accepted (GONOGO_MAX_PLAN_BYTES)")
	if withJSON {
		fs.BoolVar(&f.json, "json", false, "print JSON")
	}
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			return nil, usagef("%s: %v", name, err)
		}
		rest = fs.Args()
		if len(rest) == 0 {
			break
		}
		if rest[0] == "--" {
			f.positional = append(f.positional, rest[1:]...)
			break
		}
		f.positional = append(f.positional, rest[0])
		rest = rest[1:]
	}
	if f.skills == "" {
		c := cfg
		c.SkillsDir = ""
		f.skills = c.skillsDir()
	}
	return f, nil
}

func (f *runFlags) describe() string {
	var parts []string
	for _, p := range []struct {
		on   bool
		name string
	}{{f.Auto, "--auto"}, {f.ForceAuto, "--force-auto"}, {f.DryRun, "--dry-run"}, {f.Thread, "--thread"}} {
		if p.on {
			parts = append(parts, p.name)
		}
	}
	return strings.Join(parts, " ")
}

func mergeFlags(a, b engine.Flags) engine.Flags {
	return engine.Flags{Auto: a.Auto || b.Auto, ForceAuto: a.ForceAuto || b.ForceAuto, DryRun: a.DryRun || b.DryRun, Thread: a.Thread || b.Thread}
}

func oneOf(f *runFlags) error {
	n := 0
	if f.chainSet {
		n++
	}
	if f.workflow != "" {
		n++
	}
	if len(f.positional) > 0 {
		n++
	}
	switch {
	case n == 0:
		return usagef("name a plan file, --chain 'EXPR' or --workflow NAME")
	case n > 1:
		return usagef("give one input: a plan file, --chain or --workflow (got %s)", strings.Join(inputs(f), " and "))
	case len(f.positional) > 1:
		return usagef("one plan file at a time (got %d: %s)", len(f.positional), strings.Join(f.positional, ", "))
	case f.context != "" && f.workflow == "":
		return usagef("--context is for --workflow: a chain's context follows \"--\" in the expression, a plan carries its own")
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
