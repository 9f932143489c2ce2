package terminal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gonogo/gonogo/internal/atomicfile"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/engine/audit"
)

// ExportReader is what gonogo export reads of a run.
type ExportReader interface {
	RunWithJournal(ctx context.Context, id engine.RunID) (*engine.Run, []engine.Event, error)
	ArtifactVersions(ctx context.Context, id engine.RunID, step, attempt int) ([][]byte, error)
}

// Export is one gonogo export RUN: the run's audit trail (engine/audit) as
// Format, json or md, to Out ("" or "-": stdout).
type Export struct {
	Data   string // the data directory, as given
	Run    engine.RunID
	Format string
	Out    string
}

// ExportFormat is the format a file's extension asks for when --format is
// not given: Markdown for .md and .markdown, else JSON.
func ExportFormat(out string) string {
	switch strings.ToLower(filepath.Ext(out)) {
	case ".md", ".markdown":
		return "md"
	}
	return "json"
}

// Write builds the audit trail as of now and writes it, whole or not at
// all, and returns the exit code: a run that is not there, or what cannot
// be read or written, is exit 2. A file written is said on stderr.
func (v Export) Write(ctx context.Context, rd ExportReader, now time.Time, stdout, stderr io.Writer) int {
	if err := v.write(ctx, rd, now, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "gonogo export: %v\n", err)
		return ExitUsage
	}
	return ExitOK
}

// write is Write, with what stops it as an error.
func (v Export) write(ctx context.Context, rd ExportReader, now time.Time, stdout, stderr io.Writer) error {
	r, journal, err := rd.RunWithJournal(ctx, v.Run)
	if errors.Is(err, engine.ErrNotFound) {
		return fmt.Errorf("no run %s in %s (see gonogo runs)", v.Run, v.Data)
	}
	if err != nil {
		return err
	}
	body, err := v.Trail(ctx, rd, r, journal, now)
	if err != nil {
		return err
	}
	if v.Out == "" || v.Out == "-" {
		_, err := stdout.Write(body)
		return err
	}
	if err := WriteFileAtomic(v.Out, body); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "Wrote the audit trail of run %s to %s.\n", v.Run, v.Out)
	return nil
}

// Trail is run r's audit trail in v's format, as of now: the bytes
// gonogo export writes, and the run web page's download serves.
func (v Export) Trail(ctx context.Context, rd ExportReader, r *engine.Run, journal []engine.Event, now time.Time) ([]byte, error) {
	t, err := audit.Build(audit.Source{Run: r, Journal: journal, Versions: func(step, attempt int) ([][]byte, error) {
		return rd.ArtifactVersions(ctx, v.Run, step, attempt)
	}, Gone: func(file string) bool { return ArtifactGone(v.Data, file) }}, now)
	if err != nil {
		return nil, err
	}
	if v.Format == "md" {
		return t.Markdown(), nil
	}
	return t.JSON()
}

// WriteFileAtomic writes path whole or not at all: a temporary file in
// the same folder, synced, then renamed over path.
func WriteFileAtomic(path string, body []byte) error {
	dir := filepath.Dir(path)
	tmp, err := atomicfile.Prepare(dir, "."+filepath.Base(path)+".*.tmp", body)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("write %s: the folder %s does not exist", path, dir)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		// Not the temporary file's name: the person named path.
		return fmt.Errorf("write %s: %w", path, pe.Err)
	}
	if err == nil {
		defer os.Remove(tmp)
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
