package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/terminal"
)

// exportFlags are export's own flags.
type exportFlags struct {
	format string
	out    string
}

func newExportCmd(a *cli) *cobra.Command {
	f := &runFlags{}
	x := &exportFlags{}
	c := &cobra.Command{
		Use:   "export [flags] RUN",
		Short: "Write a run's audit trail (JSON or Markdown)",
		Long: `Write the audit trail of one run: every step and attempt, each decision with who
made it, when and on which attempt, each edit as a unified diff against the agent's
artifact, redo feedback, artifact sha256 sums, costs, durations and the journal.
--format json is the documented shape (see the README); --format md reads on its own.
Without --format, -o FILE chooses by its extension (.md or .markdown: md, .json: json);
otherwise json. It works while another gonogo holds the data directory.

Exit codes: 0 written, 2 no such run, a bad flag, or an I/O error.`,
		RunE: a.action(f, func(ctx context.Context, e env, cfg config, f *runFlags) int {
			x := *x
			if !f.changed("format") {
				x.format = terminal.ExportFormat(x.out)
			}
			return cmdExport(ctx, e, f, x)
		}),
		ValidArgsFunction: a.completeRunIDs(f),
	}
	a.addDataFlag(c, f)
	c.Flags().StringVar(&x.format, "format", "", "output `FORMAT`: json or md (default: by -o FILE's extension, else json)")
	c.Flags().StringVarP(&x.out, "output", "o", "", "write to `FILE` instead of stdout (replaced whole, never half-written)")
	a.completeFlag(c, "format", cobra.FixedCompletions([]string{"json", "md"}, cobra.ShellCompDirectiveNoFileComp))
	return c
}

func cmdExport(ctx context.Context, e env, f *runFlags, x exportFlags) int {
	if len(f.positional) != 1 {
		return fail(e, "export", usagef("expected one run id (see gonogo runs)"))
	}
	if x.format != "json" && x.format != "md" {
		return fail(e, "export", usagef("--format %q: json or md", x.format))
	}
	db, err := openReader(ctx, e, f.data)
	if err != nil {
		return fail(e, "export", err)
	}
	defer db.Close()
	v := terminal.Export{Data: f.data, Run: engine.RunID(f.positional[0]), Format: x.format, Out: x.out}
	return v.Write(ctx, db, time.Now(), e.stdout, e.stderr)
}
