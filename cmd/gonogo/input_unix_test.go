//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gonogo/gonogo/internal/terminal"
)

// edit PATH takes a regular file: a FIFO (which nobody writes to, and
// whose open would otherwise wait forever), a device that never ends and
// a directory are refused at once, naming what they are; the run is kept
// waiting.
func TestEditPathMustBeARegularFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	for _, c := range []struct{ path, want string }{
		{fifo, "is a named pipe (FIFO), not a regular file"},
		{"/dev/zero", "is a device, not a regular file"},
		{t.TempDir(), "is a directory, not a regular file"},
	} {
		vars := baseVars(t)
		workAgent(t, vars)
		res := gonogo(t, vars, "edit "+c.path+"\n", "run", "--chain", "deliver-prd -- x")
		if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, c.path+" "+c.want) {
			t.Errorf("edit %s: exit %d\n%s", c.path, res.code, res.stderr)
			continue
		}
		if run := showRun(t, vars, runID(t, res.stdout)); run.State != "waiting" || run.Steps[0].Decision != nil {
			t.Errorf("edit %s: run %s, decision %v", c.path, run.State, run.Steps[0].Decision)
		}
	}
}
