package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/runner"
	"github.com/gonogo/gonogo/parse"
	"github.com/gonogo/gonogo/storage"
)

// bigArtifact is a Markdown artifact of about size bytes, under a heading
// of the template the memory test's skill has, so that every check the
// engine makes of an artifact (the stub check included) reads all of it.
func bigArtifact(size int) []byte {
	var b strings.Builder
	b.WriteString("# Requirements\n\n## Goals\n\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "Requirement %d: the address form keeps what the customer typed when validation fails.\n", i)
	}
	return []byte(b.String())
}

// stepFinished signals each step result recorded.
type stepFinished chan struct{}

func (n stepFinished) Notify(x engine.Notice) {
	if x.Event.Type == engine.EvStepFinished && x.Progress == nil && x.Err == nil {
		n <- struct{}{}
	}
}

// stepBench is a live service on a bbolt store whose agent (its runner's
// executable) prints out the file named in the step's prompt.
type stepBench struct {
	svc  *engine.Service
	done stepFinished
}

func newStepBench(t *testing.T, name string) *stepBench {
	t.Helper()
	dir := t.TempDir()
	agent := filepath.Join(dir, "agent.sh")
	// The prompt ends with the file's path, on a line of its own.
	if err := os.WriteFile(agent, []byte("#!/bin/sh\nexec cat \"$(tail -n 1)\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := storage.Open(filepath.Join(dir, "data"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	r, err := runner.New(name, runner.Config{Cmd: agent, MaxOutput: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	skill := func(n string) engine.Skill {
		return engine.Skill{Name: n, Instructions: "Write it.", Template: "## Goals\n\n[What it is for]\n", TemplateSections: []string{"Goals"}}
	}
	b := &stepBench{done: make(stepFinished, 4)}
	b.svc = engine.NewService(engine.ServiceConfig{Store: db, Catalog: parse.NewCatalog([]engine.Skill{skill("a"), skill("b")}),
		Runner: r, Notifier: b.done, MaxParallel: 1})
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- b.svc.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-ran })
	return b
}

// step runs the first step of a two-step checkpointed run whose agent
// answers with the file out, measured by measure from the start of the run
// until the step's result was recorded, with the artifact stored and its
// file written.
func (b *stepBench) step(t *testing.T, out string, measure func(func())) {
	t.Helper()
	plan := engine.Plan{Input: engine.InputPlan, Source: "mem.md", Domain: engine.DomainComplicated, DomainSource: "section-2",
		Steps: []engine.PlanStep{
			{Skill: "a", Prompt: "Print this file:\n" + out, Category: engine.CategoryContent, Execution: engine.ExecDelegate},
			{Skill: "b", Prompt: "do b", Category: engine.CategoryContent, Execution: engine.ExecDelegate},
		}}
	var run *engine.Run
	var err error
	measure(func() {
		if run, err = b.svc.Start(context.Background(), plan, engine.StartOptions{StartedBy: "tester"}); err == nil {
			<-b.done
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.svc.Load(context.Background(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st := got.Step(1); st.Latest().Result != engine.ResultProduced || !st.Latest().Artifact {
		t.Fatalf("step 1: %s, result %q (%s), want an artifact produced", st.Status, st.Latest().Result, st.Latest().Reason)
	}
}

// allocated returns the bytes the process allocated for the step.
func (b *stepBench) allocated(t *testing.T, out string) uint64 {
	t.Helper()
	var before, after runtime.MemStats
	b.step(t, out, func(fn func()) {
		runtime.GC()
		runtime.ReadMemStats(&before)
		fn()
		runtime.ReadMemStats(&after)
	})
	return after.TotalAlloc - before.TotalAlloc
}

// held returns the most live heap a collection found during the step.
func (b *stepBench) held(t *testing.T, out string) uint64 {
	t.Helper()
	var peak uint64
	var readings, cycles int
	b.step(t, out, func(fn func()) { peak, readings, cycles = heldPeak(fn) })
	t.Logf("%d of %d collections read", readings, cycles)
	return peak
}

// artifactSize is the size of the big artifact the memory tests step
// through each runner.
const artifactSize = 8 << 20

// artifactCase is one runner's agent output for a big artifact and a tiny
// one, in files the step's agent prints.
type artifactCase struct {
	runner     string
	big, small string
	grown      int // len(big artifact) - len(small artifact)
}

// artifactCases writes, for each runner, what its agent prints to hand
// back a big artifact and a tiny one: the artifact itself for the command
// runner, the agents' event streams, their answer in the one event that
// carries it, for the others.
func artifactCases(t *testing.T) []artifactCase {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	big, small := bigArtifact(artifactSize), bigArtifact(100)
	events := func(evs ...map[string]any) []byte {
		var out []byte
		for _, ev := range evs {
			line, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			out = append(append(out, line...), '\n')
		}
		return out
	}
	claude := func(b []byte) []byte {
		return events(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": string(b), "num_turns": 1})
	}
	codex := func(b []byte) []byte {
		return events(map[string]any{"type": "item.completed", "item": map[string]any{"id": "item_1", "type": "agent_message", "text": string(b)}},
			map[string]any{"type": "turn.completed", "usage": map[string]any{"input_tokens": 10, "output_tokens": 10}})
	}
	gemini := func(b []byte) []byte {
		return events(map[string]any{"type": "message", "role": "assistant", "content": string(b), "delta": true},
			map[string]any{"type": "result", "status": "success", "stats": map[string]any{"input_tokens": 10, "output_tokens": 10}})
	}
	grown := len(big) - len(small)
	return []artifactCase{
		{"command", write("big.md", big), write("small.md", small), grown},
		{"claude", write("claude-big.jsonl", claude(big)), write("claude-small.jsonl", claude(small)), grown},
		{"codex", write("codex-big.jsonl", codex(big)), write("codex-small.jsonl", codex(small)), grown},
		{"gemini", write("gemini-big.jsonl", gemini(big)), write("gemini-small.jsonl", gemini(small)), grown},
	}
}

// A step's artifact costs about its size in memory, not several times it:
// from the agent's stdout through the engine's checks to a new store, the
// bytes allocated for a step with an 8 MiB artifact, less those for the
// same step with a tiny one, are at most three times the difference in
// size: the output read in pieces, those pieces joined once (and dropped
// at once), and bbolt's page of the stored value. A stream runner
// (claude, codex, gemini) decodes the artifact out of the event line
// carrying it: one copy more. What is held at once is
// TestStepHoldsAboutTwiceItsArtifactInMemory's.
func TestArtifactCostsAboutItsSizeInMemory(t *testing.T) {
	limits := map[string]float64{"command": 3.2, "claude": 4.2, "codex": 4.2, "gemini": 4.2}
	for _, c := range artifactCases(t) {
		b := newStepBench(t, c.runner)
		ratio := (float64(b.allocated(t, c.big)) - float64(b.allocated(t, c.small))) / float64(c.grown)
		t.Logf("%s: %.2f bytes allocated per byte of artifact", c.runner, ratio)
		if ratio > limits[c.runner] {
			t.Errorf("%s: a step allocated %.2f bytes per byte of its artifact, want at most %.1f", c.runner, ratio, limits[c.runner])
		}
	}
}

// A step holds about twice its artifact at most: the most live heap any
// garbage collection found during a step with an 8 MiB artifact (the
// agent's output read, the engine's checks, the artifact stored in bbolt
// and its file written), less the same for a tiny artifact, is at most
// 2.2 bytes per byte of the difference in size, whichever runner read it.
// The store is new, so its file grows several times over to take the
// artifact.
func TestStepHoldsAboutTwiceItsArtifactInMemory(t *testing.T) {
	for _, c := range artifactCases(t) {
		// A collection marks live what was live when it began, so it may
		// count a copy dropped while it ran: the least of three steps, each
		// on a new store, is what a step holds.
		ratio := math.Inf(1)
		for range 3 {
			b := newStepBench(t, c.runner)
			ratio = min(ratio, (float64(b.held(t, c.big))-float64(b.held(t, c.small)))/float64(c.grown))
		}
		t.Logf("%s: %.2f bytes held per byte of artifact", c.runner, ratio)
		if ratio > 2.2 {
			t.Errorf("%s: a step held %.2f bytes per byte of its artifact at once, want at most 2.2", c.runner, ratio)
		}
	}
}
