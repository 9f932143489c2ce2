package main

import (
	"strings"
	"testing"

	"github.com/gonogo/gonogo/internal/terminal"
)

// A decision line longer than 64 KiB is refused without being echoed
// back: the message quotes its start and says the cap; a script's run is
// kept waiting, undecided.
func TestDecisionLineIsCapped(t *testing.T) {
	vars := baseVars(t)
	workAgent(t, vars)
	huge := "redo " + strings.Repeat("x", 1<<20)
	res := gonogo(t, vars, huge+"\napprove\n", "run", "--chain", "deliver-prd -- x")
	if res.code != terminal.ExitUsage {
		t.Fatalf("exit %d, want %d\n%.2000s", res.code, terminal.ExitUsage, res.stderr)
	}
	if len(res.stderr) > 1000 || !strings.Contains(res.stderr, "at most 64 KiB") || !strings.Contains(res.stderr, `"redo xxxxx`) {
		t.Fatalf("stderr (%d bytes) does not say the cap, or echoes the line:\n%.2000s", len(res.stderr), res.stderr)
	}
	run := showRun(t, vars, runID(t, res.stdout))
	if run.State != "waiting" || run.Steps[0].Decision != nil {
		t.Fatalf("run %s, decision %v: a refused line decided something", run.State, run.Steps[0].Decision)
	}

	// A line at the cap is a line.
	ok := "redo " + strings.Repeat("y", terminal.MaxLine-len("redo "))
	res = gonogo(t, vars, ok+"\napprove\n", "run", "--chain", "deliver-prd -- x")
	if res.code != terminal.ExitOK {
		t.Fatalf("a line of exactly %d bytes: exit %d\n%.2000s", terminal.MaxLine, res.code, res.stderr)
	}
}

// On a terminal the person is told and asked again.
func TestDecisionLineCapAtTheTerminal(t *testing.T) {
	vars := baseVars(t)
	workAgent(t, vars)
	s := startSession(t, vars, "run", "--chain", "deliver-prd -- x")
	const prompt = "[a]pprove [e]dit [s]kip [r]edo a[b]ort >"
	s.waitFor(prompt, 1)
	s.say(strings.Repeat("z", 200<<10))
	s.waitFor("at most 64 KiB", 1)
	s.waitFor(prompt, 2)
	if strings.Contains(s.out.String(), strings.Repeat("z", 100)) {
		t.Fatal("the refused line was echoed back")
	}
	s.say("a")
	if code := s.exit(); code != terminal.ExitOK {
		t.Fatalf("exit %d\n%s", code, s.out.String())
	}
}
