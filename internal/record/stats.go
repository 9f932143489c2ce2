package record

import (
	"fmt"
	"time"

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
	rec, err := scanStatsRun(snap)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	if err := CheckVersion(rec.V); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	p, err := scanStatsPlan(plan)
	if err != nil {
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
	rec, err := scanStatsEvent(b)
	if err != nil {
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

var (
	statsRunFields   = []string{"v", "id", "state", "updated", "seq", "steps"}
	statsPlanFields  = []string{"v", "steps"}
	statsStepFields  = []string{"n", "from_plan", "skill"}
	statsEventFields = []string{"v", "seq", "time", "type", "step", "attempt", "actor", "decision", "feedback",
		"status", "result", "artifact", "cost_usd", "skill", "agent", "runner", "start", "setup"}
)

func scanStatsRun(b []byte) (statsRunRecord, error) {
	var rec statsRunRecord
	s := &scanner{b: b}
	err := s.record(func(key []byte) error {
		switch fieldName(key, statsRunFields) {
		case "v":
			return integer(s, &rec.V)
		case "id":
			return s.str(&rec.ID)
		case "state":
			return s.str(&rec.State)
		case "updated":
			return s.time(&rec.Updated)
		case "seq":
			return integer(s, &rec.Seq)
		case "steps":
			rec.Steps = nil
			if s.peek() == '[' {
				rec.Steps = []statsStepRecord{}
			}
			return s.array(func() error {
				var st statsStepRecord
				err := s.object(func(key []byte) error {
					switch fieldName(key, statsStepFields) {
					case "n":
						return integer(s, &st.N)
					case "from_plan":
						return s.boolean(&st.FromPlan)
					case "skill":
						return s.str(&st.Skill)
					}
					_, err := s.skip()
					return err
				})
				rec.Steps = append(rec.Steps, st)
				return err
			})
		}
		_, err := s.skip()
		return err
	})
	return rec, err
}

func scanStatsPlan(b []byte) (statsPlanRecord, error) {
	var rec statsPlanRecord
	s := &scanner{b: b}
	err := s.record(func(key []byte) error {
		switch fieldName(key, statsPlanFields) {
		case "v":
			return integer(s, &rec.V)
		case "steps":
			rec.Steps = nil
			return s.array(func() error {
				var skill string
				err := s.object(func(key []byte) error {
					if fieldName(key, statsStepFields) == "skill" {
						return s.str(&skill)
					}
					_, err := s.skip()
					return err
				})
				rec.Steps = append(rec.Steps, statsPlanStepRecord{skill})
				return err
			})
		}
		_, err := s.skip()
		return err
	})
	return rec, err
}

func scanStatsEvent(b []byte) (statsEventRecord, error) {
	var rec statsEventRecord
	s := &scanner{b: b}
	err := s.record(func(key []byte) error {
		switch fieldName(key, statsEventFields) {
		case "v":
			return integer(s, &rec.V)
		case "seq":
			return integer(s, &rec.Seq)
		case "time":
			return s.time(&rec.Time)
		case "type":
			return s.str(&rec.Type)
		case "step":
			return integer(s, &rec.Step)
		case "attempt":
			return integer(s, &rec.Attempt)
		case "actor":
			return s.str(&rec.Actor)
		case "decision":
			return s.str(&rec.Decision)
		case "feedback":
			return s.str(&rec.Feedback)
		case "status":
			return s.str(&rec.Status)
		case "result":
			return s.str(&rec.Result)
		case "artifact":
			return s.boolean(&rec.Artifact)
		case "cost_usd":
			return s.float(&rec.CostUSD)
		case "skill":
			return s.str(&rec.Skill)
		case "agent":
			return s.str(&rec.Agent)
		case "runner":
			return s.str(&rec.Runner)
		case "setup":
			return s.setup(&rec.Setup)
		case "start":
			return scanStatsStart(s, &rec)
		}
		_, err := s.skip()
		return err
	})
	return rec, err
}

// scanStatsStart reads a run-started event's start: its setup.
func scanStatsStart(s *scanner, rec *statsEventRecord) error {
	if s.null() {
		rec.Start = nil
		return nil
	}
	if rec.Start == nil {
		rec.Start = &struct {
			Setup *setupRecord `json:"setup,omitempty"`
		}{}
	}
	return s.object(func(key []byte) error {
		if fieldName(key, []string{"setup"}) == "setup" {
			return s.setup(&rec.Start.Setup)
		}
		_, err := s.skip()
		return err
	})
}
