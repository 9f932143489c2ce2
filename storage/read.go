package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"go.etcd.io/bbolt"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record"
)

// Load returns the run as its last commit left it, or an error wrapping
// engine.ErrNotFound. The run is the caller's own: nothing in it points into
// the store.
func (db *DB) Load(ctx context.Context, id engine.RunID) (*engine.Run, error) {
	if err := live(ctx); err != nil {
		return nil, err
	}
	var r *engine.Run
	err := db.view(func(tx *bbolt.Tx) (err error) {
		r, err = loadTx(tx, id)
		return err
	})
	return r, err
}

// loadTx decodes a run's snapshot and plan. JSON decoding copies every
// string and slice, so the run outlives tx.
func loadTx(tx *bbolt.Tx, id engine.RunID) (*engine.Run, error) {
	snap := tx.Bucket(bucketRuns).Get([]byte(id))
	if snap == nil {
		return nil, fmt.Errorf("run %s: %w", id, engine.ErrNotFound)
	}
	plan, err := loadPlan(tx, id)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", id, err)
	}
	r, err := record.DecodeRun(snap, plan)
	if err != nil {
		return nil, fmt.Errorf("run %s: stored %w", id, err)
	}
	return r, nil
}

// loadPlan decodes a run's stored plan copy.
func loadPlan(tx *bbolt.Tx, id engine.RunID) (engine.Plan, error) {
	v := tx.Bucket(bucketPlans).Get([]byte(id))
	if v == nil {
		return engine.Plan{}, errors.New("stored plan is missing")
	}
	plan, err := record.DecodePlan(v)
	if err != nil {
		return engine.Plan{}, fmt.Errorf("stored %w", err)
	}
	return plan, nil
}

// Artifact returns the current body of an attempt's artifact: the last edit,
// or the agent's original when nobody edited it.
func (db *DB) Artifact(ctx context.Context, id engine.RunID, step, attempt int) ([]byte, error) {
	vs, err := db.artifacts(ctx, id, step, attempt, true)
	if err != nil {
		return nil, err
	}
	return vs[0], nil
}

// ArtifactVersions returns every version of an attempt's artifact, the
// agent's original first, then each edit in order.
func (db *DB) ArtifactVersions(ctx context.Context, id engine.RunID, step, attempt int) ([][]byte, error) {
	return db.artifacts(ctx, id, step, attempt, false)
}

func (db *DB) artifacts(ctx context.Context, id engine.RunID, step, attempt int, latest bool) ([][]byte, error) {
	if err := live(ctx); err != nil {
		return nil, err
	}
	var out [][]byte
	err := db.view(func(tx *bbolt.Tx) error {
		out = artifactsTx(tx, id, step, attempt, latest)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("run %s step %d attempt %d artifact: %w", id, step, attempt, err)
	}
	if out == nil {
		return nil, fmt.Errorf("run %s step %d attempt %d: no artifact stored: %w", id, step, attempt, engine.ErrNotFound)
	}
	return out, nil
}

// artifactsTx is every version of an attempt's artifact, or only the
// latest, copied out of tx; nil when none is stored.
func artifactsTx(tx *bbolt.Tx, id engine.RunID, step, attempt int, latest bool) [][]byte {
	b := tx.Bucket(bucketArtifacts).Bucket([]byte(id))
	if b == nil {
		return nil
	}
	var out [][]byte
	prefix := artPrefix(step, attempt)
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if latest {
			out = [][]byte{v}
		} else {
			out = append(out, bytes.Clone(v))
		}
	}
	if latest && out != nil {
		out[0] = bytes.Clone(out[0])
	}
	return out
}

// Journal returns a run's events in sequence order.
func (db *DB) Journal(ctx context.Context, id engine.RunID) ([]engine.Event, error) {
	if err := live(ctx); err != nil {
		return nil, err
	}
	var out []engine.Event
	err := db.view(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketJournal).Bucket([]byte(id))
		if b == nil {
			return fmt.Errorf("run %s: %w", id, engine.ErrNotFound)
		}
		plan := func() (engine.Plan, error) { return loadPlan(tx, id) }
		return b.ForEach(func(k, v []byte) error {
			ev, err := record.DecodeEvent(v, plan)
			if err != nil {
				return fmt.Errorf("run %s: stored event %d: %w", id, seqNum(k), err)
			}
			out = append(out, ev)
			return nil
		})
	})
	return out, err
}

// List returns a summary of every run, newest first (engine.NewestFirst).
// It reads only the small summary records, not the runs.
func (db *DB) List(ctx context.Context) ([]engine.RunSummary, error) {
	if err := live(ctx); err != nil {
		return nil, err
	}
	db.sumMu.Lock()
	defer db.sumMu.Unlock()
	if db.sums == nil {
		if err := db.loadSummaries(); err != nil {
			return nil, err
		}
	}
	out := make([]engine.RunSummary, 0, len(db.sumIDs))
	for _, id := range db.sumIDs {
		out = append(out, db.sums[id])
	}
	return out, nil
}

// loadSummaries reads every run's summary into the cache; db.sumMu is held.
func (db *DB) loadSummaries() error {
	sums := map[engine.RunID]engine.RunSummary{}
	var ids []engine.RunID
	err := db.view(func(tx *bbolt.Tx) error {
		b, key := tx.Bucket(bucketRuns), summaryOf
		if old := tx.Bucket(oldSummaries); old != nil {
			// A version 4 file opened read-only (see readsAsIs).
			b, key = old, func(k []byte) []byte { return k }
		}
		return b.ForEach(func(k, v []byte) error {
			sk := key(k)
			if sk == nil {
				return nil // a snapshot
			}
			id := engine.RunID(sk)
			s, err := record.DecodeSummary(id, v)
			if err != nil {
				return fmt.Errorf("run %s: stored %w", id, err)
			}
			sums[id] = s
			ids = append(ids, id)
			return nil
		})
	})
	if err != nil {
		return err
	}
	slices.SortFunc(ids, func(a, b engine.RunID) int { return engine.NewestFirst(sums[a], sums[b]) })
	db.sums, db.sumIDs = sums, ids
	return nil
}

// remember updates the summary cache after a commit of r, if List has
// loaded it.
func (db *DB) remember(r *engine.Run) {
	db.sumMu.Lock()
	defer db.sumMu.Unlock()
	if db.sums == nil {
		return
	}
	sum := r.Summary()
	if _, ok := db.sums[r.ID]; !ok {
		i, _ := slices.BinarySearchFunc(db.sumIDs, sum, func(id engine.RunID, s engine.RunSummary) int {
			return engine.NewestFirst(db.sums[id], s)
		})
		db.sumIDs = slices.Insert(db.sumIDs, i, r.ID)
	}
	db.sums[r.ID] = sum
}

// SeenKey reports whether an idempotency key was already applied.
func (db *DB) SeenKey(ctx context.Context, key string) (bool, error) {
	if err := live(ctx); err != nil {
		return false, err
	}
	if key == "" {
		return false, nil
	}
	var seen bool
	err := db.view(func(tx *bbolt.Tx) error {
		seen = tx.Bucket(bucketKeys).Get([]byte(key)) != nil
		return nil
	})
	return seen, err
}

// RunWithJournal is run id and its journal up to the run's last event.
func (db *DB) RunWithJournal(ctx context.Context, id engine.RunID) (*engine.Run, []engine.Event, error) {
	r, err := db.Load(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	j, err := db.Journal(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return r, j, nil
}
