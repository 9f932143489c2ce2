package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/spf13/cobra"

	"github.com/gonogo/gonogo/internal/intake"
	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/parse"
)

// newWorkflowCmd is "gonogo workflow save NAME --chain 'EXPR' [--replace]",
// which keeps a chain as a named workflow in GONOGO_WORKFLOWS_DIR, and
// "gonogo workflow list".
func newWorkflowCmd(a *cli) *cobra.Command {
	c := &cobra.Command{
		Use:                   "workflow save|list",
		DisableFlagsInUseLine: true,
		Short:                 "Keep a chain as a named workflow, or list the workflows",
		Long: `Keep a chain as a named workflow in the workflows directory
(GONOGO_WORKFLOWS_DIR), or list the workflows there.`,
		// A subcommand cobra does not know reaches here, to be named.
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("workflow needs a subcommand: save NAME --chain 'EXPR' [--replace], or list")
			}
			return usagef("unknown workflow subcommand %q: save or list", args[0])
		},
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	c.AddCommand(newWorkflowSaveCmd(a), newWorkflowListCmd(a))
	return c
}

func newWorkflowSaveCmd(a *cli) *cobra.Command {
	f := &runFlags{}
	var replace bool
	c := &cobra.Command{
		Use:   "save [flags] NAME --chain 'EXPR'",
		Short: "Keep a chain as a named workflow",
		Long: `Keep a chain as a named workflow (NAME.yaml in GONOGO_WORKFLOWS_DIR), once it
would run: its skills are installed and allowed. Run it with gonogo run --workflow NAME.`,
		RunE: a.action(f, func(_ context.Context, e env, cfg config, f *runFlags) int {
			return workflowSave(e, cfg, f, replace)
		}),
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	a.addChainFlag(c, f, "chain of skills `EXPR` to save: 'a -> b, c then d'")
	c.Flags().BoolVar(&replace, "replace", false, "replace a workflow of the same name")
	a.addSkillsFlag(c, f)
	return c
}

func newWorkflowListCmd(a *cli) *cobra.Command {
	return &cobra.Command{
		Use:                   "list",
		DisableFlagsInUseLine: true,
		Short:                 "List the workflows in GONOGO_WORKFLOWS_DIR",
		RunE:                  a.action(&runFlags{}, workflowList),
		ValidArgsFunction:     cobra.NoFileCompletions,
	}
}

func workflowSave(e env, cfg config, f *runFlags, replace bool) int {
	if len(f.positional) != 1 || f.chain == "" {
		return fail(e, "workflow save", usagef("usage: gonogo workflow save NAME --chain 'EXPR' [--replace]"))
	}
	name := f.positional[0]
	expr, err := parse.Chain(f.chain)
	if err != nil {
		return fail(e, "workflow save", err)
	}
	// Only a chain that would run is saved: its skills are installed and
	// allowed.
	cat, err := cfg.LoadSkills(f.skills)
	if err != nil {
		return fail(e, "workflow save", err)
	}
	pol, err := parse.LoadPolicy(cfg.Policy)
	if err != nil {
		return fail(e, "workflow save", fmt.Errorf("policy: %w", err))
	}
	path, err := intake.Dir(cfg.WorkflowsDir).SaveChain(name, expr, cat, pol, replace)
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
	return terminal.ExitOK
}

func workflowList(_ context.Context, e env, cfg config, f *runFlags) int {
	if len(f.positional) > 0 {
		return fail(e, "workflow list", usagef("takes no arguments"))
	}
	dir := intake.Dir(cfg.WorkflowsDir)
	names, err := dir.List()
	if err != nil {
		return fail(e, "workflow list", err)
	}
	terminal.PrintWorkflows(e.stdout, cfg.WorkflowsDir, names, dir.Workflow)
	return terminal.ExitOK
}
