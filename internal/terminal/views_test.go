package terminal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
)

var update = flag.Bool("update", false, "rewrite golden files")

var t0 = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

// halted plays a run through the engine's own transitions: step 1's
// artifact is edited, step 2 fails and waits, step 3 has not run. The
// run stands halted.
func halted(t *testing.T) (*engine.Run, []engine.Event) {
	t.Helper()
	p := engine.Plan{Input: engine.InputChain, Source: "deliver-prd -> deliver-user-stories -> measure",
		Steps:  []engine.PlanStep{{Skill: "deliver-prd", Effort: "spec"}, {Skill: "deliver-user-stories"}, {Skill: "measure"}},
		Manual: []engine.Block{{Effort: "launch", Skill: "workflow-launch", Reason: "a whole workflow", Line: 40}}}
	r := &engine.Run{}
	var journal []engine.Event
	now := t0
	apply := func(evs []engine.Event, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if r, err = engine.Fold(r, evs); err != nil {
			t.Fatal(err)
		}
		journal, now = append(journal, evs...), now.Add(time.Minute)
	}
	apply(engine.NewRun("20261120-090000-abc", p, engine.StartOptions{StartedBy: "ana",
		Setup: &engine.Setup{Runner: "claude", RunnerCmd: "/usr/bin/claude", Skills: []string{"/skills"}}}, now))
	apply(engine.Start(r, 1, now))
	apply(engine.Finish(r, 1, 1, engine.Finished{Result: engine.ResultProduced, Artifact: true, Size: 9, CostUSD: 0.25,
		File: "runs/x/01-deliver-prd.md"}, now))
	apply(engine.Decide(r, engine.Decision{Kind: engine.DecideEdit, Actor: "bo", Step: 1, Attempt: 1, Key: "k1"}, &engine.Edit{Size: 10}, now))
	apply(engine.Start(r, 2, now))
	apply(engine.Finish(r, 2, 1, engine.Finished{Result: engine.ResultFailed, Reason: "the agent exited with code 1"}, now))
	return r, journal
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func encode(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// The JSON of show, runs, check and skills is a contract: its keys, their
// order and their null or absent values are held to the goldens, and the
// words for people with them.
func TestViewsGolden(t *testing.T) {
	local := time.Local
	time.Local = time.UTC // the views print local times
	t.Cleanup(func() { time.Local = local })

	r, journal := halted(t)
	// No gonogo-data folder is beside the test: step 1's file is gone.
	show := Show{Run: r, Journal: journal, Data: "gonogo-data", Holder: "gonogo run (pid 7)"}
	golden(t, "show.json", encode(t, show.JSON(map[AttemptKey]string{{Step: 1, Attempt: 1}: "ab12"})))
	var text bytes.Buffer
	show.Print(&text)
	golden(t, "show.txt", text.Bytes())

	list := []engine.RunSummary{
		{ID: r.ID, State: r.State, Input: r.Input, Source: r.Plan.Source, Created: r.Created, Updated: r.Updated, StepsTotal: 3, StepsDone: 1},
		{ID: "20261119-080000-def", State: engine.RunCompleted, Input: engine.InputPlan, Source: "/home/ana/plans/a-long-folder-name/and-another/q3-onboarding-plan.md",
			Created: t0.Add(-time.Hour), Updated: t0.Add(-time.Hour), StepsTotal: 2, StepsDone: 2},
	}
	runs := Runs{List: list, States: RunStates(t.Context(), loader{r}, list, false, false), Data: "gonogo-data"}
	golden(t, "runs.json", encode(t, runs.JSON()))
	text.Reset()
	runs.Print(&text)
	golden(t, "runs.txt", text.Bytes())

	text.Reset()
	check := Check{Kind: engine.InputChain, Plan: r.Plan}
	check.Print(&text)
	golden(t, "check.txt", text.Bytes())
	golden(t, "check.json", encode(t, check.JSON()))
	refused := Check{Kind: engine.InputChain, Plan: engine.Plan{Source: "deliver-prd -> nosuch"},
		Refusal: &engine.Refusal{Reason: engine.RefusalReason("unknown-skill"), Message: "no skill nosuch", Source: "deliver-prd -> nosuch"}}
	golden(t, "check_refused.json", encode(t, refused.JSON()))

	cat := catalog{{Name: "deliver-prd", Description: "Writes a PRD", Source: "/skills", Dir: "/skills/deliver-prd", HasTemplate: true},
		{Name: "utility-pm-critic", Source: "/skills", Dir: "/skills/utility-pm-critic"},
		{Name: "workflow-launch", Source: "/skills", Dir: "/skills/workflow-launch"}}
	skills := SkillList(cat, engine.DefaultPolicy())
	golden(t, "skills.json", encode(t, skills))
	text.Reset()
	PrintSkills(&text, []string{"/skills"}, skills)
	golden(t, "skills.txt", text.Bytes())
}

// A halted run is halted in runs and show, whatever its stored state.
func TestRunStateOfAHaltedRun(t *testing.T) {
	r, _ := halted(t)
	if r.State != engine.RunWaiting {
		t.Fatalf("stored state %s, want waiting", r.State)
	}
	state, detail := RunState(r)
	if want := "halted at step 2 (deliver-user-stories): FAILED - the agent exited with code 1"; state != StateHalted || detail != want {
		t.Errorf("RunState = %q, %q; want halted, %q", state, detail, want)
	}
	if !(Show{Run: r}).JSON(nil).Halted {
		t.Error("show --json does not mark the run halted")
	}
}

type loader struct{ r *engine.Run }

func (l loader) Load(_ context.Context, id engine.RunID) (*engine.Run, error) {
	if id != l.r.ID {
		return nil, engine.ErrNotFound
	}
	return l.r, nil
}

// catalog is installed skills in memory; no leaf agent is installed.
type catalog []engine.Skill

func (c catalog) Skills() []engine.Skill { return c }
func (c catalog) Names() []string {
	var out []string
	for _, s := range c {
		out = append(out, s.Name)
	}
	return out
}
func (c catalog) Skill(name string) (engine.Skill, error) {
	for _, s := range c {
		if s.Name == name {
			return s, nil
		}
	}
	return engine.Skill{}, engine.ErrNotFound
}
func (c catalog) Agent(string) (string, error)     { return "", errors.New("not installed") }
func (c catalog) AgentFile(string) (string, error) { return "", errors.New("not installed") }
