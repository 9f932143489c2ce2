package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/cmdline"
	"github.com/gonogo/gonogo/internal/datadir"
	"github.com/gonogo/gonogo/internal/localapi"
	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/storage"
)

func newRunsCmd(a *cli) *cobra.Command {
	f := &runFlags{}
	c := &cobra.Command{
		Use:               "runs [flags]",
		Short:             "List the runs in the store, newest first",
		RunE:              a.action(f, cmdRuns),
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	a.addJSONFlag(c, f)
	a.addDataFlag(c, f)
	return c
}

func cmdRuns(ctx context.Context, e env, cfg config, f *runFlags) int {
	if len(f.positional) > 0 {
		return fail(e, "runs", usagef("takes no arguments (got %q)", f.positional[0]))
	}
	db, err := openReader(ctx, e, f.data)
	if err != nil {
		return fail(e, "runs", err)
	}
	defer db.Close()
	list, err := db.List(ctx)
	if err != nil {
		return fail(e, "runs", err)
	}
	_, unheld := db.(storeReader)
	v := terminal.Runs{List: list, States: terminal.RunStates(ctx, db, list, unheld, datadir.ReadOnly(db)), Data: f.data}
	if f.json {
		return writeJSON(e, "runs", v.JSON())
	}
	v.Print(terminal.Printable(e.stdout))
	return terminal.ExitOK
}

func newShowCmd(a *cli) *cobra.Command {
	f := &runFlags{}
	var art artifactFlags
	c := &cobra.Command{
		Use:   "show [flags] RUN",
		Short: "Show one run: its steps, attempts and journal",
		Long: `Show one run from the store: its steps, every attempt, and the journal of what
happened. RUN is an id from gonogo runs. With --artifact N, print step N's artifact
instead, byte for byte: the step's current one (the edit, if it was edited), or with
--attempt K that attempt's (on a terminal, its control characters are shown, not
obeyed). It works while another gonogo holds the data directory.

Exit codes: 0 shown, 1 the step or attempt has no artifact, 2 no such run, step or
attempt, or another usage or I/O error.`,
		RunE: a.action(f, func(ctx context.Context, e env, cfg config, f *runFlags) int {
			return cmdShow(ctx, e, cfg, f, art)
		}),
		ValidArgsFunction: a.completeRunIDs(f),
	}
	a.addJSONFlag(c, f)
	a.addDataFlag(c, f)
	c.Flags().Var(cmdline.NumberFlag{N: &art.step, What: "step"}, "artifact", "print step `N`'s artifact, byte for byte")
	c.Flags().Var(cmdline.NumberFlag{N: &art.attempt, What: "attempt"}, "attempt", "with --artifact: attempt `K`'s artifact instead of the current one")
	a.completeFlag(c, "artifact", cobra.NoFileCompletions)
	a.completeFlag(c, "attempt", cobra.NoFileCompletions)
	return c
}

// artifactFlags are show's --artifact N and --attempt K.
type artifactFlags struct{ step, attempt int }

func (a artifactFlags) check(json bool) error {
	switch {
	case a.attempt != 0 && a.step == 0:
		return usagef("--attempt goes with --artifact N")
	case a.step != 0 && json:
		return usagef("--artifact prints the artifact itself; --json is for the run")
	}
	return nil
}

func cmdShow(ctx context.Context, e env, cfg config, f *runFlags, art artifactFlags) int {
	if len(f.positional) != 1 {
		return fail(e, "show", usagef("expected one run id (see gonogo runs)"))
	}
	if err := art.check(f.json); err != nil {
		return fail(e, "show", err)
	}
	db, err := openReader(ctx, e, f.data)
	if err != nil {
		return fail(e, "show", err)
	}
	defer db.Close()
	id := engine.RunID(f.positional[0])
	if art.step != 0 {
		v := terminal.ArtifactShow{Data: f.data, Run: id, Step: art.step, Attempt: art.attempt}
		return v.Show(ctx, db, e.stdout, e.stderr)
	}
	r, journal, err := db.RunWithJournal(ctx, id)
	if err != nil {
		if errors.Is(err, engine.ErrNotFound) {
			return fail(e, "show", fmt.Errorf("no run %s in %s (see gonogo runs)", id, f.data))
		}
		return fail(e, "show", err)
	}
	v := terminal.Show{Run: r, Journal: journal, Data: f.data, NotRunning: notRunning(db, r)}
	_, v.Unheld = db.(storeReader)
	if c, held := db.(*localapi.Client); held {
		v.Holder = c.Describe()
	}
	if f.json {
		sums, err := db.ArtifactSums(ctx, id)
		if err != nil {
			return fail(e, "show", err)
		}
		terminal.PrintNotRunning(e.stderr, v.NotRunning)
		return writeJSON(e, "show", v.JSON(artifactSums(sums)))
	}
	v.Print(terminal.Printable(e.stdout)) // the agent's words are shown, never obeyed
	return terminal.ExitOK
}

// artifactSums is the sha256 of each stored artifact by its step and
// attempt.
func artifactSums(sums []storage.ArtifactSum) map[terminal.AttemptKey]string {
	out := make(map[terminal.AttemptKey]string, len(sums))
	for _, s := range sums {
		out[terminal.AttemptKey{Step: s.Step, Attempt: s.Attempt}] = s.SHA256
	}
	return out
}

func writeJSON(e env, cmd string, v any) int {
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fail(e, cmd, err)
	}
	return terminal.ExitOK
}
