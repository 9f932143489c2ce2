package config

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
)

// TestKeepKindNeverContinuesARealRunDry: --dry-run on a run started for
// real is refused, naming the run; a dry run stays dry without the flag.
func TestKeepKindNeverContinuesARealRunDry(t *testing.T) {
	real := &engine.Run{ID: "r1"}
	if _, err := KeepKind(real, true); err == nil || !strings.Contains(err.Error(), "run r1 was started for real") {
		t.Fatalf("real run, --dry-run: %v", err)
	}
	if dry, err := KeepKind(&engine.Run{ID: "r2", DryRun: true}, false); err != nil || !dry {
		t.Fatalf("dry run resumed: dry %v, %v", dry, err)
	}
	if dry, err := KeepKind(nil, true); err != nil || !dry {
		t.Fatalf("no run: dry %v, %v", dry, err)
	}
}

// TestCheckpointedIsForAPausedRun: --checkpointed on a run no person
// paused is refused; without the flag, or with no run, nothing is.
func TestCheckpointedIsForAPausedRun(t *testing.T) {
	r := &engine.Run{ID: "r1"}
	if err := CheckpointedUnpaused(true, r); err == nil || !strings.Contains(err.Error(), "run r1 is not paused") {
		t.Fatalf("unpaused run: %v", err)
	}
	if err := CheckpointedUnpaused(false, r); err != nil {
		t.Fatalf("no flag: %v", err)
	}
	if err := CheckpointedUnpaused(true, nil); err != nil {
		t.Fatalf("no run: %v", err)
	}
}

// TestSettleSetupRefusesTheDryRunRunnerForARealRun: a finished real run
// settles no setup, yet the dry-run runner is refused for it; a run
// recorded before setups were kept goes on with this shell's runner, said
// on w.
func TestSettleSetupRefusesTheDryRunRunnerForARealRun(t *testing.T) {
	var c Config
	var w bytes.Buffer
	done := &engine.Run{ID: "r1", State: engine.RunCompleted}
	if !done.Finished() {
		t.Fatal("fixture: the run should be finished")
	}
	if _, err := c.SettleSetup(&w, done, Overrides{Runner: "dry-run"}); err == nil || !strings.Contains(err.Error(), "started for real") {
		t.Fatalf("dry-run runner on a real run: %v", err)
	}
	s, err := c.SettleSetup(&w, &engine.Run{ID: "r2"}, Overrides{Runner: "claude"})
	if err != nil || s == nil || s.Runner != "claude" {
		t.Fatalf("unrecorded run: %+v, %v", s, err)
	}
	if !strings.Contains(w.String(), "run r2 was recorded before gonogo kept how a run is carried out") {
		t.Fatalf("no note: %q", w.String())
	}
}

// TestAgentsMissingChecksEachBestOfRunner: a run whose every step is a
// round on other runners needs no agent of its own, but each of those
// runners' agents is checked, named as best-of.
func TestAgentsMissingChecksEachBestOfRunner(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no agent is installed
	round := engine.Plan{Steps: []engine.PlanStep{{ID: "a", Rules: engine.StepRules{BestOf: []string{"codex", "gemini"}}}}}
	err := AgentsMissing("claude", "", round)
	if err == nil || !strings.HasPrefix(err.Error(), "best-of: the codex runner") {
		t.Fatalf("round on codex and gemini: %v", err)
	}
	own := engine.Plan{Steps: []engine.PlanStep{{ID: "a"}}}
	if err := AgentsMissing("claude", "", own); err == nil || !strings.HasPrefix(err.Error(), "the claude runner") {
		t.Fatalf("a step on the run's own runner: %v", err)
	}
	if err := AgentsMissing("dry-run", "", own); err != nil {
		t.Fatalf("dry-run runs nothing: %v", err)
	}
}
