package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/gonogo/gonogo/internal/cmdline"
	"github.com/gonogo/gonogo/internal/datadir"
	"github.com/gonogo/gonogo/internal/terminal"
)

// Exit codes of decide: 0 decided (or already decided with the same
// key), 1 refused (nothing waiting, not possible now, stale, the key used
// for another decision), 2 usage or I/O.

func openDecider(ctx context.Context, e env, data string) (datadir.Decider, bool, error) {
	rd, err := openReader(ctx, e, data)
	if err != nil {
		return nil, false, err
	}
	return datadir.OpenDecider(rd, data)
}

// runDecide carries out one gonogo decide and returns its exit code.
func runDecide(ctx context.Context, e env, req terminal.DecideRequest) int {
	e = printableOut(e) // step titles and feedback are shown, never obeyed
	dc, held, err := openDecider(ctx, e, req.Data)
	if err != nil {
		return fail(e, "decide", err)
	}
	defer dc.Close()
	return datadir.Decide(ctx, e.stdout, e.stderr, dc, held, req)
}

func newDecideCmd(a *cli) *cobra.Command {
	f := &runFlags{}
	var req terminal.DecideRequest
	c := &cobra.Command{
		Use:   "decide [flags] RUN approve|skip|redo [feedback...]|pick N [note...]|abort",
		Short: "Decide on a run's waiting step, also while another gonogo holds the run",
		Long: `Decide on the step of RUN that waits for a decision, as a click in Slack or an answer in
the terminal would: approve, skip, redo (the rest of the line is the agent's feedback;
put it after -- if it starts with a dash), pick N (a best-of step's candidate N becomes
its artifact; the rest of the line is an optional note saying why) or abort. The run's
rules apply: only the
decisions its step allows, and a decision for an attempt that is no longer the latest is
refused. When a gonogo (run, resume or serve) holds the data directory, it carries the
decision out and goes on with the run; when none does, the decision is recorded and the
run goes on with gonogo resume RUN. The decision is recorded as yours (GONOGO_ACTOR,
USER or LOGNAME).

A --key belongs to its run: the same key on another run is a new decision there. On
the same run, the decision retried with its key is answered "Already decided"; the key
given with another decision is refused, naming the decision recorded under it.

Exit codes: 0 decided (or already decided with the same --key), 1 refused (nothing
waits, the decision is not possible now, the attempt moved on, or the --key was used
on this run for another decision), 2 usage or I/O error.`,
		RunE: a.action(f, func(ctx context.Context, e env, cfg config, f *runFlags) int {
			r := req
			r.Data, r.Actor = f.data, actor(e)
			if err := terminal.ParseDecideArgs(&r, f.positional); err != nil {
				return fail(e, "decide", err)
			}
			return runDecide(ctx, e, r)
		}),
		ValidArgsFunction: a.completeDecide(f),
	}
	a.addDataFlag(c, f)
	fs := c.Flags()
	fs.Var(cmdline.NumberFlag{N: &req.Step, What: "step"}, "step", "decide step `N` (default: the step waiting; needed when several wait)")
	fs.Var(cmdline.NumberFlag{N: &req.Attempt, What: "attempt"}, "attempt", "the attempt `K` decided on; refused as stale once the step has moved past it")
	fs.StringVar(&req.Key, "key", "", "idempotency `KEY` on this run: a decision retried with the same key is applied once")
	for _, n := range []string{"step", "attempt", "key"} {
		a.completeFlag(c, n, cobra.NoFileCompletions)
	}
	return c
}

// completeDecide completes a run id, then the decision.
func (a *cli) completeDecide(f *runFlags) cobra.CompletionFunc {
	runs := a.completeRunIDs(f)
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) == 0 {
			return runs(c, args, toComplete)
		}
		if len(args) == 1 {
			return []cobra.Completion{"approve", "skip", "redo", "pick", "abort"}, cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}
