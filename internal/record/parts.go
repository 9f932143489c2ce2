package record

import (
	"reflect"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// The parts of records, both ways.

func toSetupRecord(s *engine.Setup) *setupRecord {
	if s == nil {
		return nil
	}
	return &setupRecord{Runner: s.Runner, RunnerCmd: s.RunnerCmd, RunnerArgs: s.RunnerArgs, Skills: s.Skills,
		Workflows: s.Workflows, Policy: s.Policy}
}

func toOversightRecord(o *engine.Oversight) *oversightRecord {
	if o == nil {
		return nil
	}
	return &oversightRecord{Approvers: o.Approvers, RemindAfterNS: int64(o.RemindAfter),
		DecisionTimeoutNS: int64(o.DecisionTimeout), OnTimeout: string(o.OnTimeout)}
}

func fromOversightRecord(p *stateReader, r *oversightRecord) *engine.Oversight {
	if r == nil {
		return nil
	}
	return &engine.Oversight{Approvers: r.Approvers, RemindAfter: time.Duration(r.RemindAfterNS),
		DecisionTimeout: time.Duration(r.DecisionTimeoutNS),
		OnTimeout:       parseOpt(p, "decision timeout action", r.OnTimeout, engine.ParseTimeoutAction)}
}

func fromSetupRecord(r *setupRecord) *engine.Setup {
	if r == nil {
		return nil
	}
	return &engine.Setup{Runner: r.Runner, RunnerCmd: r.RunnerCmd, RunnerArgs: r.RunnerArgs, Skills: r.Skills,
		Workflows: r.Workflows, Policy: r.Policy}
}

func toSetupChanges(cs []engine.SetupChange) []setupChangeRecord {
	if cs == nil {
		return nil
	}
	out := make([]setupChangeRecord, len(cs))
	for i, c := range cs {
		out[i] = setupChangeRecord{Field: c.Field, From: c.From, To: c.To}
	}
	return out
}

func fromSetupChanges(cs []setupChangeRecord) []engine.SetupChange {
	if cs == nil {
		return nil
	}
	out := make([]engine.SetupChange, len(cs))
	for i, c := range cs {
		out[i] = engine.SetupChange{Field: c.Field, From: c.From, To: c.To}
	}
	return out
}

func toOrigin(o engine.Origin) originRecord {
	return originRecord{Channel: o.Channel, Thread: o.Thread}
}

func toUsage(u engine.Usage) usageRecord {
	return usageRecord{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CacheRead: u.CacheRead, CacheCreate: u.CacheCreate, Turns: u.Turns}
}

// samePlanStep reports whether a step's copied fields equal its plan step's.
func samePlanStep(s *engine.Step, p *engine.PlanStep) bool {
	return s.ID == p.ID && s.Skill == p.Skill && s.Effort == p.Effort && s.Prompt == p.Prompt &&
		s.Category == p.Category && s.Execution == p.Execution && s.Leaf == p.Leaf && s.Gate == p.Gate &&
		reflect.DeepEqual(s.Rules, p.Rules)
}

func toRulesRecord(r engine.StepRules) *rulesRecord {
	if reflect.ValueOf(r).IsZero() {
		return nil
	}
	return &rulesRecord{
		Pre: toConditionRecords(r.Pre), Post: toConditionRecords(r.Post),
		OnError: string(r.OnError.Kind), Retries: r.OnError.Retries, BackoffNS: int64(r.OnError.Backoff),
		TimeoutNS: int64(r.Timeout), Optional: r.Optional, Fallback: r.Fallback, Options: r.Options,
		Route: r.Route, Decompose: r.Decompose, BestOf: r.BestOf,
	}
}

func toConditionRecords(cs []engine.Condition) []conditionRecord {
	if cs == nil {
		return nil
	}
	out := make([]conditionRecord, len(cs))
	for i, c := range cs {
		out[i] = conditionRecord{Kind: string(c.Kind), Path: c.Path, Text: c.Text, Pattern: c.Pattern,
			Field: c.Field, Value: c.Value, Command: c.Command, Line: c.Line}
	}
	return out
}

func fromRulesRecord(r *rulesRecord) engine.StepRules {
	if r == nil {
		return engine.StepRules{}
	}
	return engine.StepRules{
		Pre: fromConditionRecords(r.Pre), Post: fromConditionRecords(r.Post),
		OnError:  engine.ErrorPolicy{Kind: engine.ErrorKind(r.OnError), Retries: r.Retries, Backoff: time.Duration(r.BackoffNS)},
		Timeout:  time.Duration(r.TimeoutNS),
		Optional: r.Optional, Fallback: r.Fallback, Options: r.Options, Route: r.Route, Decompose: r.Decompose,
		BestOf: r.BestOf,
	}
}

func fromConditionRecords(cs []conditionRecord) []engine.Condition {
	if cs == nil {
		return nil
	}
	out := make([]engine.Condition, len(cs))
	for i, c := range cs {
		out[i] = engine.Condition{Kind: engine.ConditionKind(c.Kind), Path: c.Path, Text: c.Text, Pattern: c.Pattern,
			Field: c.Field, Value: c.Value, Command: c.Command, Line: c.Line}
	}
	return out
}
