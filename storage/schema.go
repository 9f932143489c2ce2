package storage

import (
	"encoding/binary"
	"errors"
	"fmt"

	"go.etcd.io/bbolt"
)

// SchemaVersion is the layout this gonogo writes. Open migrates an older
// file up to it and refuses a newer one.
const SchemaVersion = 4

var (
	bucketMeta      = []byte("meta")
	bucketRuns      = []byte("runs")
	bucketPlans     = []byte("plans")
	bucketSummaries = []byte("summaries")
	bucketJournal   = []byte("journal")
	bucketArtifacts = []byte("artifacts")
	bucketKeys      = []byte("keys")
	bucketActive    = []byte("active")
	bucketRunning   = []byte("running")
	bucketFiles     = []byte("files")
	bucketNotes     = []byte("notes")
	bucketSignIns   = []byte("signins")

	keySchema = []byte("schema")

	// layout is every bucket of schema version SchemaVersion.
	layout = [][]byte{bucketMeta, bucketRuns, bucketPlans, bucketSummaries, bucketJournal,
		bucketArtifacts, bucketKeys, bucketActive, bucketRunning, bucketFiles, bucketNotes, bucketSignIns}

	// oldOutbox is versions 1 and 2's outbox of effects still to deliver,
	// which nothing wrote into: Slack requests are kept in the inbox, and a
	// run's notes say what its thread already shows.
	oldOutbox = []byte("outbox")
)

// migration moves the file from one schema version to the next. migrations[i]
// takes version i to version i+1. All pending migrations run in one
// transaction, so a failing one leaves the file as it was.
type migration struct {
	name string
	up   func(tx *bbolt.Tx) error
}

var migrations = []migration{
	{name: "create the version 1 buckets", up: createV1Buckets},
	{name: "add the notes bucket", up: createNotesBucket},
	{name: "drop the outbox bucket", up: dropOutboxBucket},
	{name: "add the sign-ins bucket", up: createSignInsBucket},
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
	for _, name := range [][]byte{bucketMeta, bucketRuns, bucketPlans, bucketSummaries, bucketJournal,
		bucketArtifacts, bucketKeys, bucketActive, bucketRunning, bucketFiles, oldOutbox} {
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

// needsMigration reports whether migrate would write.
func needsMigration(tx *bbolt.Tx, steps []migration) (bool, error) {
	have, want, err := versions(tx, steps)
	return have < want, err
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
