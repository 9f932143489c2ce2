package storage

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record"
)

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return string(b)
}

// pendingCount is what the store keeps of file writes not yet known
// durable: the records of file writes, and the runs marked (see markKey).
func pendingCount(t *testing.T, db *DB) int {
	t.Helper()
	records, marks := pendingRecords(t, db)
	return records + len(marks)
}

// markedFlag reports whether the store says some run may be marked.
func markedFlag(t *testing.T, db *DB) bool {
	t.Helper()
	var set bool
	must(t, db.bolt.View(func(tx *bbolt.Tx) error {
		set = tx.Bucket(bucketMeta).Get(keyMarked) != nil
		return nil
	}))
	return set
}

func pendingRecords(t *testing.T, db *DB) (int, []engine.RunID) {
	t.Helper()
	n := 0
	var marks []engine.RunID
	if err := db.bolt.View(func(tx *bbolt.Tx) error {
		n = tx.Bucket(bucketFiles).Stats().KeyN
		return tx.Bucket(bucketArtifacts).ForEach(func(k, _ []byte) error {
			if id := markedRun(k); id != "" {
				marks = append(marks, id)
			}
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	return n, marks
}

// putPending records a file write the way a commit does, as if gonogo had
// stopped before carrying it out.
func putPending(t *testing.T, tx *bbolt.Tx, rec fileRecord, body []byte) {
	t.Helper()
	rec.V = record.Version
	b := tx.Bucket(bucketFiles)
	id, err := b.NextSequence()
	if err != nil {
		t.Fatal(err)
	}
	v, err := frame(rec, body)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Put(seqKey(id), v); err != nil {
		t.Fatal(err)
	}
}

func TestPendingFilesAreWrittenOnOpen(t *testing.T) {
	dir := t.TempDir()
	db := openStore(t, dir, Options{})
	r := startRun(t, db, "r0001", testPlan(2), newClock())
	r.start(1)
	r.finish(1, engine.ResultProduced, "the agent's artifact\n")
	db.Close()
	if err := os.RemoveAll(filepath.Join(dir, "runs")); err != nil {
		t.Fatal(err)
	}

	rawUpdate(t, dir, func(tx *bbolt.Tx) error {
		putPending(t, tx, fileRecord{Run: "r0001", Path: "runs/r0001/01-skill-1.md", Ref: &artRef{Step: 1, Attempt: 1, Version: 1}}, nil)
		putPending(t, tx, fileRecord{Run: "r0001", Path: "runs/r0001/notes/extra.md"}, []byte("carried in the record\n"))
		putPending(t, tx, fileRecord{Run: "r0001", Path: "runs/r0001/02-gone.attempt-1.md", From: "runs/r0001/02-gone.md"}, nil)
		return nil
	})
	db = openStore(t, dir, Options{})
	if got := readFile(t, dir, "runs/r0001/01-skill-1.md"); got != "the agent's artifact\n" {
		t.Fatalf("artifact file = %q", got)
	}
	if got := readFile(t, dir, "runs/r0001/notes/extra.md"); got != "carried in the record\n" {
		t.Fatalf("file with its own body = %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "runs/r0001/02-gone.attempt-1.md")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a rename whose source is gone made a file: %v", err)
	}
	if n := pendingCount(t, db); n != 0 {
		t.Fatalf("%d pending file writes after Open", n)
	}
	assertNoTempFiles(t, dir)
}

// A crash can come after a commit's files were written but before their
// records were cleared; replaying must not move the newer file aside.
func TestReplayingARenameIsHarmless(t *testing.T) {
	for _, crashAfter := range []string{"rename", "rename and write"} {
		t.Run(crashAfter, func(t *testing.T) {
			dir := t.TempDir()
			db := openStore(t, dir, Options{})
			db.Close()
			run := filepath.Join(dir, "runs", "r0001")
			if err := os.MkdirAll(run, 0o700); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(run, "01-x.attempt-1.md"), []byte("attempt one\n"), 0o600)
			if crashAfter == "rename and write" {
				os.WriteFile(filepath.Join(run, "01-x.md"), []byte("attempt two\n"), 0o600)
			}
			rawUpdate(t, dir, func(tx *bbolt.Tx) error {
				putPending(t, tx, fileRecord{Run: "r0001", Path: "runs/r0001/01-x.attempt-1.md", From: "runs/r0001/01-x.md"}, nil)
				putPending(t, tx, fileRecord{Run: "r0001", Path: "runs/r0001/01-x.md"}, []byte("attempt two\n"))
				return nil
			})
			db = openStore(t, dir, Options{})
			if got := readFile(t, dir, "runs/r0001/01-x.attempt-1.md"); got != "attempt one\n" {
				t.Errorf("earlier attempt's file = %q", got)
			}
			if got := readFile(t, dir, "runs/r0001/01-x.md"); got != "attempt two\n" {
				t.Errorf("latest file = %q", got)
			}
			if n := pendingCount(t, db); n != 0 {
				t.Errorf("%d pending file writes after Open", n)
			}
		})
	}
}

func TestFailedFileWriteStaysPending(t *testing.T) {
	dir := t.TempDir()
	db := openStore(t, dir, Options{})
	r := startRun(t, db, "r0001", testPlan(1), newClock())
	r.start(1)
	// A directory where the artifact file should go: the rename over it fails.
	blocker := filepath.Join(dir, "runs/r0001/01-skill-1.md")
	if err := os.MkdirAll(filepath.Join(blocker, "in-the-way"), 0o700); err != nil {
		t.Fatal(err)
	}
	s := r.run.Step(1)
	f := engine.Finished{Result: engine.ResultProduced, Artifact: true, Size: 5, File: "runs/r0001/01-skill-1.md"}
	evs, err := engine.Finish(r.run, 1, s.Latest().N, f, r.clock.now())
	if err != nil {
		t.Fatal(err)
	}
	err = r.tryCommit(evs, []engine.ArtifactWrite{{Step: 1, Attempt: 1, Body: []byte("body\n")}},
		[]engine.FileWrite{{Path: "runs/r0001/01-skill-1.md", Body: []byte("body\n")}}, "")
	if !errors.Is(err, ErrFilesPending) {
		t.Fatalf("commit with an unwritable file: %v, want ErrFilesPending", err)
	}
	// The change itself is durable.
	r.run, _ = engine.Fold(r.run, evs)
	loadEquals(t, db, r, "after the failed file")
	if n := pendingCount(t, db); n != 1 {
		t.Fatalf("%d pending file writes, want 1", n)
	}
	assertNoTempFiles(t, dir)
	db.Close()

	if err := os.RemoveAll(blocker); err != nil {
		t.Fatal(err)
	}
	db = openStore(t, dir, Options{})
	if got := readFile(t, dir, "runs/r0001/01-skill-1.md"); got != "body\n" {
		t.Fatalf("file after reopen = %q", got)
	}
	if n := pendingCount(t, db); n != 0 {
		t.Fatalf("%d pending file writes after reopen", n)
	}
}

func TestDataDirIsPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "data")
	db := openStore(t, dir, Options{})
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := st.Mode().Perm(); perm != 0o700 {
		t.Fatalf("data directory mode %o, want 700", perm)
	}
	if db.path != filepath.Join(dir, "gonogo.db") {
		t.Fatalf("Path() = %s", db.path)
	}
}
