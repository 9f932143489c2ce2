package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mattn/go-shellwords"

	"github.com/gonogo/gonogo/engine"
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
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		level = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
}

// openStore opens the store, which takes the data directory's lock and
// marks the steps a dead gonogo left running as interrupted, then stops
// the agents that gonogo left running, before any step can be redone. It
// refuses a data directory other users may write. When another gonogo
// holds the lock, the error is a *heldError naming it if it answers on its
// local API.
func openStore(ctx context.Context, dataDir string) (*storage.DB, error) {
	if err := checkDataDir(dataDir); err != nil {
		return nil, err
	}
	db, err := storage.Open(dataDir, storage.Options{})
	if errors.Is(err, engine.ErrLocked) {
		if c, cerr := localapi.Dial(ctx, dataDir); cerr == nil {
			c.Close()
			return nil, &heldError{data: dataDir, holder: c.Describe()}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("open the store: %w", err)
	}
	reapAgents(dataDir, slog.Default())
	return db, nil
}

// heldError is a data directory another gonogo holds, named by what its
// local API says of itself (its command and pid).
type heldError struct{ data, holder string }

func (h *heldError) Error() string {
	return fmt.Sprintf("%s holds %s and carries out its runs: wait for it to end or stop it, or use another --data directory", h.holder, h.data)
}

func (h *heldError) Unwrap() error { return engine.ErrLocked }

// agentsDir is where running agents are recorded: <data>/agents.
func agentsDir(dataDir string) string { return filepath.Join(dataDir, "agents") }

// reapAgents kills the agents a gonogo that died left running on this data
// directory, and says so. The caller holds the store's lock.
func reapAgents(dataDir string, log *slog.Logger) {
	left, err := runner.ReapAgents(agentsDir(dataDir))
	for _, l := range left {
		log.Warn("stopped an agent left running by a gonogo that is gone",
			"run", l.Run, "step", l.Step, "attempt", l.Attempt, "agent", l.Cmd, "pgid", l.PGID, "pids", fmt.Sprint(l.PIDs),
			"started", l.Started.Local().Format(time.DateTime))
	}
	if err != nil {
		log.Warn("could not read every agent record", "dir", agentsDir(dataDir), "err", err)
	}
}

// runnerName is the runner a command uses: --dry-run wins over --runner.
func runnerName(f *runFlags) string {
	if f.DryRun {
		return "dry-run"
	}
	return f.runner
}

// agentMissing says why the configured runner cannot start its agent
// (its executable is not found), in words that name the executable and
// how to point at another; nil when it can, or when nothing is run.
func agentMissing(f *runFlags) error {
	name := runnerName(f)
	if f.runnerOverride != nil && !f.DryRun {
		return nil // the demo's stand-in
	}
	info, ok := runner.Lookup(name)
	if !ok {
		return nil // runner.New refuses it, with the valid names
	}
	_, err := info.Find(f.runnerCmd)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, runner.ErrNoExecutable):
		return fmt.Errorf("the %s runner needs an executable: set --runner-cmd PATH or GONOGO_RUNNER_CMD", name)
	}
	exe := info.Executable(f.runnerCmd)
	how := "install it, or point at the executable with --runner-cmd PATH (GONOGO_RUNNER_CMD)"
	if f.runnerCmd != "" {
		how = "fix --runner-cmd / GONOGO_RUNNER_CMD"
	}
	what := "not on PATH"
	switch {
	case errors.Is(err, runner.ErrNotExecutable):
		// It is there: say what is wrong with it, not that it is missing.
		what, how = "not executable", "make it executable (chmod +x), "+how
		if fi, serr := os.Stat(exe); serr == nil && fi.IsDir() && strings.ContainsRune(exe, filepath.Separator) {
			what, how = "a folder, not an executable", "point --runner-cmd / GONOGO_RUNNER_CMD at the executable in it"
		}
	case strings.ContainsRune(exe, filepath.Separator):
		what = "not there"
	}
	return fmt.Errorf("the %s runner's agent %q is %s: %s, or choose another runner with --runner (%s), or --dry-run",
		name, exe, what, how, strings.Join(runner.Names(), ", "))
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
	name := runnerName(f)
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
	db, err := openStore(ctx, f.data)
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
	actx, apiStop := context.WithCancel(ctx)
	a.apiDone, a.apiStop = make(chan struct{}), apiStop
	ln, err := localapi.Listen(f.data)
	if err != nil {
		// The run goes on; only other processes cannot look in or decide.
		fmt.Fprintf(e.stderr, "warning: %v; gonogo runs, show and decide cannot reach this run until it ends\n", err)
		close(a.apiDone)
		return a, nil
	}
	a.api = localapi.NewServer(db, svc, log, holder, version())
	go func() {
		defer close(a.apiDone)
		if err := localapi.Serve(actx, ln, a.api); err != nil {
			log.Error("local API stopped", "err", err)
		}
	}()
	return a, nil
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

// setupOf is the setup recorded with the runs this gonogo starts: how it
// carries out their steps, with paths made absolute so that a resume from
// another directory finds the same agent, skills and files.
func setupOf(f *runFlags, cfg config) *engine.Setup {
	if f.runnerOverride != nil {
		// The demo: its stand-in agent and its unpacked example skills,
		// which resume unpacks again; no folder of the user's is involved.
		return &engine.Setup{Runner: demoRunner}
	}
	s := &engine.Setup{Runner: f.runner, RunnerCmd: absCmd(f.runnerCmd), Workflows: absPath(cfg.WorkflowsDir),
		Policy: absPath(cfg.Policy)}
	// startApp has checked they split.
	s.RunnerArgs, _ = splitRunnerArgs(cfg.RunnerArgs)
	for _, dir := range cfg.skillSources(f.skills).Dirs {
		s.Skills = append(s.Skills, absPath(dir))
	}
	return s
}

// absCmd makes an executable's path absolute; a bare name (found on PATH,
// like claude) stays as it is, as does "".
func absCmd(p string) string {
	if !strings.ContainsRune(p, '/') && !strings.ContainsRune(p, filepath.Separator) {
		return p
	}
	return absPath(p)
}

// absPath makes a path absolute; "" stays "".
func absPath(p string) string {
	if p == "" {
		return p
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
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
// step limits, the variables passed on request (GONOGO_AGENT_ENV), and
// GONOGO_RUNNER_ARGS split like a shell command line (quotes and
// backslashes, nothing expanded). A value that does not split, or that
// holds an unquoted ; & | < or > (which a shell would take as another
// command or a redirection), is refused naming the variable.
func runnerConfig(cfg config, f *runFlags) (runner.Config, error) {
	rcfg := runner.Config{Cmd: f.runnerCmd, Timeout: cfg.StepTimeout, MaxOutput: int64(cfg.MaxArtifact), AgentsDir: agentsDir(f.data)}
	pass, err := runner.ParsePassEnv(cfg.AgentEnv)
	if err != nil {
		return rcfg, usagef("configuration: GONOGO_AGENT_ENV=%q: %v; list variable names separated by commas, for example GONOGO_AGENT_ENV=GITHUB_TOKEN,AWS_*", cfg.AgentEnv, err)
	}
	rcfg.PassEnv = pass
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
