package main

import (
	"bufio"
	"io"
	"runtime"
	"strings"
	"testing"
)

// A decision line longer than 64 KiB is refused without being echoed
// back: the message quotes its start and says the cap; a script's run is
// kept waiting, undecided.
func TestDecisionLineIsCapped(t *testing.T) {
	vars := baseVars(t)
	workAgent(t, vars)
	huge := "redo " + strings.Repeat("x", 1<<20)
	res := gonogo(t, vars, huge+"\napprove\n", "run", "--chain", "deliver-prd -- x")
	if res.code != exitUsage {
		t.Fatalf("exit %d, want %d\n%.2000s", res.code, exitUsage, res.stderr)
	}
	if len(res.stderr) > 1000 || !strings.Contains(res.stderr, "at most 64 KiB") || !strings.Contains(res.stderr, `"redo xxxxx`) {
		t.Fatalf("stderr (%d bytes) does not say the cap, or echoes the line:\n%.2000s", len(res.stderr), res.stderr)
	}
	run := showRun(t, vars, runID(t, res.stdout))
	if run.State != "waiting" || run.Steps[0].Decision != nil {
		t.Fatalf("run %s, decision %v: a refused line decided something", run.State, run.Steps[0].Decision)
	}

	// A line at the cap is a line.
	ok := "redo " + strings.Repeat("y", maxLine-len("redo "))
	res = gonogo(t, vars, ok+"\napprove\n", "run", "--chain", "deliver-prd -- x")
	if res.code != exitOK {
		t.Fatalf("a line of exactly %d bytes: exit %d\n%.2000s", maxLine, res.code, res.stderr)
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
	if code := s.exit(); code != exitOK {
		t.Fatalf("exit %d\n%s", code, s.out.String())
	}
}

// endless is a line that never ends: n bytes of x, with no newline.
type endless struct{ n int }

func (e *endless) Read(p []byte) (int, error) {
	if e.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), e.n)
	for i := range p[:k] {
		p[i] = 'x'
	}
	e.n -= k
	return k, nil
}

// A line far past the cap costs the cap, not the line: what reading it
// allocates is counted, and stays a small fraction of the line.
func TestReadLineHoldsOnlyTheCap(t *testing.T) {
	const size = 64 << 20
	in := bufio.NewReader(io.MultiReader(&endless{size}, strings.NewReader("\napprove\n")))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := readLine(in)
	runtime.ReadMemStats(&after)
	if !tooLong(err) {
		t.Fatalf("a %d-byte line: %v, want it refused", size, err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Errorf("reading a %d-byte line allocated %d bytes; the cap is %d", size, got, maxLine)
	}
	if line, err := readLine(in); err != nil || line != "approve\n" {
		t.Fatalf("the next line: %q, %v", line, err)
	}
}
