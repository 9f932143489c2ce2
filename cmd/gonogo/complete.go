package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/gonogo/gonogo/internal/completion"
	"github.com/gonogo/gonogo/internal/intake"
)

// Shell completion: which arguments and flag values complete how is said
// here, as the commands are built; internal/completion answers.

// completeFlag notes how to complete a flag's value; realMain hands the
// notes to cobra when the shell asks (see completion.Flags).
func (a *cli) completeFlag(c *cobra.Command, name string, fn cobra.CompletionFunc) {
	a.flagComps.Add(c, name, fn)
}

// completionConfig is the configuration as a completion sees it: the
// environment, or the built-in defaults when it does not read.
func (a *cli) completionConfig(ctx context.Context) config {
	cfg, err := loadConfig(ctx, a.e.lookup)
	if err != nil {
		return a.defaults
	}
	return cfg
}

func (a *cli) completeWorkflows(c *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	names, _ := intake.Dir(a.completionConfig(c.Context()).WorkflowsDir).List()
	return completion.WithPrefix("", names, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeChain offers skill names for the last name of the chain typed
// so far, from the skills the flags and the environment name.
func (a *cli) completeChain(f *runFlags) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		cfg := a.completionConfig(c.Context())
		f.resolve(c, cfg, args)
		cat, err := cfg.LoadSkills(f.skills)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return completion.Chain(toComplete, cat, cfg.Policy), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeRunIDs offers the ids of the runs in the store as a command's
// first argument.
func (a *cli) completeRunIDs(f *runFlags) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		f.resolve(c, a.completionConfig(c.Context()), args)
		return completion.RunIDs(c.Context(), f.data, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}
