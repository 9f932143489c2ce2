package storage

import (
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/gonogo/gonogo/engine"
)

// recoverRunning marks every step the file says was running as interrupted, with a
// journal event, in one transaction. No process can still be running it:
// bbolt's lock is exclusive, so the gonogo that started it has stopped. Only
// the running index is read, so opening a large store stays fast.
func (db *DB) recoverRunning() error {
	var ids [][]byte
	err := db.view(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketRunning).ForEach(func(k, _ []byte) error {
			ids = append(ids, append([]byte(nil), k...))
			return nil
		})
	})
	if err != nil || len(ids) == 0 {
		return err
	}
	now := db.now()
	var recovered []engine.RunID
	err = db.update(func(tx *bbolt.Tx) error {
		recovered = recovered[:0]
		for _, id := range ids {
			run, err := loadTx(tx, engine.RunID(id))
			if err != nil {
				return fmt.Errorf("recover: %w", err)
			}
			evs := engine.Interrupt(run, now)
			if len(evs) == 0 {
				// The index said running, the snapshot says otherwise: the
				// snapshot is the truth.
				if err := tx.Bucket(bucketRunning).Delete(id); err != nil {
					return err
				}
				continue
			}
			after, err := engine.Fold(run, evs)
			if err != nil {
				return fmt.Errorf("recover run %s: %w", run.ID, err)
			}
			p, err := encodeCommit(engine.Commit{Run: after, Events: evs, After: run.Seq})
			if err != nil {
				return fmt.Errorf("recover: %w", err)
			}
			if _, err := commitTx(tx, p); err != nil {
				return fmt.Errorf("recover: %w", err)
			}
			recovered = append(recovered, run.ID)
		}
		return nil
	})
	if err != nil {
		return err
	}
	db.recovered = recovered
	return nil
}
