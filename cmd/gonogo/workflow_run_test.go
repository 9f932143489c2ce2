package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/hangguard"
	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/storage"
)

func TestRunExampleWorkflowsDryRun(t *testing.T) {
	for _, tc := range []struct{ name, arg string }{
		{"feature-kickoff", "feature=saved searches"},
		{"discovery-sprint", "topic=onboarding"},
		{"design-review", "feature=checkout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := gonogo(t, workflowVars(t), strings.Repeat("approve\n", 20), "run", "--dry-run", "--workflow", tc.name, "--arg", tc.arg, "--context", "notes")
			if res.code != terminal.ExitOK || !strings.Contains(res.stdout, "Run complete") || !strings.Contains(res.stdout, "NOT-EXECUTED") {
				t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
			}
		})
	}
}

// workflowFile writes one workflow into a fresh workflows directory.
func workflowFile(t *testing.T, vars map[string]string, name, body string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	vars["GONOGO_WORKFLOWS_DIR"] = dir
}

func TestRunWorkflowWithAnAgent(t *testing.T) {
	vars := workflowVars(t)
	workflowFile(t, vars, "diamond", `name: diamond
args:
  feature: {required: true}
steps:
  - id: problem
    skill: define-problem-statement
    prompt: Frame {{feature}}.
  - id: prd
    skill: deliver-prd
    depends_on: problem
    prompt: "PRD from: {{steps.problem.output}}"
  - id: stories
    skill: deliver-user-stories
    depends_on: problem
    on_error: {retry: 1, backoff: 1ms}
  - id: split
    skill: measure-experiment-design
    depends_on: [prd, stories]
    prompt: "Review {{steps.prd.output}} against {{steps.stories.output}}"
    decompose: {skill: deliver-prd}
`)
	prompts, log := t.TempDir(), filepath.Join(t.TempDir(), "agent.log")
	vars["GONOGO_RUNNER"] = "command"
	vars["GONOGO_RUNNER_CMD"] = writeAgent(t, `cat > `+prompts+`/step-$GONOGO_STEP-$GONOGO_ATTEMPT.txt
echo "$GONOGO_STEP $GONOGO_ATTEMPT" >> `+log+`
case "$GONOGO_STEP-$GONOGO_ATTEMPT" in
3-1) echo "tracker down" >&2; exit 1 ;;
4-*) printf '{"tasks": [{"name": "Checkout API"}, {"name": "Checkout UI", "depends_on": ["Checkout API"]}]}' ;;
*) printf '# %s\n\nOUTPUT-OF-STEP-%s: a paragraph of real work.\n' "$GONOGO_SKILL" "$GONOGO_STEP" ;;
esac`)
	res := gonogo(t, vars, "", "run", "--auto", "--workflow", "diamond", "--arg", "feature=checkout")
	if res.code != terminal.ExitOK || !strings.Contains(res.stdout, "Run complete") {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{
		"Retrying at", "(retry 1 of 1)", // stories failed once
		"split its work into 2 steps: split.checkout-api, split.checkout-ui",
		"Step 6 of 6: deliver-prd (Checkout UI) [added by step 4]",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, res.stdout)
		}
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(prompts, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if p := read("step-2-1.txt"); !strings.Contains(p, "PRD from: # define-problem-statement\n\nOUTPUT-OF-STEP-1") {
		t.Errorf("the PRD step did not get the problem statement:\n%s", p)
	}
	if p := read("step-4-1.txt"); !strings.Contains(p, "OUTPUT-OF-STEP-2") || !strings.Contains(p, "OUTPUT-OF-STEP-3") {
		t.Errorf("the joining step did not get both branches:\n%s", p)
	}
	if p := read("step-1-1.txt"); !strings.Contains(p, "Frame checkout.") {
		t.Errorf("the argument was not filled in:\n%s", p)
	}
	shown := gonogo(t, vars, "", "show", "--json", runID(t, res.stdout))
	var js jsonRun
	if err := json.Unmarshal([]byte(shown.stdout), &js); err != nil || len(js.Steps) != 6 {
		t.Fatalf("show --json: %v\n%s", err, shown.stdout)
	}
	if st := js.Steps[4]; st.ID != "split.checkout-api" || st.Parent != 4 || len(st.DependsOn) != 1 || st.DependsOn[0] != 4 {
		t.Errorf("show --json gives the added step as %+v", st)
	}
	if st := js.Steps[3]; len(st.DependsOn) != 2 {
		t.Errorf("show --json gives the joining step as %+v", st)
	}
	runs, _ := os.ReadFile(log)
	if got := strings.Fields(string(runs)); len(got) != 14 { // 6 steps, step 3 twice: 7 lines of 2 fields
		t.Errorf("agent ran %q", runs)
	}
}

// TestWorkflowResumeAfterKillMidLevel SIGKILLs gonogo while a parallel
// level runs: two of its steps finished, two still running. After the
// kill the finished steps stay done and are never run again; the running
// ones are interrupted and, redone on resume, complete the run.
func TestWorkflowResumeAfterKillMidLevel(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	vars := workflowVars(t)
	workflowFile(t, vars, "wide", `name: wide
steps:
  - {id: a, skill: define-problem-statement}
  - {id: b1, skill: deliver-prd, depends_on: a}
  - {id: b2, skill: deliver-prd, depends_on: a}
  - {id: b3, skill: deliver-prd, depends_on: a}
  - {id: b4, skill: deliver-prd, depends_on: a}
  - {id: join, skill: deliver-user-stories, depends_on: [b1, b2, b3, b4]}
`)
	slow := filepath.Join(t.TempDir(), "slow")
	if err := os.WriteFile(slow, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "agent.log")
	agent := writeAgent(t, `cat >/dev/null
echo "start $GONOGO_STEP" >> `+log+`
if [ -e `+slow+` ] && { [ "$GONOGO_STEP" = 3 ] || [ "$GONOGO_STEP" = 4 ]; }; then sleep 60; fi
printf '# %s\n\nStep %s: a paragraph of real work.\n' "$GONOGO_SKILL" "$GONOGO_STEP"
echo "end $GONOGO_STEP" >> `+log)
	environ := append(os.Environ(), "GONOGO_TEST_AS_MAIN=1", "GONOGO_RUNNER=command", "GONOGO_RUNNER_CMD="+agent,
		"GONOGO_MAX_PARALLEL=4", "USER=tester")
	for k, v := range vars {
		environ = append(environ, k+"="+v)
	}
	cmd := exec.Command(self, "run", "--auto", "--workflow", "wide")
	cmd.Env = environ
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for b1 and b4 to finish while b2 and b3 sleep, and for their
	// ends to be recorded: the terminal says "Advanced." once a finished
	// step's event is stored (a and then b1 and b4).
	deadline := hangguard.Deadline(t)
	for {
		b, _ := os.ReadFile(log)
		l := string(b)
		if strings.Contains(l, "end 2") && strings.Contains(l, "end 5") && strings.Contains(l, "start 3") && strings.Contains(l, "start 4") &&
			strings.Count(out.String(), "Advanced.") == 3 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the level never got under way:\n%s\n%s", l, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	m := regexp.MustCompile(`gonogo run (\S+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no run id in:\n%s", out.String())
	}
	id := engine.RunID(m[1])

	db, err := storage.Open(vars["GONOGO_DATA_DIR"], storage.Options{})
	if err != nil {
		t.Fatalf("the store does not open after the kill: %v", err)
	}
	r, err := db.Load(context.Background(), id)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range r.Steps {
		got = append(got, string(s.Status))
	}
	want := []string{"done", "done", "interrupted", "interrupted", "done", "pending"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("after the kill the steps are %v, want %v", got, want)
	}

	if err := os.Remove(slow); err != nil {
		t.Fatal(err)
	}
	res := gonogo(t, mapWith(vars, "GONOGO_RUNNER", "command", "GONOGO_RUNNER_CMD", agent), "redo\nredo\n", "resume", string(id))
	if res.code != terminal.ExitOK || !strings.Contains(res.stdout, "Run complete") {
		t.Fatalf("resume: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	b, _ := os.ReadFile(log)
	starts := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if step, ok := strings.CutPrefix(line, "start "); ok {
			starts[step]++
		}
	}
	for step, want := range map[string]int{"1": 1, "2": 1, "3": 2, "4": 2, "5": 1, "6": 1} {
		if starts[step] != want {
			t.Errorf("step %s ran %d times, want %d (log:\n%s)", step, starts[step], want, b)
		}
	}
}

func mapWith(m map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}
