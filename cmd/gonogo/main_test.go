package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/sethvargo/go-envconfig"

	"github.com/gonogo/gonogo/internal/terminal"
)

// result is what one in-process gonogo invocation printed and returned.
type result struct {
	code   int
	stdout string
	stderr string
}

// gonogo runs the command in-process with its own environment: data in
// dataDir, stdin from the given text, no terminal.
func gonogo(t *testing.T, vars map[string]string, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	m := map[string]string{"USER": "tester"}
	for k, v := range vars {
		m[k] = v
	}
	code := realMain(context.Background(), env{
		args: args, stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb,
		lookup: envconfig.MapLookuper(m), getenv: func(k string) string { return m[k] },
	})
	return result{code, out.String(), errb.String()}
}

func exampleDir(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "example")
}

func writeAgent(t testing.TB, script string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "agent.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func baseVars(t *testing.T) map[string]string {
	return map[string]string{
		"GONOGO_DATA_DIR":   t.TempDir(),
		"GONOGO_SKILLS_DIR": filepath.Join(exampleDir(t), "skills"),
	}
}

func TestCheckJSONExamplePlan(t *testing.T) {
	res := gonogo(t, baseVars(t), "", "check", "--json", filepath.Join(exampleDir(t), "plan.md"))
	if res.code != terminal.ExitOK {
		t.Fatalf("exit %d, stderr %s", res.code, res.stderr)
	}
	var got jsonCheck
	if err := json.Unmarshal([]byte(res.stdout), &got); err != nil {
		t.Fatalf("check --json printed invalid JSON: %v\n%s", err, res.stdout)
	}
	if !got.Accepted || got.Input != "plan" || got.RunMode != "checkpointed" {
		t.Errorf("accepted=%v input=%q run_mode=%q", got.Accepted, got.Input, got.RunMode)
	}
	if got.Domain == nil || *got.Domain != "Complicated" || got.DomainSource == nil || *got.DomainSource != "section-2" {
		t.Errorf("domain = %v / %v", got.Domain, got.DomainSource)
	}
	if got.Confidence == nil || *got.Confidence != "Medium-High" {
		t.Errorf("confidence = %v", got.Confidence)
	}
	var skills []string
	for _, s := range got.Steps {
		skills = append(skills, s.Skill)
	}
	if strings.Join(skills, ",") != "define-problem-statement,deliver-prd,measure-experiment-design" {
		t.Errorf("steps = %v", skills)
	}
	if len(got.Manual) != 1 || got.Manual[0].Skill == nil || *got.Manual[0].Skill != "workflow-feature-kickoff" {
		t.Errorf("manual = %+v", got.Manual)
	}
	// The raw JSON carries exactly the contract's keys.
	var raw map[string]any
	_ = json.Unmarshal([]byte(res.stdout), &raw)
	for _, k := range []string{"input", "accepted", "refusal", "domain", "domain_source", "domain_ambiguous", "confidence",
		"confidence_reason", "run_mode", "flags", "context", "steps", "manual", "deferred", "warnings"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("check --json lacks %q", k)
		}
	}
}

func TestCheckRefusals(t *testing.T) {
	vars := baseVars(t)
	cases := []struct {
		name   string
		args   []string
		code   int
		reason string
	}{
		{"unknown skill offers a close name", []string{"--chain", "prd -> deliver-prd"}, terminal.ExitRefused, "unknown-skill"},
		{"trailing separator", []string{"--chain", "deliver-prd ->"}, terminal.ExitRefused, "trailing-separator"},
		{"empty chain", []string{"--chain", "--thread"}, terminal.ExitRefused, "empty-chain"},
		{"self reference", []string{"--chain", "utility-pm-workflow-orchestrator"}, terminal.ExitRefused, "self-reference"},
		{"maintenance skill", []string{"--chain", "utility-pm-skill-builder"}, terminal.ExitRefused, "refused-skill"},
		{"path in a name", []string{"--chain", "../etc/passwd"}, terminal.ExitRefused, "invalid-skill-name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := gonogo(t, vars, "", append([]string{"check", "--json"}, c.args...)...)
			if res.code != c.code {
				t.Fatalf("exit %d, want %d; stdout %s stderr %s", res.code, c.code, res.stdout, res.stderr)
			}
			var got jsonCheck
			if err := json.Unmarshal([]byte(res.stdout), &got); err != nil {
				t.Fatal(err)
			}
			if got.Accepted || got.Refusal == nil || got.Refusal.Reason != c.reason || got.Refusal.Message == "" {
				t.Fatalf("refusal = %+v, want reason %s", got.Refusal, c.reason)
			}
			if c.reason == "unknown-skill" {
				if s := got.Refusal.Suggestions["prd"]; len(s) == 0 || s[0] != "deliver-prd" {
					t.Errorf("suggestions = %v, want prd -> deliver-prd", got.Refusal.Suggestions)
				}
				if !strings.Contains(got.Refusal.Message, "did you mean `deliver-prd`") {
					t.Errorf("message %q does not offer deliver-prd", got.Refusal.Message)
				}
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	vars := baseVars(t)
	plan := filepath.Join(exampleDir(t), "plan.md")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "Usage"},
		{"unknown command", []string{"frobnicate"}, "unknown command"},
		{"no input", []string{"check"}, "name a plan file"},
		{"two inputs", []string{"check", plan, "--chain", "deliver-prd"}, "give one input"},
		{"missing plan file", []string{"check", "/nonexistent/plan.md"}, "does not exist"},
		{"unknown flag", []string{"run", "--frobnicate", plan}, "frobnicate"},
		{"resume without id", []string{"resume"}, "one run id"},
		{"show unknown run", []string{"show", "nope"}, "no run nope"},
		{"bad runner", []string{"run", "--runner", "nope", plan}, "nope"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := gonogo(t, vars, "", c.args...)
			if res.code != terminal.ExitUsage {
				t.Fatalf("exit %d, want %d; stderr %s", res.code, terminal.ExitUsage, res.stderr)
			}
			if !strings.Contains(res.stderr, c.want) {
				t.Errorf("stderr %q does not say %q", res.stderr, c.want)
			}
		})
	}
}

func TestBadConfiguration(t *testing.T) {
	vars := baseVars(t)
	vars["GONOGO_STEP_TIMEOUT"] = "soon"
	res := gonogo(t, vars, "", "check", filepath.Join(exampleDir(t), "plan.md"))
	if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, "GONOGO_STEP_TIMEOUT") {
		t.Fatalf("exit %d stderr %q", res.code, res.stderr)
	}
}

func TestDryRunPlanCompletes(t *testing.T) {
	vars := baseVars(t)
	res := gonogo(t, vars, "approve\napprove\napprove\n", "run", "--dry-run", filepath.Join(exampleDir(t), "plan.md"))
	if res.code != terminal.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{"Step 1 of 3: define-problem-statement", "Run complete", "Mode:       dry-run"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, res.stdout)
		}
	}
	// Each step says so in the design's words, exactly.
	if n := strings.Count(res.stdout, "Result:   NOT EXECUTED - dry run  "); n != 3 || strings.Contains(res.stdout, "NOT-EXECUTED - ") {
		t.Errorf("%d steps report \"NOT EXECUTED - dry run\", want all 3, in those words:\n%s", n, res.stdout)
	}
}

func TestEndOfInputLeavesRunWaitingThenResume(t *testing.T) {
	vars := baseVars(t)
	agent := writeAgent(t, `cat >/dev/null; printf '# Result of %s\n\nA real paragraph of work for step %s.\n' "$GONOGO_SKILL" "$GONOGO_STEP"`)
	vars["GONOGO_RUNNER"], vars["GONOGO_RUNNER_CMD"] = "command", agent
	res := gonogo(t, vars, "approve\n", "run", "--chain", "deliver-prd -> measure-experiment-design -- saved searches")
	if res.code != terminal.ExitWaiting {
		t.Fatalf("exit %d, want %d\n%s\n%s", res.code, terminal.ExitWaiting, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stdout, "Run waiting for a decision at Step 2 of 2") {
		t.Fatalf("output does not say the run waits:\n%s", res.stdout)
	}
	id := runID(t, res.stdout)
	show := gonogo(t, vars, "", "show", "--json", id)
	var run jsonRun
	if err := json.Unmarshal([]byte(show.stdout), &run); err != nil {
		t.Fatalf("%v\n%s", err, show.stdout)
	}
	if run.State != "waiting" || run.Steps[0].Status != "done" || run.Steps[1].Status != "waiting" {
		t.Fatalf("state %s steps %s/%s", run.State, run.Steps[0].Status, run.Steps[1].Status)
	}
	for i, ev := range run.Journal {
		if ev.Seq != uint64(i+1) {
			t.Fatalf("journal seq %d at %d", ev.Seq, i)
		}
	}
	res = gonogo(t, vars, "approve\n", "resume", id)
	if res.code != terminal.ExitOK || !strings.Contains(res.stdout, "Run complete") {
		t.Fatalf("resume exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	data := vars["GONOGO_DATA_DIR"]
	body, err := os.ReadFile(filepath.Join(data, "runs", id, "02-measure-experiment-design.md"))
	if err != nil || !strings.Contains(string(body), "step 2") {
		t.Fatalf("artifact on disk: %v %q", err, body)
	}
}

func TestFailedStepHaltsThenAbort(t *testing.T) {
	vars := baseVars(t)
	vars["GONOGO_RUNNER"] = "command"
	vars["GONOGO_RUNNER_CMD"] = writeAgent(t, `cat >/dev/null; echo "quota exhausted for this key" >&2; exit 7`)
	res := gonogo(t, vars, "", "run", "--chain", "deliver-prd, measure-experiment-design")
	if res.code != terminal.ExitRefused {
		t.Fatalf("exit %d, want 1\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{"FAILED", "exited with code 7", "quota exhausted", "Run halted", "gonogo resume"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, res.stdout)
		}
	}
	id := runID(t, res.stdout)
	// Approving a FAILED step is not a go: refused, the run stays waiting.
	res = gonogo(t, vars, "approve\n", "resume", id)
	if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, "not possible") {
		t.Fatalf("approve on FAILED: exit %d\n%s", res.code, res.stderr)
	}
	res = gonogo(t, vars, "abort\n", "resume", id)
	if res.code != terminal.ExitRefused || !strings.Contains(res.stdout, "Run halted") || !strings.Contains(res.stdout, "aborted by tester") {
		t.Fatalf("abort: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	// The closing table keeps what the aborted step's attempt came to.
	if !regexp.MustCompile(`(?m)^\s+1\s+\S+\s+FAILED\s+abort\s`).MatchString(res.stdout) {
		t.Errorf("the closing table should show step 1 FAILED, decided abort:\n%s", res.stdout)
	}
	list := gonogo(t, vars, "", "runs", "--json")
	var runs []jsonRunLine
	if err := json.Unmarshal([]byte(list.stdout), &runs); err != nil || len(runs) != 1 || runs[0].State != "aborted" {
		t.Fatalf("runs --json: %v %s", err, list.stdout)
	}
}

func TestEditRedoAndThreading(t *testing.T) {
	vars := baseVars(t)
	log := filepath.Join(t.TempDir(), "prompts.log")
	vars["GONOGO_RUNNER"] = "command"
	vars["GONOGO_RUNNER_CMD"] = writeAgent(t, `p=$(cat); printf '%s\n=====\n' "$p" >> `+log+`; printf '# Draft %s\n\nBody of attempt %s.\n' "$GONOGO_SKILL" "$GONOGO_ATTEMPT"`)
	edited := filepath.Join(t.TempDir(), "edited.md")
	if err := os.WriteFile(edited, []byte("# Edited PRD\n\nThe team's own words.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdin := "redo tighten the scope\nedit " + edited + "\napprove\n"
	res := gonogo(t, vars, stdin, "run", "--thread", "--chain", "deliver-prd -> measure-experiment-design -- saved searches")
	if res.code != terminal.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	b, _ := os.ReadFile(log)
	prompts := strings.Split(string(b), "=====\n")
	if len(prompts) < 3 {
		t.Fatalf("agent ran %d times", len(prompts)-1)
	}
	if !strings.Contains(prompts[1], "tighten the scope") || !strings.Contains(prompts[1], "Body of attempt 1") {
		t.Errorf("redo prompt lacks the feedback or the previous attempt:\n%s", prompts[1])
	}
	if !strings.Contains(prompts[2], "The team's own words.") || strings.Contains(prompts[2], "Body of attempt 2") {
		t.Errorf("threaded prompt does not carry the edited artifact:\n%s", prompts[2])
	}
	id := runID(t, res.stdout)
	dir := filepath.Join(vars["GONOGO_DATA_DIR"], "runs", id)
	if b, err := os.ReadFile(filepath.Join(dir, "01-deliver-prd.md")); err != nil || !strings.Contains(string(b), "Edited PRD") {
		t.Errorf("edited file: %v %q", err, b)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "01-deliver-prd.attempt-1.md")); err != nil || !strings.Contains(string(b), "attempt 1") {
		t.Errorf("earlier attempt's file: %v %q", err, b)
	}
}

func TestBadDecisionLineKeepsRunWaiting(t *testing.T) {
	vars := baseVars(t)
	res := gonogo(t, vars, "aprove\n", "run", "--dry-run", "--chain", "deliver-prd, measure-experiment-design")
	if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, `"aprove" is not a decision`) {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	id := runID(t, res.stdout)
	res = gonogo(t, vars, "approve\napprove\n", "resume", id)
	if res.code != terminal.ExitOK {
		t.Fatalf("resume exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
}

func TestGuardedAutoRespectsCynefinFloor(t *testing.T) {
	vars := baseVars(t)
	// A chain stays checkpointed under --auto: with no decisions it waits.
	res := gonogo(t, vars, "", "run", "--auto", "--dry-run", "--chain", "deliver-prd, measure-experiment-design")
	if res.code != terminal.ExitWaiting || !strings.Contains(res.stderr, "chains stay checkpointed") {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	res = gonogo(t, vars, "", "run", "--force-auto", "--dry-run", "--chain", "deliver-prd, measure-experiment-design")
	if res.code != terminal.ExitOK {
		t.Fatalf("force-auto exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
}

func runID(t *testing.T, out string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if id, ok := strings.CutPrefix(l, "gonogo run "); ok {
			return strings.TrimSpace(id)
		}
	}
	t.Fatalf("no run id in output:\n%s", out)
	return ""
}
