package storage

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record/recordtest"
)

// TestMigrationFromVersion2 opens a version 2 store whose outbox bucket
// still holds items, as gonogo wrote them then: the migration drops the
// bucket and its items, and the runs, their journals and their artifacts
// read as before.
func TestMigrationFromVersion2(t *testing.T) {
	dir := t.TempDir()
	db := openStore(t, dir, Options{NoSync: true})
	c := newClock()
	r := startRun(t, db, "r0001", testPlan(2), c)
	r.start(1)
	r.finish(1, engine.ResultProduced, "# one\n\nfirst\n")
	r.decide(1, engine.DecideApprove, "k1", "", "")
	r.start(2)
	r.finish(2, engine.ResultProduced, "# two\n")
	journal, err := db.Journal(ctx, r.run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	rawUpdate(t, dir, func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucket([]byte("outbox"))
		if err != nil {
			return err
		}
		for _, payload := range [][]byte{[]byte(`{"text":"Step 1 of 2"}`), bytes.Repeat([]byte{0, 1, 0xff}, 400)} {
			id, err := b.NextSequence()
			if err != nil {
				return err
			}
			if err := b.Put(binary.BigEndian.AppendUint64(nil, id), oldOutboxItem(t, payload)); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put(keySchema, binary.BigEndian.AppendUint64(nil, 2))
	})
	if v, names := storedVersion(t, dir); v != 2 || !slices.Contains(names, "outbox") {
		t.Fatalf("hand-made file: version %d, buckets %v; want version 2 with an outbox", v, names)
	}

	db = openStore(t, dir, Options{NoSync: true})
	_ = db.bolt.View(func(tx *bbolt.Tx) error {
		if v, _ := schemaVersion(tx); v != SchemaVersion || tx.Bucket([]byte("outbox")) != nil {
			t.Fatalf("after Open: version %d, outbox bucket %v; want version %d without one", v, tx.Bucket([]byte("outbox")) != nil, SchemaVersion)
		}
		return nil
	})
	loadEquals(t, db, r, "after migration from version 2")
	got, err := db.Journal(ctx, r.run.ID)
	if err != nil {
		t.Fatal(err)
	}
	recordtest.InUTC(got)
	recordtest.InUTC(journal)
	if !reflect.DeepEqual(got, journal) {
		t.Fatalf("journal after migration:\n got: %+v\nwant: %+v", got, journal)
	}
	for step, want := range map[int]string{1: "# one\n\nfirst\n", 2: "# two\n"} {
		if body, err := db.Artifact(ctx, r.run.ID, step, 1); err != nil || string(body) != want {
			t.Errorf("artifact of step %d after migration: %q, %v; want %q", step, body, err, want)
		}
	}
	// The migrated store goes on taking changes.
	r.db = db
	r.decide(2, engine.DecideApprove, "k2", "", "")
	loadEquals(t, db, r, "after a change to the migrated store")
}

// oldOutboxItem frames payload as version 2's outbox did: a 4-byte
// big-endian length, a JSON header of that length, then the payload.
func oldOutboxItem(t *testing.T, payload []byte) []byte {
	t.Helper()
	header, err := json.Marshal(map[string]any{"v": 1, "kind": "slack-post", "created": time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	v := binary.BigEndian.AppendUint32(nil, uint32(len(header)))
	return append(append(v, header...), payload...)
}
