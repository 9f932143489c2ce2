package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/engine/audit"
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
				x.format = formatOf(x.out)
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
	id := engine.RunID(f.positional[0])
	r, journal, err := db.RunWithJournal(ctx, id)
	if errors.Is(err, engine.ErrNotFound) {
		return fail(e, "export", fmt.Errorf("no run %s in %s (see gonogo runs)", id, f.data))
	}
	if err != nil {
		return fail(e, "export", err)
	}
	t, err := audit.Build(audit.Source{Run: r, Journal: journal, Versions: func(step, attempt int) ([][]byte, error) {
		return db.ArtifactVersions(ctx, id, step, attempt)
	}, Gone: func(file string) bool { return terminal.ArtifactGone(f.data, file) }}, time.Now())
	if err != nil {
		return fail(e, "export", err)
	}
	var body []byte
	if x.format == "md" {
		body = t.Markdown()
	} else if body, err = t.JSON(); err != nil {
		return fail(e, "export", err)
	}
	if x.out == "" || x.out == "-" {
		if _, err := e.stdout.Write(body); err != nil {
			return fail(e, "export", err)
		}
		return terminal.ExitOK
	}
	if err := writeFileAtomic(x.out, body); err != nil {
		return fail(e, "export", err)
	}
	fmt.Fprintf(e.stderr, "Wrote the audit trail of run %s to %s.\n", id, x.out)
	return terminal.ExitOK
}

// formatOf is the format a file's extension asks for when --format is not
// given: Markdown for .md and .markdown, else JSON.
func formatOf(out string) string {
	switch strings.ToLower(filepath.Ext(out)) {
	case ".md", ".markdown":
		return "md"
	}
	return "json"
}

// writeFileAtomic writes path whole or not at all: a temporary file in
// the same folder, synced, then renamed over path.
func writeFileAtomic(path string, body []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("write %s: the folder %s does not exist", path, dir)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		// Not the temporary file's name: the person named path.
		return fmt.Errorf("write %s: %w", path, pe.Err)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err = tmp.Write(body); err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
