package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/gonogo/gonogo/engine"
	settings "github.com/gonogo/gonogo/internal/config"
	"github.com/gonogo/gonogo/internal/temporalbackend"
	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/storage"
	"github.com/gonogo/gonogo/storage/artifacts"
)

// On Temporal, gonogo run starts the run on the cluster and follows it
// from this terminal: the steps run on the cluster's workers (gonogo
// worker), the checkpoints are asked here, and each decision goes to the
// run's workflow. Ctrl-C leaves the run on the cluster, where it goes on
// or waits; gonogo decide and gonogo show reach it from anywhere.

// followEvery is how often the terminal asks the cluster for a run's news.
const followEvery = 250 * time.Millisecond

// temporalBackend dials the cluster tc names and returns the backend the
// terminal drives, with the artifact store GONOGO_ARTIFACTS names (the
// workers' store: the terminal reads artifacts from it and writes edits to
// it), and the client, which the caller closes.
func temporalBackend(ctx context.Context, e env, cfg config, tc settings.Temporal, data string, tune ...func(*temporalbackend.Config)) (*temporalbackend.Backend, client.Client, error) {
	store, err := artifacts.Open(artifacts.Spec(e.getenv, data), e.getenv)
	if err != nil {
		return nil, nil, usagef("configuration: %v", err)
	}
	c, err := dialTemporal(ctx, tc, quietLogger(e))
	if err != nil {
		return nil, nil, err
	}
	bc := temporalbackend.Config{Client: c, Artifacts: store, StepTimeout: cfg.StepTimeout, Members: engine.LocalOperator, Heartbeat: tc.Heartbeat,
		MaxSteps: tc.MaxSteps}
	for _, t := range tune {
		t(&bc)
	}
	return temporalbackend.New(bc), c, nil
}

// startOnTemporal is gonogo run on the cluster tc names: the run is
// started there and followed from this terminal.
func startOnTemporal(ctx context.Context, e env, cfg config, f *runFlags, tc settings.Temporal, in input) int {
	agentFlags := []string{"runner-cmd"}
	if f.runner != "dry-run" { // --runner dry-run asks for a dry run, as --dry-run does
		agentFlags = append(agentFlags, "runner")
	}
	if err := agentFlagsOnTemporal(f, "run", agentFlags...); err != nil {
		return fail(e, "run", err)
	}
	b, c, err := temporalBackend(ctx, e, cfg, tc, f.data)
	if err != nil {
		return fail(e, "run", err)
	}
	defer c.Close()
	for _, w := range in.plan.Warnings {
		fmt.Fprintf(e.stderr, "warning: %s\n", w)
	}
	r, err := b.Start(ctx, in.plan, in.opts)
	if err != nil {
		return fail(e, "run", err)
	}
	fmt.Fprintf(e.stderr, "Started on Temporal at %s (namespace %s); its steps run on the cluster's gonogo workers.\n", tc.Addr, tc.Namespace)
	fmt.Fprint(e.stderr, b.NoWorkerNote(ctx, tc.Addr, tc.Namespace, r.ID))
	terminal.PrintHeader(e.stdout, r.Plan, r.ID, engine.RunModeName(r.Mode, r.DryRun))
	return followAndDrive(ctx, e, cfg, f, tc, b, r)
}

// resumeOnTemporal is gonogo resume on the cluster tc names: it follows
// the run from this terminal again, in the mode resume's flags ask, and a
// run a person paused goes on. The run's steps run on the cluster's
// workers with what they have: the resume flags that choose an agent or
// skills would not reach them, and are refused.
func resumeOnTemporal(ctx context.Context, e env, cfg config, f *runFlags, tc settings.Temporal, id engine.RunID) int {
	if err := agentFlagsOnTemporal(f, "resume", "runner", "runner-cmd", "skills"); err != nil {
		return fail(e, "resume", err)
	}
	b, c, err := temporalBackend(ctx, e, cfg, tc, f.data)
	if err != nil {
		return fail(e, "resume", err)
	}
	defer c.Close()
	r, err := b.Load(ctx, id)
	if errors.Is(err, engine.ErrNotFound) {
		return fail(e, "resume", fmt.Errorf("no run %s on Temporal at %s, namespace %s (see gonogo runs)", id, tc.Addr, tc.Namespace))
	}
	if err != nil {
		return fail(e, "resume", err)
	}
	if f.DryRun && !r.DryRun {
		return fail(e, "resume", settings.NotDry(r.ID))
	}
	if err := settings.CheckpointedUnpaused(f.checkpointed, r); err != nil {
		return fail(e, "resume", err)
	}
	terminal.PrintHeader(e.stdout, r.Plan, r.ID, engine.RunModeName(r.Mode, r.DryRun))
	if !r.Finished() {
		fmt.Fprint(e.stderr, b.NoWorkerNote(ctx, tc.Addr, tc.Namespace, id))
		r, err = b.Resume(ctx, id, terminal.ResumeMode(e.stderr, r, f.Auto, f.ForceAuto))
		if err == nil && r.PausedByPerson() {
			r, err = b.Unpause(ctx, id, actor(e), pausedMode(f))
		}
		if err != nil {
			return fail(e, "resume", err)
		}
	}
	return followAndDrive(ctx, e, cfg, f, tc, b, r)
}

// followAndDrive follows run r on the cluster and drives it from this
// terminal until it ends or waits for a decision nobody gives here. The
// run's artifact files are written under the data directory as its
// changes arrive, before the terminal shows them.
func followAndDrive(ctx context.Context, e env, cfg config, f *runFlags, tc settings.Temporal, b *temporalbackend.Backend, r *engine.Run) int {
	var copies *temporalbackend.RunCopies
	files, err := storage.OpenRunFiles(f.data, r.ID, fmt.Sprintf("the Temporal cluster at %s, namespace %s", tc.Addr, tc.Namespace))
	if err == nil {
		copies = temporalbackend.NewRunCopies(b, files, e.stderr)
	} else {
		err = fmt.Errorf("the artifact files of run %s under %s: %w", r.ID, f.data, err)
		// The run is on the cluster already: it goes on, without its
		// files here.
		fmt.Fprintf(e.stderr, "warning: %v; the run's artifacts stay on the cluster: gonogo show %s --artifact N\n", err, r.ID)
	}
	defer copies.Close()
	copies.Update(ctx, r)
	from := r.Clone() // the follower's own: the driver moves r on
	box := terminal.NewInbox()
	defer b.FollowWhile(ctx, from, followEvery, copies.Notifier, box)()
	d := newTerminal(e, b, box, f.data, cfg, true)
	if r.Finished() {
		return d.Finish(r)
	}
	d.Waiting(ctx, r)
	return d.Drive(ctx, r)
}
