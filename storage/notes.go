package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"go.etcd.io/bbolt"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record"
)

// notesRecord is the stored form of a run's notes.
type notesRecord struct {
	V     int               `json:"v"`
	Notes map[string]string `json:"notes"`
}

// Notes returns the notes kept with a run; a run without notes has an empty
// map. Notes are not part of the run's journal.
func (db *DB) Notes(ctx context.Context, id engine.RunID) (map[string]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := map[string]string{}
	err := db.view(func(tx *bbolt.Tx) error {
		rec, err := readNotes(tx, id)
		if err != nil {
			return err
		}
		maps.Copy(out, rec.Notes)
		return nil
	})
	return out, err
}

// SetNotes merges set into a run's notes in one fsynced transaction; an
// empty value deletes its key.
func (db *DB) SetNotes(ctx context.Context, id engine.RunID, set map[string]string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return db.update(func(tx *bbolt.Tx) error {
		rec, err := readNotes(tx, id)
		if err != nil {
			return err
		}
		for k, v := range set {
			if v == "" {
				delete(rec.Notes, k)
			} else {
				rec.Notes[k] = v
			}
		}
		b, err := json.Marshal(rec)
		if err != nil {
			return fmt.Errorf("notes of run %s: %w", id, err)
		}
		return tx.Bucket(bucketNotes).Put([]byte(id), b)
	})
}

func readNotes(tx *bbolt.Tx, id engine.RunID) (notesRecord, error) {
	rec := notesRecord{V: record.Version, Notes: map[string]string{}}
	if tx.Bucket(bucketRuns).Get([]byte(id)) == nil {
		return rec, fmt.Errorf("run %s: %w", id, engine.ErrNotFound)
	}
	v := tx.Bucket(bucketNotes).Get([]byte(id))
	if v == nil {
		return rec, nil
	}
	if err := json.Unmarshal(v, &rec); err != nil {
		return rec, fmt.Errorf("notes of run %s are damaged: %w", id, err)
	}
	if err := record.CheckVersion(rec.V); err != nil {
		return rec, fmt.Errorf("notes of run %s: %w", id, err)
	}
	if rec.Notes == nil {
		rec.Notes = map[string]string{}
	}
	return rec, nil
}
