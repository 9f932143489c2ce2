package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/runner"
	"github.com/gonogo/gonogo/internal/terminal"
)

func newCheckCmd(a *cli) *cobra.Command {
	f := &runFlags{}
	c := &cobra.Command{
		Use:   "check [flags] PLAN.md | --chain 'EXPR' | --workflow NAME",
		Short: "Show what would run, or why it is refused; runs nothing",
		Long: `Check a plan, a chain or a workflow as gonogo run would, and print the steps that
would run, the manual and deferred ones, or why the input is refused. Nothing runs.

Exit codes: 0 accepted, 1 refused, 2 usage, I/O or configuration error.`,
		RunE: a.action(f, cmdCheck),
	}
	a.addJSONFlag(c, f)
	// check opens no store, but --data is one of the flags DESIGN.md gives
	// run, check and resume alike, and scripts pass them to all three: it
	// is taken, and check says on stderr that it reads no store.
	a.addDataFlag(c, f)
	a.addModeFlags(c, f)
	a.addThreadFlag(c, f)
	a.addDryRunFlag(c, f, dryRunUsage)
	a.addSkillsFlag(c, f)
	a.addRunnerFlags(c, f)
	a.addInputFlags(c, f)
	return c
}

func cmdCheck(ctx context.Context, e env, cfg config, f *runFlags) int {
	if f.changed != nil && f.changed("data") {
		fmt.Fprintln(e.stderr, "note: gonogo check opens no store; --data changes nothing here")
	}
	// run refuses a runner it does not know; check says so the same way.
	if _, ok := runner.Lookup(runnerName(f)); !ok && f.runnerOverride == nil {
		fmt.Fprintf(e.stderr, "gonogo check: unknown runner %q (valid: %s)\n", runnerName(f), strings.Join(runner.Names(), ", "))
		return terminal.ExitUsage
	}
	in, err := loadInput(e, f, cfg)
	ref, refused := errors.AsType[*engine.Refusal](err)
	if err != nil && !refused {
		fmt.Fprintln(e.stderr, "gonogo check:", err)
		return terminal.ExitUsage
	}
	// A missing agent does not make the input wrong: check warns, run
	// refuses.
	if err := agentMissing(f); err != nil {
		in.plan.Warnings = append(in.plan.Warnings, err.Error())
		if ref != nil && !f.json {
			fmt.Fprintf(e.stderr, "warning: %v\n", err)
		}
	}
	v := terminal.Check{Kind: in.kind, Plan: in.plan, Refusal: ref}
	if code := printCheck(e, v, f.json); code != terminal.ExitOK || !refused {
		return code
	}
	return terminal.ExitRefused
}

// printCheck prints what check found, for people or as JSON.
func printCheck(e env, v terminal.Check, asJSON bool) int {
	if asJSON {
		return writeJSON(e, "check", v.JSON())
	}
	v.Print(terminal.Printable(e.stdout))
	return terminal.ExitOK
}
