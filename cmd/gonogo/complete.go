package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/intake"
	"github.com/gonogo/gonogo/internal/localapi"
	"github.com/gonogo/gonogo/internal/runner"
	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/parse"
	"github.com/gonogo/gonogo/storage"
)

// Shell completion: cobra's generators (gonogo completion bash|zsh|fish)
// call back into gonogo (gonogo __complete ...), which answers from the
// functions here. A completion never fails and never waits long: whatever
// cannot be read (a missing directory, a store another gonogo holds)
// completes nothing.

// completeLockWait is how long completing a run id waits for the store;
// a running gonogo holds it for as long as it runs.
const completeLockWait = 150 * time.Millisecond

type flagComp struct {
	c    *cobra.Command
	name string
	fn   cobra.CompletionFunc
}

// completeFlag notes how to complete a flag's value; registerFlagCompletions
// hands the notes to cobra.
func (a *cli) completeFlag(c *cobra.Command, name string, fn cobra.CompletionFunc) {
	a.flagComps = append(a.flagComps, flagComp{c, name, fn})
}

// registerFlagCompletions is done only when the shell asks: cobra keeps
// flag completions in a process-wide map that nothing ever empties.
func (a *cli) registerFlagCompletions() {
	for _, fc := range a.flagComps {
		_ = fc.c.RegisterFlagCompletionFunc(fc.name, fc.fn)
	}
}

func dirs(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveFilterDirs
}

func completeRunners(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return runner.Names(), cobra.ShellCompDirectiveNoFileComp
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
	return withPrefix("", names, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeChain offers skill names for the last name of the chain typed
// so far: "deliver-prd -> d" completes to "deliver-prd -> deliver-...".
func (a *cli) completeChain(f *runFlags) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		cfg := a.completionConfig(c.Context())
		f.resolve(c, cfg, args)
		cat, err := cfg.loadSkills(f.skills)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		cut := strings.LastIndexAny(toComplete, " ,>") + 1
		head, last := toComplete[:cut], toComplete[cut:]
		return skillCompletions(head, last, cat, cfg.Policy), cobra.ShellCompDirectiveNoFileComp
	}
}

// skillCompletions offers the skills whose names start with prefix, each
// after head; a skill that cannot run as a step (engine.Unusable: the
// policy refuses it, its leaf agent is missing) says so and why.
func skillCompletions(head, prefix string, cat *parse.Catalog, policyFile string) []cobra.Completion {
	pol, err := parse.LoadPolicy(policyFile)
	if err != nil {
		return withPrefix(head, cat.Names(), prefix)
	}
	var out []cobra.Completion
	for _, n := range cat.Names() {
		if !strings.HasPrefix(n, prefix) {
			continue
		}
		c := head + n
		if why := engine.Unusable(n, cat, pol); why != "" {
			c = cobra.CompletionWithDesc(c, "not usable: "+terminal.Clip(terminal.OneLine(why), 80))
		}
		out = append(out, c)
	}
	return out
}

// completeRunIDs offers the ids of the runs in the store as a command's
// first argument, newest first, each with its state and source.
func (a *cli) completeRunIDs(f *runFlags) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		f.resolve(c, a.completionConfig(c.Context()), args)
		return runIDs(c.Context(), f.data, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

func runIDs(ctx context.Context, data, prefix string) []cobra.Completion {
	// Completing creates nothing: no store, no runs.
	if _, err := os.Stat(filepath.Join(data, storage.FileName)); err != nil {
		return nil
	}
	list, err := listForCompletion(ctx, data)
	if err != nil {
		return nil
	}
	var out []cobra.Completion
	for _, s := range list {
		if strings.HasPrefix(string(s.ID), prefix) {
			out = append(out, cobra.CompletionWithDesc(string(s.ID), fmt.Sprintf("%s %s", s.State, terminal.Clip(terminal.OneLine(s.Source), 50))))
		}
	}
	return out
}

// listForCompletion lists the runs from the store, or from the gonogo
// holding it when it answers at once.
func listForCompletion(ctx context.Context, data string) ([]engine.RunSummary, error) {
	db, err := openToRead(data, completeLockWait)
	if errors.Is(err, engine.ErrLocked) {
		ctx, cancel := context.WithTimeout(ctx, completeLockWait)
		defer cancel()
		c, err := localapi.Dial(ctx, data)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		return c.List(ctx)
	}
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return db.List(ctx)
}

func withPrefix(head string, names []string, prefix string) []cobra.Completion {
	var out []cobra.Completion
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, head+n)
		}
	}
	return out
}

// bashOpenQuote is added to cobra's bash script (gonogo completion bash).
// Cobra's script evals the command line to ask gonogo for completions, and
// a word the user is still typing inside quotes (a chain:
// gonogo run --chain 'deliver-prd -> del<TAB>) has an open quote that
// breaks the eval, so nothing is offered. Such a word is handed to gonogo
// without its quote instead, and what gonogo offers is put back as it
// reads inside the quote, without the backslashes cobra would add. Any
// other word goes through cobra's own function. %[1]s is the program name.
const bashOpenQuote = `
# gonogo: complete a word typed after an opening quote (a chain).
__%[1]s_start_quoted()
{
    local cur prev words cword split
    COMPREPLY=()
    if declare -F _init_completion >/dev/null 2>&1; then
        _init_completion -n =: || return
    else
        __%[1]s_init_completion -n =: || return
    fi
    local q=${cur:0:1}
    if [[ $q != "'" && $q != '"' ]] || [[ ${cur:1} == *"$q"* ]]; then
        __start_%[1]s
        return
    fi
    local typed=${cur:1} out directive comp
    words=("${words[@]:0:cword}")
    [[ -n $typed ]] && words+=("$(printf %%q "$typed")")
    cur=$typed
    __%[1]s_get_completion_results
    (( (directive & 1) != 0 )) && return
    if [[ $(type -t compopt) == builtin ]]; then
        (( (directive & 2) != 0 )) && compopt -o nospace
        (( (directive & 4) != 0 )) && compopt +o default
    fi
    while IFS='' read -r comp; do
        comp=${comp%%%%$'\t'*}
        [[ -n $comp && $comp != _activeHelp_* && $comp != *"$q"* && $comp == "$typed"* ]] && COMPREPLY+=("$comp")
    done <<<"$out"
}

if [[ $(type -t compopt) = "builtin" ]]; then
    complete -o default -F __%[1]s_start_quoted %[1]s
else
    complete -o default -o nospace -F __%[1]s_start_quoted %[1]s
fi
`

// completeOpenQuotes makes gonogo completion bash print cobra's script
// followed by bashOpenQuote.
func completeOpenQuotes(root *cobra.Command) {
	bash, _, err := root.Find([]string{"completion", "bash"})
	if err != nil || bash.Name() != "bash" || bash.RunE == nil {
		return
	}
	cobraScript := bash.RunE
	bash.RunE = func(c *cobra.Command, args []string) error {
		if err := cobraScript(c, args); err != nil {
			return err
		}
		_, err := fmt.Fprintf(c.OutOrStdout(), bashOpenQuote, root.Name())
		return err
	}
}
