package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gonogo/gonogo/internal/hangguard"
)

// processAlive reports whether pid is a live process (a zombie is dead).
func processAlive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || (b[i+2] != 'Z' && b[i+2] != 'X')
}

// parentPid returns the parent pid of pid, or 0 when it cannot be read.
func parentPid(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

func waitGone(t *testing.T, what string, pid int) {
	t.Helper()
	for deadline := hangguard.Deadline(t); processAlive(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the %s (pid %d) is still running", what, pid)
		}
	}
}

func readPidFile(t *testing.T, path string) int {
	t.Helper()
	for deadline := hangguard.Deadline(t); ; time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(path)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
	}
}

// When gonogo is SIGKILLed mid-step, its agent dies with it (the kernel's
// parent-death signal), and what the agent started, which that signal does
// not reach, is killed by the next gonogo to open the data directory: a
// child in its group, a process in a session of its own (setsid sleep &),
// a double fork and a daemon. The step shows interrupted.
func TestSIGKILLedGonogoLeavesNoAgentRunning(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, pids := t.TempDir(), t.TempDir()
	agent := writeAgent(t, `cat >/dev/null
sleep 3600 &
echo $! > `+pids+`/grandchild
setsid sh -c 'echo $$ > `+pids+`/setsid.tmp && mv `+pids+`/setsid.tmp `+pids+`/setsid; exec sleep 3600' &
( sh -c 'echo $$ > `+pids+`/double.tmp && mv `+pids+`/double.tmp `+pids+`/double; exec sleep 3600' >/dev/null 2>&1 & )
( setsid sh -c 'echo $$ > `+pids+`/daemon.tmp && mv `+pids+`/daemon.tmp `+pids+`/daemon; exec sleep 3600' </dev/null >/dev/null 2>&1 & )
until [ -e `+pids+`/setsid ] && [ -e `+pids+`/double ] && [ -e `+pids+`/daemon ]; do sleep 0.01; done
echo $$ > `+pids+`/agent
wait
`)
	environ := append(os.Environ(), "GONOGO_TEST_AS_MAIN=1", "GONOGO_DATA_DIR="+data,
		"GONOGO_SKILLS_DIR="+filepath.Join(exampleDir(t), "skills"), "USER=tester")
	run := exec.Command(self, "run", "--runner", "command", "--runner-cmd", agent, "--chain", "deliver-prd -- saved searches")
	run.Env = environ
	var out syncBuffer
	run.Stdout, run.Stderr = &out, &out
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	agentPid := readPidFile(t, filepath.Join(pids, "agent"))
	grandchild := readPidFile(t, filepath.Join(pids, "grandchild"))
	detached := map[string]int{}
	for _, kind := range []string{"setsid", "double", "daemon"} {
		detached[kind] = readPidFile(t, filepath.Join(pids, kind))
	}
	t.Cleanup(func() {
		_ = syscall.Kill(grandchild, syscall.SIGKILL)
		for _, pid := range detached {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	// gonogo is their subreaper: what the agent double-forked away is
	// gonogo's child, not init's.
	for _, kind := range []string{"double", "daemon"} {
		if ppid := parentPid(detached[kind]); ppid != run.Process.Pid {
			t.Errorf("the %s process's parent is %d, want gonogo (%d), its subreaper", kind, ppid, run.Process.Pid)
		}
	}
	for deadline := hangguard.Deadline(t); ; time.Sleep(10 * time.Millisecond) {
		if recs, _ := filepath.Glob(filepath.Join(data, "agents", "*.json")); len(recs) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the running agent was never recorded")
		}
	}

	if err := run.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = run.Wait()
	waitGone(t, "agent", agentPid)
	// The parent-death signal reaches only the agent: its child lives on
	// until the next gonogo on this data directory.
	if !processAlive(grandchild) {
		t.Log("the agent's child died with it")
	}
	m := regexp.MustCompile(`gonogo run (\S+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no run id in the output:\n%s", out.String())
	}

	show := exec.Command(self, "show", "--json", m[1])
	show.Env = environ
	var stdout, stderr bytes.Buffer
	show.Stdout, show.Stderr = &stdout, &stderr
	if err := show.Run(); err != nil {
		t.Fatalf("show: %v\n%s", err, stderr.String())
	}
	t.Logf("show:\n%s", stderr.String())
	waitGone(t, "agent's child", grandchild)
	for kind, pid := range detached {
		waitGone(t, kind+" process the agent detached", pid)
	}
	if !strings.Contains(stderr.String(), "stopped an agent left running by a gonogo that is gone") ||
		!strings.Contains(stderr.String(), "run="+m[1]) {
		t.Errorf("show did not say it stopped the agent:\n%s", stderr.String())
	}
	var shown struct {
		Steps []struct {
			Status string `json:"status"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &shown); err != nil {
		t.Fatalf("show --json: %v\n%s", err, stdout.String())
	}
	if len(shown.Steps) != 1 || shown.Steps[0].Status != "interrupted" {
		t.Errorf("steps = %+v, want the one step interrupted", shown.Steps)
	}
	if recs, _ := filepath.Glob(filepath.Join(data, "agents", "*")); len(recs) != 0 {
		t.Errorf("agent records left: %v", recs)
	}
}
