package storage

import (
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/gonogo/gonogo/engine"
)

// recoverRunning commits, for every run the file says had a step running,
// the change engine.Recover makes of it (the step interrupted, with a
// journal event), all in one transaction through the commit path Commit
// uses. No process can still be running such a step: bbolt's lock is
// exclusive, so the gonogo that started it has stopped. Each is recorded
// as lost at its last sign of life, which the store's pulse (PulseFile)
// helps tell. The runs are found by their running marks (see runningKey):
// only keys are read, and only the marked runs loaded, so opening a large
// store stays fast.
func (db *DB) recoverRunning() error {
	var runs []*engine.Run
	err := db.view(func(tx *bbolt.Tx) error {
		c := tx.Bucket(bucketRuns).Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			id := runningOf(k)
			if id == nil {
				continue
			}
			run, err := loadTx(tx, engine.RunID(id))
			if err != nil {
				return fmt.Errorf("recover: %w", err)
			}
			runs = append(runs, run)
		}
		return nil
	})
	if err != nil || len(runs) == 0 {
		return err
	}
	now, pulse := db.now(), db.lastPulse()
	var (
		changes   []*prepared
		recovered []engine.RunID
		stray     [][]byte // marked as running, though the snapshot says otherwise
	)
	for _, run := range runs {
		c, ok, err := engine.Recover(run, now, pulse)
		if err != nil {
			return err
		}
		if !ok {
			stray = append(stray, []byte(run.ID))
			continue
		}
		p, err := encodeCommit(c)
		if err != nil {
			return fmt.Errorf("recover: %w", err)
		}
		changes = append(changes, p)
		recovered = append(recovered, run.ID)
	}
	err = db.update(func(tx *bbolt.Tx) error {
		// The snapshot is the truth: a mark it contradicts goes.
		for _, id := range stray {
			if err := tx.Bucket(bucketRuns).Delete(runningKey(id)); err != nil {
				return err
			}
		}
		for _, p := range changes {
			if _, err := commitTx(tx, p); err != nil {
				return fmt.Errorf("recover: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	db.recovered = recovered
	return nil
}
