package terminal

import (
	"bufio"
	"bytes"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gonogo/gonogo/engine"
)

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
		t.Errorf("reading a %d-byte line allocated %d bytes; the cap is %d", size, got, MaxLine)
	}
	if line, err := readLine(in); err != nil || line != "approve\n" {
		t.Fatalf("the next line: %q, %v", line, err)
	}
}

// Without a terminal a running step prints a line every interval, so a CI
// log shows it is alive. synctest's clock stands in for 30 real seconds.
func TestProgressLinesWithoutATerminal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		d := &driver{out: &out, every: 30 * time.Second, running: map[int]*liveStep{}, shown: map[string]bool{}}
		r := &engine.Run{Steps: []engine.Step{{
			StepDef:   &engine.StepDef{N: 1, Skill: "deliver-prd"},
			StepState: &engine.StepState{Status: engine.StepRunning},
		}}}
		d.event(t.Context(), r, engine.Event{Type: engine.EvStepStarted, Step: 1, Attempt: 1})
		out.Reset()
		time.Sleep(29 * time.Second)
		d.report(r)
		if out.Len() != 0 {
			t.Fatalf("a progress line before the interval: %q", out.String())
		}
		time.Sleep(time.Second)
		d.report(r)
		d.report(r)
		if got := out.String(); got != "  ... deliver-prd (step 1) running 30s\n" {
			t.Fatalf("at 30s: %q", got)
		}
		out.Reset()
		d.running[1].progress = &engine.Progress{Turns: 4, ToolCalls: 7}
		time.Sleep(60 * time.Second)
		d.report(r)
		if got := out.String(); got != "  ... deliver-prd (step 1) running 1m30s, 4 turns, 7 tool calls\n" {
			t.Fatalf("at 1m30s: %q", got)
		}
		// The agent's own status line, when it has one, ends the line.
		out.Reset()
		d.running[1].progress = &engine.Progress{Turns: 4, ToolCalls: 7, Status: "Reconnecting... waiting for network"}
		time.Sleep(30 * time.Second)
		d.report(r)
		if got := out.String(); got != "  ... deliver-prd (step 1) running 2m0s, 4 turns, 7 tool calls: Reconnecting... waiting for network\n" {
			t.Fatalf("at 2m: %q", got)
		}
	})
}
