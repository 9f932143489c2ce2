package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"go.etcd.io/bbolt"
)

// SchemaVersion is the layout this gonogo writes. Open migrates an older
// file up to it and refuses a newer one.
const SchemaVersion = 5

var (
	bucketMeta      = []byte("meta")
	bucketRuns      = []byte("runs")
	bucketPlans     = []byte("plans")
	bucketJournal   = []byte("journal")
	bucketArtifacts = []byte("artifacts")
	bucketKeys      = []byte("keys")
	bucketActive    = []byte("active")
	bucketFiles     = []byte("files")
	bucketNotes     = []byte("notes")
	bucketSignIns   = []byte("signins")

	keySchema = []byte("schema")

	// layout is every bucket of schema version SchemaVersion.
	layout = [][]byte{bucketMeta, bucketRuns, bucketPlans, bucketJournal,
		bucketArtifacts, bucketKeys, bucketActive, bucketFiles, bucketNotes, bucketSignIns}

	// oldOutbox is versions 1 and 2's outbox of effects still to deliver,
	// which nothing wrote into: Slack requests are kept in the inbox, and a
	// run's notes say what its thread already shows.
	oldOutbox = []byte("outbox")

	// oldSummaries and oldRunning are versions 1 to 4's bucket of run
	// summaries and index of the runs with a step running, which version
	// 5 keeps next to each run's snapshot (see summaryKey, runningKey).
	oldSummaries = []byte("summaries")
	oldRunning   = []byte("running")
)

// migration moves the file from one schema version to the next. migrations[i]
// takes version i to version i+1. All pending migrations run in one
// transaction, so a failing one leaves the file as it was.
type migration struct {
	name string
	up   func(tx *bbolt.Tx) error
}

// readsAsIs is the oldest schema version a read-only open reads without
// migrating it: version 4 kept the runs' summaries in a bucket of their
// own, which loadSummaries still reads when it is there (and its running
// index, which only recovery reads, and a read-only open does not
// recover). An older file
// opened read-only is refused: open it once with a gonogo that can write
// it.
const readsAsIs = 4

var migrations = []migration{
	{name: "create the version 1 buckets", up: createV1Buckets},
	{name: "add the notes bucket", up: createNotesBucket},
	{name: "drop the outbox bucket", up: dropOutboxBucket},
	{name: "add the sign-ins bucket", up: createSignInsBucket},
	{name: "keep each run's summary and running mark next to its snapshot", up: moveSummaries},
}

func init() {
	if len(migrations) != SchemaVersion {
		panic(fmt.Sprintf("storage: %d migrations for schema version %d", len(migrations), SchemaVersion))
	}
}

// errNewerSchema is returned for a file written by a newer gonogo.
var errNewerSchema = errors.New("written by a newer gonogo")

// createV1Buckets creates the version 1 layout. Version 0 is a file with no
// meta bucket: a new, empty file, or one from before versions were recorded;
// buckets that exist already are kept. The list is this migration's own,
// not layout: a migration does what it did when it was written.
func createV1Buckets(tx *bbolt.Tx) error {
	for _, name := range [][]byte{bucketMeta, bucketRuns, bucketPlans, oldSummaries, bucketJournal,
		bucketArtifacts, bucketKeys, bucketActive, oldRunning, bucketFiles, oldOutbox} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("bucket %s: %w", name, err)
		}
	}
	return nil
}

// createNotesBucket adds version 2's notes: small facts a front end keeps
// with a run, such as the Slack messages it posted.
func createNotesBucket(tx *bbolt.Tx) error {
	if _, err := tx.CreateBucketIfNotExists(bucketNotes); err != nil {
		return fmt.Errorf("bucket %s: %w", bucketNotes, err)
	}
	return nil
}

// dropOutboxBucket removes the outbox, with whatever it still holds: no
// gonogo delivers from it. A file without one is left as it is.
func dropOutboxBucket(tx *bbolt.Tx) error {
	if tx.Bucket(oldOutbox) == nil {
		return nil
	}
	if err := tx.DeleteBucket(oldOutbox); err != nil {
		return fmt.Errorf("bucket %s: %w", oldOutbox, err)
	}
	return nil
}

// createSignInsBucket adds version 4's sign-ins: the web pages' one-time
// links and sessions, so that a session outlives a restart of gonogo
// serve.
func createSignInsBucket(tx *bbolt.Tx) error {
	if _, err := tx.CreateBucketIfNotExists(bucketSignIns); err != nil {
		return fmt.Errorf("bucket %s: %w", bucketSignIns, err)
	}
	return nil
}

// moveSummaries moves every run's summary from the summaries bucket, and
// its entry in the running index, into the runs bucket, under its
// summaryKey and runningKey, and drops both buckets: a commit then writes
// them on the page it writes the snapshot on, rather than on pages (and
// branches) of their own. A bucket already gone is left so.
func moveSummaries(tx *bbolt.Tx) error {
	runs := tx.Bucket(bucketRuns)
	if runs == nil {
		return fmt.Errorf("bucket %s is missing: %w", bucketRuns, ErrDamaged)
	}
	for _, m := range []struct {
		bucket []byte
		key    func([]byte) []byte
	}{{oldSummaries, summaryKey}, {oldRunning, runningKey}} {
		if err := moveInto(tx, runs, m.bucket, m.key); err != nil {
			return err
		}
	}
	return nil
}

// moveInto puts every key k of bucket name into runs under key(k), with its
// value, and drops the bucket.
func moveInto(tx *bbolt.Tx, runs *bbolt.Bucket, name []byte, key func([]byte) []byte) error {
	old := tx.Bucket(name)
	if old == nil {
		return nil
	}
	type kv struct{ k, v []byte }
	var moved []kv
	err := old.ForEach(func(k, v []byte) error {
		moved = append(moved, kv{key(k), bytes.Clone(v)})
		return nil
	})
	if err != nil {
		return err
	}
	for _, m := range moved {
		if err := runs.Put(m.k, m.v); err != nil {
			return fmt.Errorf("%s of run %s: %w", name, m.k, err)
		}
	}
	if err := tx.DeleteBucket(name); err != nil {
		return fmt.Errorf("bucket %s: %w", name, err)
	}
	return nil
}

// summaryKey is the key, in the runs bucket, of run id's summary: the
// run's id and a NUL, which sorts right after the run's snapshot, so the
// two stay on one page. Run ids hold no NUL, so it cannot be taken for a
// run.
func summaryKey(id []byte) []byte {
	return append(append(make([]byte, 0, len(id)+1), id...), 0)
}

// summaryOf is the run whose summary key k is, nil for any other key.
func summaryOf(k []byte) []byte {
	if n := len(k); n > 1 && k[n-1] == 0 {
		return k[:n-1]
	}
	return nil
}

// runningKey is the key, in the runs bucket, that marks run id as having a
// step running (its value is empty): the run's id, a NUL and 0x01, which
// sorts right after its summary, on the page the commit writes anyway.
// Recovery looks for these marks (see recoverRunning).
func runningKey(id []byte) []byte {
	return append(append(make([]byte, 0, len(id)+2), id...), 0, 1)
}

// runningOf is the run whose running mark k is, nil for any other key.
func runningOf(k []byte) []byte {
	if n := len(k); n > 2 && k[n-2] == 0 && k[n-1] == 1 {
		return k[:n-2]
	}
	return nil
}

// schemaVersion reads the stored version; a file without a meta bucket is
// version 0.
func schemaVersion(tx *bbolt.Tx) (uint64, error) {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		return 0, nil
	}
	v := meta.Get(keySchema)
	if v == nil {
		return 0, nil
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("schema version is %d bytes, want 8", len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// versions returns the stored schema version and the one steps lead to,
// refusing a file newer than this gonogo.
func versions(tx *bbolt.Tx, steps []migration) (have, want uint64, err error) {
	if have, err = schemaVersion(tx); err != nil {
		return 0, 0, err
	}
	want = uint64(len(steps))
	if have > want {
		return 0, 0, fmt.Errorf("schema version %d, this gonogo knows up to %d: %w; upgrade gonogo", have, want, errNewerSchema)
	}
	return have, want, nil
}

// migrate brings the file up to len(steps), in tx.
func migrate(tx *bbolt.Tx, steps []migration) error {
	have, want, err := versions(tx, steps)
	if err != nil || have == want {
		return err
	}
	for v := have; v < want; v++ {
		if err := steps[v].up(tx); err != nil {
			return fmt.Errorf("migration %d to %d (%s): %w", v, v+1, steps[v].name, err)
		}
	}
	meta, err := tx.CreateBucketIfNotExists(bucketMeta)
	if err != nil {
		return err
	}
	return meta.Put(keySchema, binary.BigEndian.AppendUint64(nil, want))
}
