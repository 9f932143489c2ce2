// Command gonogo runs AI-agent skills step by step, stopping at each
// checkpoint for the team's go / no-go: in Slack (gonogo serve) or in a
// terminal (gonogo run). See the README for the whole tour.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/sethvargo/go-envconfig"
)

// Exit codes of run, resume and check.
const (
	exitOK      = 0 // completed, or (check) accepted
	exitRefused = 1 // refused before any step ran, halted on a FAILED step, or aborted
	exitUsage   = 2 // usage, I/O or configuration error
	exitWaiting = 3 // left waiting for a decision
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := realMain(ctx, env{
		args: os.Args[1:], stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr,
		lookup: envconfig.OsLookuper(), getenv: os.Getenv,
	})
	stop()
	os.Exit(code)
}

// env is everything gonogo takes from its process, so tests can run it
// in-process with their own.
type env struct {
	args   []string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	lookup envconfig.Lookuper
	getenv func(string) string
}

const usage = `gonogo runs AI-agent skills step by step, with a go / no-go at each checkpoint.

Usage:
  gonogo serve                                 the Slack bot (Socket Mode)
  gonogo run   [flags] PLAN.md                 run a plan in the terminal
  gonogo run   [flags] --chain 'EXPR'          run a chain of skills
  gonogo run   [flags] --workflow NAME [--arg k=v ...] [--context TEXT]
  gonogo check [--json] [flags] PLAN.md | --chain 'EXPR' | --workflow NAME
  gonogo workflow save NAME --chain 'EXPR'     keep a chain as a named workflow
  gonogo workflow list                         the workflows in GONOGO_WORKFLOWS_DIR
  gonogo runs  [--json]                        runs in the store, newest first
  gonogo show  [--json] RUN                    one run: steps, attempts, journal
  gonogo resume [flags] RUN                    continue a waiting or interrupted run
  gonogo demo  [flags]                         run the built-in example plan (dry run)
  gonogo doctor [--json] [flags]               check the agents, skills, workflows and data directory

Flags of run, check and resume:
  --auto --force-auto --dry-run --thread --skills DIR --data DIR
  --runner claude|command|dry-run --runner-cmd PATH

Exit codes: 0 completed (check: accepted), 1 refused, halted or aborted,
2 usage, I/O or configuration error, 3 left waiting for a decision.
`

func realMain(ctx context.Context, e env) int {
	if len(e.args) == 0 {
		fmt.Fprint(e.stderr, usage)
		return exitUsage
	}
	cmd, args := e.args[0], e.args[1:]
	cfg, err := loadConfig(ctx, e.lookup)
	if err != nil {
		fmt.Fprintln(e.stderr, "gonogo:", err)
		return exitUsage
	}
	switch cmd {
	case "check":
		return cmdCheck(ctx, e, cfg, args)
	case "run":
		return cmdRun(ctx, e, cfg, args)
	case "demo":
		return cmdDemo(ctx, e, cfg, args)
	case "resume":
		return cmdResume(ctx, e, cfg, args)
	case "runs":
		return cmdRuns(ctx, e, cfg, args)
	case "show":
		return cmdShow(ctx, e, cfg, args)
	case "serve":
		return cmdServe(ctx, e, cfg, args)
	case "workflow":
		return cmdWorkflow(ctx, e, cfg, args)
	case "doctor":
		return cmdDoctor(ctx, e, cfg, args)
	case "help", "-h", "--help":
		fmt.Fprint(e.stdout, usage)
		return exitOK
	case "version", "--version":
		fmt.Fprintln(e.stdout, "gonogo", version())
		return exitOK
	}
	fmt.Fprintf(e.stderr, "gonogo: unknown command %q\n\n%s", cmd, usage)
	return exitUsage
}

// usageError is a mistake on the command line (exit 2).
type usageError struct{ msg string }

func (u *usageError) Error() string { return u.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

func isUsage(err error) bool {
	var u *usageError
	return errors.As(err, &u)
}
