package terminal

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
)

// TestWriteFileAtomicSaysWhatIsWrong: a folder that does not exist is
// named, never the temporary file's name.
func TestWriteFileAtomicSaysWhatIsWrong(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "trail.md")
	err := WriteFileAtomic(path, []byte("x"))
	if err == nil || !strings.Contains(err.Error(), "the folder "+filepath.Dir(path)+" does not exist") || strings.Contains(err.Error(), ".tmp") {
		t.Fatalf("err = %v", err)
	}
}

func TestExportFormatFollowsTheExtension(t *testing.T) {
	for out, want := range map[string]string{"": "json", "-": "json", "t.md": "md", "T.MARKDOWN": "md", "t.json": "json", "t.txt": "json"} {
		if got := ExportFormat(out); got != want {
			t.Errorf("ExportFormat(%q) = %q, want %q", out, got, want)
		}
	}
}

// exportRuns is one stored run for Export to read.
type exportRuns struct {
	run     *engine.Run
	journal []engine.Event
}

func (x exportRuns) RunWithJournal(_ context.Context, id engine.RunID) (*engine.Run, []engine.Event, error) {
	if x.run == nil || id != x.run.ID {
		return nil, nil, engine.ErrNotFound
	}
	return x.run, x.journal, nil
}

func (exportRuns) ArtifactVersions(context.Context, engine.RunID, int, int) ([][]byte, error) {
	return [][]byte{[]byte("# PRD\n"), []byte("# PRD, edited\n")}, nil
}

// TestExportWritesTheTrailOrSaysWhy: the trail goes to stdout, or whole
// to the file named (and stderr says where); a run that is not there is
// exit 2, naming it and the data directory.
func TestExportWritesTheTrailOrSaysWhy(t *testing.T) {
	r, journal := halted(t)
	rd := exportRuns{r, journal}
	var out, errb bytes.Buffer
	if code := (Export{Data: "d", Run: "nope", Format: "json"}).Write(context.Background(), rd, t0, &out, &errb); code != ExitUsage ||
		errb.String() != "gonogo export: no run nope in d (see gonogo runs)\n" || out.Len() != 0 {
		t.Fatalf("missing run: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	errb.Reset()
	if code := (Export{Data: "d", Run: rd.run.ID, Format: "json"}).Write(context.Background(), rd, t0, &out, &errb); code != ExitOK || !json.Valid(out.Bytes()) {
		t.Fatalf("json to stdout: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	path := filepath.Join(t.TempDir(), "trail.md")
	out.Reset()
	code := (Export{Data: "d", Run: rd.run.ID, Format: "md", Out: path}).Write(context.Background(), rd, t0, &out, &errb)
	body, err := os.ReadFile(path)
	if code != ExitOK || err != nil || !strings.Contains(string(body), "deliver-user-stories") || out.Len() != 0 ||
		errb.String() != "Wrote the audit trail of run "+string(rd.run.ID)+" to "+path+".\n" {
		t.Fatalf("md to a file: exit %d, %v, file %q, stdout %q, stderr %q", code, err, body, out.String(), errb.String())
	}
}
