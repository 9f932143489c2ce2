package temporalbackend

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record"
)

// A run's notes are what a front end keeps with it (where its Slack
// messages are), with bbolt's semantics: a merge, an empty value deletes
// its key. The run's workflow holds them, answers the notes query and
// takes the set-notes update; they are not engine events, never reach the
// journal, and go on with the run when its workflow continues as new.

const (
	qryNotes = "notes"
	updNotes = "set-notes"
	// maxNotesBytes bounds a run's notes (keys and values): they ride in
	// every continue-as-new input and every query answer, and a front end
	// keeps short strings there.
	maxNotesBytes = 32 << 10
)

// registerNotes installs the notes query and the set-notes update.
func (f *flow) registerNotes(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, qryNotes, func() (notesRecord, error) {
		return notesRecord{V: record.Version, Notes: maps.Clone(f.notes)}, nil
	}); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, updNotes,
		func(_ workflow.Context, set notesRecord) (notesRecord, error) {
			mergeNotes(f.notes, set.Notes)
			return notesRecord{V: record.Version}, nil
		},
		workflow.UpdateHandlerOptions{Validator: func(_ workflow.Context, set notesRecord) error {
			return refusal(f.validateNotes(set))
		}})
}

// validateNotes refuses a malformed set-notes request only: one of a newer
// gonogo, an empty key, or one that would make the notes larger than
// maxNotesBytes.
func (f *flow) validateNotes(set notesRecord) error {
	if err := record.CheckVersion(set.V); err != nil {
		return err
	}
	if _, ok := set.Notes[""]; ok {
		return errors.New("a note needs a key")
	}
	after := maps.Clone(f.notes)
	mergeNotes(after, set.Notes)
	size := 0
	for k, v := range after {
		size += len(k) + len(v)
	}
	if size > maxNotesBytes {
		return fmt.Errorf("run %s: notes of %d bytes, at most %d are kept", f.run.ID, size, maxNotesBytes)
	}
	return nil
}

// mergeNotes merges set into notes: an empty value deletes its key.
func mergeNotes(notes, set map[string]string) {
	for k, v := range set {
		if v == "" {
			delete(notes, k)
		} else {
			notes[k] = v
		}
	}
}

// Notes returns the notes kept with a run; a run without notes has an
// empty map. An unknown run is engine.ErrNotFound.
func (b *Backend) Notes(ctx context.Context, id engine.RunID) (map[string]string, error) {
	res, err := b.query(ctx, id, qryNotes)
	if err != nil {
		return nil, b.notFound(id, err)
	}
	var rec notesRecord
	if err := res.Get(&rec); err != nil {
		return nil, fmt.Errorf("notes of run %s: %w", id, err)
	}
	if err := record.CheckVersion(rec.V); err != nil {
		return nil, fmt.Errorf("notes of run %s: %w", id, err)
	}
	out := map[string]string{}
	maps.Copy(out, rec.Notes)
	return out, nil
}

// SetNotes merges set into a run's notes through its workflow; an empty
// value deletes its key. Sending the same set twice is harmless, so a
// caller may repeat it. A run whose workflow has ended keeps its notes as
// they were: the run has ended (engine.ErrStale).
func (b *Backend) SetNotes(ctx context.Context, id engine.RunID, set map[string]string) error {
	var out notesRecord
	return b.send(ctx, id, client.UpdateWorkflowOptions{
		UpdateID: updNotes + "-" + nonce(), WorkflowID: string(id), UpdateName: updNotes,
		Args: []any{notesRecord{V: record.Version, Notes: set}},
	}, &out)
}
