package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sethvargo/go-envconfig"
	"github.com/spf13/cobra"

	"github.com/gonogo/gonogo/internal/cmdline"
	"github.com/gonogo/gonogo/internal/completion"
	"github.com/gonogo/gonogo/internal/runner"
	"github.com/gonogo/gonogo/internal/terminal"
)

// exitCodes is the line that help text gives about exit codes.
const exitCodes = `Exit codes: 0 completed (check: accepted), 1 refused, halted or aborted,
2 usage, I/O or configuration error, 3 left waiting for a decision.`

func main() {
	// What an agent detaches (setsid, a double fork) is then adopted by
	// gonogo, not init, and collected by it once killed. Should it fail,
	// such a process is still killed by its marker; init collects it.
	_ = runner.BecomeSubreaper()
	ctx, stop := terminal.WithInterrupts(context.Background())
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
	// clock is the time now; nil is time.Now (tests fix it where an
	// answer depends on it, as gonogo stats' period does).
	clock func() time.Time
}

// now is the time now, from e's clock.
func (e env) now() time.Time {
	if e.clock != nil {
		return e.clock()
	}
	return time.Now()
}

// cli is what every command is built with: the process's context and env,
// the built-in configuration (the defaults help shows), and the exit code
// of the command that ran.
//
// Adding a command is one constructor in the command's own file plus one
// line in newRootCmd's AddCommand:
//
//	// skills.go
//	func newSkillsCmd(a *cli) *cobra.Command {
//		f := &runFlags{}
//		c := &cobra.Command{
//			Use:               "skills [flags]",
//			Short:             "List the installed skills, their kind and problems",
//			RunE:              a.action(f, cmdSkills), // cmdSkills(ctx, e, cfg, f) int
//			ValidArgsFunction: cobra.NoFileCompletions, // a.completeRunIDs(f) for a RUN
//		}
//		a.addJSONFlag(c, f)   // shared flags are defined once, in flags.go
//		a.addSkillsFlag(c, f)
//		return c
//	}
//
// The body reads its flags from f, resolved against the environment (a
// flag wins over its variable), and its arguments from f.positional; it
// prints its own messages and returns the exit code. A flag of its own is
// c.Flags().XxxVar with a one-line usage (a flag value to complete:
// a.completeFlag). Help goldens are then expected in
// testdata/cli/help-<command>.golden: go test ./cmd/gonogo -run Help -update.
//
// A body and a completion run in the command's context (Command.Context,
// the one realMain gives ExecuteContextC), so a signal reaches them.
type cli struct {
	e        env
	defaults config // the configuration with no variable set
	code     int

	// flagComps are the flag completions, registered only when the shell
	// asks for completions (cobra keeps them in a process-wide map).
	flagComps completion.Flags
}

// action adapts a command body to cobra: it reads the configuration,
// resolves f against it and the command's flags, and keeps the body's exit
// code. Command-line mistakes cobra finds itself never reach the body.
func (a *cli) action(f *runFlags, body func(context.Context, env, config, *runFlags) int) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		cfg, err := loadConfig(c.Context(), a.e.lookup)
		if err != nil {
			fmt.Fprintln(a.e.stderr, "gonogo:", err)
			a.code = terminal.ExitUsage
			return nil
		}
		f.resolve(c, cfg, args)
		a.code = body(c.Context(), a.e, cfg, f)
		return nil
	}
}

func newRootCmd(ctx context.Context, e env) (*cobra.Command, *cli) {
	defaults, _ := loadConfig(ctx, envconfig.MapLookuper(nil))
	a := &cli{e: e, defaults: defaults}
	root := &cobra.Command{
		Use:   "gonogo",
		Short: "AI-agent skills step by step, with a go / no-go at each checkpoint",
		Long: `gonogo runs AI-agent skills step by step, with a go / no-go at each checkpoint:
in Slack (gonogo serve) or in a terminal (gonogo run, gonogo demo).

` + exitCodes,
		Version:       version(),
		SilenceErrors: true,
		SilenceUsage:  true,
		// Completion of the first argument offers the commands, not files.
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	root.SetVersionTemplate("gonogo {{.Version}}\n")
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetFlagErrorFunc(cmdline.FlagError)
	root.SetHelpCommand(cmdline.HelpCmd())
	root.AddCommand(
		newServeCmd(a),
		newRunCmd(a),
		newCheckCmd(a),
		newRunsCmd(a),
		newShowCmd(a),
		newWebCmd(a),
		newExportCmd(a),
		newStatsCmd(a),
		newDecideCmd(a),
		newPauseCmd(a),
		newResumeCmd(a),
		newDemoCmd(a),
		newDoctorCmd(a),
		newWorkflowCmd(a),
		newSkillsCmd(a),
		newWorkerCmd(a),
		newTemporalCmd(a),
		cmdline.VersionCmd(version()),
	)
	completion.Command(root)
	return root, a
}

func realMain(ctx context.Context, e env) int {
	root, a := newRootCmd(ctx, e)
	if len(e.args) == 0 {
		// The overview, where a mistake's message would go.
		root.InitDefaultHelpCmd()
		root.InitDefaultHelpFlag()
		root.InitDefaultVersionFlag()
		root.SetOut(e.stderr)
		_ = root.Help()
		return terminal.ExitUsage
	}
	if e.args[0] == cobra.ShellCompRequestCmd || e.args[0] == cobra.ShellCompNoDescRequestCmd {
		a.flagComps.Register()
	}
	root.SetArgs(e.args)
	c, err := root.ExecuteContextC(ctx)
	if err != nil {
		fmt.Fprintf(e.stderr, "%s: %v\nRun '%s --help' for usage.\n", c.CommandPath(), err, c.CommandPath())
		return terminal.ExitUsage
	}
	return a.code
}

// usageError is a mistake on the command line (exit 2).
type usageError struct{ msg string }

func (u *usageError) Error() string { return u.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }
