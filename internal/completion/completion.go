package completion

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
	"github.com/gonogo/gonogo/internal/datadir"
	"github.com/gonogo/gonogo/internal/localapi"
	"github.com/gonogo/gonogo/internal/runner"
	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/parse"
	"github.com/gonogo/gonogo/storage"
)

// lockWait is how long completing a run id waits for the store; a running
// gonogo holds it for as long as it runs.
const lockWait = 150 * time.Millisecond

// Flags are the notes of how to complete flags' values, kept as commands
// are built and handed to cobra by Register.
type Flags []flag

type flag struct {
	c    *cobra.Command
	name string
	fn   cobra.CompletionFunc
}

// Add notes that flag name of c completes with fn.
func (f *Flags) Add(c *cobra.Command, name string, fn cobra.CompletionFunc) {
	*f = append(*f, flag{c, name, fn})
}

// Register hands the notes to cobra. Call it only when the shell asks:
// cobra keeps flag completions in a process-wide map that nothing ever
// empties.
func (f Flags) Register() {
	for _, fc := range f {
		_ = fc.c.RegisterFlagCompletionFunc(fc.name, fc.fn)
	}
}

// Dirs completes a directory.
func Dirs(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveFilterDirs
}

// Runners completes a runner's name.
func Runners(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return runner.Names(), cobra.ShellCompDirectiveNoFileComp
}

// Chain offers skill names for the last name of the chain typed so far:
// "deliver-prd -> d" completes to "deliver-prd -> deliver-...".
func Chain(typed string, cat *parse.Catalog, policyFile string) []cobra.Completion {
	cut := strings.LastIndexAny(typed, " ,>") + 1
	return Skills(typed[:cut], typed[cut:], cat, policyFile)
}

// Skills offers the skills whose names start with prefix, each after head;
// a skill that cannot run as a step (engine.Unusable: the policy refuses
// it, its leaf agent is missing) says so and why.
func Skills(head, prefix string, cat *parse.Catalog, policyFile string) []cobra.Completion {
	pol, err := parse.LoadPolicy(policyFile)
	if err != nil {
		return WithPrefix(head, cat.Names(), prefix)
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

// RunIDs offers the ids of the runs in data that start with prefix, newest
// first, each with its state and source.
func RunIDs(ctx context.Context, data, prefix string) []cobra.Completion {
	// Completing creates nothing: no store, no runs.
	if _, err := os.Stat(filepath.Join(data, storage.FileName)); err != nil {
		return nil
	}
	list, err := runs(ctx, data)
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

// runs lists the runs from the store, or from the gonogo holding it when
// it answers at once.
func runs(ctx context.Context, data string) ([]engine.RunSummary, error) {
	db, err := datadir.OpenToRead(data, lockWait)
	if errors.Is(err, engine.ErrLocked) {
		ctx, cancel := context.WithTimeout(ctx, lockWait)
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

// WithPrefix is the names that start with prefix, each after head.
func WithPrefix(head string, names []string, prefix string) []cobra.Completion {
	var out []cobra.Completion
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, head+n)
		}
	}
	return out
}
