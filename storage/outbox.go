package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/bbolt"
)

// OutboxItem is an effect waiting to be delivered (a Slack post, an upload):
// recorded durably, delivered after, and marked done once it was.
type OutboxItem struct {
	ID      uint64
	Kind    string
	Payload []byte
	Created time.Time
}

// Enqueue records an effect to deliver and returns its id. Ids grow, so the
// outbox is delivered in the order it was filled.
func (db *DB) Enqueue(ctx context.Context, kind string, payload []byte) (uint64, error) {
	if err := live(ctx); err != nil {
		return 0, err
	}
	if kind == "" {
		return 0, errors.New("enqueue: no kind")
	}
	v, err := frame(outboxRecord{V: recordVersion, Kind: kind, Created: db.now()}, payload)
	if err != nil {
		return 0, fmt.Errorf("enqueue %s: %w", kind, err)
	}
	var id uint64
	err = db.update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketOutbox)
		b.FillPercent = 1
		if id, err = b.NextSequence(); err != nil {
			return err
		}
		return b.Put(seqKey(id), v)
	})
	if err != nil {
		return 0, fmt.Errorf("enqueue %s: %w", kind, err)
	}
	return id, nil
}

// Outbox lists the effects not yet marked done, oldest first.
func (db *DB) Outbox(ctx context.Context) ([]OutboxItem, error) {
	if err := live(ctx); err != nil {
		return nil, err
	}
	var out []OutboxItem
	err := db.view(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketOutbox).ForEach(func(k, v []byte) error {
			var rec outboxRecord
			body, err := unframe(v, &rec)
			if err == nil {
				err = checkVersion(rec.V)
			}
			if err != nil || len(k) != 8 {
				return fmt.Errorf("outbox item %x: unreadable: %v", k, err)
			}
			out = append(out, OutboxItem{ID: seqNum(k), Kind: rec.Kind, Payload: bytes.Clone(body), Created: rec.Created})
			return nil
		})
	})
	return out, err
}

// OutboxDone forgets a delivered effect. Marking an item done twice is not
// an error: delivery is at least once, and the second report changes nothing.
func (db *DB) OutboxDone(ctx context.Context, id uint64) error {
	if err := live(ctx); err != nil {
		return err
	}
	err := db.update(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketOutbox).Delete(seqKey(id))
	})
	if err != nil {
		return fmt.Errorf("outbox item %d done: %w", id, err)
	}
	return nil
}
