package storage

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record"
)

// statsBatch is how many runs StatsRuns reads in one read transaction: a
// writer that must grow the file waits for one batch at most, and the
// stats count a batch outside any transaction.
var statsBatch = 500

// StatsRuns reads the runs ids as gonogo stats count them
// (engine.StatsRunsReader): each run's snapshot, its journal and the
// versions of each artifact a person edited, a batch of runs to a read
// transaction, decoding only what stats read (record.DecodeStatsRun,
// record.DecodeStatsEvent). A run not in the store is left out.
func (db *DB) StatsRuns(ctx context.Context, ids []engine.RunID, fn func(engine.StatsRun) error) error {
	batch := make([]engine.StatsRun, 0, min(len(ids), statsBatch))
	for len(ids) > 0 {
		if err := live(ctx); err != nil {
			return err
		}
		n := min(len(ids), statsBatch)
		batch = batch[:0]
		err := db.view(func(tx *bbolt.Tx) error {
			for _, id := range ids[:n] {
				sr, err := statsRunTx(tx, id)
				if errors.Is(err, engine.ErrNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				batch = append(batch, sr)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, sr := range batch {
			if err := fn(sr); err != nil {
				return err
			}
		}
		ids = ids[n:]
	}
	return nil
}

// statsRunTx reads what stats read of run id. Decoding copies every
// string, and artifactsTx every body, so the run outlives tx.
func statsRunTx(tx *bbolt.Tx, id engine.RunID) (engine.StatsRun, error) {
	key := []byte(id)
	snap := tx.Bucket(bucketRuns).Get(key)
	jb := tx.Bucket(bucketJournal).Bucket(key)
	if snap == nil || jb == nil {
		return engine.StatsRun{}, fmt.Errorf("run %s: %w", id, engine.ErrNotFound)
	}
	plan := tx.Bucket(bucketPlans).Get(key)
	if plan == nil {
		return engine.StatsRun{}, fmt.Errorf("run %s: stored plan is missing", id)
	}
	r, err := record.DecodeStatsRun(snap, plan)
	if err != nil {
		return engine.StatsRun{}, fmt.Errorf("run %s: stored %w", id, err)
	}
	sr := engine.StatsRun{Run: r}
	c := jb.Cursor()
	if k, _ := c.Last(); len(k) == 8 {
		sr.Journal = make([]engine.Event, 0, min(seqNum(k), 1<<16)) // events are numbered from 1
	}
	for k, v := c.First(); k != nil; k, v = c.Next() {
		ev, err := record.DecodeStatsEvent(v)
		if err != nil {
			return engine.StatsRun{}, fmt.Errorf("run %s: stored event %d: %w", id, seqNum(k), err)
		}
		sr.Journal = append(sr.Journal, ev)
	}
	for _, ref := range engine.EditedAttempts(sr.Journal) {
		vs := artifactsTx(tx, id, ref.Step, ref.Attempt, false)
		if vs == nil {
			continue // counted as edited, not measured
		}
		if sr.Versions == nil {
			sr.Versions = map[engine.ArtifactRef][][]byte{}
		}
		sr.Versions[ref] = vs
	}
	return sr, nil
}
