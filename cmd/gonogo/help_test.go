package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gonogo/gonogo/internal/terminal"
)

// The -update flag rewrites golden files; whichever test file of the
// package initializes first registers it.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files")
	}
}

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

const helpGoldenDir = "../../testdata/cli"

// commandPaths lists every command a user can ask help for, as its words
// after "gonogo" (the overview is the empty path).
func commandPaths(t *testing.T) [][]string {
	t.Helper()
	root, _ := newRootCmd(context.Background(), env{})
	root.InitDefaultHelpCmd()
	var out [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		out = append(out, path)
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() || sub.Name() == "help" {
				walk(sub, append(append([]string(nil), path...), sub.Name()))
			}
		}
	}
	walk(root, nil)
	return out
}

func helpGolden(path []string) string {
	name := "gonogo"
	if len(path) > 0 {
		name = strings.Join(path, "-")
	}
	return filepath.Join(helpGoldenDir, "help-"+name+".golden")
}

// An environment far from the defaults: help must not show it.
var oddEnv = map[string]string{
	"GONOGO_DATA_DIR": "/tester/data", "GONOGO_SKILLS_DIR": "/tester/skills", "GONOGO_WORKFLOWS_DIR": "/tester/workflows",
	"GONOGO_RUNNER": "command", "GONOGO_RUNNER_CMD": "/tester/agent", "GONOGO_MAX_PLAN_BYTES": "3KiB",
}

// TestHelp: gonogo CMD -h, gonogo CMD --help and gonogo help CMD print the
// command's usage (testdata/cli/help-CMD.golden) to stdout and exit 0,
// whatever the environment; regenerate with go test ./cmd/gonogo -run Help -update.
func TestHelp(t *testing.T) {
	seen := map[string]bool{}
	for _, path := range commandPaths(t) {
		golden := helpGolden(path)
		seen[filepath.Base(golden)] = true
		t.Run("gonogo "+strings.Join(path, " "), func(t *testing.T) {
			res := gonogo(t, nil, "", append(append([]string(nil), path...), "--help")...)
			if res.code != terminal.ExitOK || res.stderr != "" {
				t.Fatalf("--help: exit %d, stderr %q", res.code, res.stderr)
			}
			if updating() {
				if err := os.WriteFile(golden, []byte(res.stdout), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (write it with -update)", err)
			}
			for _, args := range [][]string{
				append(append([]string(nil), path...), "--help"),
				append(append([]string(nil), path...), "-h"),
				append([]string{"help"}, path...),
			} {
				res := gonogo(t, oddEnv, "", args...)
				if res.code != terminal.ExitOK || res.stderr != "" {
					t.Errorf("gonogo %s: exit %d, stderr %q", strings.Join(args, " "), res.code, res.stderr)
				}
				if res.stdout != string(want) {
					t.Errorf("gonogo %s differs from %s:\n%s", strings.Join(args, " "), golden, res.stdout)
				}
			}
		})
	}
	// A golden without its command is left over from one that went.
	files, _ := filepath.Glob(filepath.Join(helpGoldenDir, "help-*.golden"))
	for _, f := range files {
		if !seen[filepath.Base(f)] {
			t.Errorf("%s belongs to no command", f)
		}
	}
}

// TestHelpListsEveryFlag: every flag of every command is in its help, with
// a one-line description, and environment-driven defaults are the built-in
// ones.
func TestHelpListsEveryFlag(t *testing.T) {
	root, _ := newRootCmd(context.Background(), env{})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.InitDefaultHelpFlag()
		out := c.UsageString()
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Usage == "" || strings.Contains(f.Usage, "\n") {
				t.Errorf("%s --%s: usage %q is not one line", c.CommandPath(), f.Name, f.Usage)
			}
			if !strings.Contains(out, "--"+f.Name) {
				t.Errorf("%s help lacks --%s", c.CommandPath(), f.Name)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	run := gonogo(t, oddEnv, "", "run", "-h").stdout
	for _, want := range []string{`(default "./gonogo-data")`, `(default "claude")`, "(default 1MiB)"} {
		if !strings.Contains(run, want) {
			t.Errorf("run -h lacks %s:\n%s", want, run)
		}
	}
	if strings.Contains(run, "/tester") || strings.Contains(run, "3KiB") {
		t.Errorf("run -h shows the environment:\n%s", run)
	}
}

func TestOverview(t *testing.T) {
	want, err := os.ReadFile(helpGolden(nil))
	if err != nil {
		t.Fatal(err)
	}
	// gonogo alone: the overview where mistakes go, exit 2.
	res := gonogo(t, nil, "")
	if res.code != terminal.ExitUsage || res.stdout != "" || res.stderr != string(want) {
		t.Errorf("gonogo: exit %d, stdout %q, stderr:\n%s", res.code, res.stdout, res.stderr)
	}
	res = gonogo(t, nil, "", "help")
	if res.code != terminal.ExitOK || res.stdout != string(want) {
		t.Errorf("gonogo help: exit %d, stdout:\n%s", res.code, res.stdout)
	}
	for _, cmd := range []string{"serve", "run", "check", "runs", "show", "resume", "demo", "workflow", "version", "help", "completion"} {
		if !strings.Contains(string(want), "\n  "+cmd+" ") {
			t.Errorf("the overview does not list %s", cmd)
		}
	}
}

func TestHelpMistakes(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"help", "frobnicate"}, `unknown help topic "frobnicate"`},
		{[]string{"frobnicate", "-h"}, `unknown command "frobnicate"`},
		{[]string{"check", "-json", "plan.md"}, "long flags take two dashes (--json)"},
		{[]string{"runs", "--chain", "x"}, "unknown flag: --chain"},
		{[]string{"workflow"}, "workflow needs a subcommand"},
		{[]string{"workflow", "frob"}, `unknown workflow subcommand "frob"`},
		{[]string{"run", "--max-plan-bytes", "lots", "plan.md"}, `"lots" is not a size`},
	}
	for _, c := range cases {
		res := gonogo(t, nil, "", c.args...)
		if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, c.want) || res.stdout != "" {
			t.Errorf("gonogo %s: exit %d, stdout %q, stderr %q; want exit 2 saying %q", strings.Join(c.args, " "), res.code, res.stdout, res.stderr, c.want)
		}
	}
}
