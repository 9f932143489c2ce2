package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record"
)

// TestSecondOpenIsLocked: a second Open of a data directory in use waits
// LockTimeout for the lock, then gives up with ErrLocked and a message
// naming the file and the way out. LockTimeout is set above the default
// second, so that waiting at least that long shows it was honoured (a
// lower bound, which a loaded machine only lengthens); that the wait
// ends at all is the test returning.
func TestSecondOpenIsLocked(t *testing.T) {
	dir := t.TempDir()
	openStore(t, dir, Options{})
	const lock = 1500 * time.Millisecond
	began := time.Now()
	db, err := Open(dir, Options{LockTimeout: lock})
	took := time.Since(began)
	if err == nil {
		db.Close()
		t.Fatal("a second Open of the same data directory succeeded")
	}
	if !errors.Is(err, engine.ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
	path := filepath.Join(dir, FileName)
	if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, "--data") {
		t.Fatalf("lock error %q does not name the file and the way out", msg)
	}
	// bbolt tries the lock every 50 ms and gives up once the next try
	// would come after the timeout.
	if took < lock-100*time.Millisecond {
		t.Fatalf("second Open gave up after %v with a %v lock timeout", took, lock)
	}
}

func TestNotADatabaseIsRefused(t *testing.T) {
	cases := map[string][]byte{
		"text":    []byte("# my notes\nnot a database\n"),
		"zeros":   make([]byte, 64<<10),
		"garbage": randomBytes(64 << 10),
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, FileName)
			if err := os.WriteFile(path, content, 0o600); err != nil {
				t.Fatal(err)
			}
			db, err := Open(dir, Options{LockTimeout: 100 * time.Millisecond})
			if err == nil {
				db.Close()
				t.Fatal("Open accepted a file that is not a database")
			}
			if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), path) {
				t.Fatalf("Open: %v; want ErrDamaged naming %s", err, path)
			}
			// The failed Open let go of the file: a second try fails the
			// same way, not on the lock.
			if _, err := Open(dir, Options{LockTimeout: 100 * time.Millisecond}); errors.Is(err, engine.ErrLocked) {
				t.Fatalf("after a failed Open the file is still locked: %v", err)
			}
		})
	}
}

func randomBytes(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// Files whose meta pages are intact but whose other pages are garbage:
// bbolt may panic reading them; Open must report it instead, and let go of
// the file.
func TestDamagedPagesAreRefused(t *testing.T) {
	page := os.Getpagesize()
	cases := map[string]func(content []byte){
		"every page after the metas": func(content []byte) {
			copy(content[2*page:], randomBytes(len(content)-2*page))
		},
		"root pages": func(content []byte) {
			// Each meta page names the root bucket's page 32 bytes in (a
			// 16-byte page header, then magic, version, page size, flags).
			for m := range 2 {
				root := binary.LittleEndian.Uint64(content[m*page+32:])
				if off := int(root) * page; off > 0 && off+page <= len(content) {
					copy(content[off:off+page], randomBytes(page))
				}
			}
		},
	}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			db, err := Open(dir, Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			c := newClock()
			for i := range 20 {
				r := startRun(t, db, engine.RunID(fmt.Sprintf("r%04d", i)), testPlan(2), c)
				r.start(1)
			}
			path := db.path
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			content, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			damage(content)
			if err := os.WriteFile(path, content, 0o600); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				db, err := Open(dir, Options{LockTimeout: 100 * time.Millisecond})
				if err == nil {
					db.Close()
					t.Fatal("Open accepted a file with garbage pages")
				}
				t.Logf("%v", err)
				if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), path) {
					t.Fatalf("Open: %v; want ErrDamaged naming %s", err, path)
				}
			}
		})
	}
}

// A version 0 file: no meta bucket, some buckets from before versions were
// recorded, data in them.
func makeVersion0(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	rawUpdate(t, dir, func(tx *bbolt.Tx) error {
		if _, err := tx.CreateBucket(bucketRuns); err != nil {
			return err
		}
		legacy, err := tx.CreateBucket([]byte("legacy"))
		if err != nil {
			return err
		}
		return legacy.Put([]byte("note"), []byte("kept"))
	})
}

func storedVersion(t *testing.T, dir string) (uint64, []string) {
	t.Helper()
	bdb, err := bbolt.Open(filepath.Join(dir, FileName), 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	var v uint64
	var names []string
	bdb.View(func(tx *bbolt.Tx) error {
		v, err = schemaVersion(tx)
		return tx.ForEach(func(name []byte, _ *bbolt.Bucket) error {
			names = append(names, string(name))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return v, names
}

func TestMigrationFromVersion0(t *testing.T) {
	dir := t.TempDir()
	makeVersion0(t, dir)
	if v, _ := storedVersion(t, dir); v != 0 {
		t.Fatalf("hand-made file is at version %d", v)
	}
	db := openStore(t, dir, Options{})
	err := db.bolt.View(func(tx *bbolt.Tx) error {
		if v, _ := schemaVersion(tx); v != SchemaVersion {
			t.Errorf("schema version %d after Open, want %d", v, SchemaVersion)
		}
		if got := tx.Bucket([]byte("legacy")).Get([]byte("note")); string(got) != "kept" {
			t.Errorf("data of the old file lost: %q", got)
		}
		return checkBuckets(tx)
	})
	if err != nil {
		t.Fatal(err)
	}
	// The migrated store works.
	r := startRun(t, db, "r0001", testPlan(1), newClock())
	loadEquals(t, db, r, "after migration")
}

func TestFailingMigrationRollsBack(t *testing.T) {
	dir := t.TempDir()
	makeVersion0(t, dir)
	steps := []migration{
		migrations[0],
		{name: "split the journal", up: func(tx *bbolt.Tx) error {
			if _, err := tx.CreateBucket([]byte("half-done")); err != nil {
				return err
			}
			return errors.New("record 17 is unreadable")
		}},
	}
	db, err := open(dir, Options{}, steps)
	if err == nil {
		db.Close()
		t.Fatal("Open succeeded with a failing migration")
	}
	if msg := err.Error(); !strings.Contains(msg, "migration 1 to 2") || !strings.Contains(msg, "record 17") {
		t.Fatalf("migration error %q does not say which migration failed and why", msg)
	}
	// Neither migration left a trace: they ran in one transaction.
	v, names := storedVersion(t, dir)
	if v != 0 || strings.Join(names, ",") != "legacy,runs" {
		t.Fatalf("after the failed migration: version %d, buckets %v; want version 0 with legacy,runs", v, names)
	}
	openStore(t, dir, Options{}).Close() // the real migrations still run
	if v, _ := storedVersion(t, dir); v != SchemaVersion {
		t.Fatalf("version %d after the real migrations, want %d", v, SchemaVersion)
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	dir := t.TempDir()
	db := openStore(t, dir, Options{})
	db.Close()
	rawUpdate(t, dir, func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keySchema, binary.BigEndian.AppendUint64(nil, SchemaVersion+1))
	})
	_, err := Open(dir, Options{})
	if err == nil || !errors.Is(err, errNewerSchema) || !strings.Contains(err.Error(), "newer gonogo") ||
		!strings.Contains(err.Error(), FileName) {
		t.Fatalf("Open of a newer file: %v; want an error naming the file and saying a newer gonogo wrote it", err)
	}
	v, _ := storedVersion(t, dir)
	if v != SchemaVersion+1 {
		t.Fatalf("refusing the file changed its version to %d", v)
	}
}

func TestFramedRecords(t *testing.T) {
	if _, err := unframe([]byte{0, 0, 1, 0, '{'}, &fileRecord{}); err == nil {
		t.Fatal("frame whose header runs past its end accepted")
	}
	received := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	v, _ := frame(inboxRecord{V: 1, Received: received}, []byte("body"))
	var rec inboxRecord
	body, err := unframe(v, &rec)
	if err != nil || !bytes.Equal(body, []byte("body")) || rec.V != 1 || !rec.Received.Equal(received) {
		t.Fatalf("frame round trip: %q %+v %v", body, rec, err)
	}
}

// A damaged record is ErrDamaged whether the store or package record
// found it, so a caller branches on one error.
func TestADamagedRecordIsErrDamaged(t *testing.T) {
	stored := `[{"v":1,"seq":1,"type":"run-started","start":{"id":"r1","plan_stored":true,"mode":"checkpointed"}}]`
	if _, err := record.UnmarshalEvents([]byte(stored)); !errors.Is(err, ErrDamaged) {
		t.Fatalf("events that refer to a plan they do not carry: %v; want ErrDamaged", err)
	}
}
