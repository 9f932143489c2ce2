package cmdline

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
)

// HelpCmd is "gonogo help [command]": cobra's own, but an unknown topic
// is a usage error (exit 2), never the overview with exit 0.
func HelpCmd() *cobra.Command {
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
				return fmt.Errorf("unknown help topic %q", strings.Join(args, " "))
			}
			cmd.InitDefaultHelpFlag()
			cmd.InitDefaultVersionFlag()
			return cmd.Help()
		},
	}
}

// VersionCmd is "gonogo version": one line, the program and version.
func VersionCmd(version string) *cobra.Command {
	return &cobra.Command{
		Use:                   "version",
		DisableFlagsInUseLine: true,
		Short:                 "Print gonogo's version",
		Args:                  cobra.NoArgs,
		ValidArgsFunction:     cobra.NoFileCompletions,
		Run: func(c *cobra.Command, _ []string) {
			fmt.Fprintln(c.OutOrStdout(), c.Root().Name(), version)
		},
	}
}

// oneDashLong is how pflag reports a long flag given one dash (-json).
var oneDashLong = regexp.MustCompile(`^unknown shorthand flag: '.' in -([a-z][a-z-]+)`)

// unknownLong is how pflag reports a long flag the command does not define.
var unknownLong = regexp.MustCompile(`^unknown flag: --([a-z][a-z-]*)$`)

// FlagError makes a flag mistake a usage error, points a long flag given
// one dash at its two-dash spelling, and says which commands take a flag
// this one does not (a command defines only the flags it reads). It is
// every command's cobra FlagErrorFunc.
func FlagError(c *cobra.Command, err error) error {
	if m := oneDashLong.FindStringSubmatch(err.Error()); m != nil {
		name, _, _ := strings.Cut(m[1], "=")
		if c.Flags().Lookup(name) != nil {
			return fmt.Errorf("unknown flag -%s: long flags take two dashes (--%s)", m[1], name)
		}
	}
	if m := unknownLong.FindStringSubmatch(err.Error()); m != nil {
		if others := commandsWithFlag(c.Root(), m[1]); len(others) > 0 {
			return fmt.Errorf("unknown flag: --%s (%s does not take it; %s %s)", m[1], commandName(c), andList(others), pluralDo(len(others)))
		}
	}
	return errors.New(err.Error())
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
