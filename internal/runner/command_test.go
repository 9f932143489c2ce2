package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCommandStdoutIsTheArtifact(t *testing.T) {
	t.Parallel()
	j := job()
	o := NewCommand(fast("--echo-stdin")).Run(context.Background(), j, nil)
	if !ok(o) {
		t.Fatalf("outcome: %+v", o)
	}
	if string(o.Artifact) != j.Prompt {
		t.Errorf("artifact = %q, want the prompt echoed, %q", o.Artifact, j.Prompt)
	}
}

func TestCommandEnvironment(t *testing.T) {
	// t.Setenv: not parallel.
	t.Setenv("SLACK_BOT_TOKEN", "xoxb-not-for-agents")
	envFile := filepath.Join(t.TempDir(), "env")
	cfg := fast("--env-to", envFile)
	cfg.Env = []string{"FAKE_MODEL=small"}
	o := NewCommand(cfg).Run(context.Background(), job(), nil)
	if !ok(o) {
		t.Fatalf("outcome: %+v", o)
	}
	got, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatal(err)
	}
	want := "FAKE_MODEL=small\nGONOGO_ATTEMPT=1\nGONOGO_RUN_ID=r-20250101-abc\nGONOGO_SKILL=deliver-prd\nGONOGO_STEP=2\n"
	if string(got) != want {
		t.Errorf("the agent saw\n%s\nwant\n%s", got, want)
	}
}

func TestCommandNonZeroExit(t *testing.T) {
	t.Parallel()
	o := NewCommand(fast("--stderr", "template not found: prd", "--exit", "4")).Run(context.Background(), job(), nil)
	if o.ExitCode != 4 || ok(o) {
		t.Errorf("exit code = %d, OK %v; want 4 and not OK", o.ExitCode, ok(o))
	}
	if o.Err != nil {
		t.Errorf("err = %v; a plain non-zero exit is told by ExitCode and Stderr", o.Err)
	}
	if o.Stderr != "template not found: prd\n" {
		t.Errorf("stderr = %q", o.Stderr)
	}
}

func TestCommandOutputCap(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "child")
	cfg := fast("--child", pidFile, "--flood", "10000", "--hang")
	cfg.MaxOutput = 1000
	// The agent hangs: an agent not stopped at the cap ends at fast's
	// timeout instead, which the error below tells apart.
	o := NewCommand(cfg).Run(context.Background(), job(), nil)
	if !o.Truncated || !errors.Is(o.Err, ErrOutputTooLarge) || !strings.Contains(o.Err.Error(), "GONOGO_MAX_ARTIFACT") {
		t.Fatalf("want a truncated outcome naming GONOGO_MAX_ARTIFACT, got Truncated %v, Err %v", o.Truncated, o.Err)
	}
	if len(o.Artifact) != 1000 {
		t.Errorf("kept %d bytes, want the first 1000", len(o.Artifact))
	}
	assertDead(t, readPid(t, pidFile))
}

func TestCommandOutputAtTheCap(t *testing.T) {
	t.Parallel()
	cfg := fast("--flood", "1000")
	cfg.MaxOutput = 1000
	o := NewCommand(cfg).Run(context.Background(), job(), nil)
	if !ok(o) || o.Truncated || len(o.Artifact) != 1000 {
		t.Errorf("exactly the cap: OK %v, Truncated %v, %d bytes, err %v", ok(o), o.Truncated, len(o.Artifact), o.Err)
	}
}
