package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/datadir"
)

func openPauser(ctx context.Context, e env, data string) (datadir.Pauser, bool, error) {
	rd, err := openReader(ctx, e, data)
	if err != nil {
		return nil, false, err
	}
	return datadir.OpenPauser(rd, data)
}

func newPauseCmd(a *cli) *cobra.Command {
	f := &runFlags{}
	c := &cobra.Command{
		Use:   "pause [flags] RUN",
		Short: "Pause a moving run at its next checkpoint",
		Long: `Pause RUN while it moves (a step running or about to start, in any mode): the steps
running now finish and are judged as usual, then wait at a checkpoint whatever the run's
mode, and no step starts until the run is resumed (gonogo resume RUN, [c]ontinue in the
terminal, Resume in Slack) or someone decides at that checkpoint. When a gonogo (run,
resume or serve) holds the data directory, it pauses the run; when none does, the pause
is recorded in the store. On Temporal (GONOGO_TEMPORAL_ADDR), the pause goes to the run's
workflow from any shell. The pause is recorded as yours (GONOGO_ACTOR, USER or LOGNAME).

Exit codes: 0 paused (or paused already: nothing changes), 1 refused: nothing to pause
(the run waits for a decision or has finished), 2 usage or I/O error.`,
		RunE: a.action(f, func(ctx context.Context, e env, cfg config, f *runFlags) int {
			if len(f.positional) != 1 {
				return fail(e, "pause", usagef("expected one run id (see gonogo runs)"))
			}
			return runPause(ctx, e, f.data, engine.RunID(f.positional[0]), actor(e))
		}),
		ValidArgsFunction: a.completeRunIDs(f),
	}
	a.addDataFlag(c, f)
	return c
}

// runPause carries out one gonogo pause and returns its exit code.
func runPause(ctx context.Context, e env, data string, id engine.RunID, who string) int {
	p, held, err := openPauser(ctx, e, data)
	if err != nil {
		return fail(e, "pause", err)
	}
	defer p.Close()
	return datadir.Pause(ctx, e.stdout, e.stderr, p, held, data, id, who)
}

// resumeHeld resumes a paused run that another gonogo holds, through its
// local API (see datadir.ResumeHeld). It reports done when it did (or
// refused to): the caller goes on with its own resume otherwise.
func resumeHeld(ctx context.Context, e env, f *runFlags, id engine.RunID, who string) (code int, done bool) {
	p, held, err := openPauser(ctx, e, f.data)
	if err != nil || !held {
		if p != nil {
			_ = p.Close()
		}
		return 0, false
	}
	defer p.Close()
	return datadir.ResumeHeld(ctx, e.stdout, e.stderr, p, f.data, id, who, pausedMode(f))
}

// pausedMode is the mode resume --checkpointed asks a paused run to go on
// in ("" its own).
func pausedMode(f *runFlags) engine.Mode {
	if f.checkpointed {
		return engine.ModeCheckpointed
	}
	return ""
}
