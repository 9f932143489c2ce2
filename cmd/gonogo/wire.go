package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/gonogo/gonogo/engine"
	settings "github.com/gonogo/gonogo/internal/config"
	"github.com/gonogo/gonogo/internal/datadir"
	"github.com/gonogo/gonogo/internal/demo"
	"github.com/gonogo/gonogo/internal/intake"
	"github.com/gonogo/gonogo/internal/localapi"
	"github.com/gonogo/gonogo/internal/runner"
	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/parse"
	"github.com/gonogo/gonogo/storage"
)

// app is an open store, a service over it, and the local API that lets
// other gonogo processes read its runs and decide, for run, resume and
// demo.
type app struct {
	db   *storage.DB
	svc  backend
	done chan struct{}
	stop context.CancelFunc

	apiDone chan struct{}
	apiStop context.CancelFunc
	api     *localapi.Server // nil when the socket could not be served
}

// carry says which run this app carries out: decisions other processes
// send for it are acted on; for other runs they are only recorded.
func (a *app) carry(id engine.RunID) {
	if a.api != nil {
		a.api.Carry(id)
	}
}

func newLogger(e env, cfg config) *slog.Logger {
	return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: cfg.Level()}))
}

// runnerName is the runner a command uses: --dry-run wins over --runner.
func runnerName(f *runFlags) string {
	if f.DryRun {
		return "dry-run"
	}
	return f.runner
}

// agentMissing says why the configured runner cannot start its agent
// (see settings.AgentMissing); nil when it can, or when nothing is run.
func agentMissing(f *runFlags) error {
	if f.runnerOverride != nil && !f.DryRun {
		return nil // the demo's stand-in
	}
	return settings.AgentMissing(runnerName(f), f.runnerCmd)
}

// requireAgent refuses to start when the configured agent cannot be run
// (a usage error: exit 2), so a missing executable shows before any step
// rather than as a FAILED first step.
func requireAgent(f *runFlags) error {
	if err := agentMissing(f); err != nil {
		return usagef("%v", err)
	}
	return nil
}

// requireAgents refuses, as requireAgent does, a run of p whose agents
// cannot be run (see settings.AgentsMissing); the demo's stand-in and a
// dry run need only what requireAgent checks.
func requireAgents(f *runFlags, p engine.Plan) error {
	if f.DryRun || f.runnerOverride != nil {
		return requireAgent(f)
	}
	if err := settings.AgentsMissing(f.runner, f.runnerCmd, p); err != nil {
		return usagef("%v", err)
	}
	return nil
}

// warnPendingFiles says when artifact files a failure left unwritten still
// could not be written; the runs themselves are safe in the database.
func warnPendingFiles(e env, db *storage.DB) {
	if err := db.FilesPending(); err != nil {
		fmt.Fprintf(e.stderr, "warning: some artifact files are not on disk yet (the runs are safe in the database; they are written once the cause is fixed): %v\n", err)
	}
}

// startApp opens the store (recovering it after a crash) and starts the
// service. The caller must call close.
func startApp(ctx context.Context, e env, cfg config, f *runFlags, cat engine.Catalog, n engine.Notifier, holder string) (*app, error) {
	r, rcfg, err := appRunner(cfg, f)
	if err != nil {
		return nil, err
	}
	pol, err := parse.LoadPolicy(cfg.Policy)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	db, err := datadir.Open(ctx, f.data)
	if err != nil {
		return nil, err
	}
	warnPendingFiles(e, db)
	log := newLogger(e, cfg)
	svc := engine.NewService(engine.ServiceConfig{
		Store: db, Catalog: cat, Runner: r, Notifier: n,
		MaxParallel: cfg.MaxParallel, Log: log,
		Probe: runner.Probe{PassEnv: rcfg.PassEnv}, Workflows: intake.Dir(cfg.WorkflowsDir), Policy: &pol,
		Setup: setupOf(f, cfg), RateLimit: cfg.rateLimit(), Members: engine.LocalOperator,
	})
	rctx, stop := context.WithCancel(ctx)
	a := &app{db: db, svc: svc, done: make(chan struct{}), stop: stop}
	go func() {
		defer close(a.done)
		_ = svc.Run(rctx)
	}()
	a.serveAPI(ctx, e, log, f.data, holder, int64(cfg.MaxArtifact))
	return a, nil
}

// appRunner is the agent runner run, resume, demo and worker carry out
// steps with: the demo's stand-in, else the one the flags and the
// environment name.
func appRunner(cfg config, f *runFlags) (engine.Runner, runner.Config, error) {
	name := runnerName(f)
	rcfg, err := runnerConfig(cfg, f)
	if err != nil {
		return nil, rcfg, err
	}
	if name == "command" && rcfg.Cmd == "" {
		return nil, rcfg, usagef("the command runner needs an executable: set GONOGO_RUNNER_CMD or --runner-cmd")
	}
	if f.runnerOverride != nil && !f.DryRun {
		return f.runnerOverride, rcfg, nil
	}
	r, err := runner.New(name, rcfg)
	if err != nil {
		return nil, rcfg, usagef("%v", err)
	}
	if f.DryRun {
		return r, rcfg, nil
	}
	// A best-of step's candidates each run on the runner they name.
	return &runner.ByName{Default: r, Name: name, Config: rcfg}, rcfg, nil
}

// serveAPI serves the local API on the data directory's socket, so that
// other gonogo processes can read the runs and decide (an edit up to
// maxEdit bytes, as the terminal takes); a run goes on
// without it when the socket cannot be served.
func (a *app) serveAPI(ctx context.Context, e env, log *slog.Logger, data, holder string, maxEdit int64) {
	actx, apiStop := context.WithCancel(ctx)
	a.apiDone, a.apiStop = make(chan struct{}), apiStop
	ln, err := localapi.Listen(data)
	if err != nil {
		// The run goes on; only other processes cannot look in or decide.
		fmt.Fprintf(e.stderr, "warning: %v; gonogo runs, show and decide cannot reach this run until it ends\n", err)
		close(a.apiDone)
		return
	}
	a.api = localapi.NewServer(a.db, a.svc, log, holder, version(), maxEdit)
	go func() {
		defer close(a.apiDone)
		if err := localapi.Serve(actx, ln, a.api); err != nil {
			log.Error("local API stopped", "err", err)
		}
	}()
}

// close stops what startApp started, in reverse: the local API, the
// service, the store.
func (a *app) close() {
	a.apiStop()
	<-a.apiDone
	a.stop()
	<-a.done
	_ = a.db.Close()
}

// setupOf is the setup recorded with the runs this gonogo starts (see
// settings.Config.Setup).
func setupOf(f *runFlags, cfg config) *engine.Setup {
	if f.runnerOverride != nil {
		// The demo: its stand-in agent and its unpacked example skills,
		// which resume unpacks again; no folder of the user's is involved.
		return &engine.Setup{Runner: demo.RunnerName}
	}
	return cfg.Setup(f.runner, f.runnerCmd, f.skills)
}

// actor names the person deciding in a terminal.
func actor(e env) string { return settings.Actor(e.getenv) }

// runnerConfig is the agent runner's configuration (see
// settings.Config.RunnerConfig).
func runnerConfig(cfg config, f *runFlags) (runner.Config, error) {
	return cfg.RunnerConfig(f.runnerCmd, datadir.AgentsDir(f.data))
}

// newTerminal is the terminal front end following runs of svc for this
// process: its standard streams, its person and its configuration. remote
// says the runs are carried out on a Temporal cluster.
func newTerminal(e env, svc terminal.Backend, box *terminal.Inbox, data string, cfg config, remote bool) *terminal.Driver {
	return terminal.New(terminal.IO{Stdin: e.stdin, Stdout: e.stdout, Stderr: e.stderr, Getenv: e.getenv}, svc, box,
		terminal.Options{Data: data, Actor: actor(e), MaxEdit: int64(cfg.MaxArtifact), Every: cfg.ProgressInterval, Remote: remote})
}

// printableOut is e with stdout and stderr sanitised, for a command that
// prints text for people.
func printableOut(e env) env {
	e.stdout, e.stderr = terminal.Printable(e.stdout), terminal.Printable(e.stderr)
	return e
}
