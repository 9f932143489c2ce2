package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/mattn/go-shellwords"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/engine/runner"
	"github.com/gonogo/gonogo/parse"
	"github.com/gonogo/gonogo/storage"
)

// app is an open store and a service over it, for run, resume and demo.
type app struct {
	db   *storage.DB
	svc  *engine.Service
	done chan struct{}
	stop context.CancelFunc
}

func newLogger(e env, cfg config) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		level = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
}

func openStore(dataDir string) (*storage.DB, error) {
	db, err := storage.Open(dataDir, storage.Options{})
	if err != nil {
		return nil, fmt.Errorf("open the store: %w", err)
	}
	return db, nil
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
func startApp(ctx context.Context, e env, cfg config, f *runFlags, cat engine.Catalog, n engine.Notifier) (*app, error) {
	name := f.runner
	if f.DryRun {
		name = "dry-run"
	}
	rcfg, err := runnerConfig(cfg, f)
	if err != nil {
		return nil, err
	}
	if name == "command" && rcfg.Cmd == "" {
		return nil, usagef("the command runner needs an executable: set GONOGO_RUNNER_CMD or --runner-cmd")
	}
	var r engine.Runner = f.runnerOverride
	if r == nil || f.DryRun {
		if r, err = runner.New(name, rcfg); err != nil {
			return nil, usagef("%v", err)
		}
	}
	pol, err := parse.LoadPolicy(cfg.Policy)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	db, err := openStore(f.data)
	if err != nil {
		return nil, err
	}
	warnPendingFiles(e, db)
	svc := engine.NewService(engine.ServiceConfig{
		Store: db, Catalog: cat, Runner: r, Notifier: n,
		MaxParallel: cfg.MaxParallel, Log: newLogger(e, cfg),
		Workflows: workflowDir(cfg.WorkflowsDir), Policy: &pol,
	})
	rctx, stop := context.WithCancel(ctx)
	a := &app{db: db, svc: svc, done: make(chan struct{}), stop: stop}
	go func() {
		defer close(a.done)
		_ = svc.Run(rctx)
	}()
	return a, nil
}

func (a *app) close() {
	a.stop()
	<-a.done
	_ = a.db.Close()
}

// actor names the person deciding in a terminal.
func actor(e env) string {
	for _, k := range []string{"GONOGO_ACTOR", "USER", "LOGNAME"} {
		if v := strings.TrimSpace(e.getenv(k)); v != "" {
			return v
		}
	}
	if h, err := os.Hostname(); err == nil {
		return "terminal@" + h
	}
	return "terminal"
}

// runnerConfig is the agent runner's configuration: the executable, the
// step limits, and GONOGO_RUNNER_ARGS split like a shell command line
// (quotes and backslashes, nothing expanded). A value that does not split,
// or that holds an unquoted ; & | < or > (which a shell would take as
// another command or a redirection), is refused naming the variable.
func runnerConfig(cfg config, f *runFlags) (runner.Config, error) {
	rcfg := runner.Config{Cmd: f.runnerCmd, Timeout: cfg.StepTimeout, MaxOutput: int64(cfg.MaxArtifact)}
	args, err := splitRunnerArgs(cfg.RunnerArgs)
	if err != nil {
		return rcfg, usagef("configuration: GONOGO_RUNNER_ARGS=%q %v; quote arguments as in a shell, for example GONOGO_RUNNER_ARGS='--model opus --append-system-prompt \"Be brief.\"'", cfg.RunnerArgs, err)
	}
	rcfg.Args = args
	return rcfg, nil
}

func splitRunnerArgs(s string) ([]string, error) {
	p := shellwords.NewParser()
	p.ParseEnv, p.ParseBacktick = false, false
	args, err := p.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("does not split into arguments (an unclosed quote, or a backslash at the end)")
	}
	if p.Position >= 0 && p.Position < len(s) {
		return nil, fmt.Errorf("holds %q unquoted, which gonogo does not pass to a shell", s[p.Position:p.Position+1])
	}
	return args, nil
}
