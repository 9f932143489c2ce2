package runner

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gonogo/gonogo/internal/hangguard"
)

// waitFile waits for a file the fake agent writes.
func waitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := hangguard.Deadline(t); ; time.Sleep(5 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
	}
}

// records reads the agent records in dir.
func records(t *testing.T, dir string) []agentRecord {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	var out []agentRecord
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var r agentRecord
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		r.path = p
		out = append(out, r)
	}
	return out
}

func TestRunningAgentIsRecordedUntilItEnds(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "agents")
	pidFile := filepath.Join(t.TempDir(), "child")
	cfg := fast("--child", pidFile, "--hang")
	cfg.AgentsDir = dir
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		NewCommand(cfg).Run(ctx, job(), nil)
	}()
	waitFile(t, pidFile)
	child := readPid(t, pidFile)
	// The record is written once the agent has started, so its child may
	// be there a moment before it.
	var recs []agentRecord
	for deadline := hangguard.Deadline(t); ; time.Sleep(5 * time.Millisecond) {
		if recs = records(t, dir); len(recs) > 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(recs) != 1 {
		t.Fatalf("%d records while the agent runs, want 1", len(recs))
	}
	r := recs[0]
	st, err := readStat(child)
	if err != nil {
		t.Fatal(err)
	}
	if r.PGID != st.pgrp || r.Owner != os.Getpid() || r.Run != string(job().Run) || r.Step != job().Step || r.Marker == "" {
		t.Errorf("record %+v does not name the agent's group %d, this process and the job", r, st.pgrp)
	}
	if env := envValue(procEnviron(child), agentMarkerEnv); env != r.Marker {
		t.Errorf("the agent's child carries %s=%q, want the recorded %q", agentMarkerEnv, env, r.Marker)
	}
	// The owner is alive: its records are not another gonogo's to reap.
	if left, err := ReapAgents(dir); err != nil || len(left) != 0 {
		t.Errorf("ReapAgents killed a live gonogo's agent: %v, %v", left, err)
	}
	cancel()
	<-done
	assertDead(t, child)
	if recs := records(t, dir); len(recs) != 0 {
		t.Errorf("records left after the attempt: %+v", recs)
	}
}

// orphan starts the fake agent as the leader of a group of its own, with
// a child in the group, and records it as though a gonogo that has died
// had started it. It returns the record and the two pids.
func orphan(t *testing.T, dir string, marker string) (agentRecord, int, int) {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "child")
	cmd := exec.Command(fakeAgent, "--child", pidFile, "--hang")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = append(os.Environ(), agentMarkerEnv+"="+marker)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	leader := cmd.Process.Pid
	t.Cleanup(func() {
		_ = syscall.Kill(-leader, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	waitFile(t, pidFile)
	child := readPid(t, pidFile)

	rec, err := recordAgent(dir, leader, marker, fakeAgent, []string{"GONOGO_RUN_ID=r-1", "GONOGO_STEP=3", "GONOGO_ATTEMPT=2"})
	if err != nil {
		t.Fatal(err)
	}
	// The owner: a process that has exited.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	rec.Owner, rec.OwnerStart = dead.Process.Pid, 1
	b, _ := json.Marshal(rec)
	if err := os.WriteFile(rec.path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return *rec, leader, child
}

func TestReapKillsWhatADeadGonogoLeftRunning(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec, leader, child := orphan(t, dir, "m-1")
	left, err := ReapAgents(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0].PGID != leader || len(left[0].PIDs) != 2 || left[0].Run != "r-1" || left[0].Step != 3 || left[0].Attempt != 2 {
		t.Errorf("ReapAgents = %+v, want group %d (leader and child) of r-1 step 3 attempt 2", left, leader)
	}
	assertDead(t, leader)
	assertDead(t, child)
	if _, err := os.Stat(rec.path); !os.IsNotExist(err) {
		t.Errorf("the record is still there (stat: %v)", err)
	}
}

func TestReapKillsALeftoverGroupWhoseLeaderIsGone(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, leader, child := orphan(t, dir, "m-2")
	// The kernel's parent-death signal took the leader; its child is left
	// in the group, found by the marker in its environment.
	_ = syscall.Kill(leader, syscall.SIGKILL)
	assertDead(t, leader)
	left, err := ReapAgents(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || len(left[0].PIDs) != 1 || left[0].PIDs[0] != child {
		t.Errorf("ReapAgents = %+v, want the child %d alone", left, child)
	}
	assertDead(t, child)
}

func TestReapNeverKillsAStranger(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec, leader, child := orphan(t, dir, "m-3")
	// The record names the group, but not these processes: another start
	// time and another marker, as when the pid was reused.
	rec.Start--
	rec.Marker = "someone-else"
	b, _ := json.Marshal(rec)
	if err := os.WriteFile(rec.path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	left, err := ReapAgents(dir)
	if err != nil || len(left) != 0 {
		t.Errorf("ReapAgents = %+v, %v; want nothing killed", left, err)
	}
	if !alive(leader) || !alive(child) {
		t.Error("a process the record does not prove to be the agent was killed")
	}
	if _, err := os.Stat(rec.path); !os.IsNotExist(err) {
		t.Errorf("the stale record is still there (stat: %v)", err)
	}
}

// A record names processes to kill: one another user owns, or a link to a
// record elsewhere, is left alone, unread, and said so.
func TestReapTrustsOnlyItsOwnRecords(t *testing.T) {
	t.Parallel()
	t.Run("another user's", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("making a file of another user needs root")
		}
		dir := t.TempDir()
		rec, leader, child := orphan(t, dir, "m-6")
		if err := os.Chown(rec.path, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		left, err := ReapAgents(dir)
		if len(left) != 0 || err == nil || !strings.Contains(err.Error(), "belongs to uid 65534") {
			t.Errorf("ReapAgents = %+v, %v; want nothing killed and the record named", left, err)
		}
		if !alive(leader) || !alive(child) {
			t.Error("ReapAgents killed what another user's record names")
		}
		if _, err := os.Stat(rec.path); err != nil {
			t.Errorf("the record was removed: %v", err)
		}
	})
	t.Run("a link", func(t *testing.T) {
		elsewhere := t.TempDir()
		rec, leader, child := orphan(t, elsewhere, "m-7")
		dir := t.TempDir()
		link := filepath.Join(dir, filepath.Base(rec.path))
		if err := os.Symlink(rec.path, link); err != nil {
			t.Fatal(err)
		}
		left, err := ReapAgents(dir)
		if len(left) != 0 || err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("ReapAgents = %+v, %v; want nothing killed and the link named", left, err)
		}
		if !alive(leader) || !alive(child) {
			t.Error("ReapAgents followed a link to a record elsewhere and killed what it names")
		}
	})
}

func TestParentDeathSignalIsSet(t *testing.T) {
	cmd := exec.Command(fakeAgent)
	ownGroup(cmd)
	if cmd.SysProcAttr.Pdeathsig != syscall.SIGKILL || !cmd.SysProcAttr.Setpgid {
		t.Errorf("SysProcAttr = %+v, want a group of its own and SIGKILL on gonogo's death", cmd.SysProcAttr)
	}
}

func TestVersionNeverHangs(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "child")
	// Long enough for a loaded machine to start the agent and its child,
	// which hangs: only the timeout's group kill ends it (assertDead).
	_, err := Version(context.Background(), fakeAgent, []string{"--child", pidFile, "--hang"}, 2*time.Second)
	if err == nil || !errors.Is(err, ErrTimeout) {
		t.Errorf("Version of an agent that never answers = %v, want a timeout", err)
	}
	assertDead(t, readPid(t, pidFile))

	v, err := Version(context.Background(), fakeAgent, []string{"--stderr", "ignored", "--replay", testdata("streams/success.jsonl")}, 5*time.Second)
	if err != nil || !strings.HasPrefix(v, "{") || strings.Contains(v, "\n") {
		t.Errorf("Version = %q, %v; want the first line of stdout", v, err)
	}
}

func TestInfosKnowEveryRunner(t *testing.T) {
	t.Parallel()
	for _, name := range Names() {
		if _, ok := Lookup(name); !ok {
			t.Errorf("runner %s has no Info", name)
		}
	}
	for name, exe := range map[string]string{"claude": "claude", "codex": "codex", "gemini": "gemini", "command": "", "dry-run": ""} {
		i, ok := Lookup(name)
		if !ok || i.Executable("") != exe || i.Executable("/opt/x") != "/opt/x" && i.RunsAgent {
			t.Errorf("Lookup(%q) = %+v, %v; want default executable %q", name, i, ok, exe)
		}
	}
}

// A gonogo that was killed but not yet collected by its parent (a zombie)
// is gone: what it left running is killed all the same.
func TestReapKillsWhatAZombieGonogoLeftRunning(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec, leader, child := orphan(t, dir, "m-z")
	owner := exec.Command("sleep", "60")
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = owner.Wait() })
	if err := owner.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// Not waited for: the owner stays a zombie until the cleanup.
	var st procStat
	for deadline := hangguard.Deadline(t); ; time.Sleep(10 * time.Millisecond) {
		var err error
		if st, err = readStat(owner.Process.Pid); err == nil && st.state == 'Z' {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the owner never became a zombie (state %q)", st.state)
		}
	}
	rec.Owner, rec.OwnerStart = owner.Process.Pid, st.start
	b, _ := json.Marshal(rec)
	if err := os.WriteFile(rec.path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	left, err := ReapAgents(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0].PGID != leader {
		t.Errorf("ReapAgents = %+v, want group %d", left, leader)
	}
	assertDead(t, leader)
	assertDead(t, child)
}
