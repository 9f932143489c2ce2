package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// detachedKinds are the ways the detaching agent leaves its group: a
// process in a session of its own (setsid sleep 1000 &), a double fork that
// stays in the group, and a daemon (a double fork into a session of its
// own, its parent gone before it).
var detachedKinds = []string{"setsid", "double", "daemon"}

// detachingAgent writes a shell script that starts the three kinds of
// detached processes (the setsid one holding stdout, as a careless agent
// does), waits until each has written its pid under dir, then prints
// output and does end ("exit 0", or "exec sleep 1000" to hang).
func detachingAgent(t *testing.T, dir, output, end string) string {
	t.Helper()
	script := fmt.Sprintf(`#!/bin/sh
cat >/dev/null
setsid sh -c 'echo $$ > %[1]s/setsid.tmp && mv %[1]s/setsid.tmp %[1]s/setsid; exec sleep 1000' &
( sh -c 'echo $$ > %[1]s/double.tmp && mv %[1]s/double.tmp %[1]s/double; exec sleep 1000' >/dev/null 2>&1 & )
( setsid sh -c 'echo $$ > %[1]s/daemon.tmp && mv %[1]s/daemon.tmp %[1]s/daemon; exec sleep 1000' </dev/null >/dev/null 2>&1 & )
until [ -e %[1]s/setsid ] && [ -e %[1]s/double ] && [ -e %[1]s/daemon ]; do sleep 0.01; done
cat %[2]s
%[3]s
`, dir, output, end)
	p := filepath.Join(t.TempDir(), "agent.sh")
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// detachedPids reads the pids the detaching agent wrote, failing when one
// is missing: the processes must have been up for the test to count.
func detachedPids(t *testing.T, dir string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, kind := range detachedKinds {
		out[kind] = readPid(t, filepath.Join(dir, kind))
	}
	return out
}

// assertGone fails unless each process is dead and, this test process
// being their subreaper, collected: no zombie of them is left.
func assertGone(t *testing.T, pids map[string]int) {
	t.Helper()
	for kind, pid := range pids {
		assertDead(t, pid)
		if st, err := readStat(pid); err == nil && st.ppid == os.Getpid() {
			t.Errorf("the %s process %d is dead but left as a zombie of gonogo", kind, pid)
		}
	}
}

func TestDetachedProcessesEndWithTheStep(t *testing.T) {
	t.Parallel()
	bothRunners(t, func(t *testing.T, newRunner func(Config) engine.Runner) {
		dir := t.TempDir()
		cfg := Config{Cmd: detachingAgent(t, dir, testdata("streams/success.jsonl"), "exit 0"), KillGrace: 200 * time.Millisecond}
		o := newRunner(cfg).Run(context.Background(), job(), nil)
		pids := detachedPids(t, dir)
		t.Cleanup(func() { killAll(pids) })
		if !ok(o) {
			t.Fatalf("outcome: %+v", o)
		}
		assertGone(t, pids)
	})
}

func TestDetachedProcessesEndOnTimeout(t *testing.T) {
	t.Parallel()
	bothRunners(t, func(t *testing.T, newRunner func(Config) engine.Runner) {
		dir := t.TempDir()
		// Long enough for the agent to start all three first, on a busy
		// machine too: detachedPids fails when it did not.
		cfg := Config{Cmd: detachingAgent(t, dir, "/dev/null", "exec sleep 1000"), Timeout: 2 * time.Second, KillGrace: 200 * time.Millisecond}
		o := newRunner(cfg).Run(context.Background(), job(), nil)
		pids := detachedPids(t, dir)
		t.Cleanup(func() { killAll(pids) })
		if !errors.Is(o.Err, ErrTimeout) {
			t.Fatalf("err = %v, want a timeout", o.Err)
		}
		assertGone(t, pids)
	})
}

func TestDetachedProcessesEndOnCancel(t *testing.T) {
	t.Parallel()
	bothRunners(t, func(t *testing.T, newRunner func(Config) engine.Runner) {
		dir := t.TempDir()
		cfg := Config{Cmd: detachingAgent(t, dir, "/dev/null", "exec sleep 1000"), KillGrace: 200 * time.Millisecond}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan engine.Outcome, 1)
		go func() { done <- newRunner(cfg).Run(ctx, job(), nil) }()
		for _, kind := range detachedKinds {
			waitFile(t, filepath.Join(dir, kind))
		}
		pids := detachedPids(t, dir)
		t.Cleanup(func() { killAll(pids) })
		for kind, pid := range pids {
			if !alive(pid) {
				t.Fatalf("the %s process %d died before the cancel", kind, pid)
			}
		}
		cancel()
		if o := <-done; !errors.Is(o.Err, ErrCancelled) {
			t.Fatalf("err = %v, want a cancellation", o.Err)
		}
		assertGone(t, pids)
	})
}

func killAll(pids map[string]int) {
	for _, pid := range pids {
		if alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
