package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/internal/terminal"
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
	if code := s.exit(); code != terminal.ExitOK {
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

// rateLimitedAgent is a claude agent that answers rate-limited (claude's
// own stream: a 429 reported as an error result) its first n times, then
// succeeds; it counts its calls in a file of its own.
func rateLimitedAgent(t *testing.T, vars map[string]string, n int) {
	t.Helper()
	count := filepath.Join(t.TempDir(), "calls")
	vars["GONOGO_RUNNER"] = "claude"
	vars["GONOGO_RUNNER_CMD"] = writeAgent(t, `cat >/dev/null
n=$(cat `+count+` 2>/dev/null || echo 0); n=$((n+1)); echo $n > `+count+`
if [ $n -le `+strconv.Itoa(n)+` ]; then cat `+moduleFile("testdata/agents-fake/streams/rate-limited.jsonl")+`; exit 1; fi
cat `+moduleFile("testdata/agents-fake/streams/success.jsonl"))
}

// An agent rate limited twice: the run pauses saying until when, waits,
// redoes the step by itself and completes without a person.
func TestRateLimitedAgentCompletesAlone(t *testing.T) {
	vars := baseVars(t)
	rateLimitedAgent(t, vars, 2)
	vars["GONOGO_RATE_LIMIT_WAIT"] = "50ms"
	res := gonogo(t, vars, "", "run", "--force-auto", "--chain", "deliver-prd -- saved searches")
	if res.code != terminal.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if got := strings.Count(res.stdout, "‖ Paused: step 1: the agent is rate limited; retrying at "); got != 2 {
		t.Fatalf("%d rate-limit pauses shown, want 2:\n%s", got, res.stdout)
	}
	run := showRun(t, vars, runID(t, res.stdout))
	st := run.Steps[0]
	if run.State != "completed" || run.Paused || len(st.Attempts) != 3 || *st.Attempts[2].Result != "PRODUCED" {
		t.Fatalf("run %s paused %v, step 1 attempts %+v", run.State, run.Paused, st.Attempts)
	}
	if a := st.Attempts[0]; a.ErrorKind != "rate-limit" || a.RetryAt == nil || !strings.Contains(a.Reason, "rate limit of 50 requests per minute") {
		t.Fatalf("attempt 1: %+v", a)
	}
	var redos int
	for _, ev := range run.Journal {
		if ev.Type == "decision" {
			if ev.Actor != "gonogo (rate limit)" || ev.Kind != "redo" {
				t.Fatalf("a decision by %q (%s): the wait needs no person", ev.Actor, ev.Kind)
			}
			redos++
		}
	}
	if redos != 2 {
		t.Fatalf("%d automatic redos, want 2", redos)
	}
}

// A person at the terminal decides during the wait: r redoes the step at
// once, twice, and the run completes long before the hour-long waits.
func TestRateLimitPersonRedoesDuringWait(t *testing.T) {
	vars := baseVars(t)
	rateLimitedAgent(t, vars, 2)
	vars["GONOGO_RATE_LIMIT_WAIT"] = "1h"
	s := startSession(t, vars, "run", "--force-auto", "--chain", "deliver-prd -- saved searches")
	s.waitFor("meanwhile r redoes it now", 1)
	s.say("r")
	s.waitFor("Feedback for the agent", 1)
	s.say("")
	s.waitFor("meanwhile r redoes it now", 2)
	s.say("redo try again")
	s.waitFor("Run complete", 1)
	if code := s.exit(); code != terminal.ExitOK {
		t.Fatalf("exit %d\n%s", code, s.out.String())
	}
	run := showRun(t, vars, runID(t, s.out.String()))
	var by []string
	for _, ev := range run.Journal {
		if ev.Type == "decision" || ev.Type == "run-resumed" {
			by = append(by, ev.Type+" "+ev.Actor)
		}
	}
	want := "run-resumed tester, decision tester, run-resumed tester, decision tester"
	if got := strings.Join(by, ", "); got != want {
		t.Fatalf("journal: %s, want %s", got, want)
	}
}
