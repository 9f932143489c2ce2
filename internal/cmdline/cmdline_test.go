package cmdline

import (
	"bytes"
	"testing"

	"github.com/spf13/cobra"
)

// tree is a root with run (--json, --auto), show (--json) and check.
func tree() *cobra.Command {
	root := &cobra.Command{Use: "gonogo", SilenceErrors: true, SilenceUsage: true}
	root.SetFlagErrorFunc(FlagError)
	root.SetHelpCommand(HelpCmd())
	noop := func(*cobra.Command, []string) error { return nil }
	run := &cobra.Command{Use: "run", RunE: noop}
	run.Flags().Bool("json", false, "")
	run.Flags().Bool("auto", false, "")
	show := &cobra.Command{Use: "show", RunE: noop}
	show.Flags().Bool("json", false, "")
	root.AddCommand(run, show, &cobra.Command{Use: "check", RunE: noop}, VersionCmd("v9"))
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	return root
}

// TestFlagErrorSaysHowToFixIt: each flag mistake names the fix.
func TestFlagErrorSaysHowToFixIt(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "-json"}, "unknown flag -json: long flags take two dashes (--json)"},
		{[]string{"check", "--json"}, "unknown flag: --json (check does not take it; run and show do)"},
		{[]string{"check", "--auto"}, "unknown flag: --auto (check does not take it; run does)"},
		{[]string{"check", "--nothing"}, "unknown flag: --nothing"},
		{[]string{"help", "nothing"}, `unknown help topic "nothing"`},
	} {
		root := tree()
		root.SetArgs(tc.args)
		if err := root.Execute(); err == nil || err.Error() != tc.want {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

func TestVersionIsOneLine(t *testing.T) {
	root := tree()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"version"})
	if err := root.Execute(); err != nil || out.String() != "gonogo v9\n" {
		t.Fatalf("version: %q, %v", out.String(), err)
	}
}
