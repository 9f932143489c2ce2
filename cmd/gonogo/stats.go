package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/terminal"
)

// statsFlags are stats' own flags.
type statsFlags struct {
	since string
	skill string
}

func newStatsCmd(a *cli) *cobra.Command {
	f := &runFlags{}
	x := &statsFlags{}
	c := &cobra.Command{
		Use:   "stats [flags]",
		Short: "What the decisions teach, per skill and agent",
		Long: `Show, per skill and agent, what the steps of the runs in the store did and what
people decided on them: attempts PRODUCED, EMPTY or FAILED; approved, approved as
produced on the first attempt, edited (and the share of lines the edit changed),
redone with or without feedback, skipped, aborted at; best-of picks won; the median
time from a checkpoint to its decision; the cost per approved artifact. Then the same
by week. Everything is computed from the runs' journals. --since takes hours, days
or weeks back (36h, 30d, 4w), a date (2026-03-01) or all. It works while another
gonogo holds the data directory, and reads the cluster when GONOGO_TEMPORAL_ADDR
is set.

Exit codes: 0 shown, 2 a bad flag or an I/O error.`,
		RunE: a.action(f, func(ctx context.Context, e env, cfg config, f *runFlags) int {
			return cmdStats(ctx, e, f, *x)
		}),
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	a.addJSONFlag(c, f)
	a.addDataFlag(c, f)
	c.Flags().StringVar(&x.since, "since", engine.DefaultStatsSince, "count from `WHEN`: 36h, 30d, 4w back, a date (2026-03-01), or all")
	c.Flags().StringVar(&x.skill, "skill", "", "only the steps that ran skill `NAME`")
	a.completeFlag(c, "since", cobra.FixedCompletions([]string{"7d", "30d", "12w", "all"}, cobra.ShellCompDirectiveNoFileComp))
	a.completeFlag(c, "skill", cobra.NoFileCompletions)
	return c
}

func cmdStats(ctx context.Context, e env, f *runFlags, x statsFlags) int {
	if len(f.positional) > 0 {
		return fail(e, "stats", usagef("takes no arguments (got %q)", f.positional[0]))
	}
	now := e.now()
	since, err := engine.ParseSince(x.since, now)
	if err != nil {
		return fail(e, "stats", usagef("%v", err))
	}
	db, err := openReader(ctx, e, f.data)
	if err != nil {
		return fail(e, "stats", err)
	}
	defer db.Close()
	s, err := readStats(ctx, db, engine.StatsQuery{Since: since, Now: now, Skill: x.skill})
	if err != nil {
		return fail(e, "stats", err)
	}
	if f.json {
		return writeJSON(e, "stats", s)
	}
	terminal.PrintStats(terminal.Printable(e.stdout), s, x.since)
	return terminal.ExitOK
}

// readStats computes the stats of the runs db reads (engine.StatsOf: a
// cluster's reader, whose List shows people only the newest runs, counts
// every run).
func readStats(ctx context.Context, db runReader, q engine.StatsQuery) (engine.Stats, error) {
	return engine.StatsOf(ctx, db, q)
}
