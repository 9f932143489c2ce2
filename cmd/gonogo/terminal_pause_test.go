package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gatedAgent is a command agent whose step 1 waits for the file it returns
// to exist before it answers; the other steps answer at once.
func gatedAgent(t *testing.T, vars map[string]string) (gate string) {
	t.Helper()
	gate = filepath.Join(t.TempDir(), "go")
	vars["GONOGO_RUNNER"] = "command"
	vars["GONOGO_RUNNER_CMD"] = writeAgent(t, `cat > /dev/null
if [ "$GONOGO_STEP" = 1 ]; then
  while [ ! -f `+gate+` ]; do sleep 0.02; done
fi
printf '# %s\n\nOUTPUT-OF-STEP-%s: a paragraph of real work.\n' "$GONOGO_SKILL" "$GONOGO_STEP"`)
	return gate
}

// p typed while a step runs pauses the run: the step finishes and waits at
// a checkpoint that offers its decisions and continue; continuing goes on
// in auto to the end.
func TestTerminalPauseWhileStepRuns(t *testing.T) {
	vars := baseVars(t)
	gate := gatedAgent(t, vars)
	s := startSession(t, vars, "run", "--force-auto", "--chain", "deliver-prd, measure-experiment-design -- x")
	s.waitFor("▶ Step 1 of 2", 1)
	s.say("p")
	s.waitFor("Run paused by tester", 1)
	s.say("p")
	s.waitFor("already paused (by tester", 1)
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	const prompt = "[a]pprove [e]dit [s]kip [r]edo a[b]ort [c]ontinue auto >"
	s.waitFor(prompt, 1)
	if strings.Contains(s.out.String(), "Step 2 of 2") {
		t.Fatalf("step 2 started while the run was paused:\n%s", s.out.String())
	}
	s.say("c")
	s.waitFor("Run complete", 1)
	if code := s.exit(); code != exitOK {
		t.Fatalf("exit %d\n%s", code, s.out.String())
	}
	run := showRun(t, vars, runID(t, s.out.String()))
	var seen []string
	for _, ev := range run.Journal {
		switch ev.Type {
		case "run-paused", "run-resumed", "step-released":
			seen = append(seen, ev.Type+" "+ev.Actor)
		}
	}
	if got := strings.Join(seen, ", "); got != "run-paused tester, run-resumed tester, step-released tester" {
		t.Fatalf("journal: %s", got)
	}
	if run.Paused || run.State != "completed" {
		t.Fatalf("run %s, paused %v", run.State, run.Paused)
	}
}
