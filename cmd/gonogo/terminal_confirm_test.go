package main

import (
	"strings"
	"testing"

	"github.com/gonogo/gonogo/internal/terminal"
)

// Abort at the terminal asks first, as Slack's Abort button does: any
// other answer than y keeps the run waiting at its checkpoint, y aborts.
func TestTerminalAbortAsksToConfirm(t *testing.T) {
	vars := baseVars(t)
	workAgent(t, vars)
	s := startSession(t, vars, "run", "--chain", "deliver-prd, measure-experiment-design -- x")
	const prompt = "[a]pprove [e]dit [s]kip [r]edo a[b]ort >"
	const confirm = "Abort the run? It stops at Step 1 of 2: deliver-prd; everything produced so far is kept. y aborts, any other key keeps going >"
	s.waitFor(prompt, 1)
	s.say("b")
	s.waitFor(confirm, 1)
	s.say("n")
	s.waitFor("Not aborted.", 1)
	s.waitFor(prompt, 2)
	id := runID(t, s.out.String())
	if run := showRun(t, vars, id); run.State != "waiting" || run.Steps[0].Decision != nil {
		t.Fatalf("after n: run %s, step 1 decision %v", run.State, run.Steps[0].Decision)
	}
	s.say("abort")
	s.waitFor(confirm, 2)
	s.say("y")
	if code := s.exit(); code != terminal.ExitRefused {
		t.Fatalf("exit %d after a confirmed abort\n%s", code, s.out.String())
	}
	run := showRun(t, vars, id)
	if run.State != "aborted" || run.Steps[0].Decision == nil || *run.Steps[0].Decision != "abort" {
		t.Fatalf("after y: run %s, step 1 decision %v", run.State, run.Steps[0].Decision)
	}
}

// A script's abort line is the abort: no question, which a script could
// not answer (DESIGN.md: stdin reads one decision per line).
func TestScriptAbortIsNotAsked(t *testing.T) {
	vars := baseVars(t)
	workAgent(t, vars)
	res := gonogo(t, vars, "abort\n", "run", "--chain", "deliver-prd, measure-experiment-design -- x")
	if res.code != terminal.ExitRefused || strings.Contains(res.stdout+res.stderr, "Abort the run?") {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if run := showRun(t, vars, runID(t, res.stdout)); run.State != "aborted" {
		t.Fatalf("run %s, want aborted", run.State)
	}
}
