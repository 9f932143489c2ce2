package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/sethvargo/go-envconfig"
	"github.com/spf13/cobra"

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
	root.SetFlagErrorFunc(flagError)
	root.SetHelpCommand(newHelpCmd())
	root.AddCommand(
		newServeCmd(a),
		newRunCmd(a),
		newCheckCmd(a),
		newRunsCmd(a),
		newShowCmd(a),
		newExportCmd(a),
		newDecideCmd(a),
		newPauseCmd(a),
		newResumeCmd(a),
		newDemoCmd(a),
		newDoctorCmd(a),
		newWorkflowCmd(a),
		newSkillsCmd(a),
		newWorkerCmd(a),
		newTemporalCmd(a),
		newVersionCmd(),
	)
	root.InitDefaultCompletionCmd()
	completion.OpenQuotes(root)
	if c, _, err := root.Find([]string{"completion"}); err == nil && c != root {
		// cobra's completion command prints its help, exit 0, for a shell
		// it has no script for.
		c.Use, c.DisableFlagsInUseLine = "completion bash|zsh|fish|powershell", true
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("completion needs a shell: bash, zsh, fish or powershell")
			}
			return usagef("no completion script for %q: bash, zsh, fish or powershell", args[0])
		}
	}
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

// newHelpCmd is "gonogo help [command]": cobra's own, but an unknown topic
// is a usage error (exit 2), never the overview with exit 0.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:                   "help [command]",
		DisableFlagsInUseLine: true,
		Short:                 "Help about any command",
		Long:                  "Help prints the usage of gonogo, or of one command with every flag.",
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			cmd, _, err := c.Root().Find(args)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var out []cobra.Completion
			for _, sub := range cmd.Commands() {
				if (sub.IsAvailableCommand() || sub == c) && strings.HasPrefix(sub.Name(), toComplete) {
					out = append(out, cobra.CompletionWithDesc(sub.Name(), sub.Short))
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err != nil || len(rest) > 0 {
				return usagef("unknown help topic %q", strings.Join(args, " "))
			}
			cmd.InitDefaultHelpFlag()
			cmd.InitDefaultVersionFlag()
			return cmd.Help()
		},
	}
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:                   "version",
		DisableFlagsInUseLine: true,
		Short:                 "Print gonogo's version",
		Args:                  cobra.NoArgs,
		ValidArgsFunction:     cobra.NoFileCompletions,
		Run: func(c *cobra.Command, _ []string) {
			fmt.Fprintln(c.OutOrStdout(), "gonogo", version())
		},
	}
}

// oneDashLong is how pflag reports a long flag given one dash (-json).
var oneDashLong = regexp.MustCompile(`^unknown shorthand flag: '.' in -([a-z][a-z-]+)`)

// unknownLong is how pflag reports a long flag the command does not define.
var unknownLong = regexp.MustCompile(`^unknown flag: --([a-z][a-z-]*)$`)

// flagError makes a flag mistake a usage error, points a long flag given
// one dash at its two-dash spelling, and says which commands take a flag
// this one does not (a command defines only the flags it reads).
func flagError(c *cobra.Command, err error) error {
	if m := oneDashLong.FindStringSubmatch(err.Error()); m != nil {
		name, _, _ := strings.Cut(m[1], "=")
		if c.Flags().Lookup(name) != nil {
			return usagef("unknown flag -%s: long flags take two dashes (--%s)", m[1], name)
		}
	}
	if m := unknownLong.FindStringSubmatch(err.Error()); m != nil {
		if others := commandsWithFlag(c.Root(), m[1]); len(others) > 0 {
			return usagef("unknown flag: --%s (%s does not take it; %s %s)", m[1], commandName(c), andList(others), pluralDo(len(others)))
		}
	}
	return &usageError{err.Error()}
}

// commandsWithFlag names the commands under root that define the flag.
func commandsWithFlag(root *cobra.Command, flag string) []string {
	var out []string
	for _, c := range root.Commands() {
		if c.LocalFlags().Lookup(flag) != nil {
			out = append(out, commandName(c))
		}
		out = append(out, commandsWithFlag(c, flag)...)
	}
	return out
}

// commandName is a command as people type it after gonogo: "run",
// "workflow save".
func commandName(c *cobra.Command) string {
	return strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ")
}

func andList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func pluralDo(n int) string {
	if n == 1 {
		return "does"
	}
	return "do"
}

// usageError is a mistake on the command line (exit 2).
type usageError struct{ msg string }

func (u *usageError) Error() string { return u.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }
