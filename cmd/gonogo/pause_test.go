package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gonogo/gonogo/internal/hangguard"
	"github.com/gonogo/gonogo/internal/terminal"
)

// pausable starts gonogo run in a process of its own, in auto, with an
// agent whose step 1 runs until the returned release is called; it
// returns once step 1 runs.
func pausable(t *testing.T) (h *holder, id string, env []string, release func(), calls string) {
	t.Helper()
	data, tmp := t.TempDir(), t.TempDir()
	gate, started, calls := filepath.Join(tmp, "go"), filepath.Join(tmp, "started"), filepath.Join(tmp, "calls")
	agent := writeAgent(t, `cat >/dev/null
echo "$GONOGO_STEP" >> `+calls+`
if [ "$GONOGO_STEP" = 1 ]; then
  touch `+started+`
  while [ ! -f `+gate+` ]; do sleep 0.02; done
fi
printf '# %s\n\nStep %s, made by the fake agent.\n' "$GONOGO_SKILL" "$GONOGO_STEP"`)
	env = append(os.Environ(), "GONOGO_TEST_AS_MAIN=1", "GONOGO_DATA_DIR="+data,
		"GONOGO_SKILLS_DIR="+filepath.Join(exampleDir(t), "skills"), "GONOGO_RUNNER=command", "GONOGO_RUNNER_CMD="+agent)
	h = startHolder(t, append(append([]string{}, env...), "USER=first"),
		"run", "--force-auto", "--chain", "define-problem-statement -> deliver-prd -- saved searches")
	id = waitFor(t, h.out, regexp.MustCompile(`gonogo run (\S+)`), "the run id")[1]
	deadline := hangguard.Deadline(t)
	for _, err := os.Stat(started); err != nil; _, err = os.Stat(started) {
		if time.Now().After(deadline) {
			t.Fatalf("step 1 did not start:\n%s", h.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	release = func() {
		if err := os.WriteFile(gate, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return h, id, env, release, calls
}

func as(env []string, user string) []string { return append(append([]string{}, env...), "USER="+user) }

// pausedAtStep1 pauses the run from another shell while step 1 runs, lets
// step 1 finish and checks the holder holds it at step 1's checkpoint.
func pausedAtStep1(t *testing.T, h *holder, id string, env []string, release func()) {
	t.Helper()
	res := subprocess(t, as(env, "second"), "", "pause", id)
	if res.code != terminal.ExitOK || !strings.Contains(res.stdout, "Run "+id+" paused by second") || !strings.Contains(res.stdout, "gonogo run (pid") {
		t.Fatalf("pause: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	waitFor(t, h.out, regexp.MustCompile(`‖ Run paused by second`), "the holder to show the pause")
	release()
	waitFor(t, h.out, regexp.MustCompile(`Result:\s+PRODUCED[\s\S]*The run is paused`), "step 1 held at its checkpoint")
	if res := subprocess(t, as(env, "second"), "", "pause", id); res.code != terminal.ExitOK || !strings.Contains(res.stdout, "Nothing changed: run "+id+": already paused (by second") {
		t.Fatalf("pausing twice: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	var run jsonRun
	res = subprocess(t, env, "", "show", "--json", id)
	if err := json.Unmarshal([]byte(res.stdout), &run); err != nil {
		t.Fatalf("show --json: %v\n%s%s", err, res.stdout, res.stderr)
	}
	if run.State != "waiting" || !run.Paused || run.PausedBy != "second" || run.Steps[0].Status != "waiting" || run.Steps[1].Status != "pending" {
		t.Fatalf("paused run: state %s paused %v by %q, steps %s/%s", run.State, run.Paused, run.PausedBy, run.Steps[0].Status, run.Steps[1].Status)
	}
}

// A run paused from another shell, then the gonogo holding it killed
// (SIGKILL): the run is still paused after, and gonogo resume goes on in
// auto to the end, running each step once.
func TestPauseSurvivesSIGKILL(t *testing.T) {
	h, id, env, release, calls := pausable(t)
	pausedAtStep1(t, h, id, env, release)
	if err := h.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := h.wait(t); err == nil {
		t.Fatal("the holder survived SIGKILL")
	}
	var run jsonRun
	res := subprocess(t, env, "", "show", "--json", id)
	if err := json.Unmarshal([]byte(res.stdout), &run); err != nil {
		t.Fatalf("show --json after the kill: %v\n%s%s", err, res.stdout, res.stderr)
	}
	if run.State != "waiting" || !run.Paused || run.PausedBy != "second" || run.Steps[1].Status != "pending" {
		t.Fatalf("after SIGKILL: state %s, paused %v by %q, step 2 %s", run.State, run.Paused, run.PausedBy, run.Steps[1].Status)
	}
	if res := subprocess(t, env, "", "show", id); !strings.Contains(res.stdout, "State:      paused by second") {
		t.Fatalf("show does not say the run is paused:\n%s%s", res.stdout, res.stderr)
	}
	if res := subprocess(t, env, "", "runs"); !regexp.MustCompile(regexp.QuoteMeta(id) + `\s+paused\s`).MatchString(res.stdout) {
		t.Fatalf("runs does not list the run as paused:\n%s%s", res.stdout, res.stderr)
	}
	res = subprocess(t, as(env, "third"), "", "resume", id)
	if res.code != terminal.ExitOK || !strings.Contains(res.stdout, "▶ Run resumed by third") || !strings.Contains(res.stdout, "Run complete: "+id) {
		t.Fatalf("resume: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if b, _ := os.ReadFile(calls); string(b) != "1\n2\n" {
		t.Fatalf("the agent ran steps %q, want each once", b)
	}
	res = subprocess(t, env, "", "show", "--json", id)
	if err := json.Unmarshal([]byte(res.stdout), &run); err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, ev := range run.Journal {
		switch ev.Type {
		case "run-paused", "run-resumed", "step-released", "decision":
			seen = append(seen, ev.Type+" "+ev.Actor)
		}
	}
	if got := strings.Join(seen, ", "); got != "run-paused second, run-resumed third, step-released third" {
		t.Fatalf("journal: %s", got)
	}
}

// gonogo resume from another shell resumes a run the holder keeps paused:
// the holder goes on with it, in auto, to the end.
func TestResumeFromAnotherShell(t *testing.T) {
	h, id, env, release, _ := pausable(t)
	pausedAtStep1(t, h, id, env, release)
	res := subprocess(t, as(env, "third"), "", "resume", id)
	if res.code != terminal.ExitOK || !strings.Contains(res.stdout, "Run "+id+" resumed by third (auto)") {
		t.Fatalf("resume: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if err := h.wait(t); err != nil || !strings.Contains(h.out.String(), "Run complete: "+id) {
		t.Fatalf("the holder ended with %v:\n%s", err, h.out.String())
	}
	if res := subprocess(t, env, "", "pause", id); res.code != terminal.ExitRefused || !strings.Contains(res.stderr, "nothing to pause: it is completed") {
		t.Fatalf("pausing a completed run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// resume --checkpointed resumes a paused auto run checkpointed: the step
// the pause held stays at its checkpoint, and the run goes on from there
// a checkpoint at a time.
func TestResumeCheckpointed(t *testing.T) {
	h, id, env, release, _ := pausable(t)
	pausedAtStep1(t, h, id, env, release)
	if err := h.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = h.wait(t)
	res := subprocess(t, as(env, "third"), "", "resume", "--checkpointed", id)
	if res.code != terminal.ExitWaiting || !strings.Contains(res.stdout, "▶ Run resumed by third") || !strings.Contains(res.stdout, "Run waiting for a decision at Step 1 of 2") {
		t.Fatalf("resume --checkpointed: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = subprocess(t, env, "approve\napprove\n", "resume", id)
	if res.code != terminal.ExitOK || strings.Count(res.stdout, ": approve by") != 2 {
		t.Fatalf("resume, approving both steps: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}
