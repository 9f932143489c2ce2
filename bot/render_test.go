package bot

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/engine/statstest"
)

var updateGolden = flag.Bool("update", false, "rewrite golden files")

var goldenT0 = time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)

const (
	starter     = "U0STARTER"
	alice       = "U0ALICE1"
	bob         = "U0BOB22"
	goldenRunID = engine.RunID("20260302-140000-a1b2c3d4")
)

// script drives a run through the engine's own transitions with a fixed
// clock, the way the service does without a store.
type script struct {
	t    testing.TB
	r    *engine.Run
	now  time.Time
	keys int
}

func newRun(t testing.TB, id engine.RunID, p engine.Plan, opt engine.StartOptions) *script {
	t.Helper()
	s := &script{t: t, r: &engine.Run{}, now: goldenT0}
	if opt.StartedBy == "" {
		opt.StartedBy = starter
	}
	evs, err := engine.NewRun(id, p, opt, s.now)
	s.apply(evs, err)
	return s
}

func (s *script) tick() time.Time {
	s.now = s.now.Add(97 * time.Second)
	return s.now
}

func (s *script) apply(evs []engine.Event, err error) {
	s.t.Helper()
	if err != nil {
		s.t.Fatalf("transition refused: %v", err)
	}
	r, err := engine.Fold(s.r, evs)
	if err != nil {
		s.t.Fatalf("fold: %v", err)
	}
	s.r = r
}

func (s *script) latest(n int) int {
	if l := s.r.Step(n).Latest(); l != nil {
		return l.N
	}
	return 0
}

func (s *script) start(n int) { s.t.Helper(); s.apply(engine.Start(s.r, n, s.tick())) }

func (s *script) finish(n int, f engine.Finished) {
	s.t.Helper()
	s.apply(engine.Finish(s.r, n, s.latest(n), f, s.tick()))
}

// produce runs step n to a PRODUCED artifact written to disk.
func (s *script) produce(n int, summary string) {
	s.t.Helper()
	st := s.r.Step(n)
	s.start(n)
	s.finish(n, engine.Finished{Result: engine.ResultProduced, Summary: summary, Artifact: true, Size: 4321,
		File: engine.ArtifactFile(s.r.ID, n, st.Skill, len(st.Attempts)+1, true), CostUSD: 0.42,
		Usage: engine.Usage{Turns: 7, InputTokens: 1200, OutputTokens: 800}})
}

func (s *script) fail(n int, reason string) {
	s.t.Helper()
	s.start(n)
	s.finish(n, engine.Finished{Result: engine.ResultFailed, Reason: reason, CostUSD: 0.05})
}

func (s *script) decide(n int, kind engine.DecisionKind, actor, feedback string) {
	s.t.Helper()
	s.keys++
	d := engine.Decision{Kind: kind, Actor: actor, Step: n, Attempt: s.latest(n), Key: fmt.Sprintf("k%d", s.keys), Feedback: feedback}
	var edit *engine.Edit
	if kind == engine.DecideEdit {
		st := s.r.Step(n)
		edit = &engine.Edit{Size: 2048, File: engine.ArtifactFile(s.r.ID, n, st.Skill, s.latest(n), true), Summary: "edited by hand"}
	}
	s.apply(engine.Decide(s.r, d, edit, s.tick()))
}

func (s *script) interrupt() { s.apply(engine.Interrupt(s.r, s.tick()), nil) }

func (s *script) pause(actor string) {
	s.t.Helper()
	s.apply(engine.Pause(s.r, actor, "", s.tick()))
}

// rateLimited runs step n to the agent's rate limit, waited out with a
// minute's backoff.
func (s *script) rateLimited(n int) {
	s.t.Helper()
	s.start(n)
	s.finish(n, engine.Finished{Result: engine.ResultFailed, CostUSD: 0.01,
		Reason:    "the agent reported an error: API Error: Request rejected (429) · rate limit of 50 requests per minute",
		ErrorKind: engine.AgentErrRateLimit, RateLimit: engine.DefaultRateLimit()})
}

func (s *script) abortRun(actor string) {
	s.t.Helper()
	s.apply(engine.AbortRun(s.r, actor, "aborted by "+actor, s.tick()))
}

func (s *script) view() View { return View{Now: s.now.Add(30 * time.Second)} }

func planInput() engine.Plan {
	return engine.Plan{
		Input: engine.InputPlan, Source: "q3-action-plan.md", Domain: engine.DomainComplicated, DomainSource: "section-2",
		Confidence: "Medium-High", ConfidenceReason: "two interview rounds agree on the drop-off",
		Steps: []engine.PlanStep{
			{Skill: "deliver-prd", Effort: "Spec the post-send fix", PTokens: []string{"P1"}, Prompt: "Write the PRD.", Category: engine.CategoryContent, Execution: engine.ExecDelegate, Line: 40},
			{Skill: "discover-interview-synthesis", Effort: "Synthesize churn interviews", PTokens: []string{"P1", "P2"}, Prompt: "Synthesize.", Category: engine.CategoryContent, Execution: engine.ExecDelegate, Line: 52},
			{Skill: "deliver-user-stories", Effort: "Stories for the fix", PTokens: []string{"P2"}, Prompt: "Stories.", Category: engine.CategoryContent, Execution: engine.ExecDelegate, Line: 63},
		},
		Manual: []engine.Block{
			{Effort: "Align with legal on retention", PTokens: []string{"P2"}, Reason: "names no skill", Line: 70},
			{Effort: "Run the launch", PTokens: []string{"P3"}, Skill: "workflow-launch", Reason: "`workflow-launch` is a whole workflow: run it separately", Line: 78},
		},
		Deferred: []engine.Block{{Effort: "Instrument the funnel", PTokens: []string{"P4"}, Skill: "measure-dashboard", Line: 85}},
	}
}

func chainInput(names ...string) engine.Plan {
	p := engine.Plan{Input: engine.InputChain, Source: strings.Join(names, " -> ") + " --thread -- mobile checkout",
		Context: "mobile checkout", Flags: engine.Flags{Thread: true}}
	for _, n := range names {
		p.Steps = append(p.Steps, engine.PlanStep{Skill: n, Category: engine.CategoryContent, Execution: engine.ExecDelegate})
	}
	return p
}

// goldenArtifact is a Markdown artifact with the things a preview must defuse
// (a mention, a link, an ampersand) and code it must leave as it is (a
// code span and a code fence).
const goldenArtifact = "# PRD: post-send fix\n\n## Problem\nR&D says <!channel> should see <https://evil.example|this> <@UEVIL>.\n" +
	"```go\nif a < b && ok { fmt.Println(\"<!here>\") }\n```\n\n## Goals\n- cut drop-off by 20%\n- keep send latency < 2s in `m[k](x) && <T>`\n\n## Non-goals\n- redesign\n\n" +
	"## Metrics\n- conversion\n- retention\n- support tickets\n\n## Risks\n- none known\n"

type goldenCase struct {
	name   string
	render func(t *testing.T) any
}

// goldenMessage is how a message golden file holds a message: the fallback
// text and the blocks, as Slack receives them.
type goldenMessage struct {
	Text   string        `json:"text"`
	Blocks []slack.Block `json:"blocks"`
}

func asMessage(blocks []slack.Block) any {
	return goldenMessage{Text: FallbackText(blocks), Blocks: blocks}
}

func goldenCases() []goldenCase {
	msg := func(name string, f func(t *testing.T) []slack.Block) goldenCase {
		return goldenCase{name, func(t *testing.T) any { return asMessage(f(t)) }}
	}
	mod := func(name string, f func(t *testing.T) slack.ModalViewRequest) goldenCase {
		return goldenCase{name, func(t *testing.T) any { return f(t) }}
	}
	planWaiting := func(t *testing.T) *script {
		s := newRun(t, goldenRunID, planInput(), engine.StartOptions{})
		s.produce(1, "A one-page PRD for the post-send fix with goals, metrics and risks.")
		return s
	}
	chain := func(t *testing.T) *script {
		return newRun(t, goldenRunID, chainInput("deliver-prd", "deliver-user-stories", "deliver-acceptance-criteria"), engine.StartOptions{})
	}
	stepView := func(s *script) View {
		v := s.view()
		v.Preview = goldenArtifact
		v.ArtifactLink = "https://example.slack.com/files/U0BOT/F0123/01-deliver-prd.md"
		return v
	}
	return []goldenCase{
		msg("header_plan_waiting", func(t *testing.T) []slack.Block { s := planWaiting(t); return Header(s.r, s.view()) }),
		msg("header_chain_running", func(t *testing.T) []slack.Block {
			s := chain(t)
			s.produce(1, "PRD")
			s.decide(1, engine.DecideApprove, alice, "")
			s.start(2)
			return Header(s.r, s.view())
		}),
		msg("preview_plan", func(t *testing.T) []slack.Block {
			p := planInput()
			p.Warnings = []string{"--auto ignored: Complex plans stay checkpointed unless --force-auto"}
			s := newRun(t, goldenRunID, p, engine.StartOptions{AwaitStart: true, BudgetUSD: 5})
			return headerOrPreview(s.r, s.view())
		}),
		msg("preview_chain_cancelled", func(t *testing.T) []slack.Block {
			s := newRun(t, goldenRunID, chainInput("deliver-prd", "deliver-user-stories"), engine.StartOptions{AwaitStart: true})
			s.apply(engine.CancelAwaited(s.r, bob, s.tick()))
			v := s.view()
			v.AbortedBy = bob
			return headerOrPreview(s.r, v)
		}),
		msg("preview_chain_started", func(t *testing.T) []slack.Block {
			s := newRun(t, goldenRunID, chainInput("deliver-prd", "deliver-user-stories"), engine.StartOptions{AwaitStart: true})
			s.apply(engine.StartAwaited(s.r, alice, "k", s.tick()))
			s.start(1)
			return headerOrPreview(s.r, s.view())
		}),
		msg("check_workflow", func(t *testing.T) []slack.Block {
			p := workflowInput(
				engine.PlanStep{ID: "prd", Skill: "deliver-prd", Prompt: "Write the PRD for guest checkout.\nKeep it short."},
				engine.PlanStep{ID: "stories", Skill: "deliver-user-stories", DependsOn: []string{"prd"}},
				engine.PlanStep{ID: "experiment", Skill: "measure-experiment-design", DependsOn: []string{"prd"}, Execution: engine.ExecInlineLeaf})
			p.Steps[2].Execution, p.Steps[2].Leaf = engine.ExecInlineLeaf, "experiment-designer"
			p.Flags.DryRun = true
			return CheckPreview(p, "To run it: `/gonogo run weekly-discovery --arg topic=\"guest checkout\"`.")
		}),
		msg("plan_choice", func(t *testing.T) []slack.Block {
			m := Mention{User: alice, TS: "1772460000.000100", Flags: engine.Flags{DryRun: true}}
			return PlanChoice(m, []FileRef{{ID: "F0Q2PLAN", Name: "q2-plan.md", Size: 4321}, {ID: "F0Q3PLAN", Name: "q3 <!channel> plan.md", Size: 12345}})
		}),
		msg("header_paused_running", func(t *testing.T) []slack.Block {
			s := autoChain(t)
			s.start(1)
			s.pause(bob)
			return Header(s.r, s.view())
		}),
		msg("step_paused_checkpoint", func(t *testing.T) []slack.Block {
			s := autoChain(t)
			s.start(1)
			s.pause(bob)
			s.finish(1, engine.Finished{Result: engine.ResultProduced, Summary: "PRD", Artifact: true, Size: 120})
			return StepMessage(s.r, 1, s.view())
		}),
		msg("step_rate_limited", func(t *testing.T) []slack.Block {
			s := autoChain(t)
			s.rateLimited(1)
			return StepMessage(s.r, 1, s.view())
		}),
		msg("header_rate_limited", func(t *testing.T) []slack.Block {
			s := autoChain(t)
			s.rateLimited(1)
			return Header(s.r, s.view())
		}),
		msg("header_200_steps", func(t *testing.T) []slack.Block {
			names := make([]string, 200)
			for i := range names {
				names[i] = fmt.Sprintf("skill-%03d", i+1)
			}
			s := newRun(t, goldenRunID, chainInput(names...), engine.StartOptions{})
			for n := 1; n <= 57; n++ {
				s.produce(n, "ok")
				s.decide(n, engine.DecideApprove, alice, "")
			}
			s.produce(58, "waiting")
			return Header(s.r, s.view())
		}),
		msg("step_running", func(t *testing.T) []slack.Block {
			s := chain(t)
			s.produce(1, "PRD")
			s.decide(1, engine.DecideApprove, alice, "")
			s.start(2)
			return StepMessage(s.r, 2, s.view())
		}),
		msg("step_waiting_produced", func(t *testing.T) []slack.Block { s := planWaiting(t); return StepMessage(s.r, 1, stepView(s)) }),
		msg("step_waiting_failed", func(t *testing.T) []slack.Block {
			s := chain(t)
			s.fail(1, "the agent exited with code 1: rate limited | retry later")
			return StepMessage(s.r, 1, s.view())
		}),
		msg("step_waiting_empty", func(t *testing.T) []slack.Block {
			s := chain(t)
			s.start(1)
			s.finish(1, engine.Finished{Result: engine.ResultEmpty, Reason: "the agent produced no artifact"})
			return StepMessage(s.r, 1, s.view())
		}),
		msg("step_quorum_one_vote", func(t *testing.T) []slack.Block {
			s := newRun(t, goldenRunID, planInput(), engine.StartOptions{Quorum: 2, ExcludeStarter: true})
			s.produce(1, "PRD")
			s.decide(1, engine.DecideApprove, alice, "")
			v := stepView(s)
			v.RemindedAt = s.now.Add(-10 * time.Minute)
			v.Deadline = s.now.Add(2 * time.Hour)
			v.AbortAtDeadline = true
			return StepMessage(s.r, 1, v)
		}),
		msg("step_quorum_approved", func(t *testing.T) []slack.Block {
			s := newRun(t, goldenRunID, planInput(), engine.StartOptions{Quorum: 2})
			s.produce(1, "PRD")
			s.decide(1, engine.DecideApprove, alice, "")
			s.decide(1, engine.DecideApprove, bob, "")
			return StepMessage(s.r, 1, stepView(s))
		}),
		msg("step_edited", func(t *testing.T) []slack.Block {
			s := planWaiting(t)
			s.decide(1, engine.DecideEdit, alice, "")
			return StepMessage(s.r, 1, stepView(s))
		}),
		msg("step_skipped", func(t *testing.T) []slack.Block {
			s := planWaiting(t)
			s.decide(1, engine.DecideSkip, bob, "")
			return StepMessage(s.r, 1, s.view())
		}),
		msg("step_redo_first_attempt", func(t *testing.T) []slack.Block {
			s := planWaiting(t)
			s.decide(1, engine.DecideRedo, alice, "Cover the Android flow too; <!here> & cite the interviews.")
			s.start(1)
			v := stepView(s)
			v.Attempt = 1
			return StepMessage(s.r, 1, v)
		}),
		msg("step_second_attempt", func(t *testing.T) []slack.Block {
			s := planWaiting(t)
			s.decide(1, engine.DecideRedo, alice, "Cover the Android flow too.")
			s.produce(1, "PRD with Android")
			return StepMessage(s.r, 1, stepView(s))
		}),
		msg("step_aborted", func(t *testing.T) []slack.Block {
			s := planWaiting(t)
			s.decide(1, engine.DecideAbort, bob, "")
			return StepMessage(s.r, 1, s.view())
		}),
		msg("step_votes_then_run_aborted", func(t *testing.T) []slack.Block {
			s := newRun(t, goldenRunID, planInput(), engine.StartOptions{Quorum: 2})
			s.produce(1, "PRD")
			s.decide(1, engine.DecideApprove, alice, "")
			s.abortRun(bob)
			return StepMessage(s.r, 1, s.view())
		}),
		msg("step_pending_after_abort", func(t *testing.T) []slack.Block {
			s := planWaiting(t)
			s.decide(1, engine.DecideAbort, bob, "")
			return StepMessage(s.r, 3, s.view())
		}),
		msg("step_dry_run", func(t *testing.T) []slack.Block {
			p := chainInput("deliver-prd", "deliver-user-stories")
			p.Flags.DryRun = true
			s := newRun(t, goldenRunID, p, engine.StartOptions{})
			s.start(1)
			s.finish(1, engine.Finished{Result: engine.ResultNotExecuted, Reason: "NOT EXECUTED - dry run"})
			return StepMessage(s.r, 1, s.view())
		}),
		msg("step_auto_advanced", func(t *testing.T) []slack.Block {
			p := planInput()
			p.Domain, p.Flags.Auto = engine.DomainClear, true
			s := newRun(t, goldenRunID, p, engine.StartOptions{})
			s.produce(1, "PRD")
			return StepMessage(s.r, 1, stepView(s))
		}),
		msg("step_interrupted", func(t *testing.T) []slack.Block {
			s := chain(t)
			s.start(1)
			s.interrupt()
			return StepMessage(s.r, 1, s.view())
		}),
		msg("interrupted", func(t *testing.T) []slack.Block {
			s := chain(t)
			s.start(1)
			s.interrupt()
			return Interrupted(s.r, 1, s.view())
		}),
		msg("reminder", func(t *testing.T) []slack.Block {
			s := newRun(t, goldenRunID, planInput(), engine.StartOptions{Quorum: 2})
			s.produce(1, "PRD")
			v := s.view()
			v.Deadline = s.now.Add(26 * time.Hour)
			return Reminder(s.r, 1, v)
		}),
		msg("completion_chain", func(t *testing.T) []slack.Block {
			s := chain(t)
			s.produce(1, "PRD")
			s.decide(1, engine.DecideApprove, alice, "")
			s.produce(2, "Stories")
			s.decide(2, engine.DecideEdit, bob, "")
			s.produce(3, "Criteria")
			s.decide(3, engine.DecideSkip, alice, "")
			v := s.view()
			v.OfferSaveWorkflow = true
			return Completion(s.r, v)
		}),
		msg("completion_plan", func(t *testing.T) []slack.Block {
			s := planWaiting(t)
			s.decide(1, engine.DecideApprove, alice, "")
			s.fail(2, "timeout after 30m")
			s.decide(2, engine.DecideRedo, alice, "")
			s.produce(2, "Synthesis")
			s.decide(2, engine.DecideApprove, bob, "")
			s.produce(3, "Stories")
			s.decide(3, engine.DecideApprove, bob, "")
			return Completion(s.r, s.view())
		}),
		msg("halt_failed", func(t *testing.T) []slack.Block {
			s := chain(t)
			s.produce(1, "PRD")
			s.decide(1, engine.DecideApprove, alice, "")
			s.fail(2, "the agent reported an error: context window exceeded")
			return Halt(s.r, s.view())
		}),
		msg("halt_aborted", func(t *testing.T) []slack.Block {
			s := chain(t)
			s.produce(1, "PRD")
			s.decide(1, engine.DecideAbort, bob, "")
			return Halt(s.r, s.view())
		}),
		msg("halt_aborted_while_running", func(t *testing.T) []slack.Block {
			s := chain(t)
			s.start(1)
			s.abortRun(alice)
			v := s.view()
			v.AbortedBy = alice
			return Halt(s.r, v)
		}),
		msg("refusal_unknown_skill", func(t *testing.T) []slack.Block {
			return Refusal(&engine.Refusal{Reason: engine.RefuseUnknownSkill, Source: "prd -> storeis", Line: 1,
				Message:     "unknown skills `prd` (did you mean `deliver-prd`?), `storeis` (did you mean `deliver-user-stories`?)",
				Suggestions: map[string][]string{"prd": {"deliver-prd"}, "storeis": {"deliver-user-stories"}}}, engine.InputChain)
		}),
		msg("refusal_no_runnable", func(t *testing.T) []slack.Block {
			return Refusal(&engine.Refusal{Reason: engine.RefuseNoRunnableSteps, Source: "plan.md", Line: 31,
				Message: "no runnable step: all 2 Section 7 blocks are manual (names no skill)"}, engine.InputPlan)
		}),
		msg("input_problem_binary", func(t *testing.T) []slack.Block {
			return InputProblem(&InputError{Problem: "plan.pdf is a PDF document, not a plan: attach the plan as a Markdown (.md) or plain-text (.txt) file"})
		}),
		msg("input_problem_usage", func(t *testing.T) []slack.Block {
			return InputProblem(&InputError{Problem: "`chain` needs at least one skill name", Usage: Usage("/gonogo", CmdChain)})
		}),
		msg("help", func(t *testing.T) []slack.Block { return HelpBlocks("/gonogo") }),
		msg("runs", func(t *testing.T) []slack.Block {
			sums := []engine.RunSummary{
				{ID: goldenRunID, State: engine.RunWaiting, Input: engine.InputChain, Source: "deliver-prd -> deliver-user-stories", Created: goldenT0, StepsTotal: 2, StepsDone: 1},
				{ID: "20260301-090000-00ff00ff", State: engine.RunCompleted, Input: engine.InputPlan, Source: "q3-action-plan.md", Created: goldenT0.Add(-29 * time.Hour), StepsTotal: 3, StepsDone: 3},
				{ID: "20260228-170000-deadbeef", State: engine.RunAborted, Input: engine.InputWorkflow, Source: "weekly-discovery", Created: goldenT0.Add(-70 * time.Hour), StepsTotal: 4, StepsDone: 1},
			}
			links := map[engine.RunID]string{goldenRunID: "https://example.slack.com/archives/C0123/p1772460000000100"}
			return RunsList(sums, links)
		}),
		msg("runs_empty", func(t *testing.T) []slack.Block { return RunsList(nil, nil) }),
		msg("stats", func(t *testing.T) []slack.Block {
			rec := statstest.Generate(40)
			q := engine.StatsQuery{Now: rec.Now, Since: rec.Now.Add(-30 * 24 * time.Hour)}
			return StatsAnswer(engine.ComputeStats(rec.StatsRuns(), q), "30d")
		}),
		msg("stats_all_time_one_skill", func(t *testing.T) []slack.Block {
			rec := statstest.Generate(200)
			q := engine.StatsQuery{Now: rec.Now, Skill: "deliver-prd"}
			return StatsAnswer(engine.ComputeStats(rec.StatsRuns(), q), "all")
		}),
		msg("stats_a_year", func(t *testing.T) []slack.Block {
			rec := statstest.Generate(40)
			q := engine.StatsQuery{Now: rec.Now, Since: rec.Now.Add(-52 * 7 * 24 * time.Hour)}
			return StatsAnswer(engine.ComputeStats(rec.StatsRuns(), q), "52w")
		}),
		msg("stats_empty", func(t *testing.T) []slack.Block {
			return StatsAnswer(engine.ComputeStats(nil, engine.StatsQuery{Now: goldenT0, Since: goldenT0.Add(-7 * 24 * time.Hour)}), "7d")
		}),
		mod("modal_edit", func(t *testing.T) slack.ModalViewRequest {
			return EditModal(StepRef{Run: goldenRunID, Step: 1, Attempt: 1}, "deliver-prd", goldenArtifact)
		}),
		mod("modal_edit_too_long", func(t *testing.T) slack.ModalViewRequest {
			return EditModal(StepRef{Run: goldenRunID, Step: 1, Attempt: 1}, "deliver-prd", strings.Repeat("long line of the artifact\n", 500))
		}),
		mod("modal_edit_reply", func(t *testing.T) slack.ModalViewRequest {
			return EditFromReplyModal(StepRef{Run: goldenRunID, Step: 1, Attempt: 2}, "deliver-prd",
				Reply{User: alice, TS: "1772460300.000200", Time: goldenT0.Add(5 * time.Minute), File: "plan.md", FileID: "F0ABC123", Chars: 12345},
				Reply{User: bob, TS: "1772460100.000100", Time: goldenT0.Add(2 * time.Minute), Chars: 4200})
		}),
		mod("modal_edit_reply_none", func(t *testing.T) slack.ModalViewRequest {
			return EditFromReplyModal(StepRef{Run: goldenRunID, Step: 1, Attempt: 2}, "deliver-prd")
		}),
		mod("modal_redo", func(t *testing.T) slack.ModalViewRequest {
			return RedoModal(StepRef{Run: goldenRunID, Step: 2, Attempt: 1}, "deliver-user-stories")
		}),
		mod("modal_edit_empty", func(t *testing.T) slack.ModalViewRequest {
			return EditModal(StepRef{Run: goldenRunID, Step: 1, Attempt: 1}, "deliver-prd", "")
		}),
		mod("modal_loading", func(t *testing.T) slack.ModalViewRequest {
			return LoadingModal(ActEdit, StepRef{Run: goldenRunID, Step: 1, Attempt: 1})
		}),
		mod("modal_notice_may_not", func(t *testing.T) slack.ModalViewRequest {
			return NoticeModal(ActRedo, StepRef{Run: goldenRunID, Step: 2, Attempt: 1}, mayNot(ActRedo, alice))
		}),
		mod("modal_edit_reply_unusable", func(t *testing.T) slack.ModalViewRequest {
			return UnusableReplyModal(StepRef{Run: goldenRunID, Step: 1, Attempt: 2}, "deliver-prd",
				Reply{User: alice, TS: "1772460300.000200", Time: goldenT0.Add(5 * time.Minute), File: "plan.pdf", FileID: "F0ABC123", Chars: 12345},
				"plan.pdf is not text: attach a Markdown or plain text file")
		}),
		msg("start_notice", func(t *testing.T) []slack.Block {
			return StartNotice(chainInput("deliver-prd", "deliver-user-stories"), false)
		}),
		msg("start_notice_awaiting_start", func(t *testing.T) []slack.Block {
			return StartNotice(chainInput("deliver-prd", "deliver-user-stories"), true)
		}),
		msg("reading_notice", func(t *testing.T) []slack.Block {
			return ReadingNotice([]FileRef{{ID: "F0ABC123", Name: "q3-action-plan.md"}})
		}),
		mod("modal_save_workflow", func(t *testing.T) slack.ModalViewRequest {
			return SaveWorkflowModal(StepRef{Run: goldenRunID, Step: 3, Attempt: 1}, "deliver-prd-user-stories-acceptance-criteria",
				[]string{"deliver-prd", "deliver-user-stories", "deliver-acceptance-criteria"}, true)
		}),
		msg("header_workflow_tasks", func(t *testing.T) []slack.Block {
			s := decomposed(t, 3)
			s.produce(3, "Login fix")
			s.decide(3, engine.DecideApprove, bob, "")
			s.start(4)
			return Header(s.r, s.view())
		}),
		msg("step_decompose_parent", func(t *testing.T) []slack.Block {
			s := decomposed(t, 3)
			return StepMessage(s.r, 1, s.view())
		}),
		msg("step_task", func(t *testing.T) []slack.Block {
			s := decomposed(t, 3)
			s.produce(3, "Stories for login")
			return StepMessage(s.r, 3, s.view())
		}),
		msg("step_route_parent", func(t *testing.T) []slack.Block {
			s := newRun(t, goldenRunID, workflowInput(engine.PlanStep{ID: "triage", Skill: "deliver-prd", Rules: engine.StepRules{Route: true}}), engine.StartOptions{})
			s.produce(1, "routes to bugfix")
			s.approveAdding(1, alice, []engine.PlanStep{
				{ID: "triage.repro", Skill: "deliver-user-stories", Effort: "triage.repro", DependsOn: []string{"triage"}},
				{ID: "triage.fix", Skill: "deliver-prd", Effort: "triage.fix", DependsOn: []string{"triage.repro"}},
			})
			v := s.view()
			v.Preview = "```json\n{\"workflow\": \"bugfix\"}\n```\n"
			return StepMessage(s.r, 1, v)
		}),
		msg("step_retry_pending", func(t *testing.T) []slack.Block {
			s := withRules(t, engine.StepRules{OnError: engine.ErrorPolicy{Kind: engine.OnErrorRetry, Retries: 3, Backoff: 30 * time.Second}})
			s.fail(1, "the agent exited with code 1: overloaded")
			return StepMessage(s.r, 1, s.view())
		}),
		msg("step_retried", func(t *testing.T) []slack.Block {
			s := withRules(t, engine.StepRules{OnError: engine.ErrorPolicy{Kind: engine.OnErrorRetry, Retries: 3, Backoff: 30 * time.Second}})
			s.fail(1, "the agent exited with code 1: overloaded")
			s.decide(1, engine.DecideRedo, engine.RetryActor, "")
			s.produce(1, "PRD")
			return StepMessage(s.r, 1, s.view())
		}),
		msg("step_gate_failed", func(t *testing.T) []slack.Block {
			s := withRules(t, engine.StepRules{OnError: engine.ErrorPolicy{Kind: engine.OnErrorGate}})
			s.fail(1, "postcondition failed: the output does not contain \"## Goals\"")
			return StepMessage(s.r, 1, s.view())
		}),
		msg("step_optional_failed", func(t *testing.T) []slack.Block {
			s := withRules(t, engine.StepRules{Optional: true})
			s.fail(1, "timeout after 20m")
			return StepMessage(s.r, 1, s.view())
		}),
		msg("step_fallback", func(t *testing.T) []slack.Block {
			s := withRules(t, engine.StepRules{Fallback: "deliver-user-stories"})
			s.fail(1, "the agent exited with code 2")
			s.produce(1, "Stories instead")
			return StepMessage(s.r, 1, s.view())
		}),
		msg("halt_retry", func(t *testing.T) []slack.Block {
			s := withRules(t, engine.StepRules{OnError: engine.ErrorPolicy{Kind: engine.OnErrorRetry, Retries: 2, Backoff: time.Minute}})
			s.fail(1, "the agent exited with code 1")
			return Halt(s.r, s.view().onStep(1))
		}),
		msg("halt_gate", func(t *testing.T) []slack.Block {
			s := withRules(t, engine.StepRules{OnError: engine.ErrorPolicy{Kind: engine.OnErrorGate}})
			s.fail(1, "the agent exited with code 1")
			return Halt(s.r, s.view().onStep(1))
		}),
		msg("refusal_workflow_problems", func(t *testing.T) []slack.Block {
			return WorkflowProblems("weekly-discovery", "weekly-discovery.yaml", []engine.Problem{
				{Line: 0, Message: "argument \"topc\" was given, but the workflow does not declare it (did you mean `topic`?); its arguments are topic"},
				{Line: 4, Message: "missing required argument \"topic\": give it with --arg topic=VALUE"},
				{Line: 12, Message: "step \"prd\": unknown key \"gaet\" (did you mean \"gate\"?)"},
			})
		}),
		msg("refusal_unknown_workflow", func(t *testing.T) []slack.Block {
			return UnknownWorkflow("weekly-discovry", []string{"weekly-discovery"}, []string{"bugfix", "release-train", "weekly-discovery"})
		}),
	}
}

// workflowInput is a workflow of the given steps, each depending on the
// one before unless it says otherwise.
func workflowInput(steps ...engine.PlanStep) engine.Plan {
	p := engine.Plan{Input: engine.InputWorkflow, Source: "weekly-discovery", Args: map[string]string{"topic": "guest checkout"}}
	for i, ps := range steps {
		if ps.ID == "" {
			ps.ID = fmt.Sprintf("step-%d", i+1)
		}
		if ps.Effort == "" {
			ps.Effort = ps.ID
		}
		if i > 0 && ps.DependsOn == nil {
			ps.DependsOn = []string{p.Steps[i-1].ID}
		}
		ps.Category, ps.Execution = engine.CategoryContent, engine.ExecDelegate
		p.Steps = append(p.Steps, ps)
	}
	return p
}

// withRules is a two-step workflow whose first step has rules.
// autoChain is a two-step chain run in guarded auto.
func autoChain(t testing.TB) *script {
	p := chainInput("deliver-prd", "deliver-user-stories")
	p.Flags.Auto, p.Flags.ForceAuto = true, true
	return newRun(t, goldenRunID, p, engine.StartOptions{})
}

func withRules(t testing.TB, rules engine.StepRules) *script {
	return newRun(t, goldenRunID, workflowInput(
		engine.PlanStep{ID: "prd", Skill: "deliver-prd", Rules: rules},
		engine.PlanStep{ID: "stories", Skill: "deliver-user-stories"}), engine.StartOptions{})
}

// decomposed is a workflow whose step 1 ("plan") split its work into n
// tasks (steps 2 to n+1, each depending on plan), approved by Alice; step
// "review" (2) waits for them all.
func decomposed(t testing.TB, n int) *script {
	s := newRun(t, goldenRunID, workflowInput(
		engine.PlanStep{ID: "plan", Skill: "deliver-prd", Rules: engine.StepRules{Decompose: "deliver-user-stories"}},
		engine.PlanStep{ID: "review", Skill: "deliver-prd"}), engine.StartOptions{})
	s.produce(1, `{"tasks": [...]}`)
	var tasks []engine.PlanStep
	for i := range n {
		title := []string{"Fix login", "payments › Fix checkout", "Write the docs"}[i%3]
		if i >= 3 {
			title = fmt.Sprintf("Task %d", i+1)
		}
		tasks = append(tasks, engine.PlanStep{ID: fmt.Sprintf("plan.task-%d", i+1), Skill: "deliver-user-stories", Effort: title,
			DependsOn: []string{"plan"}, Category: engine.CategoryContent, Execution: engine.ExecDelegate})
	}
	s.approveAdding(1, alice, tasks)
	return s
}

// approveAdding approves step n of a route or decompose step, adding the
// steps its output brings.
func (s *script) approveAdding(n int, actor string, added []engine.PlanStep) {
	s.t.Helper()
	s.keys++
	d := engine.Decision{Kind: engine.DecideApprove, Actor: actor, Step: n, Attempt: s.latest(n), Key: fmt.Sprintf("k%d", s.keys)}
	s.apply(engine.DecideExpand(s.r, d, nil, added, s.tick()))
}

// TestGolden compares every kind of message and modal with its golden
// file (go test -update rewrites them), and checks each against Block
// Kit's limits.
func TestGolden(t *testing.T) {
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			out := c.render(t)
			switch x := out.(type) {
			case goldenMessage:
				if err := checkBlocks(x.Blocks); err != nil {
					t.Fatalf("CheckBlocks: %v", err)
				}
			case slack.ModalViewRequest:
				if err := checkModal(x); err != nil {
					t.Fatalf("CheckModal: %v", err)
				}
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(out); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "render", c.name+".json")
			if *updateGolden {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to write it)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("%s differs from the golden file (go test -update rewrites it); got:\n%s", path, buf.String())
			}
		})
	}
}

// TestWords checks the words people and scripts look for (DESIGN.md).
func TestWords(t *testing.T) {
	texts := map[string]string{}
	for _, c := range goldenCases() {
		raw, err := json.Marshal(c.render(t))
		if err != nil {
			t.Fatal(err)
		}
		var all []string
		walkStrings(decodeJSON(t, raw), "", func(key, s string) { all = append(all, s) })
		texts[c.name] = strings.Join(all, "\n")
	}
	for name, want := range map[string][]string{
		"step_running":                {"Step 2 of 3", "deliver-user-stories", "Cancel"},
		"step_waiting_produced":       {"Step 1 of 3", "deliver-prd", "(Spec the post-send fix)", "PRODUCED", "01-deliver-prd.md", "Approve", "Edit", "Skip", "Redo", "Abort", "Abort the run?"},
		"step_waiting_failed":         {"FAILED", "Redo", "Abort"},
		"step_interrupted":            {"interrupted", "Redo", "Abort"},
		"interrupted":                 {"Step 1 of 3", "interrupted", "Redo", "Abort"},
		"step_quorum_one_vote":        {"Approvals: 1 of 2 (<@U0ALICE1>)", "own approval does not count"},
		"step_quorum_approved":        {"✅ Approved by <@U0ALICE1> and <@U0BOB22> at <!date^"},
		"step_edited":                 {"✏️ Edited by <@U0ALICE1> at <!date^"},
		"step_skipped":                {"⏭ Skipped by <@U0BOB22> at"},
		"step_redo_first_attempt":     {"🔁 Redo requested by <@U0ALICE1>", "with feedback: “Cover the Android flow too; &lt;!here&gt; &amp; cite the interviews.”"},
		"step_second_attempt":         {"attempt 2", "Earlier attempts: 1 PRODUCED (redo requested by <@U0ALICE1>"},
		"step_aborted":                {"🛑 Aborted by <@U0BOB22>"},
		"step_votes_then_run_aborted": {"👍 Approved by <@U0ALICE1> (1 of the 2 approvals needed)", "🛑 Run aborted"},
		"step_dry_run":                {"NOT EXECUTED - dry run"},
		"step_auto_advanced":          {"Advanced automatically"},
		"completion_chain":            {"Run complete", "Save as workflow", "approved", "edited", "skipped", "U0ALICE1", "U0BOB22", "Total cost"},
		"completion_plan":             {"Run complete", "Manual", "SKIPPED-MANUAL", "Align with legal", "Deferred", "measure-dashboard"},
		"halt_failed":                 {"Run halted", "FAILED", "Redo", "Abort"},
		"halt_aborted":                {"Run halted", "aborted", "Run aborted by <@U0BOB22>"},
		"halt_aborted_while_running":  {"Run halted", "Run aborted by <@U0ALICE1>"},
		"help":                        {"chain", "run WORKFLOW", "runs", "stats [--since 30d] [--skill NAME]"},
		"stats":                       {"*Stats*, all skills, since", "(30d): 40 runs.", "SKILL", "AGENT", "1ST-TRY", "MEDIAN-WAIT", "TOTAL", "By week"},
		"stats_all_time_one_skill":    {"*Stats*, skill `deliver-prd`, all time: 67 runs."},
		"stats_a_year":                {"(52w): 40 runs.", "37 older weeks: `gonogo stats` shows them"},
		"stats_empty":                 {"0 runs. Nothing was run or decided in that period."},
		"refusal_unknown_skill":       {"Refused", "did you mean `deliver-prd`?", "Nothing was run"},
		"header_plan_waiting":         {"Complicated (section-2)", "Medium-High - two interview rounds", "<@U0STARTER>", "Manual", "Deferred", "Cost so far"},
		"header_200_steps": {"Steps: 57 of 200 done (steps 53 to 80 shown; the end of the run lists every step)",
			"Steps 1 to 52", "52 done", "Steps 81 to 200", "120 pending"},
		"modal_edit_reply":    {"Use <@U0ALICE1>'s reply from <!date^", "file `plan.md`, 12,345 characters"},
		"modal_edit_too_long": {"13,000 characters", "reply in this run's thread"},
		"header_workflow_tasks": {"gonogo workflow run: weekly-discovery", "Workflow: `weekly-discovery`", "Arguments: `topic` = guest checkout",
			"1. deliver-prd (plan)", "in_progress\nstep-4\n", "↳ 4. deliver-user-stories (payments › Fix checkout)", "2. deliver-prd (review)"},
		"step_decompose_parent":     {"Step 1 `plan` split its work into 3 tasks", "(steps 3 to 5"},
		"step_route_parent":         {"Step 1 `triage` routed the run to workflow `bugfix`: 2 steps added (steps 2 to 3)"},
		"step_task":                 {"Step 3 of 5: deliver-user-stories", "(Fix login)", "Sub-step of step 1 `plan`"},
		"step_retry_pending":        {"Retrying at <!date^", "^{time_secs}|14:03:44 UTC>", "(retry 1 of 3)", "Redo", "Abort"},
		"step_retried":              {"attempt 2", "1 FAILED (retried automatically)"},
		"header_paused_running":     {"paused by <@U0BOB22>", "the running steps finish and wait at a checkpoint", "Resume auto", "Resume checkpointed"},
		"step_paused_checkpoint":    {"⏸ <@U0BOB22> paused the run at", "Approve", "Edit", "Skip", "Redo", "Abort", "Resume auto", "Resume checkpointed"},
		"step_rate_limited":         {"The agent is rate limited; the run is paused. Retrying at <!date^", "(retry 1 of 5)", "rate limit of 50 requests", "Redo", "Abort"},
		"header_rate_limited":       {"paused: step 1: the agent is rate limited; retrying at", "(retry 1 of 5)"},
		"step_gate_failed":          {"FAILED - postcondition failed", "on_error is *gate*", "Edit", "Skip"},
		"step_optional_failed":      {"skipped (optional step failed: timeout after 20m)"},
		"step_fallback":             {"attempt 2 · ran the fallback `deliver-user-stories`", "Earlier attempts: 1 FAILED"},
		"halt_retry":                {"Step 1 failed: retrying", "(retry 1 of 2, on_error: retry)", "Redo", "Abort"},
		"halt_gate":                 {"Run halted", "*Skip* goes on without it", "waiting for a fix (edit, skip or redo) or abort"},
		"refusal_workflow_problems": {"3 problems in `weekly-discovery.yaml`", "• line 4: missing required argument", "• line 12: step", "did you mean `topic`?", "Nothing was run"},
		"refusal_unknown_workflow":  {"unknown-workflow", "did you mean `weekly-discovery`?", "The 3 workflows: `bugfix`, `release-train`, `weekly-discovery`"},
		"modal_save_workflow":       {"`deliver-prd` → `deliver-user-stories` → `deliver-acceptance-criteria`", "Workflow name", "at most 64"},
		"modal_edit_empty":          {"This attempt has no artifact"},
		"preview_plan": {"Preview: gonogo plan run", "Complicated (section-2)", "Medium-High - two interview rounds", "3 steps to run, 3 not run",
			"1. `deliver-prd` (P1: Spec the post-send fix)", "Write the PRD.", "Manual", "Deferred", "--auto ignored", "$5.00",
			"Nothing runs until <@U0STARTER> or an approver presses *Start*", "Start", "Cancel"},
		"preview_chain_cancelled": {"Cancelled: gonogo chain run", "Cancelled before it started by <@U0BOB22>", "Nothing ran"},
		"preview_chain_started":   {"gonogo chain run", "running step 1", "Pause"},
		"check_workflow": {"Check: gonogo workflow run: weekly-discovery", "dry-run", "`prd` (`deliver-prd`)", "after `prd`",
			"runs its leaf agent `experiment-designer` inline", "Levels", "Checked only: nothing was recorded or run", "/gonogo run weekly-discovery"},
		"plan_choice": {"Which one should gonogo run?", "`q2-plan.md` (4.2 KiB)", "Use this plan", "Only <@U0ALICE1>, who sent them, can pick"},
	} {
		for _, w := range want {
			if !strings.Contains(texts[name], w) {
				t.Errorf("%s does not say %q:\n%s", name, w, texts[name])
			}
		}
	}
}

func mapKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func decodeJSON(t testing.TB, raw []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// walkStrings calls fn for every string in decoded JSON, with its key,
// an object's keys in sorted order: the texts a test reads are the same
// on every run.
func walkStrings(v any, key string, fn func(key, s string)) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(mapKeys(x)) {
			walkStrings(x[k], k, fn)
		}
	case []any:
		for _, e := range x {
			walkStrings(e, key, fn)
		}
	case string:
		fn(key, x)
	}
}

// checkMarkup fails when a text Slack parses carries markup gonogo did
// not write: in mrkdwn every "<" must open a mention of a known person, a
// date, or a link gonogo made, and every "&" an entity; text Slack renders
// as Markdown (a markdown block, outside its code) or shows as it is (a
// table's raw text, a rich text element) must be defanged (checkDefanged),
// and a rich text
// mention must name a known person. The input's initial value is the
// artifact itself, shown as typed, and is not parsed.
func checkMarkup(t testing.TB, raw []byte, known ...string) {
	t.Helper()
	allowed := []string{"<!date^", "<https://example.slack.com/"}
	for _, k := range known {
		allowed = append(allowed, "<@"+k+">")
	}
	doc := decodeJSON(t, raw)
	checkUnparsed(t, doc, known)
	walkStrings(doc, "", func(key, s string) {
		if key != "text" {
			return
		}
		for i := 0; i < len(s); i++ {
			switch s[i] {
			case '<':
				if !slices.ContainsFunc(allowed, func(a string) bool { return strings.HasPrefix(s[i:], a) }) {
					t.Errorf("text carries markup gonogo did not write at %d: %q", i, around(s, i))
				}
				if end := strings.IndexByte(s[i:], '>'); end > 0 {
					i += end
				}
			case '>':
				t.Errorf("text carries a bare > at %d: %q", i, around(s, i))
			case '&':
				if !strings.HasPrefix(s[i:], "&amp;") && !strings.HasPrefix(s[i:], "&lt;") && !strings.HasPrefix(s[i:], "&gt;") {
					t.Errorf("text carries a bare & at %d: %q", i, around(s, i))
				}
			}
		}
	})
}

// checkUnparsed checks, and takes out of doc, the texts of markdown
// blocks, raw text cells and rich text elements, which follow other rules
// than mrkdwn.
func checkUnparsed(t testing.TB, doc any, known []string) {
	t.Helper()
	switch x := doc.(type) {
	case map[string]any:
		switch x["type"] {
		case "markdown":
			// An artifact's code is left as the agent wrote it.
			if s, ok := x["text"].(string); ok {
				checkDefangedOutsideCode(t, s)
				delete(x, "text")
			}
		case "raw_text", "text":
			if s, ok := x["text"].(string); ok {
				checkDefanged(t, s)
				delete(x, "text")
			}
		case "user":
			if id, _ := x["user_id"].(string); !slices.Contains(known, id) {
				t.Errorf("a mention of %q, whom gonogo did not name", id)
			}
		}
		for _, e := range x {
			checkUnparsed(t, e, known)
		}
	case []any:
		for _, e := range x {
			checkUnparsed(t, e, known)
		}
	}
}

func around(s string, i int) string {
	lo, hi := max(0, i-20), min(len(s), i+40)
	return strings.ToValidUTF8(s[lo:hi], "?")
}

func newRunWaiting(t *testing.T) *engine.Run {
	s := newRun(t, goldenRunID, chainInput("deliver-prd"), engine.StartOptions{})
	s.produce(1, "x")
	return s.r
}

// randomText is text that makes rendering hard: long, multi-line,
// astral emoji, control characters, markup, invalid UTF-8.
func randomText(rng *rand.Rand, maxLen int) string {
	pieces := []string{"a", "word ", "\n", "<!channel>", "<@UEVIL>", "&", "<", ">", "```", "😀", "é", "\x00", "\x1b[31m",
		"\u202e", "\xff", "*bold*", "|", "<https://evil.example|x>", "\t", strings.Repeat("long", 50), "ß", "字"}
	n := rng.IntN(maxLen + 1)
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.String()
}

func randomName(rng *rand.Rand) string {
	switch rng.IntN(4) {
	case 0:
		return fmt.Sprintf("skill-%d", rng.IntN(1000))
	case 1:
		return strings.Repeat("very-long-skill-name-", 1+rng.IntN(20))
	}
	return randomText(rng, 300)
}

// randomRun walks a run of up to steps steps through random transitions
// and stops at a random point: running, waiting, interrupted, complete or
// aborted.
func randomRun(t testing.TB, rng *rand.Rand, steps int) *script {
	p := engine.Plan{Input: []engine.InputKind{engine.InputPlan, engine.InputChain, engine.InputWorkflow}[rng.IntN(3)],
		Source: randomText(rng, 500), Context: randomText(rng, 400), Confidence: randomText(rng, 20),
		ConfidenceReason: randomText(rng, 3000), Warnings: []string{randomText(rng, 2000)}}
	for i := 0; i < steps; i++ {
		p.Steps = append(p.Steps, engine.PlanStep{Skill: randomName(rng), Effort: randomText(rng, 400)})
	}
	for i := rng.IntN(30); i > 0; i-- {
		p.Manual = append(p.Manual, engine.Block{Skill: randomName(rng), Effort: randomText(rng, 300), Reason: randomText(rng, 500), PTokens: []string{"P1"}})
		p.Deferred = append(p.Deferred, engine.Block{Skill: randomName(rng), Effort: randomText(rng, 300)})
	}
	s := newRun(t, engine.RunID(fmt.Sprintf("20260302-140000-%08x", rng.Uint32())), p,
		engine.StartOptions{StartedBy: []string{starter, "terminal-user", randomText(rng, 40)}[rng.IntN(3)], Quorum: rng.IntN(3)})
	actors := []string{alice, bob, starter}
	for n := 1; n <= steps; n++ {
		for {
			if rng.IntN(40) == 0 {
				return s
			}
			s.start(n)
			if rng.IntN(30) == 0 {
				if rng.IntN(2) == 0 {
					s.interrupt()
				}
				return s
			}
			res := []engine.Result{engine.ResultProduced, engine.ResultProduced, engine.ResultEmpty, engine.ResultFailed, engine.ResultNotExecuted}[rng.IntN(5)]
			st := s.r.Step(n)
			s.finish(n, engine.Finished{Result: res, Reason: randomText(rng, 2000), Summary: randomText(rng, 1000),
				Artifact: res != engine.ResultFailed, Size: rng.IntN(1 << 20), CostUSD: rng.Float64(),
				File: engine.ArtifactFile(s.r.ID, n, st.Skill, s.latest(n), true), Usage: engine.Usage{Turns: rng.IntN(50)}})
			if s.r.Step(n).Status != engine.StepWaiting {
				break
			}
			if rng.IntN(25) == 0 {
				return s
			}
			allowed := engine.Allowed(s.r.Step(n))
			k := allowed[rng.IntN(len(allowed))]
			for k == engine.DecideApprove && s.r.Step(n).Status == engine.StepWaiting && len(engine.Approvals(s.r.Step(n))) < len(actors) {
				actor := actors[len(engine.Approvals(s.r.Step(n)))]
				if s.r.ExcludeStarter && actor == s.r.StartedBy {
					break
				}
				s.decide(n, k, actor, "")
			}
			if k != engine.DecideApprove {
				s.decide(n, k, actors[rng.IntN(len(actors))], randomText(rng, 4000))
			}
			if s.r.Finished() || s.r.Step(n).Settled() {
				break
			}
		}
		if s.r.Finished() {
			return s
		}
	}
	return s
}

// checkAll renders everything for a run and checks every output
// against Block Kit's limits and for foreign markup.
func checkAll(t testing.TB, rng *rand.Rand, s *script, artifact string) {
	t.Helper()
	v := s.view()
	v.Preview, v.ArtifactName = artifact, randomText(rng, 300)
	v.ArtifactLink = "https://example.slack.com/files/F1"
	v.RemindedAt, v.Deadline = s.now, s.now.Add(time.Hour)
	progress := map[int]engine.Progress{}
	if s.r.Step(1) != nil && rng.IntN(2) == 0 {
		progress[1] = engine.Progress{Turns: rng.IntN(100), ToolCalls: rng.IntN(100000), LastTool: randomText(rng, 200),
			Status: randomText(rng, 300), CostUSD: rng.Float64()}
	}
	checkStatus(t, s.r, progress, v.Now)
	check := func(what string, blocks []slack.Block) {
		if err := checkBlocks(blocks); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		raw, err := json.Marshal(blocks)
		if err != nil {
			t.Fatal(err)
		}
		checkMarkup(t, raw, alice, bob, starter)
		if fb := FallbackText(blocks); textLen(fb) > 300 || !utf8.ValidString(fb) {
			t.Fatalf("%s: fallback text %q", what, fb)
		}
	}
	check("header", Header(s.r, v))
	check("completion", Completion(s.r, v))
	check("halt", Halt(s.r, v))
	ns := []int{1, len(s.r.Steps), 1 + rng.IntN(len(s.r.Steps))}
	for i := range s.r.Steps {
		if st := s.r.Steps[i].Status; st == engine.StepWaiting || st == engine.StepRunning || st == engine.StepInterrupted {
			ns = append(ns, i+1)
		}
	}
	for _, n := range ns {
		st := s.r.Step(n)
		sv := v
		if len(st.Attempts) > 1 && rng.IntN(2) == 0 {
			sv.Attempt = 1
		}
		blocks := StepMessage(s.r, n, sv)
		check(fmt.Sprintf("step %d", n), blocks)
		if !strings.Contains(FallbackText(blocks), fmt.Sprintf("Step %d of %d", n, len(s.r.Steps))) {
			t.Fatalf("step %d: fallback %q lacks Step i of N", n, FallbackText(blocks))
		}
		check("interrupted", Interrupted(s.r, n, v))
		check("reminder", Reminder(s.r, n, v))
		ref := StepRef{Run: s.r.ID, Step: n, Attempt: s.latest(n)}
		for _, m := range []slack.ModalViewRequest{
			EditModal(ref, st.Skill, artifact), RedoModal(ref, st.Skill), EditTooLongModal(ref, st.Skill, rng.IntN(1<<30)),
			EditFromReplyModal(ref, st.Skill, Reply{User: alice, TS: "1.2", File: randomText(rng, 300), FileID: "F1", Chars: rng.Int(), Time: s.now},
				Reply{User: randomText(rng, 30), TS: "1.3", Chars: -1}),
			UnusableReplyModal(ref, st.Skill, Reply{User: alice, TS: "1.2", File: randomText(rng, 300), FileID: "F1", Time: s.now}, randomText(rng, 3000)),
			LoadingModal(ActSaveWorkflow, ref), NoticeModal(ActEdit, ref, mayNot(ActEdit, alice)),
		} {
			if err := checkModal(m); err != nil {
				t.Fatalf("modal for step %d: %v", n, err)
			}
			raw, err := json.Marshal(m.Blocks)
			if err != nil {
				t.Fatal(err)
			}
			checkMarkup(t, raw, alice, bob, starter)
		}
	}
}

// TestManyRuns renders many generated runs (long names, 200 steps,
// artifacts up to 100 KB, control characters, markup) and checks that
// every message and modal stays within Block Kit's limits.
func TestManyRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	runs := 60
	if testing.Short() {
		runs = 15
	}
	for i := 0; i < runs; i++ {
		steps := 1 + rng.IntN(8)
		if i%10 == 0 {
			steps = 200
		}
		s := randomRun(t, rng, steps)
		artifact := randomText(rng, 3500)
		if i%4 == 0 {
			artifact = randomText(rng, 100<<10)
		}
		checkAll(t, rng, s, artifact)
	}
	// Task names come from an agent's output: anything at all.
	for i := 0; i < 4; i++ {
		s := decomposed(t, 1+rng.IntN(engine.MaxTasks))
		for j := 2; j < len(s.r.Steps); j++ {
			s.r.Steps[j].Effort = randomText(rng, 400)
		}
		if rng.IntN(2) == 0 {
			s.fail(3, randomText(rng, 2000))
		}
		checkAll(t, rng, s, randomText(rng, 3500))
	}
	var sums []engine.RunSummary
	links := map[engine.RunID]string{}
	for i := 0; i < 300; i++ {
		id := engine.RunID(randomText(rng, 100))
		sums = append(sums, engine.RunSummary{ID: id, Source: randomText(rng, 2000), State: engine.RunWaiting, Input: engine.InputChain, StepsTotal: i})
		links[id] = "https://example.slack.com/archives/C1/p" + fmt.Sprint(i)
	}
	if err := checkBlocks(RunsList(sums, links)); err != nil {
		t.Fatal(err)
	}
	suggest := map[string][]string{}
	for i := 0; i < 500; i++ {
		suggest[randomText(rng, 200)] = []string{randomText(rng, 200), randomText(rng, 200)}
	}
	for _, b := range [][]slack.Block{
		Refusal(&engine.Refusal{Reason: engine.RefuseUnknownSkill, Message: randomText(rng, 20000), Source: randomText(rng, 5000), Line: 3, Suggestions: suggest}, engine.InputPlan),
		Refusal(nil, engine.InputChain),
		InputProblem(&InputError{Problem: randomText(rng, 20000), Usage: randomText(rng, 5000)}),
		HelpBlocks(randomText(rng, 50)),
		Header(nil, View{}), StepMessage(nil, 1, View{}), Completion(nil, View{}),
	} {
		if err := checkBlocks(b); err != nil {
			t.Fatal(err)
		}
	}
}

// FuzzRender renders a run whose skill name, effort, artifact, summary and
// feedback are arbitrary: nothing panics, every output stays within Block
// Kit's limits, and no user text becomes markup.
func FuzzRender(f *testing.F) {
	f.Add("deliver-prd", "Spec the fix", goldenArtifact, "A PRD.", "more detail")
	f.Add("", "", "", "", "")
	f.Add(strings.Repeat("x", 5000), "<!channel>", strings.Repeat("😀", 3001), "\x00\xff", "&amp;<@U1>")
	f.Add("a|b", "```", "```\n```\n", "*_~`", "<https://x|y>")
	f.Fuzz(func(t *testing.T, skill, effort, artifact, summary, feedback string) {
		p := chainInput(skill, "deliver-user-stories")
		p.Steps[0].Effort = effort
		s := newRun(t, goldenRunID, p, engine.StartOptions{Quorum: 2})
		s.start(1)
		s.finish(1, engine.Finished{Result: engine.ResultProduced, Summary: summary, Reason: feedback, Artifact: true, Size: len(artifact)})
		s.decide(1, engine.DecideApprove, alice, "")
		s.decide(1, engine.DecideRedo, bob, feedback)
		s.start(1)
		s.finish(1, engine.Finished{Result: engine.ResultFailed, Reason: feedback, Summary: summary})
		rng := rand.New(rand.NewPCG(uint64(len(skill)), uint64(len(artifact))))
		checkAll(t, rng, s, artifact)
		s.decide(1, engine.DecideAbort, alice, "")
		checkAll(t, rng, s, artifact)
	})
}

// A decompose step may add engine.MaxTasks tasks: every message of the run
// still fits Block Kit, the header and the end table sum up what they do
// not list, and the tasks are listed under the step that added them.
func TestHundredTasksFit(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	s := decomposed(t, engine.MaxTasks)
	last := engine.MaxTasks + 2
	for n := 3; n < 60; n++ {
		s.produce(n, "ok")
		s.decide(n, engine.DecideApprove, alice, "")
	}
	s.produce(60, "waiting")
	checkAll(t, rng, s, goldenArtifact)
	header := allText(t, Header(s.r, s.view()))
	for _, w := range []string{fmt.Sprintf("Steps: 58 of %d done (", last), "the end of the run lists every step", "in_progress\nstep-60\n", "↳ 60. deliver-user-stories (Task 58)"} {
		if !strings.Contains(header, w) {
			t.Errorf("the header does not say %q:\n%s", w, header)
		}
	}
	parent := allText(t, StepMessage(s.r, 1, s.view()))
	if !strings.Contains(parent, fmt.Sprintf("split its work into 100 tasks, each run with `deliver-user-stories` (steps 3 to %d", last)) {
		t.Errorf("the decompose step's message does not count its tasks:\n%s", parent)
	}
	for n := 60; n <= last; n++ {
		if n > 60 {
			s.produce(n, "ok")
		}
		s.decide(n, engine.DecideApprove, bob, "")
	}
	s.produce(2, "review")
	s.decide(2, engine.DecideApprove, alice, "")
	if s.r.State != engine.RunCompleted {
		t.Fatalf("run is %s, want completed", s.r.State)
	}
	checkAll(t, rng, s, goldenArtifact)
	end := allText(t, Completion(s.r, s.view()))
	// Slack's table takes 100 rows: the titles, 98 steps, and one that
	// sums up the last 4.
	for _, w := range []string{"↳ 3. deliver-user-stories (Fix login)", "… 4 steps", "4 PRODUCED", "4 done",
		"The table lists 98 of the 102 steps"} {
		if !strings.Contains(end, w) {
			t.Errorf("the end table does not list the first tasks and sum up the rest (no %q):\n%s", w, end)
		}
	}
}

// gonogo's own retries are made by engine.RetryActor, which is no Slack
// user: it is named as text, never as a mention.
func TestRetryActorIsNotAMention(t *testing.T) {
	s := withRules(t, engine.StepRules{OnError: engine.ErrorPolicy{Kind: engine.OnErrorRetry, Retries: 3}})
	s.fail(1, "boom")
	s.decide(1, engine.DecideRedo, engine.RetryActor, "")
	s.start(1)
	v := s.view()
	v.Attempt = 1
	text := allText(t, StepMessage(s.r, 1, v))
	if strings.Contains(text, "<@") || !strings.Contains(text, "Retried automatically (on_error: retry)") {
		t.Errorf("the retry is not told as gonogo's own:\n%s", text)
	}
	if got := who(engine.RetryActor); got != "gonogo (retry)" {
		t.Errorf("who(RetryActor) = %q", got)
	}
}

func allText(t testing.TB, blocks []slack.Block) string {
	t.Helper()
	if err := checkBlocks(blocks); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(blocks)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	walkStrings(decodeJSON(t, raw), "", func(_, s string) { all = append(all, s) })
	return strings.Join(all, "\n")
}
