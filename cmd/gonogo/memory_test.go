package main

import (
	"context"
	"encoding/json"
	"fmt"
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

// allocated runs the first step of a two-step checkpointed run whose agent
// answers with the file out, and returns the bytes the process allocated
// from the start of the run until the step's result was recorded, with the
// artifact stored and its file written.
func (b *stepBench) allocated(t *testing.T, out string) uint64 {
	t.Helper()
	plan := engine.Plan{Input: engine.InputPlan, Source: "mem.md", Domain: engine.DomainComplicated, DomainSource: "section-2",
		Steps: []engine.PlanStep{
			{Skill: "a", Prompt: "Print this file:\n" + out, Category: engine.CategoryContent, Execution: engine.ExecDelegate},
			{Skill: "b", Prompt: "do b", Category: engine.CategoryContent, Execution: engine.ExecDelegate},
		}}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	run, err := b.svc.Start(context.Background(), plan, engine.StartOptions{StartedBy: "tester"})
	if err != nil {
		t.Fatal(err)
	}
	<-b.done
	runtime.ReadMemStats(&after)

	got, err := b.svc.Load(context.Background(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st := got.Step(1); st.Latest().Result != engine.ResultProduced || !st.Latest().Artifact {
		t.Fatalf("step 1: %s, result %q (%s), want an artifact produced", st.Status, st.Latest().Result, st.Latest().Reason)
	}
	return after.TotalAlloc - before.TotalAlloc
}

// A step's artifact costs about its size in memory, not several times it:
// from the agent's stdout through the engine's checks to the store, the
// bytes allocated for a step with an 8 MiB artifact, less those for the
// same step with a tiny one, are at most three times the difference in
// size. The three are the output read in pieces, those pieces joined once
// (and dropped at once), and bbolt's page of the stored value, so no more
// than two are held at a time. A stream runner (claude, codex, gemini)
// decodes the artifact out of the event line carrying it: one copy more.
func TestArtifactCostsAboutItsSizeInMemory(t *testing.T) {
	dir := t.TempDir()
	const size = 8 << 20
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	big, small := bigArtifact(size), bigArtifact(100)
	// The agents' event streams, their answer in the one event that
	// carries it.
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
	cases := []struct {
		runner     string
		big, small string
		limit      float64
	}{
		{"command", write("big.md", big), write("small.md", small), 3.2},
		{"claude", write("claude-big.jsonl", claude(big)), write("claude-small.jsonl", claude(small)), 4.2},
		{"codex", write("codex-big.jsonl", codex(big)), write("codex-small.jsonl", codex(small)), 4.2},
		{"gemini", write("gemini-big.jsonl", gemini(big)), write("gemini-small.jsonl", gemini(small)), 4.2},
	}
	for _, c := range cases {
		b := newStepBench(t, c.runner)
		// Two runs first grow the store's file past what the runs measured
		// need: bbolt maps its file anew, copying the values a change
		// holds, only when the file doubles.
		b.allocated(t, c.big)
		b.allocated(t, c.big)
		ratio := (float64(b.allocated(t, c.big)) - float64(b.allocated(t, c.small))) / float64(len(big)-len(small))
		t.Logf("%s: %.2f bytes allocated per byte of artifact", c.runner, ratio)
		if ratio > c.limit {
			t.Errorf("%s: a step allocated %.2f bytes per byte of its artifact, want at most %.1f", c.runner, ratio, c.limit)
		}
	}
}
