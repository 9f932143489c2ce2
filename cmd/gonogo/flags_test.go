package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/internal/terminal"
)

// TestFlagsAnywhere: flags are read before and after the plan file, "--"
// ends them, --chain keeps its value whole, and a flag wins over its
// variable.
func TestFlagsAnywhere(t *testing.T) {
	plan := filepath.Join(exampleDir(t), "plan.md")
	check := func(t *testing.T, vars map[string]string, args ...string) jsonCheck {
		t.Helper()
		res := gonogo(t, vars, "", append([]string{"check"}, args...)...)
		var got jsonCheck
		if err := json.Unmarshal([]byte(res.stdout), &got); err != nil {
			t.Fatalf("exit %d, %v\nstdout %s\nstderr %s", res.code, err, res.stdout, res.stderr)
		}
		return got
	}
	t.Run("after the plan file", func(t *testing.T) {
		got := check(t, baseVars(t), plan, "--dry-run", "--json", "--thread")
		if got.Input != "plan" || !got.Flags.DryRun || !got.Flags.Thread || got.RunMode != "dry-run" {
			t.Errorf("input %s flags %+v mode %s", got.Input, got.Flags, got.RunMode)
		}
	})
	t.Run("chain value kept whole", func(t *testing.T) {
		got := check(t, baseVars(t), "--json", "--chain", "deliver-prd, measure-experiment-design -- mobile, checkout", "--auto")
		if len(got.Steps) != 2 || got.Context == nil || *got.Context != "mobile, checkout" || !got.Flags.Auto {
			t.Errorf("steps %+v context %v flags %+v", got.Steps, got.Context, got.Flags)
		}
	})
	t.Run("chain given as one --chain=value", func(t *testing.T) {
		got := check(t, baseVars(t), "--json", "--chain=deliver-prd then measure-experiment-design")
		if len(got.Steps) != 2 {
			t.Errorf("steps %+v", got.Steps)
		}
	})
	t.Run("skills flag wins over GONOGO_SKILLS_DIR", func(t *testing.T) {
		vars := baseVars(t)
		vars["GONOGO_SKILLS_DIR"] = t.TempDir()
		got := check(t, vars, "--json", "--chain", "deliver-prd", "--skills", filepath.Join(exampleDir(t), "skills"))
		if !got.Accepted {
			t.Errorf("refused: %+v", got.Refusal)
		}
	})
	t.Run("double dash ends the flags", func(t *testing.T) {
		res := gonogo(t, baseVars(t), "", "check", "--json", "--", "--thread")
		if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, "--thread") {
			t.Errorf("exit %d stderr %q: --thread after -- should be a plan file name", res.code, res.stderr)
		}
	})
}

func TestRunnerFlagWinsOverEnvironment(t *testing.T) {
	vars := baseVars(t)
	vars["GONOGO_RUNNER"] = "nope"
	res := gonogo(t, vars, "approve\napprove\napprove\n", "run", filepath.Join(exampleDir(t), "plan.md"), "--runner", "dry-run")
	if res.code != terminal.ExitOK || !strings.Contains(res.stdout, "Run complete") {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	res = gonogo(t, vars, "", "run", filepath.Join(exampleDir(t), "plan.md"))
	if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, "nope") {
		t.Fatalf("GONOGO_RUNNER=nope without the flag: exit %d\n%s", res.code, res.stderr)
	}
}
