package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/internal/fakeslack"
	"github.com/gonogo/gonogo/internal/hangguard"
	"github.com/gonogo/gonogo/internal/runner"
	"github.com/gonogo/gonogo/internal/terminal"
)

// The agent is checked before any work starts: check warns, run and serve
// refuse (exit 2) naming the executable and how to point at another;
// nothing that runs no agent is refused.

func TestRunRefusesAtStartWhenTheAgentIsMissing(t *testing.T) {
	onPath(t, nil)
	vars := baseVars(t)
	plan := filepath.Join(exampleDir(t), "plan.md")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", plan}, []string{`the claude runner's agent "claude" is not on PATH`, "--runner-cmd PATH (GONOGO_RUNNER_CMD)", "--runner (" + strings.Join(runner.Names(), ", ") + ")", "--dry-run"}},
		{[]string{"run", "--runner-cmd", "/nowhere/my-claude", plan}, []string{`agent "/nowhere/my-claude" is not there`, "fix --runner-cmd / GONOGO_RUNNER_CMD"}},
		{[]string{"run", "--runner", "command", "--runner-cmd", "my-agent", plan}, []string{`the command runner's agent "my-agent" is not on PATH`}},
	} {
		r := gonogo(t, vars, "approve\n", tc.args...)
		if r.code != terminal.ExitUsage {
			t.Errorf("%v exited %d, want %d\n%s", tc.args, r.code, terminal.ExitUsage, r.stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%v: the refusal lacks %q:\n%s", tc.args, w, r.stderr)
			}
		}
		if strings.Contains(r.stdout, "Step 1") {
			t.Errorf("%v started a step:\n%s", tc.args, r.stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(vars["GONOGO_DATA_DIR"], "gonogo.db")); !os.IsNotExist(err) {
		t.Errorf("a refused run opened the store (stat: %v)", err)
	}
	// Runs that need no agent go ahead.
	if r := gonogo(t, vars, "", "run", "--dry-run", plan); r.code != terminal.ExitWaiting {
		t.Errorf("run --dry-run exited %d, want %d (waiting):\n%s", r.code, terminal.ExitWaiting, r.stderr)
	}
	if r := gonogo(t, vars, "", "demo"); r.code == terminal.ExitUsage {
		t.Errorf("demo was refused:\n%s", r.stderr)
	}
}

func TestCheckWarnsWhenTheAgentIsMissing(t *testing.T) {
	onPath(t, nil)
	vars := baseVars(t)
	plan := filepath.Join(exampleDir(t), "plan.md")
	r := gonogo(t, vars, "", "check", "--json", plan)
	if r.code != terminal.ExitOK {
		t.Fatalf("check exited %d, want 0 (a missing agent is a warning):\n%s", r.code, r.stderr)
	}
	var out jsonCheck
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range out.Warnings {
		found = found || strings.Contains(w, `agent "claude" is not on PATH`)
	}
	if !found {
		t.Errorf("check --json warnings = %q, want the missing agent", out.Warnings)
	}
	if r := gonogo(t, vars, "", "check", plan); r.code != terminal.ExitOK || !strings.Contains(r.stdout, `! the claude runner's agent "claude" is not on PATH`) {
		t.Errorf("check exited %d without the warning:\n%s", r.code, r.stdout)
	}
	if r := gonogo(t, vars, "", "check", "--dry-run", plan); strings.Contains(r.stdout, "not on PATH") {
		t.Errorf("check --dry-run warned about the agent:\n%s", r.stdout)
	}
}

func TestServeRefusesAtStartWhenTheAgentIsMissing(t *testing.T) {
	onPath(t, nil)
	srv := fakeslack.New()
	defer srv.Close()
	vars := serveVars(t, srv)
	vars["GONOGO_RUNNER"] = "claude"
	vars["GONOGO_RUNNER_CMD"] = "my-claude"
	s := startServe(vars)
	defer s.cancel()
	select {
	case c := <-s.code:
		if c != terminal.ExitUsage || !strings.Contains(s.stderr.String(), `the claude runner's agent "my-claude" is not on PATH`) {
			t.Errorf("serve exited %d, want %d naming my-claude:\n%s", c, terminal.ExitUsage, s.stderr.String())
		}
	case <-time.After(hangguard.Limit(t)):
		t.Fatal("serve did not refuse")
	}
	if srv.Connections() != 0 || len(srv.Calls("auth.test")) != 0 {
		t.Error("serve talked to Slack before refusing")
	}
}
