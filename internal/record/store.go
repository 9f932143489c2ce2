package record

import (
	"encoding/json"
	"fmt"

	"github.com/gonogo/gonogo/engine"
)

// The records of one run as a store keeps them: its plan, its snapshot,
// each journal event and its summary, each on its own. Decoding errors
// name the record but not the run, which the caller knows.

// EncodeRun encodes a run's snapshot: the run without its plan, which
// EncodePlan encodes once. A step as its plan step says refers to it.
func EncodeRun(r *engine.Run) ([]byte, error) {
	return json.Marshal(toRunRecord(r))
}

// DecodeRun decodes what EncodeRun encoded, with the run's plan.
func DecodeRun(b []byte, plan engine.Plan) (*engine.Run, error) {
	var rec runRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	return fromRunRecord(&rec, plan)
}

// EncodePlan encodes a run's copy of its plan.
func EncodePlan(p engine.Plan) ([]byte, error) {
	return json.Marshal(toPlanRecord(p))
}

// DecodePlan decodes what EncodePlan encoded.
func DecodePlan(b []byte) (engine.Plan, error) {
	var rec planRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return engine.Plan{}, fmt.Errorf("plan: %w", err)
	}
	return fromPlanRecord(&rec)
}

// EncodeEvent encodes a journal event. stored is the plan kept beside the
// journal (EncodePlan), nil when none is: a run-started event whose plan
// it is refers to it instead of repeating it.
func EncodeEvent(ev engine.Event, stored *engine.Plan) ([]byte, error) {
	return json.Marshal(toEventRecord(ev, stored))
}

// DecodeEvent decodes what EncodeEvent encoded; stored reads the plan a
// run-started event refers to, and is called only for one that does. Its
// errors do not name the event: the caller knows where it lies.
func DecodeEvent(b []byte, stored func() (engine.Plan, error)) (engine.Event, error) {
	var rec eventRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return engine.Event{}, err
	}
	return fromEventRecord(&rec, stored)
}

// EncodeSummary encodes a run's summary: one line of a listing, read
// without the run.
func EncodeSummary(r *engine.Run) ([]byte, error) {
	return json.Marshal(toSummaryRecord(r))
}

// DecodeSummary decodes what EncodeSummary encoded, for run id.
func DecodeSummary(id engine.RunID, b []byte) (engine.RunSummary, error) {
	var rec summaryRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return engine.RunSummary{}, fmt.Errorf("summary: %w", err)
	}
	return fromSummaryRecord(id, &rec)
}
