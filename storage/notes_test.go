package storage

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/gonogo/gonogo/engine"
)

func TestNotes(t *testing.T) {
	ctx := context.Background()
	db := openStore(t, t.TempDir(), Options{NoSync: true})
	startRun(t, db, "r0001", testPlan(2), newClock())
	if n, err := db.Notes(ctx, "r0001"); err != nil || len(n) != 0 {
		t.Fatalf("fresh notes: %v %v", n, err)
	}
	if err := db.SetNotes(ctx, "r0001", map[string]string{"thread": "1.2", "step/1": "1.3"}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetNotes(ctx, "r0001", map[string]string{"step/1": "", "step/2": "1.4"}); err != nil {
		t.Fatal(err)
	}
	n, err := db.Notes(ctx, "r0001")
	if err != nil || len(n) != 2 || n["thread"] != "1.2" || n["step/2"] != "1.4" {
		t.Fatalf("notes after merge and delete: %v %v", n, err)
	}
	if err := db.SetNotes(ctx, "nope", map[string]string{"a": "b"}); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("notes of an unknown run: %v, want ErrNotFound", err)
	}
}

// TestMigrationFromVersion1 opens a version 1 store (no notes bucket) that
// holds a run: the migration adds the bucket and keeps the run.
func TestMigrationFromVersion1(t *testing.T) {
	dir := t.TempDir()
	db := openStore(t, dir, Options{NoSync: true})
	r := startRun(t, db, "r0001", testPlan(1), newClock())
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	rawUpdate(t, dir, func(tx *bbolt.Tx) error {
		if err := tx.DeleteBucket(bucketNotes); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(keySchema, binary.BigEndian.AppendUint64(nil, 1))
	})
	if v, _ := storedVersion(t, dir); v != 1 {
		t.Fatalf("hand-made file is at version %d", v)
	}
	db = openStore(t, dir, Options{NoSync: true})
	_ = db.bolt.View(func(tx *bbolt.Tx) error {
		if v, _ := schemaVersion(tx); v != SchemaVersion {
			t.Fatalf("version %d after Open, want %d", v, SchemaVersion)
		}
		return nil
	})
	loadEquals(t, db, r, "after migration to version 2")
	if err := db.SetNotes(context.Background(), "r0001", map[string]string{"k": "v"}); err != nil {
		t.Fatalf("notes after migration: %v", err)
	}
}
