package record

import (
	"reflect"

	"github.com/gonogo/gonogo/engine"
)

// Encoding: engine values to records.

func toRunRecord(r *engine.Run) runRecord {
	rec := runRecord{
		V: Version, ID: string(r.ID), State: string(r.State), Input: string(r.Input),
		Mode: string(r.Mode), DryRun: r.DryRun, Thread: r.Thread, ForceAuto: r.ForceAuto,
		BudgetUSD: r.BudgetUSD, Quorum: r.Quorum, ExclStart: r.ExcludeStarter, StartedBy: r.StartedBy, Origin: toOrigin(r.Origin),
		Created: r.Created, Updated: r.Updated, CostUSD: r.CostUSD, Seq: r.Seq, Halt: r.Halt,
		Paused: r.Paused, PausedBy: r.PausedBy, PauseReason: r.PauseReason, PausedAt: r.PausedAt,
		Setup: toSetupRecord(r.Setup), Oversight: toOversightRecord(r.Oversight),
	}
	if r.Steps != nil {
		rec.Steps = make([]stepRecord, len(r.Steps))
	}
	for i, s := range r.Steps {
		sr := stepRecord{N: s.N, DependsOn: s.DependsOn, ThreadFrom: s.ThreadFrom, Status: string(s.Status), Parent: s.Parent, Using: s.Using, Held: s.Held}
		if i < len(r.Plan.Steps) && samePlanStep(&s, &r.Plan.Steps[i]) {
			sr.FromPlan = true
		} else {
			sr.ID, sr.Skill, sr.Effort, sr.Prompt = s.ID, s.Skill, s.Effort, s.Prompt
			sr.Category, sr.Execution, sr.Leaf, sr.Gate = string(s.Category), string(s.Execution), s.Leaf, string(s.Gate)
			sr.Rules = toRulesRecord(s.Rules)
		}
		if s.Attempts != nil {
			sr.Attempts = make([]attemptRecord, len(s.Attempts))
		}
		for j, a := range s.Attempts {
			sr.Attempts[j] = attemptRecord{
				N: a.N, Skill: a.Skill, Result: string(a.Result), Reason: a.Reason, Summary: a.Summary, Feedback: a.Feedback,
				Artifact: a.Artifact, Edited: a.Edited, Final: a.Final, Size: a.Size, File: a.File, CostUSD: a.CostUSD,
				Usage: toUsage(a.Usage), Started: a.Started, Finished: a.Finished,
				ErrorKind: string(a.ErrorKind), RetryAt: a.RetryAt, Retries: a.Retries,
				Reminded: a.Reminded, TimedOut: a.TimedOut, Runner: a.Runner, Candidate: a.Candidate, Picked: a.Picked,
			}
		}
		if s.Decisions != nil {
			sr.Decisions = make([]decisionRecord, len(s.Decisions))
		}
		for j, d := range s.Decisions {
			sr.Decisions[j] = decisionRecord{Kind: string(d.Kind), Actor: d.Actor, Time: d.Time,
				Step: d.Step, Attempt: d.Attempt, Key: d.Key, Feedback: d.Feedback, Candidate: d.Candidate}
		}
		rec.Steps[i] = sr
	}
	return rec
}

func toPlanRecord(p engine.Plan) planRecord {
	rec := planRecord{
		V: Version, Input: string(p.Input), Source: p.Source, Domain: string(p.Domain),
		DomainSource: p.DomainSource, DomainAmbiguous: p.DomainAmbiguous, Confidence: p.Confidence,
		ConfidenceReason: p.ConfidenceReason, Context: p.Context, Args: p.Args,
		Flags:    flagsRecord{Auto: p.Flags.Auto, ForceAuto: p.Flags.ForceAuto, DryRun: p.Flags.DryRun, Thread: p.Flags.Thread},
		Manual:   toBlockRecords(p.Manual),
		Deferred: toBlockRecords(p.Deferred),
		Warnings: p.Warnings,
	}
	rec.Steps = toPlanStepRecords(p.Steps)
	return rec
}

func toPlanStepRecords(steps []engine.PlanStep) []planStepRecord {
	if steps == nil {
		return nil
	}
	out := make([]planStepRecord, len(steps))
	for i, s := range steps {
		out[i] = planStepRecord{
			Skill: s.Skill, Effort: s.Effort, PTokens: s.PTokens, Prompt: s.Prompt,
			Category: string(s.Category), Execution: string(s.Execution), Leaf: s.Leaf, Line: s.Line,
			ID: s.ID, DependsOn: s.DependsOn, Gate: string(s.Gate), Rules: toRulesRecord(s.Rules),
		}
	}
	return out
}

func toBlockRecords(bs []engine.Block) []blockRecord {
	if bs == nil {
		return nil
	}
	out := make([]blockRecord, len(bs))
	for i, b := range bs {
		out[i] = blockRecord{Effort: b.Effort, PTokens: b.PTokens, Skill: b.Skill, Prompt: b.Prompt, Reason: b.Reason, Line: b.Line}
	}
	return out
}

// toEventRecord encodes an event. stored is the plan kept beside the
// event's journal (EncodePlan), nil when none is.
func toEventRecord(ev engine.Event, stored *engine.Plan) eventRecord {
	rec := eventRecord{
		V: Version, Seq: ev.Seq, Time: ev.Time, Type: string(ev.Type), Step: ev.Step, Attempt: ev.Attempt,
		Actor: ev.Actor, Decision: string(ev.Decision), Key: ev.Key, Feedback: ev.Feedback,
		Status: string(ev.Status), Result: string(ev.Result), Reason: ev.Reason, Summary: ev.Summary,
		Size: ev.Size, Artifact: ev.Artifact, File: ev.File, CostUSD: ev.CostUSD, Usage: toUsage(ev.Usage),
		Mode: string(ev.Mode), State: string(ev.State), Skill: ev.Skill, Final: ev.Final, Added: toPlanStepRecords(ev.Added),
		ErrorKind: string(ev.ErrorKind), RetryAt: ev.RetryAt, Retries: ev.Retries, Held: ev.Held, Lost: ev.Lost, Agent: ev.Agent,
		Setup: toSetupRecord(ev.Setup), Changes: toSetupChanges(ev.Changes), Runner: ev.Runner, Candidate: ev.Candidate,
	}
	if st := ev.Start; st != nil {
		rec.Start = &startRecord{
			ID: string(st.ID), Mode: string(st.Mode), DryRun: st.DryRun,
			Thread: st.Thread, ForceAuto: st.ForceAuto, BudgetUSD: st.BudgetUSD, StartedBy: st.StartedBy,
			Quorum: st.Quorum, ExclStart: st.ExcludeStarter,
			Origin: toOrigin(st.Origin), Setup: toSetupRecord(st.Setup), Oversight: toOversightRecord(st.Oversight),
		}
		if stored != nil && reflect.DeepEqual(st.Plan, *stored) {
			rec.Start.PlanStored = true
		} else {
			pr := toPlanRecord(st.Plan)
			rec.Start.Plan = &pr
		}
	}
	return rec
}

func toSummaryRecord(r *engine.Run) summaryRecord {
	s := r.Summary()
	return summaryRecord{
		V: Version, State: string(s.State), Input: string(s.Input), Source: s.Source,
		Origin: toOrigin(s.Origin), Created: s.Created, Updated: s.Updated,
		StepsTotal: s.StepsTotal, StepsDone: s.StepsDone,
	}
}
