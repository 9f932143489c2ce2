package record

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record/recordtest"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden record files")

// goldenTime is the i-th instant of the golden run, in a zone other than
// UTC so that the recorded offset is pinned too.
func goldenTime(i int) time.Time {
	return time.Date(2026, 3, 2, 14, 0, i, 250_000_000, time.FixedZone("", 3600))
}

// goldenRun is a run with a bit of everything a record holds: a workflow
// plan with rules, blocks and arguments, a step copied from its plan and
// one that is not (a fallback's added step), attempts with usage, an
// agent error and deadlines, decisions, a setup, oversight and a pause.
func goldenRun() *engine.Run {
	rules := engine.StepRules{
		Pre:     []engine.Condition{{Kind: engine.CondFileExists, Path: "docs/brief.md", Line: 12}},
		Post:    []engine.Condition{{Kind: engine.CondCommand, Command: []string{"make", "check"}, Line: 13}},
		OnError: engine.ErrorPolicy{Kind: engine.OnErrorRetry, Retries: 2, Backoff: 30 * time.Second},
		Timeout: 10 * time.Minute, Optional: true, Fallback: "write-prd-lite",
		Options: map[string]string{"tone": "plain"},
	}
	plan := engine.Plan{
		Input: engine.InputWorkflow, Source: "release-notes", Domain: engine.DomainComplicated,
		DomainSource: "section-2", Confidence: "High", ConfidenceReason: "two interviews agree",
		Args:  map[string]string{"version": "1.4.0"},
		Flags: engine.Flags{Auto: true, Thread: true},
		Steps: []engine.PlanStep{
			{Skill: "write-prd", Effort: "Write the PRD", PTokens: []string{"P1"}, Prompt: "Write the PRD for \"checkout\".",
				Category: engine.CategoryContent, Execution: engine.ExecDelegate, Line: 40, ID: "prd", Gate: engine.GateAlways, Rules: rules},
			{Skill: "review", Effort: "Review it", PTokens: []string{"P2"}, Prompt: "Review the PRD.",
				Category: engine.CategoryDispatch, Execution: engine.ExecInlineLeaf, Leaf: "reviewer", Line: 50,
				ID: "review", DependsOn: []string{"prd"}},
		},
		Manual:   []engine.Block{{Effort: "Talk to finance", PTokens: []string{"P4"}, Prompt: "Ask about refunds.", Reason: "no skill", Line: 88}},
		Deferred: []engine.Block{{Effort: "Pricing page", PTokens: []string{"P5"}, Skill: "deliver-prd", Prompt: "Draft it.", Line: 95}},
		Warnings: []string{},
	}
	def := func(i int) *engine.StepDef {
		p := plan.Steps[i]
		return &engine.StepDef{N: i + 1, ID: p.ID, Skill: p.Skill, Effort: p.Effort, Prompt: p.Prompt,
			Category: p.Category, Execution: p.Execution, Leaf: p.Leaf, Gate: p.Gate, Rules: p.Rules}
	}
	second := def(1)
	// Not as planned: the record keeps the step's own fields.
	second.DependsOn, second.ThreadFrom, second.Prompt, second.Gate = []int{1}, 1, "Review the PRD, briefly.", engine.GateNever
	return &engine.Run{
		ID: "20260302-140000-a1b2c3d4", State: engine.RunWaiting, Input: engine.InputWorkflow,
		Mode: engine.ModeCheckpointed, Thread: true, BudgetUSD: 5, Quorum: 2, ExcludeStarter: true,
		Plan: plan, StartedBy: "U123", Origin: engine.Origin{Channel: "C1", Thread: "1700000000.000100"},
		Created: goldenTime(0), Updated: goldenTime(9), CostUSD: 0.375, Seq: 7,
		Halt: "step 1 waits for a decision", Paused: true, PausedBy: "U456", PauseReason: "lunch", PausedAt: goldenTime(8),
		Setup: &engine.Setup{Runner: "command", RunnerCmd: "/opt/agent", RunnerArgs: []string{"--fast"},
			Skills: []string{"/srv/skills"}, Workflows: "/srv/workflows"},
		Oversight: &engine.Oversight{Approvers: []string{"U1", "S2"}, RemindAfter: time.Hour,
			DecisionTimeout: 2 * time.Hour, OnTimeout: engine.TimeoutWait},
		Steps: []engine.Step{
			{StepDef: def(0), StepState: &engine.StepState{Status: engine.StepWaiting, Held: true,
				Attempts: []engine.Attempt{
					{N: 1, Result: engine.ResultFailed, Reason: "rate limited", ErrorKind: engine.AgentErrRateLimit,
						RetryAt: goldenTime(3), Retries: 3, Started: goldenTime(1), Finished: goldenTime(2)},
					{N: 2, Result: engine.ResultProduced, Summary: "a PRD of 3 pages", Feedback: "shorter", Artifact: true,
						Edited: true, Size: 2048, File: "runs/20260302-140000-a1b2c3d4/01-write-prd.md", CostUSD: 0.375,
						Usage:   engine.Usage{InputTokens: 1200, OutputTokens: 340, CacheRead: 10, CacheCreate: 20, Turns: 3},
						Started: goldenTime(4), Finished: goldenTime(5), Reminded: goldenTime(6), TimedOut: goldenTime(7)},
				},
				Decisions: []engine.Decision{{Kind: engine.DecideRedo, Actor: "U456", Time: goldenTime(3), Step: 1, Attempt: 1,
					Key: "k1", Feedback: "shorter"}},
			}},
			{StepDef: second, StepState: &engine.StepState{Status: engine.StepPending, Using: "review-lite"}},
		},
	}
}

// goldenEvents is a journal with one event of each shape a record takes.
func goldenEvents(r *engine.Run) []engine.Event {
	return []engine.Event{
		{Seq: 1, Time: goldenTime(0), Type: engine.EvRunStarted, Actor: "U123", Start: &engine.RunStart{
			ID: r.ID, Plan: r.Plan, Mode: r.Mode, Thread: true, BudgetUSD: 5, StartedBy: "U123", Origin: r.Origin,
			Quorum: 2, ExcludeStarter: true, Setup: r.Setup, Oversight: r.Oversight}},
		{Seq: 2, Time: goldenTime(2), Type: engine.EvStepFinished, Step: 1, Attempt: 1, Status: engine.StepWaiting,
			Result: engine.ResultFailed, Reason: "rate limited", ErrorKind: engine.AgentErrRateLimit, RetryAt: goldenTime(3), Retries: 3},
		{Seq: 3, Time: goldenTime(3), Type: engine.EvDecision, Step: 1, Attempt: 1, Actor: "U456",
			Decision: engine.DecideRedo, Key: "k1", Feedback: "shorter", Status: engine.StepQueued},
		{Seq: 4, Time: goldenTime(5), Type: engine.EvStepFinished, Step: 1, Attempt: 2, Status: engine.StepWaiting,
			Result: engine.ResultProduced, Summary: "a PRD of 3 pages", Size: 2048, Artifact: true,
			File: "runs/20260302-140000-a1b2c3d4/01-write-prd.md", CostUSD: 0.375, Held: true, Agent: "codex",
			Usage: engine.Usage{InputTokens: 1200, OutputTokens: 340, CacheRead: 10, CacheCreate: 20, Turns: 3}},
		{Seq: 5, Time: goldenTime(6), Type: engine.EvStepsAdded, Step: 1, Added: []engine.PlanStep{
			{Skill: "summarise", Prompt: "Sum it up.", Category: engine.CategoryContent, Execution: engine.ExecDelegate, ID: "sum"}}},
		{Seq: 6, Time: goldenTime(7), Type: engine.EvStepInterrupted, Step: 1, Attempt: 2, Status: engine.StepInterrupted, Lost: goldenTime(6)},
		{Seq: 7, Time: goldenTime(9), Type: engine.EvSetupChanged, Actor: "U456", Setup: r.Setup,
			Changes: []engine.SetupChange{{Field: "runner-cmd", From: "/opt/old", To: "/opt/agent"}}},
	}
}

// goldenBytes encodes the golden run every way the format has: as the
// store keeps it and as it crosses to another gonogo or to Temporal.
func goldenBytes(t *testing.T) map[string][]byte {
	t.Helper()
	r := goldenRun()
	evs := goldenEvents(r)
	must := func(b []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var journal []byte
	for _, ev := range evs {
		journal = append(journal, must(EncodeEvent(ev, &r.Plan))...)
		journal = append(journal, '\n')
	}
	other := engine.RunSummary{ID: "20260301-090000-e5f6a7b8", State: engine.RunCompleted, Input: engine.InputChain,
		Source: "a > b", Created: goldenTime(0).Add(-24 * time.Hour), Updated: goldenTime(0).Add(-23 * time.Hour), StepsTotal: 2, StepsDone: 2}
	return map[string][]byte{
		"store_run.json":      must(EncodeRun(r)),
		"store_plan.json":     must(EncodePlan(r.Plan)),
		"store_summary.json":  must(EncodeSummary(r)),
		"store_journal.jsonl": journal,
		"wire_run.json":       must(MarshalRun(r, evs)),
		"wire_summaries.json": must(MarshalSummaries([]engine.RunSummary{r.Summary(), other})),
		"wire_events.json":    must(MarshalEvents(evs)),
		"wire_summary.json":   must(EncodeSummary(r)),
	}
}

// The bytes of every record are pinned: a change to the format (a field
// renamed, dropped or encoded otherwise) fails here and shows as a diff of
// the files under testdata/golden, to be made on purpose with -update and
// a new version if old readers would misread it.
func TestRecordBytesAreGolden(t *testing.T) {
	for name, got := range goldenBytes(t) {
		path := filepath.Join("testdata", "golden", name)
		if *updateGolden {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update to write it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from its golden file:\n got: %s\nwant: %s", name, got, want)
		}
	}
}

// The golden bytes decode to the golden run and journal.
func TestGoldenRecordsDecode(t *testing.T) {
	want := goldenRun()
	wantEvs := goldenEvents(want)
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", "golden", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	r, evs, err := UnmarshalRun(read("wire_run.json"))
	if err != nil {
		t.Fatal(err)
	}
	sameRun(t, "wire run", r, want)
	recordtest.InUTC(evs)
	recordtest.InUTC(wantEvs)
	if !reflect.DeepEqual(evs, wantEvs) {
		t.Errorf("wire journal differs:\n got: %+v\nwant: %+v", evs, wantEvs)
	}
	evs, err = UnmarshalEvents(read("wire_events.json"))
	if err != nil {
		t.Fatal(err)
	}
	recordtest.InUTC(evs)
	if !reflect.DeepEqual(evs, wantEvs) {
		t.Errorf("wire events differ:\n got: %+v\nwant: %+v", evs, wantEvs)
	}
	plan, err := DecodePlan(read("store_plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	if r, err = DecodeRun(read("store_run.json"), plan); err != nil {
		t.Fatal(err)
	}
	sameRun(t, "stored run", r, want)
	evs = nil
	for line := range bytes.Lines(read("store_journal.jsonl")) {
		ev, err := DecodeEvent(line, func() (engine.Plan, error) { return plan, nil })
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	recordtest.InUTC(evs)
	if !reflect.DeepEqual(evs, wantEvs) {
		t.Errorf("stored journal differs:\n got: %+v\nwant: %+v", evs, wantEvs)
	}
	stored, err := DecodeSummary(want.ID, read("store_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	wire, err := DecodeSummary(want.ID, read("wire_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	listed, err := UnmarshalSummaries(read("wire_summaries.json"))
	if err != nil || len(listed) != 2 {
		t.Fatalf("wire summaries: %+v, %v", listed, err)
	}
	sums := []engine.RunSummary{stored, wire, listed[0]}
	recordtest.InUTC(sums)
	for i, what := range []string{"stored summary", "wire summary", "listed summary"} {
		if w := want.Summary(); !reflect.DeepEqual(sums[i], w) {
			t.Errorf("%s differs:\n got: %+v\nwant: %+v", what, sums[i], w)
		}
	}
}
