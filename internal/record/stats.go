package record

import (
	"fmt"
	"time"

	"github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/gonogo/gonogo/engine"
)

// What gonogo stats read of a run's records (engine.StatsRunsReader): the
// same bytes, decoded into records that name only those fields, so the
// prompts, summaries, plans and usage a store keeps are skipped rather
// than copied. The field names are those of runRecord, planRecord and
// eventRecord; TestStatsDecodersReadWhatTheFullOnesRead holds them to it.

type statsRunRecord struct {
	V       int               `json:"v"`
	ID      string            `json:"id"`
	State   string            `json:"state"`
	Updated time.Time         `json:"updated,omitzero"`
	Seq     uint64            `json:"seq"`
	Steps   []statsStepRecord `json:"steps"`
}

type statsStepRecord struct {
	N        int    `json:"n"`
	FromPlan bool   `json:"from_plan,omitempty"`
	Skill    string `json:"skill,omitempty"`
}

type statsPlanRecord struct {
	V     int                   `json:"v"`
	Steps []statsPlanStepRecord `json:"steps"`
}

type statsPlanStepRecord struct {
	Skill string `json:"skill"`
}

type statsEventRecord struct {
	V        int       `json:"v"`
	Seq      uint64    `json:"seq"`
	Time     time.Time `json:"time,omitzero"`
	Type     string    `json:"type"`
	Step     int       `json:"step,omitempty"`
	Attempt  int       `json:"attempt,omitempty"`
	Actor    string    `json:"actor,omitempty"`
	Decision string    `json:"decision,omitempty"`
	Feedback string    `json:"feedback,omitempty"`
	Status   string    `json:"status,omitempty"`
	Result   string    `json:"result,omitempty"`
	Artifact bool      `json:"artifact,omitempty"`
	CostUSD  float64   `json:"cost_usd,omitempty"`
	Skill    string    `json:"skill,omitempty"`
	Agent    string    `json:"agent,omitempty"`
	Runner   string    `json:"runner,omitempty"`
	Start    *struct {
		Setup *setupRecord `json:"setup,omitempty"`
	} `json:"start,omitempty"`
	Setup *setupRecord `json:"setup,omitempty"`
}

// DecodeStatsRun decodes what stats read of a run: its snapshot
// (EncodeRun) and, for the skills of the steps that refer to it, its plan
// (EncodePlan).
func DecodeStatsRun(snap, plan []byte) (*engine.Run, error) {
	var rec statsRunRecord
	if err := json.Unmarshal(snap, &rec, statsJSON); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	if err := CheckVersion(rec.V); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	var p statsPlanRecord
	if err := json.Unmarshal(plan, &p, statsJSON); err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	if err := CheckVersion(p.V); err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	state, err := engine.ParseRunState(rec.State)
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	r := &engine.Run{ID: engine.RunID(rec.ID), State: state, Updated: rec.Updated, Seq: rec.Seq}
	if rec.Steps != nil {
		r.Steps = make([]engine.Step, len(rec.Steps))
		defs := make([]engine.StepDef, len(rec.Steps))
		states := make([]engine.StepState, len(rec.Steps))
		for i, sr := range rec.Steps {
			if sr.FromPlan {
				if i >= len(p.Steps) {
					return nil, fmt.Errorf("step %d refers to plan step %d of %d", i+1, i+1, len(p.Steps))
				}
				sr.Skill = p.Steps[i].Skill
			}
			defs[i] = engine.StepDef{N: sr.N, Skill: sr.Skill}
			r.Steps[i] = engine.Step{StepDef: &defs[i], StepState: &states[i]}
		}
	}
	return r, nil
}

// DecodeStatsEvent decodes what stats read of a journal event
// (EncodeEvent). Its errors do not name the event: the caller knows where
// it lies.
func DecodeStatsEvent(b []byte) (engine.Event, error) {
	var rec statsEventRecord
	if err := json.Unmarshal(b, &rec, statsJSON); err != nil {
		return engine.Event{}, err
	}
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
		Feedback: rec.Feedback,
		Status:   parseOpt(&p, "status", rec.Status, engine.ParseStepStatus),
		Result:   parseOpt(&p, "result", rec.Result, engine.ParseResult),
		Artifact: rec.Artifact, CostUSD: rec.CostUSD, Skill: rec.Skill, Agent: rec.Agent, Runner: rec.Runner,
		Setup: fromSetupRecord(rec.Setup),
	}
	if rec.Start != nil {
		ev.Start = &engine.RunStart{Setup: fromSetupRecord(rec.Start.Setup)}
	}
	if p.err != nil {
		return engine.Event{}, p.err
	}
	return ev, nil
}

// statsJSON reads a record as encoding/json (json v1), which wrote it and
// whose whole decoders read it, does: keys matched without regard to case,
// null leaving a field as it was, invalid UTF-8 mangled, the last of
// duplicate keys kept. It decodes through json v2, which steps over the
// fields the slim records leave out without copying them, where
// encoding/json takes most of the time gonogo stats spend on a large
// store. Errors are v2's, which name the byte offset and the JSON pointer
// of the damage.
var statsJSON = json.JoinOptions(jsonv1.DefaultOptionsV1(), jsonv1.ReportErrorsWithLegacySemantics(false))
