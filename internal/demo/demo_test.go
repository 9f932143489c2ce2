package demo

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/intake"
)

var example = fstest.MapFS{
	"example/plan.md":                                  {Data: []byte("# Plan\n")},
	"example/skills/deliver-prd/SKILL.md":              {Data: []byte("---\nname: deliver-prd\ndescription: Write a PRD.\n---\n\nWrite a PRD.\n")},
	"example/skills/deliver-prd/references/EXAMPLE.md": {Data: []byte("# PRD\n\nA sample.\n")},
}

// TestRunnerReturnsTheSampleArtifact: a step's artifact is its skill's
// EXAMPLE.md, after three progress reports; a skill without one fails the
// step, naming it.
func TestRunnerReturnsTheSampleArtifact(t *testing.T) {
	var reports int
	out := Runner{Example: example}.Run(context.Background(), engine.Job{Skill: "deliver-prd"}, func(engine.Progress) { reports++ })
	if out.Err != nil || string(out.Artifact) != "# PRD\n\nA sample.\n" || reports != 3 {
		t.Fatalf("deliver-prd: %q, %v, %d reports", out.Artifact, out.Err, reports)
	}
	out = Runner{Example: example}.Run(context.Background(), engine.Job{Skill: "measure"}, func(engine.Progress) {})
	if out.Err == nil || out.Err.Error() != "the example has no sample artifact for measure" {
		t.Fatalf("measure: %v", out.Err)
	}
}

func TestUnpackLoadsTheSkillsAndCleansUp(t *testing.T) {
	cat, dir, cleanup, err := Unpack(example)
	if err != nil {
		t.Fatal(err)
	}
	if names := cat.Names(); len(names) != 1 || names[0] != "deliver-prd" {
		t.Errorf("skills %v, want [deliver-prd] from %s", names, dir)
	}
	cleanup()
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("cleanup left %s: %v", dir, err)
	}
	if _, _, _, err := Unpack(fstest.MapFS{"example/plan.md": {Data: []byte("x")}}); err == nil {
		t.Error("an example without skills unpacked without an error")
	}
}

// TestTakeStartsFromTheExamplePlan: the example's plan comes in named as
// the demo's source, with the flags and starter given; a policy file that
// is not there is an error.
func TestTakeStartsFromTheExamplePlan(t *testing.T) {
	s, cleanup, err := Take(os.DirFS("../../cmd/gonogo"), "", 0, intake.Request{Flags: engine.Flags{DryRun: true}, StartedBy: "ana"})
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if s.Plan.Source != Source || !s.Plan.Flags.DryRun || s.Options.StartedBy != "ana" || len(s.Plan.Steps) == 0 || len(s.Catalog.Names()) == 0 {
		t.Errorf("took %+v, %+v", s.Plan, s.Options)
	}
	if _, _, err := Take(os.DirFS("../../cmd/gonogo"), filepath.Join(t.TempDir(), "none.yaml"), 0, intake.Request{}); err == nil {
		t.Error("a missing policy file was taken")
	}
}
