package main

import (
	"context"
	"fmt"
	"os"
	"runtime"

	"github.com/spf13/cobra"

	settings "github.com/gonogo/gonogo/internal/config"
	"github.com/gonogo/gonogo/internal/datadir"
	"github.com/gonogo/gonogo/internal/intake"
	"github.com/gonogo/gonogo/internal/runner"
	"github.com/gonogo/gonogo/internal/temporalbackend"
	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/parse"
	"github.com/gonogo/gonogo/storage/artifacts"
)

func newWorkerCmd(a *cli) *cobra.Command {
	f := &runFlags{}
	c := &cobra.Command{
		Use:   "worker [flags]",
		Short: "Temporal mode: run steps for the cluster",
		Long: `Temporal mode: poll the Temporal cluster at GONOGO_TEMPORAL_ADDR for gonogo's
runs (task queue gonogo) and steps (task queue gonogo-steps), and run each step's agent
on this machine, GONOGO_MAX_PARALLEL at a time (default: the number of CPUs). Start as
many workers on as many machines as the team needs; each step runs on one of them.

Artifacts go to GONOGO_ARTIFACTS (dir:PATH on a volume every worker shares, or
s3://bucket/prefix); unset, <data>/artifacts, which serves one machine. On start, a
worker stops the agents a worker that died on this data directory left running.

Exit codes: 0 stopped (SIGINT or SIGTERM), 2 configuration error or the cluster
unreachable.`,
		Args: cobra.NoArgs,
		RunE: a.action(f, func(ctx context.Context, e env, cfg config, f *runFlags) int {
			return cmdWorker(ctx, e, cfg, f)
		}),
	}
	a.addSkillsFlag(c, f)
	a.addDataFlag(c, f)
	a.addRunnerFlags(c, f)
	return c
}

// workerParts are what a worker's steps run with.
type workerParts struct {
	acts  *temporalbackend.Activities
	store string // where artifacts go, for the start line
}

func cmdWorker(ctx context.Context, e env, cfg config, f *runFlags) int {
	tc, err := settings.LoadTemporal(ctx, e.lookup)
	if err != nil {
		return fail(e, "worker", err)
	}
	if tc.Addr == "" {
		return fail(e, "worker", temporalbackend.ErrNoCluster)
	}
	parts, err := workerSetup(e, cfg, f)
	if err != nil {
		return fail(e, "worker", err)
	}
	log := newLogger(e, cfg)
	datadir.ReapAgents(f.data, log)
	c, err := dialTemporal(ctx, tc, log)
	if err != nil {
		return fail(e, "worker", err)
	}
	defer c.Close()
	slots := cfg.MaxParallel
	if slots == 0 {
		slots = runtime.NumCPU()
	}
	stop, err := temporalbackend.StartWorkers(c, slots, parts.acts)
	if err != nil {
		return fail(e, "worker", err)
	}
	defer stop()
	fmt.Fprintf(e.stderr, "gonogo worker: Temporal at %s, namespace %s: runs from task queue %s, steps from %s, %d at a time with the %s runner; artifacts in %s. Stop with Ctrl-C.\n",
		tc.Addr, tc.Namespace, temporalbackend.TaskQueue, temporalbackend.StepQueue, slots, runnerName(f), parts.store)
	<-ctx.Done()
	fmt.Fprintln(e.stderr, "gonogo worker: stopping; a step under way ends with this worker and is offered for redo")
	return terminal.ExitOK
}

// workerSetup reads what a worker's steps need: the runner, the skills,
// the policy, the workflows folder and the artifact store.
func workerSetup(e env, cfg config, f *runFlags) (workerParts, error) {
	var parts workerParts
	r, rcfg, err := appRunner(cfg, f)
	if err != nil {
		return parts, err
	}
	cat, err := cfg.LoadSkills(f.skills)
	if err != nil {
		return parts, err
	}
	pol, err := parse.LoadPolicy(cfg.Policy)
	if err != nil {
		return parts, fmt.Errorf("policy: %w", err)
	}
	if err := os.MkdirAll(f.data, 0o700); err != nil {
		return parts, fmt.Errorf("data directory: %w", err)
	}
	parts.store = artifacts.Spec(e.getenv, f.data)
	arts, err := artifacts.Open(parts.store, e.getenv)
	if err != nil {
		return parts, usagef("configuration: %v", err)
	}
	parts.acts = &temporalbackend.Activities{
		Runner: r, Catalog: cat, Probe: runner.Probe{PassEnv: rcfg.PassEnv}, Artifacts: arts,
		Workflows: intake.Dir(cfg.WorkflowsDir), Policy: &pol, RateLimit: cfg.rateLimit(),
		Setup: setupOf(f, cfg),
	}
	return parts, nil
}
