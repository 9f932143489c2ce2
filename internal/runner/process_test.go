package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// bothRunners runs a test against the claude and the command runner, which
// share the process handling.
func bothRunners(t *testing.T, f func(t *testing.T, newRunner func(Config) engine.Runner)) {
	t.Run("claude", func(t *testing.T) {
		t.Parallel()
		f(t, func(c Config) engine.Runner { return NewClaude(c) })
	})
	t.Run("command", func(t *testing.T) {
		t.Parallel()
		f(t, func(c Config) engine.Runner { return NewCommand(c) })
	})
}

func TestTimeoutKillsTheGroup(t *testing.T) {
	t.Parallel()
	bothRunners(t, func(t *testing.T, newRunner func(Config) engine.Runner) {
		pidFile := filepath.Join(t.TempDir(), "child")
		cfg := fast("--child", pidFile, "--hang")
		// Long enough for a loaded machine to start the agent and its
		// child; the child hangs, so only the group kill ends it
		// (assertDead below).
		cfg.Timeout = 2 * time.Second
		j := job()
		o := newRunner(cfg).Run(context.Background(), j, nil)
		if !errors.Is(o.Err, ErrTimeout) || !errors.Is(o.Err, context.DeadlineExceeded) || errors.Is(o.Err, ErrCancelled) {
			t.Fatalf("err = %v, want a timeout", o.Err)
		}
		if !strings.Contains(o.Err.Error(), "timed out after 2s") {
			t.Errorf("err = %q, want it to say how long", o.Err)
		}
		if strings.Contains(o.Err.Error(), j.Prompt) {
			t.Error("the error message carries the prompt")
		}
		assertDead(t, readPid(t, pidFile))
	})
}

func TestTimeoutOfAnAgentIgnoringSIGTERM(t *testing.T) {
	t.Parallel()
	bothRunners(t, func(t *testing.T, newRunner func(Config) engine.Runner) {
		pidFile := filepath.Join(t.TempDir(), "child")
		cfg := fast("--ignore-term", "--child", pidFile, "--hang")
		cfg.Timeout = 2 * time.Second
		cfg.KillGrace = 300 * time.Millisecond
		start := time.Now()
		o := newRunner(cfg).Run(context.Background(), job(), nil)
		// The agent ignores SIGTERM: it ends only at SIGKILL, after the
		// grace (a lower bound, which a loaded machine only lengthens).
		if took := time.Since(start); took < cfg.Timeout+cfg.KillGrace {
			t.Errorf("Run returned after %s, want at least the timeout plus the kill grace", took)
		}
		if !errors.Is(o.Err, ErrTimeout) {
			t.Errorf("err = %v, want a timeout", o.Err)
		}
		assertDead(t, readPid(t, pidFile))
	})
}

func TestCancelKillsTheGroup(t *testing.T) {
	t.Parallel()
	bothRunners(t, func(t *testing.T, newRunner func(Config) engine.Runner) {
		pidFile := filepath.Join(t.TempDir(), "child")
		ctx, cancel := context.WithCancelCause(context.Background())
		// Cancelled once the agent's child has written its pid (a file
		// there but still empty is not yet); the child hangs, and the
		// agent's 10 s timeout would end it as a timeout, not a cancel.
		go func() {
			for {
				if b, err := os.ReadFile(pidFile); (err == nil && len(b) > 0) || ctx.Err() != nil {
					cancel(errors.New("aborted by U0123"))
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
		o := newRunner(fast("--child", pidFile, "--hang")).Run(ctx, job(), nil)
		if !errors.Is(o.Err, ErrCancelled) || !errors.Is(o.Err, context.Canceled) || errors.Is(o.Err, ErrTimeout) {
			t.Fatalf("err = %v, want a cancellation", o.Err)
		}
		if o.Err.Error() != "cancelled: aborted by U0123" {
			t.Errorf("err = %q, want the cause in it", o.Err)
		}
		assertDead(t, readPid(t, pidFile))
	})
}

func TestCancelledBeforeTheStart(t *testing.T) {
	t.Parallel()
	bothRunners(t, func(t *testing.T, newRunner func(Config) engine.Runner) {
		argv := filepath.Join(t.TempDir(), "argv")
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		o := newRunner(fast("--argv-to", argv)).Run(ctx, job(), nil)
		if !errors.Is(o.Err, ErrCancelled) || o.Err.Error() != "cancelled" {
			t.Errorf("err = %v, want cancelled", o.Err)
		}
		if _, err := os.Stat(argv); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the agent started after the cancellation (stat: %v)", err)
		}
	})
}

func TestChildrenLeftBehindAreKilled(t *testing.T) {
	t.Parallel()
	// The child holds stdout open: without the group kill the runner would
	// wait for it until the timeout.
	pidFile := filepath.Join(t.TempDir(), "child")
	// Waiting for it would end the attempt at fast's 10 s timeout, FAILED.
	cfg := fast("--child", pidFile, "--replay", testdata("streams/success.jsonl"))
	o := NewClaude(cfg).Run(context.Background(), job(), nil)
	if !ok(o) {
		t.Fatalf("outcome: %+v", o)
	}
	assertDead(t, readPid(t, pidFile))
}

func TestEscapedChildCannotHangRun(t *testing.T) {
	t.Parallel()
	// A child in a session of its own survives the group kill and keeps
	// stdout and stderr open; Run must give up on them, not wait.
	pidFile := filepath.Join(t.TempDir(), "child")
	// Waiting for them would end the attempt at fast's 10 s timeout, FAILED.
	cfg := fast("--escaped-child", pidFile, "--replay", testdata("streams/success.jsonl"))
	o := NewClaude(cfg).Run(context.Background(), job(), nil)
	pid := readPid(t, pidFile)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if !ok(o) || string(o.Artifact) != "## Summary\nThe export button ships in 1.4." {
		t.Errorf("outcome: %+v", o)
	}
}

func TestDeathBySignal(t *testing.T) {
	t.Parallel()
	bothRunners(t, func(t *testing.T, newRunner func(Config) engine.Runner) {
		o := newRunner(fast("--stderr", "out of memory", "--die", "KILL")).Run(context.Background(), job(), nil)
		if o.Err == nil || !strings.Contains(o.Err.Error(), "SIGKILL") || !strings.Contains(o.Err.Error(), "out of memory") {
			t.Errorf("err = %v, want it to name SIGKILL and the end of stderr", o.Err)
		}
		if o.ExitCode != -1 {
			t.Errorf("exit code = %d, want -1", o.ExitCode)
		}
	})
}

func TestExecutableNotFound(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"gonogo-no-such-agent", filepath.Join(t.TempDir(), "missing-agent")} {
		for name, r := range map[string]engine.Runner{"claude": NewClaude(Config{Cmd: cmd}), "command": NewCommand(Config{Cmd: cmd})} {
			o := r.Run(context.Background(), job(), nil)
			if !errors.Is(o.Err, ErrCommandNotFound) {
				t.Errorf("%s %s: err = %v, want ErrCommandNotFound", name, cmd, o.Err)
				continue
			}
			msg := o.Err.Error()
			if !strings.Contains(msg, cmd) || !strings.Contains(msg, "GONOGO_RUNNER_CMD") || !strings.Contains(msg, "--runner-cmd") {
				t.Errorf("%s: err = %q, want it to name the command and how to set it", name, msg)
			}
		}
		if err := NewClaude(Config{Cmd: cmd}).Check(); !errors.Is(err, ErrCommandNotFound) {
			t.Errorf("Check(%s) = %v, want ErrCommandNotFound", cmd, err)
		}
	}
	if err := NewCommand(Config{Cmd: fakeAgent}).Check(); err != nil {
		t.Errorf("Check of an existing executable: %v", err)
	}
}

// An agent that is there but may not be run (no execute bit, or a
// folder) is said to be so, not said to be missing; Find, Check and a step
// all say the same.
func TestAgentNotExecutable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plain := filepath.Join(dir, "agent.sh")
	if err := os.WriteFile(plain, []byte("#!/bin/sh\necho hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for cmd, want := range map[string]string{plain: "is not executable (chmod +x it", dir: "is a folder, not an executable"} {
		info, _ := Lookup("command")
		_, findErr := info.Find(cmd)
		step := NewCommand(Config{Cmd: cmd}).Run(context.Background(), job(), nil).Err
		for what, err := range map[string]error{"Find": findErr, "Check": NewClaude(Config{Cmd: cmd}).Check(), "a step": step} {
			if !errors.Is(err, ErrNotExecutable) || errors.Is(err, ErrCommandNotFound) {
				t.Errorf("%s of %s: err = %v, want ErrNotExecutable and not ErrCommandNotFound", what, cmd, err)
				continue
			}
			if msg := err.Error(); !strings.Contains(msg, cmd) || !strings.Contains(msg, want) {
				t.Errorf("%s of %s: %q does not say %q", what, cmd, msg, want)
			}
		}
	}
}

func TestStderrTail(t *testing.T) {
	t.Parallel()
	bothRunners(t, func(t *testing.T, newRunner func(Config) engine.Runner) {
		o := newRunner(fast("--stderr-fill", "102400", "--stderr", "the last word", "--exit", "4")).Run(context.Background(), job(), nil)
		if o.ExitCode != 4 {
			t.Errorf("exit code = %d, want 4", o.ExitCode)
		}
		if len(o.Stderr) > stderrKeep || len(o.Stderr) < stderrKeep-8 {
			t.Errorf("kept %d bytes of stderr, want about %d", len(o.Stderr), stderrKeep)
		}
		if !strings.HasSuffix(o.Stderr, "filler \nthe last word\n") {
			t.Errorf("stderr tail ends %q", o.Stderr[max(0, len(o.Stderr)-40):])
		}
	})
}

func TestTail(t *testing.T) {
	tests := []struct {
		writes []string
		max    int
		want   string
	}{
		{[]string{"abc", "def"}, 10, "abcdef"},
		{[]string{"abcdef", "ghij", "kl"}, 4, "ijkl"},
		{[]string{"0123456789"}, 4, "6789"},
		{[]string{"ab", "0123456789"}, 4, "6789"},
		// A cut in the middle of a character starts at the next one.
		{[]string{"xxé", "é"}, 4, "éé"},
		{[]string{"aé", "é"}, 4, "éé"},
		{[]string{"xé", "é", "y"}, 4, "éy"},
	}
	for _, tc := range tests {
		tl := &tail{max: tc.max}
		for _, w := range tc.writes {
			if n, err := tl.Write([]byte(w)); n != len(w) || err != nil {
				t.Fatalf("Write = %d, %v", n, err)
			}
		}
		if got := tl.String(); got != tc.want {
			t.Errorf("tail(%d) of %q = %q, want %q", tc.max, tc.writes, got, tc.want)
		}
	}
}
