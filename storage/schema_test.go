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

// makeVersion4 turns the store in dir back into version 4's layout: the
// runs' summaries in a bucket of their own.
func makeVersion4(t *testing.T, dir string) {
	t.Helper()
	rawUpdate(t, dir, func(tx *bbolt.Tx) error {
		old, err := tx.CreateBucket(oldSummaries)
		if err != nil {
			return err
		}
		running, err := tx.CreateBucket(oldRunning)
		if err != nil {
			return err
		}
		runs := tx.Bucket(bucketRuns)
		var keys [][]byte
		err = runs.ForEach(func(k, v []byte) error {
			if id := summaryOf(k); id != nil {
				keys = append(keys, bytes.Clone(k))
				return old.Put(bytes.Clone(id), bytes.Clone(v))
			}
			if id := runningOf(k); id != nil {
				keys = append(keys, bytes.Clone(k))
				return running.Put(bytes.Clone(id), []byte{})
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range keys {
			if err := runs.Delete(k); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put(keySchema, binary.BigEndian.AppendUint64(nil, 4))
	})
	if v, names := storedVersion(t, dir); v != 4 || !slices.Contains(names, "summaries") || !slices.Contains(names, "running") {
		t.Fatalf("hand-made file: version %d, buckets %v; want version 4 with summaries and running", v, names)
	}
}

// TestMigrationFromVersion4 opens a version 4 store, whose runs' summaries
// and running index have buckets of their own: read-only, it lists the
// runs as they are and changes nothing; writable, it moves each summary and
// running mark next to its run's snapshot, drops the buckets, recovers the
// run left running, and lists the same runs, which go on taking changes.
func TestMigrationFromVersion4(t *testing.T) {
	dir := t.TempDir()
	db := openStore(t, dir, Options{NoSync: true})
	c := newClock()
	a := startRun(t, db, "r0001", testPlan(2), c)
	a.start(1)
	a.finish(1, engine.ResultProduced, "# one\n")
	b := startRun(t, db, "r0002", testPlan(1), c)
	b.start(1)
	b.finish(1, engine.ResultProduced, "# only\n")
	b.decide(1, engine.DecideApprove, "k1", "", "")
	running := startRun(t, db, "r0003", testPlan(1), c)
	running.start(1)
	want, err := db.List(ctx)
	if err != nil || len(want) != 3 {
		t.Fatalf("List before: %v, %v", want, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	makeVersion4(t, dir)

	before := treeOf(t, dir)
	ro, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open of version 4: %v", err)
	}
	if got, err := ro.List(ctx); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("read-only List of version 4:\n got: %+v, %v\nwant: %+v", got, err, want)
	}
	loadEquals(t, ro, a, "read-only load of version 4")
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	sameTree(t, "a read-only open of version 4", treeOf(t, dir), before)

	db = openStore(t, dir, Options{NoSync: true})
	_ = db.bolt.View(func(tx *bbolt.Tx) error {
		if v, _ := schemaVersion(tx); v != SchemaVersion || tx.Bucket(oldSummaries) != nil || tx.Bucket(oldRunning) != nil {
			t.Fatalf("after Open: version %d, summaries bucket %v, running bucket %v; want version %d without them",
				v, tx.Bucket(oldSummaries) != nil, tx.Bucket(oldRunning) != nil, SchemaVersion)
		}
		return nil
	})
	if !slices.Equal(db.recovered, []engine.RunID{"r0003"}) {
		t.Errorf("recovered %v after the migration, want the run left running, r0003", db.recovered)
	}
	if got, err := db.List(ctx); err != nil || len(got) != 3 || !reflect.DeepEqual(got[1:], want[1:]) {
		t.Errorf("List after the migration:\n got: %+v, %v\nwant: %+v (r0003 first, now waiting)", got, err, want)
	}
	loadEquals(t, db, a, "after migration from version 4")
	a.db = db
	a.decide(1, engine.DecideApprove, "k2", "", "")
	if got, err := db.List(ctx); err != nil || len(got) != 3 {
		t.Fatalf("List after a change: %+v, %v", got, err)
	}
	// A new open reads the summaries from their new place.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openStore(t, dir, Options{NoSync: true})
	got, err := db.List(ctx)
	if err != nil || len(got) != 3 || len(db.recovered) != 0 {
		t.Fatalf("List after reopening: %+v, %v; recovered %v, want nothing", got, err, db.recovered)
	}
	for _, s := range got {
		if s.ID == "r0001" && (s.StepsDone != 1 || s.Updated.IsZero() || !s.Updated.Equal(a.run.Updated)) {
			t.Errorf("r0001 after its approve and a reopen: %+v, want one step done, updated %v", s, a.run.Updated)
		}
	}
}
