package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/internal/terminal"
)

func workflowVars(t *testing.T) map[string]string {
	root := filepath.Join(exampleDir(t), "..", "..", "..")
	return map[string]string{
		"GONOGO_DATA_DIR":      t.TempDir(),
		"GONOGO_SKILLS_DIR":    filepath.Join(root, "testdata", "skills"),
		"GONOGO_WORKFLOWS_DIR": filepath.Join(root, "testdata", "workflows", "examples"),
	}
}

func TestCheckWorkflowShowsLevels(t *testing.T) {
	res := gonogo(t, workflowVars(t), "", "check", "--json", "--workflow", "feature-kickoff", "--arg", "feature=checkout")
	if res.code != terminal.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	var got jsonCheck
	if err := json.Unmarshal([]byte(res.stdout), &got); err != nil {
		t.Fatal(err)
	}
	if got.Input != "workflow" || len(got.Steps) == 0 || len(got.Levels) == 0 {
		t.Fatalf("input %q, %d steps, levels %v", got.Input, len(got.Steps), got.Levels)
	}
	if !strings.Contains(got.Steps[0].Prompt, "checkout") {
		t.Errorf("the argument was not filled into the first prompt: %q", got.Steps[0].Prompt)
	}
}

func TestWorkflowRefusals(t *testing.T) {
	vars := workflowVars(t)
	res := gonogo(t, vars, "", "check", "--json", "--workflow", "feature-kickof")
	var got jsonCheck
	if err := json.Unmarshal([]byte(res.stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, res.stdout)
	}
	if res.code != terminal.ExitRefused || got.Refusal == nil || got.Refusal.Reason != "unknown-workflow" ||
		len(got.Refusal.Suggestions["feature-kickof"]) == 0 {
		t.Fatalf("exit %d refusal %+v", res.code, got.Refusal)
	}
	vars["GONOGO_WORKFLOWS_DIR"] = filepath.Join(filepath.Dir(vars["GONOGO_WORKFLOWS_DIR"]))
	res = gonogo(t, vars, "", "check", "--workflow", "unknown-keys")
	if res.code != terminal.ExitRefused || !strings.Contains(res.stdout, "invalid-workflow") || !strings.Contains(res.stdout, "line 2:") {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	res = gonogo(t, workflowVars(t), "", "run", "--workflow", "feature-kickoff")
	if res.code != terminal.ExitRefused || !strings.Contains(res.stderr, "missing-arg") || !strings.Contains(res.stderr, `"feature"`) {
		t.Fatalf("run --workflow without its required argument: exit %d\n%s", res.code, res.stderr)
	}
	res = gonogo(t, workflowVars(t), "", "run", "--chain", "deliver-prd", "--context", "x")
	if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, "--context is for --workflow") {
		t.Fatalf("--context with a chain: exit %d\n%s", res.code, res.stderr)
	}
	res = gonogo(t, workflowVars(t), "", "check", "--workflow", "feature-kickoff", "--arg", "novalue")
	if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, "NAME=VALUE") {
		t.Fatalf("bad --arg: exit %d\n%s", res.code, res.stderr)
	}
}

func TestWorkflowSaveThenRun(t *testing.T) {
	vars := workflowVars(t)
	vars["GONOGO_WORKFLOWS_DIR"] = filepath.Join(t.TempDir(), "flows")
	res := gonogo(t, vars, "", "workflow", "save", "kickoff", "--chain", "define-problem-statement -> deliver-prd --thread -- saved searches")
	if res.code != terminal.ExitOK || !strings.Contains(res.stdout, "Saved workflow kickoff") || !strings.Contains(res.stdout, "context was not saved") {
		t.Fatalf("save: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	res = gonogo(t, vars, "", "workflow", "list")
	if res.code != terminal.ExitOK || !strings.Contains(res.stdout, "kickoff") || !strings.Contains(res.stdout, "2 steps") {
		t.Fatalf("list: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	res = gonogo(t, vars, "approve\napprove\n", "run", "--dry-run", "--workflow", "kickoff", "--context", "saved searches")
	if res.code != terminal.ExitOK || !strings.Contains(res.stdout, "Run complete") {
		t.Fatalf("run the saved workflow: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	res = gonogo(t, vars, "", "workflow", "save", "kickoff", "--chain", "deliver-prd")
	if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, "exists already") || !strings.Contains(res.stderr, "--replace") {
		t.Fatalf("second save: exit %d\n%s", res.code, res.stderr)
	}
	res = gonogo(t, vars, "", "workflow", "save", "other", "--chain", "deliver-prdd")
	if res.code != terminal.ExitRefused || !strings.Contains(res.stderr, "deliver-prd") {
		t.Fatalf("unknown skill: exit %d\n%s", res.code, res.stderr)
	}
	res = gonogo(t, vars, "", "workflow", "save", "Bad_Name", "--chain", "deliver-prd")
	if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, "invalid workflow name") {
		t.Fatalf("bad name: exit %d\n%s", res.code, res.stderr)
	}
}
