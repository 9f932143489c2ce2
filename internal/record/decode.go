package record

import (
	"fmt"

	"github.com/gonogo/gonogo/engine"
)

// Decoding: records to engine values. Typed states go through the engine's
// parsers, so a state this gonogo does not know is an error, never a guess.

// stateReader collects the first parse error, so conversion code reads as a
// list of fields rather than a ladder of ifs.
type stateReader struct{ err error }

func (p *stateReader) fail(what string, err error) {
	if p.err == nil {
		p.err = fmt.Errorf("%s: %w", what, err)
	}
}

func parseReq[T ~string](p *stateReader, what, s string, parse func(string) (T, error)) T {
	v, err := parse(s)
	if err != nil {
		p.fail(what, err)
	}
	return v
}

// parseOpt reads a state that may be absent (the empty string).
func parseOpt[T ~string](p *stateReader, what, s string, parse func(string) (T, error)) T {
	if s == "" {
		return ""
	}
	return parseReq(p, what, s, parse)
}

func fromOrigin(o originRecord) engine.Origin {
	return engine.Origin{Channel: o.Channel, Thread: o.Thread}
}

func fromUsage(u usageRecord) engine.Usage {
	return engine.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CacheRead: u.CacheRead, CacheCreate: u.CacheCreate, Turns: u.Turns}
}

// fromRunRecord builds a run from its snapshot and plan records.
func fromRunRecord(rec *runRecord, plan engine.Plan) (*engine.Run, error) {
	if err := CheckVersion(rec.V); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	var p stateReader
	r := &engine.Run{
		ID:        engine.RunID(rec.ID),
		State:     parseReq(&p, "state", rec.State, engine.ParseRunState),
		Input:     engine.InputKind(rec.Input),
		Mode:      parseReq(&p, "mode", rec.Mode, engine.ParseMode),
		DryRun:    rec.DryRun,
		Thread:    rec.Thread,
		ForceAuto: rec.ForceAuto,
		BudgetUSD: rec.BudgetUSD, Quorum: rec.Quorum, ExcludeStarter: rec.ExclStart,
		Plan:      plan,
		StartedBy: rec.StartedBy,
		Origin:    fromOrigin(rec.Origin),
		Created:   rec.Created,
		Updated:   rec.Updated,
		CostUSD:   rec.CostUSD,
		Seq:       rec.Seq,
		Halt:      rec.Halt,
		Paused:    rec.Paused, PausedBy: rec.PausedBy, PauseReason: rec.PauseReason, PausedAt: rec.PausedAt,
		Setup: fromSetupRecord(rec.Setup), Oversight: fromOversightRecord(&p, rec.Oversight),
	}
	if rec.Steps != nil {
		r.Steps = make([]engine.Step, len(rec.Steps))
	}
	for i, sr := range rec.Steps {
		where := fmt.Sprintf("step %d", i+1)
		if sr.FromPlan {
			if i >= len(plan.Steps) {
				return nil, fmt.Errorf("%s refers to plan step %d of %d", where, i+1, len(plan.Steps))
			}
			ps := plan.Steps[i]
			sr.ID, sr.Skill, sr.Effort, sr.Prompt = ps.ID, ps.Skill, ps.Effort, ps.Prompt
			sr.Category, sr.Execution, sr.Leaf, sr.Gate = string(ps.Category), string(ps.Execution), ps.Leaf, string(ps.Gate)
			sr.Rules = toRulesRecord(ps.Rules)
		}
		s := engine.Step{
			StepDef: &engine.StepDef{
				N: sr.N, ID: sr.ID, Skill: sr.Skill, Effort: sr.Effort, Prompt: sr.Prompt,
				Category: engine.Category(sr.Category), Execution: engine.Execution(sr.Execution), Leaf: sr.Leaf,
				DependsOn: sr.DependsOn, ThreadFrom: sr.ThreadFrom, Rules: fromRulesRecord(sr.Rules),
				Parent: sr.Parent,
				Gate:   parseOpt(&p, where+" gate", sr.Gate, engine.ParseGate),
			},
			StepState: &engine.StepState{
				Using:  sr.Using,
				Held:   sr.Held,
				Status: parseReq(&p, where+" status", sr.Status, engine.ParseStepStatus),
			},
		}
		if sr.Attempts != nil {
			s.Attempts = make([]engine.Attempt, len(sr.Attempts))
		}
		for j, a := range sr.Attempts {
			s.Attempts[j] = engine.Attempt{
				N: a.N, Skill: a.Skill,
				Result: parseOpt(&p, fmt.Sprintf("%s attempt %d result", where, a.N), a.Result, engine.ParseResult),
				Reason: a.Reason, Summary: a.Summary, Feedback: a.Feedback, Artifact: a.Artifact,
				Edited: a.Edited, Final: a.Final, Size: a.Size, File: a.File, CostUSD: a.CostUSD, Usage: fromUsage(a.Usage),
				Started: a.Started, Finished: a.Finished,
				ErrorKind: parseOpt(&p, fmt.Sprintf("%s attempt %d error kind", where, a.N), a.ErrorKind, engine.ParseAgentErrorKind),
				RetryAt:   a.RetryAt, Retries: a.Retries, Reminded: a.Reminded, TimedOut: a.TimedOut,
				Runner: a.Runner, Candidate: a.Candidate, Picked: a.Picked,
			}
		}
		if sr.Decisions != nil {
			s.Decisions = make([]engine.Decision, len(sr.Decisions))
		}
		for j, d := range sr.Decisions {
			s.Decisions[j] = engine.Decision{
				Kind:  parseReq(&p, where+" decision", d.Kind, engine.ParseDecisionKind),
				Actor: d.Actor, Time: d.Time, Step: d.Step, Attempt: d.Attempt, Key: d.Key, Feedback: d.Feedback,
				Candidate: d.Candidate,
			}
		}
		r.Steps[i] = s
	}
	if p.err != nil {
		return nil, p.err
	}
	return r, nil
}

func fromPlanRecord(rec *planRecord) (engine.Plan, error) {
	if err := CheckVersion(rec.V); err != nil {
		return engine.Plan{}, fmt.Errorf("plan: %w", err)
	}
	var p stateReader
	plan := engine.Plan{
		Input: engine.InputKind(rec.Input), Source: rec.Source, Domain: engine.Domain(rec.Domain),
		DomainSource: rec.DomainSource, DomainAmbiguous: rec.DomainAmbiguous, Confidence: rec.Confidence,
		ConfidenceReason: rec.ConfidenceReason, Context: rec.Context, Args: rec.Args,
		Flags:    engine.Flags{Auto: rec.Flags.Auto, ForceAuto: rec.Flags.ForceAuto, DryRun: rec.Flags.DryRun, Thread: rec.Flags.Thread},
		Manual:   fromBlockRecords(rec.Manual),
		Deferred: fromBlockRecords(rec.Deferred),
		Warnings: rec.Warnings,
	}
	plan.Steps = fromPlanStepRecords(&p, "plan step", rec.Steps)
	return plan, p.err
}

func fromPlanStepRecords(p *stateReader, what string, recs []planStepRecord) []engine.PlanStep {
	if recs == nil {
		return nil
	}
	out := make([]engine.PlanStep, len(recs))
	for i, s := range recs {
		out[i] = engine.PlanStep{
			Skill: s.Skill, Effort: s.Effort, PTokens: s.PTokens, Prompt: s.Prompt,
			Category: engine.Category(s.Category), Execution: engine.Execution(s.Execution), Leaf: s.Leaf,
			Line: s.Line, ID: s.ID, DependsOn: s.DependsOn,
			Gate:  parseOpt(p, fmt.Sprintf("%s %d gate", what, i+1), s.Gate, engine.ParseGate),
			Rules: fromRulesRecord(s.Rules),
		}
	}
	return out
}

func fromBlockRecords(bs []blockRecord) []engine.Block {
	if bs == nil {
		return nil
	}
	out := make([]engine.Block, len(bs))
	for i, b := range bs {
		out[i] = engine.Block{Effort: b.Effort, PTokens: b.PTokens, Skill: b.Skill, Prompt: b.Prompt, Reason: b.Reason, Line: b.Line}
	}
	return out
}

// fromEventRecord decodes an event; stored reads the run's stored plan,
// for a run-started event that refers to it. Its errors do not name the
// event: the caller knows where it lies.
func fromEventRecord(rec *eventRecord, stored func() (engine.Plan, error)) (engine.Event, error) {
	if err := CheckVersion(rec.V); err != nil {
		return engine.Event{}, err
	}
	var p stateReader
	ev := engine.Event{
		Seq: rec.Seq, Time: rec.Time,
		Type:    parseReq(&p, "type", rec.Type, engine.ParseEventType),
		Step:    rec.Step,
		Attempt: rec.Attempt, Actor: rec.Actor,
		Decision: parseOpt(&p, "decision", rec.Decision, engine.ParseDecisionKind),
		Key:      rec.Key, Feedback: rec.Feedback,
		Status: parseOpt(&p, "status", rec.Status, engine.ParseStepStatus),
		Result: parseOpt(&p, "result", rec.Result, engine.ParseResult),
		Reason: rec.Reason, Summary: rec.Summary, Size: rec.Size, Artifact: rec.Artifact, File: rec.File,
		CostUSD: rec.CostUSD, Usage: fromUsage(rec.Usage),
		Mode:  parseOpt(&p, "mode", rec.Mode, engine.ParseMode),
		State: parseOpt(&p, "state", rec.State, engine.ParseRunState),
		Skill: rec.Skill, Final: rec.Final,
		ErrorKind: parseOpt(&p, "error kind", rec.ErrorKind, engine.ParseAgentErrorKind),
		RetryAt:   rec.RetryAt, Retries: rec.Retries, Held: rec.Held, Lost: rec.Lost, Agent: rec.Agent,
		Setup: fromSetupRecord(rec.Setup), Changes: fromSetupChanges(rec.Changes),
		Runner: rec.Runner, Candidate: rec.Candidate,
	}
	ev.Added = fromPlanStepRecords(&p, "added step", rec.Added)
	if st := rec.Start; st != nil {
		var plan engine.Plan
		var err error
		switch {
		case st.PlanStored:
			plan, err = stored()
		case st.Plan != nil:
			plan, err = fromPlanRecord(st.Plan)
		}
		if err != nil {
			p.fail("start", err)
		}
		ev.Start = &engine.RunStart{
			ID: engine.RunID(st.ID), Plan: plan,
			Mode:   parseReq(&p, "start mode", st.Mode, engine.ParseMode),
			DryRun: st.DryRun, Thread: st.Thread, ForceAuto: st.ForceAuto, BudgetUSD: st.BudgetUSD,
			Quorum: st.Quorum, ExcludeStarter: st.ExclStart,
			StartedBy: st.StartedBy, Origin: fromOrigin(st.Origin), Setup: fromSetupRecord(st.Setup),
			Oversight: fromOversightRecord(&p, st.Oversight),
		}
	}
	if p.err != nil {
		return engine.Event{}, p.err
	}
	return ev, nil
}

func fromSummaryRecord(id engine.RunID, rec *summaryRecord) (engine.RunSummary, error) {
	if err := CheckVersion(rec.V); err != nil {
		return engine.RunSummary{}, fmt.Errorf("summary: %w", err)
	}
	state, err := engine.ParseRunState(rec.State)
	if err != nil {
		return engine.RunSummary{}, fmt.Errorf("summary: %w", err)
	}
	return engine.RunSummary{
		ID: id, State: state, Input: engine.InputKind(rec.Input), Source: rec.Source,
		Origin: fromOrigin(rec.Origin), Created: rec.Created, Updated: rec.Updated,
		StepsTotal: rec.StepsTotal, StepsDone: rec.StepsDone,
	}, nil
}
