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

// TestMigrationFromVersion1 opens a version 1 store (no notes bucket, an
// outbox) that holds a run: the migrations add the notes, drop the outbox
// and keep the run.
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
		if _, err := tx.CreateBucket([]byte("outbox")); err != nil {
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
	loadEquals(t, db, r, "after migration from version 1")
	if err := db.SetNotes(context.Background(), "r0001", map[string]string{"k": "v"}); err != nil {
		t.Fatalf("notes after migration: %v", err)
	}
}

// TestListCacheMatchesStore lists runs, commits more changes (a new run,
// steps finishing), and checks the listing kept in memory equals the one a
// fresh open decodes from the file.
func TestListCacheMatchesStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openStore(t, dir, Options{NoSync: true})
	c := newClock()
	r1 := startRun(t, db, "r0001", testPlan(2), c)
	if _, err := db.List(ctx); err != nil { // loads the cache
		t.Fatal(err)
	}
	r1.start(1)
	r1.finish(1, engine.ResultProduced, "# one\n\nbody\n")
	r1.decide(1, engine.DecideApprove, "k1", "", "")
	startRun(t, db, "r0002", testPlan(1), c)
	startRun(t, db, "r0000", testPlan(3), c) // started last, though its id sorts first
	cached, err := db.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	fresh, err := openStore(t, dir, Options{NoSync: true}).List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(cached) != 3 || len(fresh) != 3 {
		t.Fatalf("cached %d runs, fresh %d", len(cached), len(fresh))
	}
	for i := range fresh {
		a, b := cached[i], fresh[i]
		if a.ID != b.ID || a.State != b.State || a.StepsDone != b.StepsDone || a.StepsTotal != b.StepsTotal ||
			a.Source != b.Source || a.Origin != b.Origin || !a.Created.Equal(b.Created) || !a.Updated.Equal(b.Updated) {
			t.Errorf("run %d: cached %+v, fresh %+v", i, a, b)
		}
	}
	if fresh[0].ID != "r0000" || fresh[1].ID != "r0002" || fresh[2].ID != "r0001" {
		t.Errorf("order: %s %s %s, want the newest started first", fresh[0].ID, fresh[1].ID, fresh[2].ID)
	}
}
