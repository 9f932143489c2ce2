//go:build temporal

package main

import (
	"errors"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/terminal"
)

// gonogo run on a cluster no worker polls says at once that the run waits
// for one, and how to start one; Ctrl-C then leaves the run on the
// cluster, saying how to follow it again.
func TestTemporalRunWithNoWorkerSaysSo(t *testing.T) {
	agent := writeAgent(t, "cat >/dev/null; printf '# PRD\\n\\nSaved searches.\\n'")
	c := newCluster(t, agent, 3*time.Second)
	h := startHolder(t, c.env, "run", "--chain", "deliver-prd -- saved searches")
	m := waitFor(t, h.out, regexp.MustCompile(`No gonogo worker polls Temporal at \S+ \(namespace \S+\) now: the run waits until one starts\.\n`+
		`Start one with: gonogo worker[^\n]*\nCtrl-C leaves the run on the cluster; follow it again with: gonogo resume (\S+)`), "the no-worker note")
	id := engine.RunID(m[1])
	if err := h.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := h.wait(t)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != terminal.ExitWaiting || !strings.Contains(h.out.String(), "Follow it again with: gonogo resume "+string(id)) {
		t.Fatalf("after Ctrl-C: %v\n%s", err, h.out.String())
	}
	// The run is still on the cluster, waiting for a worker.
	if res := gonogo(t, c.vars(), "", "runs"); res.code != 0 || !strings.Contains(res.stdout, string(id)) {
		t.Errorf("runs after Ctrl-C: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if res := gonogo(t, c.vars(), "", "show", string(id)); res.code != 0 || !strings.Contains(res.stdout, string(id)) {
		t.Errorf("show after Ctrl-C: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}
