package storage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/gonogo/gonogo/engine"
)

// ArtifactSum is the current body of one attempt's artifact, in brief.
type ArtifactSum struct {
	Step    int
	Attempt int
	Size    int
	SHA256  string // hex
}

// ArtifactSums returns the size and sha256 of the current artifact (the
// last edit, else the agent's original) of every attempt of a run that has
// one, in step and attempt order; a run the store does not hold is
// ErrNotFound. The bodies are hashed where they lie: nothing a megabyte
// long is copied.
func (db *DB) ArtifactSums(ctx context.Context, id engine.RunID) ([]ArtifactSum, error) {
	if err := live(ctx); err != nil {
		return nil, err
	}
	var out []ArtifactSum
	err := db.view(func(tx *bbolt.Tx) error {
		if tx.Bucket(bucketRuns).Get([]byte(id)) == nil {
			return engine.ErrNotFound
		}
		b := tx.Bucket(bucketArtifacts).Bucket([]byte(id))
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			if len(k) != 12 {
				return fmt.Errorf("artifact key of %d bytes: %w", len(k), ErrDamaged)
			}
			step, attempt := int(binary.BigEndian.Uint32(k)), int(binary.BigEndian.Uint32(k[4:]))
			sum := sha256.Sum256(v)
			s := ArtifactSum{Step: step, Attempt: attempt, Size: len(v), SHA256: hex.EncodeToString(sum[:])}
			// Versions of one attempt follow each other; the last is current.
			if n := len(out); n > 0 && out[n-1].Step == step && out[n-1].Attempt == attempt {
				out[n-1] = s
			} else {
				out = append(out, s)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("run %s artifacts: %w", id, err)
	}
	return out, nil
}

// The wire form of runs, summaries and journals is the store's own
// versioned records, so that one gonogo can hand another what it read from
// the store it holds (see cmd/gonogo's local API) and the receiver decodes
// exactly what Load and Journal would have returned, or refuses a record
// from a newer gonogo.

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
			return nil, nil, fmt.Errorf("decode run %s: %w", r.ID, err)
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
			V: recordVersion, State: string(s.State), Input: string(s.Input), Source: s.Source,
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
// workflow histories keep the journal) records events in the store's own
// versioned records instead of a second encoding of them.
func MarshalEvents(evs []engine.Event) ([]byte, error) {
	recs := make([]eventRecord, 0, len(evs))
	for _, ev := range evs {
		recs = append(recs, toEventRecord(ev, nil))
	}
	return json.Marshal(recs)
}

// MarshalSummary encodes a run's summary in the store's versioned record,
// for another backend that lists runs from elsewhere (Temporal's memo).
func MarshalSummary(r *engine.Run) ([]byte, error) {
	return json.Marshal(toSummaryRecord(r))
}

// UnmarshalSummary decodes what MarshalSummary encoded for run id, or
// refuses a summary written by a newer gonogo.
func UnmarshalSummary(id engine.RunID, b []byte) (engine.RunSummary, error) {
	var rec summaryRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return engine.RunSummary{}, fmt.Errorf("decode summary: %w", err)
	}
	return fromSummaryRecord(id, &rec)
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
			return nil, fmt.Errorf("decode events: %w", err)
		}
		out = append(out, ev)
	}
	return out, nil
}
