package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/storage"
)

// smallDisk mounts a tmpfs of size bytes for the test, or skips where the
// test may not mount (not root, no CAP_SYS_ADMIN).
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small disk here: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	return dir
}

// TestDiskFullMidRun fills the data directory's disk while a run goes on:
// gonogo says so clearly (exit 2), keeps everything already committed, and
// once space is freed the run goes on from where it stood.
func TestDiskFullMidRun(t *testing.T) {
	disk := smallDisk(t, "3m")
	data := filepath.Join(disk, "data")
	filler := filepath.Join(disk, "filler")
	if err := os.WriteFile(filler, make([]byte, 1200<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := baseVars(t)
	vars["GONOGO_DATA_DIR"] = data
	vars["GONOGO_MAX_ARTIFACT"] = "2MiB"
	vars["GONOGO_RUNNER"] = "command"
	vars["GONOGO_RUNNER_CMD"] = writeAgent(t, `cat >/dev/null; printf '# Big artifact\n\n'; head -c 700000 /dev/zero | tr '\0' 'a' | fold -w 80`)
	res := gonogo(t, vars, "approve\napprove\napprove\n", "run", "--chain", "deliver-prd, measure-experiment-design, define-problem-statement")
	if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, "no space left on device") || !strings.Contains(res.stderr, "gonogo resume") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", res.code, res.stdout, res.stderr)
	}
	id := runID(t, res.stdout)

	// What was committed is intact: the first step, approved, and its file.
	db, err := storage.Open(data, storage.Options{})
	if err != nil {
		t.Fatalf("the store does not open after the disk filled: %v", err)
	}
	r, err := db.Load(context.Background(), engine.RunID(id))
	if err != nil {
		t.Fatal(err)
	}
	journal, err := db.Journal(context.Background(), engine.RunID(id))
	if err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	if s := r.Step(1); s.Status != engine.StepDone || s.LastDecision() == nil || s.LastDecision().Kind != engine.DecideApprove {
		t.Fatalf("step 1 after the disk filled: %s", s.Status)
	}
	if s := r.Step(2); s.Status != engine.StepInterrupted {
		t.Fatalf("step 2 after the disk filled: %s, want interrupted", s.Status)
	}
	for i, ev := range journal {
		if ev.Seq != uint64(i+1) {
			t.Fatalf("journal not contiguous at %d", i)
		}
	}
	show := gonogo(t, vars, "", "show", "--json", id)
	var shown jsonRun
	if err := json.Unmarshal([]byte(show.stdout), &shown); err != nil || shown.Steps[1].Status != "interrupted" {
		t.Fatalf("show after the disk filled: %v %s %s", err, show.stdout, show.stderr)
	}

	// Space is freed: the run goes on from the interrupted step.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	// A run goes on with the agent it started with unless resume is
	// given another.
	small := writeAgent(t, `cat >/dev/null; printf '# Small artifact\n\nDone.\n'`)
	res = gonogo(t, vars, "redo\napprove\napprove\napprove\n", "resume", "--runner-cmd", small, id)
	if res.code != terminal.ExitOK || !strings.Contains(res.stdout, "Run complete") {
		t.Fatalf("resume after freeing space: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
}
