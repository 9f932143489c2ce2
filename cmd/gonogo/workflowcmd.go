package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/parse"
)

// cmdWorkflow is "gonogo workflow save NAME --chain 'EXPR' [--replace]",
// which keeps a chain as a named workflow in GONOGO_WORKFLOWS_DIR, and
// "gonogo workflow list".
func cmdWorkflow(ctx context.Context, e env, cfg config, args []string) int {
	if len(args) == 0 {
		return fail(e, "workflow", usagef("workflow needs a subcommand: save NAME --chain 'EXPR' [--replace], or list"))
	}
	switch args[0] {
	case "save":
		return workflowSave(e, cfg, args[1:])
	case "list":
		return workflowList(e, cfg, args[1:])
	}
	return fail(e, "workflow", usagef("unknown workflow subcommand %q: save or list", args[0]))
}

func workflowSave(e env, cfg config, args []string) int {
	fset := flag.NewFlagSet("workflow save", flag.ContinueOnError)
	fset.SetOutput(io.Discard)
	chain := fset.String("chain", "", "the chain to save")
	replace := fset.Bool("replace", false, "replace a workflow of the same name")
	skills := fset.String("skills", cfg.skillsDir(), "skills directory (GONOGO_SKILLS_DIR)")
	var names []string
	for rest := args; ; {
		if err := fset.Parse(rest); err != nil {
			return fail(e, "workflow save", usagef("%v", err))
		}
		rest = fset.Args()
		if len(rest) == 0 {
			break
		}
		names, rest = append(names, rest[0]), rest[1:]
	}
	if len(names) != 1 || *chain == "" {
		return fail(e, "workflow save", usagef("usage: gonogo workflow save NAME --chain 'EXPR' [--replace]"))
	}
	name := names[0]
	expr, err := parse.Chain(*chain)
	if err != nil {
		return fail(e, "workflow save", err)
	}
	// Only a chain that would run is saved: its skills are installed and
	// allowed.
	cat, err := cfg.loadSkills(*skills)
	if err != nil {
		return fail(e, "workflow save", err)
	}
	pol, err := parse.LoadPolicy(cfg.Policy)
	if err != nil {
		return fail(e, "workflow save", fmt.Errorf("policy: %w", err))
	}
	if _, err := engine.PreflightChain(expr, cat, pol); err != nil {
		return fail(e, "workflow save", err)
	}
	src, err := parse.ChainWorkflow(name, expr)
	if err != nil {
		return fail(e, "workflow save", usagef("%v", err))
	}
	path, err := parse.SaveWorkflow(cfg.WorkflowsDir, name, src, *replace)
	if errors.Is(err, fs.ErrExist) {
		return fail(e, "workflow save", usagef("%v; pass --replace to overwrite it", err))
	}
	if err != nil {
		return fail(e, "workflow save", err)
	}
	fmt.Fprintf(e.stdout, "Saved workflow %s: %s\nRun it: gonogo run --workflow %s --context '...'   (Slack: /gonogo run %s -- ...)\n", name, path, name, name)
	if expr.Context != "" {
		fmt.Fprintln(e.stdout, "The chain's context was not saved: give it when you run the workflow.")
	}
	return exitOK
}

func workflowList(e env, cfg config, args []string) int {
	if len(args) > 0 {
		return fail(e, "workflow list", usagef("workflow list takes no arguments"))
	}
	names, err := parse.ListWorkflows(cfg.WorkflowsDir)
	if err != nil {
		return fail(e, "workflow list", err)
	}
	if len(names) == 0 {
		fmt.Fprintf(e.stdout, "No workflows in %s\n", cfg.WorkflowsDir)
		return exitOK
	}
	for _, n := range names {
		w, err := parse.LoadWorkflow(cfg.WorkflowsDir, n)
		switch {
		case err != nil:
			fmt.Fprintf(e.stdout, "%-28s (does not read: gonogo check --workflow %s)\n", n, n)
		default:
			fmt.Fprintf(e.stdout, "%-28s %d steps  %s\n", n, len(w.Steps), clip(oneLine(w.Description), 80))
		}
	}
	return exitOK
}
