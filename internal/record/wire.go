package record

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/gonogo/gonogo/engine"
)

// The wire form of runs, listings and journals bundles the records a store
// keeps with everything they refer to, so that one gonogo can hand another
// what it read from the store it holds (internal/localapi), or a
// Temporal workflow its history, and the receiver decodes exactly what the
// sender's store would have returned, or refuses a record from a newer
// gonogo. A run's summary on its own (Temporal's memo) is EncodeSummary's.

type wireRun struct {
	Run     runRecord     `json:"run"`
	Plan    planRecord    `json:"plan"`
	Journal []eventRecord `json:"journal,omitempty"`
}

type wireSummary struct {
	ID      string        `json:"id"`
	Summary summaryRecord `json:"summary"`
}

// MarshalRun encodes a run and, when journal is not nil, its journal.
func MarshalRun(r *engine.Run, journal []engine.Event) ([]byte, error) {
	w := wireRun{Run: toRunRecord(r), Plan: toPlanRecord(r.Plan)}
	for _, ev := range journal {
		w.Journal = append(w.Journal, toEventRecord(ev, &r.Plan))
	}
	return json.Marshal(w)
}

// UnmarshalRun decodes what MarshalRun encoded.
func UnmarshalRun(b []byte) (*engine.Run, []engine.Event, error) {
	var w wireRun
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&w); err != nil {
		return nil, nil, fmt.Errorf("decode run: %w", err)
	}
	plan, err := fromPlanRecord(&w.Plan)
	if err != nil {
		return nil, nil, fmt.Errorf("decode run: %w", err)
	}
	r, err := fromRunRecord(&w.Run, plan)
	if err != nil {
		return nil, nil, fmt.Errorf("decode run %s: %w", w.Run.ID, err)
	}
	var journal []engine.Event
	stored := func() (engine.Plan, error) { return plan, nil }
	for i := range w.Journal {
		ev, err := fromEventRecord(&w.Journal[i], stored)
		if err != nil {
			return nil, nil, fmt.Errorf("decode run %s: event %d: %w", r.ID, w.Journal[i].Seq, err)
		}
		journal = append(journal, ev)
	}
	return r, journal, nil
}

// MarshalSummaries encodes a run listing.
func MarshalSummaries(list []engine.RunSummary) ([]byte, error) {
	out := make([]wireSummary, 0, len(list))
	for _, s := range list {
		out = append(out, wireSummary{ID: string(s.ID), Summary: summaryRecord{
			V: Version, State: string(s.State), Input: string(s.Input), Source: s.Source,
			Origin: toOrigin(s.Origin), Created: s.Created, Updated: s.Updated,
			StepsTotal: s.StepsTotal, StepsDone: s.StepsDone,
		}})
	}
	return json.Marshal(out)
}

// UnmarshalSummaries decodes what MarshalSummaries encoded.
func UnmarshalSummaries(b []byte) ([]engine.RunSummary, error) {
	var in []wireSummary
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, fmt.Errorf("decode runs: %w", err)
	}
	out := make([]engine.RunSummary, 0, len(in))
	for i := range in {
		s, err := fromSummaryRecord(engine.RunID(in[i].ID), &in[i].Summary)
		if err != nil {
			return nil, fmt.Errorf("decode runs: run %s: %w", in[i].ID, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// MarshalEvents encodes journal events on their own, each run-started
// event with its plan inline, so that another backend (Temporal, whose
// workflow histories keep the journal) records events in these records
// instead of a second encoding of them.
func MarshalEvents(evs []engine.Event) ([]byte, error) {
	recs := make([]eventRecord, 0, len(evs))
	for _, ev := range evs {
		recs = append(recs, toEventRecord(ev, nil))
	}
	return json.Marshal(recs)
}

// UnmarshalEvents decodes what MarshalEvents encoded, or refuses events
// written by a newer gonogo.
func UnmarshalEvents(b []byte) ([]engine.Event, error) {
	var recs []eventRecord
	if err := json.Unmarshal(b, &recs); err != nil {
		return nil, fmt.Errorf("decode events: %w", err)
	}
	noPlan := func() (engine.Plan, error) {
		return engine.Plan{}, fmt.Errorf("a run-started event refers to a stored plan: %w", ErrDamaged)
	}
	out := make([]engine.Event, 0, len(recs))
	for i := range recs {
		ev, err := fromEventRecord(&recs[i], noPlan)
		if err != nil {
			return nil, fmt.Errorf("decode events: event %d: %w", recs[i].Seq, err)
		}
		out = append(out, ev)
	}
	return out, nil
}
