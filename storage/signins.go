package storage

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"go.etcd.io/bbolt"
)

// The sign-ins bucket keeps the web pages' one-time sign-in links and the
// sessions they started (internal/web), so that a session outlives a
// restart of gonogo serve. A key is what the pages make of a secret (a
// hash: the secret itself, which the browser or the link holds, is never
// stored); a value is its expiry (8 bytes, big-endian Unix nanoseconds)
// followed by the pages' record. Expired entries are dropped whenever one
// is kept.

// KeepSignIn keeps value under key until expires, replacing what key
// held, and drops every entry expired at now.
func (db *DB) KeepSignIn(ctx context.Context, key string, value []byte, expires, now time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return db.update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketSignIns)
		if b == nil {
			return fmt.Errorf("bucket %s is missing: %w", bucketSignIns, ErrDamaged)
		}
		var gone [][]byte
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if len(v) < 8 || !now.Before(time.Unix(0, int64(binary.BigEndian.Uint64(v)))) {
				gone = append(gone, k)
			}
		}
		for _, k := range gone {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		rec := binary.BigEndian.AppendUint64(nil, uint64(expires.UnixNano()))
		return b.Put([]byte(key), append(rec, value...))
	})
}

// SignIn is what key holds, nil when it holds nothing or it has expired
// at now.
func (db *DB) SignIn(ctx context.Context, key string, now time.Time) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []byte
	err := db.view(func(tx *bbolt.Tx) error {
		out = signIn(tx, key, now)
		return nil
	})
	return out, err
}

// TakeSignIn is SignIn that also drops key, in one transaction: what it
// returns, no other call returns again.
func (db *DB) TakeSignIn(ctx context.Context, key string, now time.Time) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []byte
	err := db.update(func(tx *bbolt.Tx) error {
		out = signIn(tx, key, now)
		if b := tx.Bucket(bucketSignIns); b != nil {
			return b.Delete([]byte(key))
		}
		return nil
	})
	return out, err
}

func signIn(tx *bbolt.Tx, key string, now time.Time) []byte {
	b := tx.Bucket(bucketSignIns)
	if b == nil {
		return nil // a store opened read-only before its migration has none
	}
	v := b.Get([]byte(key))
	if len(v) < 8 || !now.Before(time.Unix(0, int64(binary.BigEndian.Uint64(v)))) {
		return nil
	}
	return append([]byte(nil), v[8:]...)
}
