package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// crash lets go of the store as a killed gonogo does: no sync of the
// files written, their runs' marks left for the next open.
func crash(t *testing.T, db *DB) {
	t.Helper()
	if err := db.close(); err != nil {
		t.Fatal(err)
	}
}

// An artifact file costs no fsync on the commit's path, and no record of
// its own: its run's mark stays in the store until a batch sync makes the
// run's files durable, once they are syncAfter old, when syncBatch files
// wait, or at Close.
func TestArtifactFilesAreSyncedInBatches(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	db, err := Open(dir, Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	r := startRun(t, db, "r0001", testPlan(12), newClock())
	for n := 1; n <= 10; n++ {
		r.start(n)
		r.finish(n, engine.ResultProduced, "artifact\n")
	}
	if got := db.files.syncs.Load(); got != 0 {
		t.Fatalf("%d syncs for 10 artifact files written within %v, want none", got, syncAfter)
	}
	if records, marks := pendingRecords(t, db); records != 0 || !slices.Equal(marks, []engine.RunID{"r0001"}) {
		t.Fatalf("%d file records and marks %v kept for 10 files not yet synced, want none and r0001", records, marks)
	}
	now = now.Add(syncAfter)
	r.start(11)
	r.finish(11, engine.ResultProduced, "artifact\n")
	if got := db.files.syncs.Load(); got != 1 {
		t.Fatalf("%d syncs once 10 files were %v old, want 1", got, syncAfter)
	}
	if n := pendingCount(t, db); n != 1 {
		t.Fatalf("%d file records and marks kept after the sync, want r0001's mark (its file just written)", n)
	}
	r.start(12)
	r.finish(12, engine.ResultProduced, "artifact\n")
	syncs := db.files.syncs
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if got := syncs.Load(); got != 2 {
		t.Fatalf("%d syncs after Close, want 2 (Close syncs the last two files)", got)
	}
	db = openStore(t, dir, Options{})
	if n := pendingCount(t, db); n != 0 || markedFlag(t, db) {
		t.Fatalf("%d file records and marks left by a clean Close (marked: %v)", n, markedFlag(t, db))
	}
	if got := db.files.syncs.Load(); got != 0 {
		t.Fatalf("opening after a clean Close synced %d times", got)
	}
}

func TestSyncBatchBoundsTheFilesAtRisk(t *testing.T) {
	db := openStore(t, t.TempDir(), Options{NoSync: true})
	c := newClock()
	for i := range syncBatch {
		r := startRun(t, db, engine.RunID(filepathSafe(i)), testPlan(2), c)
		r.start(1)
		r.finish(1, engine.ResultProduced, "artifact\n")
	}
	if got := db.files.syncs.Load(); got != 1 {
		t.Fatalf("%d syncs for %d files, want 1", got, syncBatch)
	}
	// Until the batch was full, nothing could be due: no commit walked
	// every run's written files to find that out.
	if got := db.since.walks; got != 1 {
		t.Fatalf("due walked the written files %d times for %d commits, want once (the batch)", got, syncBatch)
	}
	if n := pendingCount(t, db); n != 0 {
		t.Fatalf("%d file records and marks after the batch was synced", n)
	}
}

func filepathSafe(i int) string { return fmt.Sprintf("r%04d", i) }

// What a power cut can do to files written without an fsync: a file
// missing, one cut short, a renamed earlier attempt's file empty. The
// next open rewrites each from the store, and only for the runs whose
// files were not yet synced.
func TestLostArtifactFilesAreRewrittenOnOpen(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := newClock()
	synced := startRun(t, db, "r0001", testPlan(2), c)
	synced.start(1)
	synced.finish(1, engine.ResultProduced, "synced\n")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	synced.db = db
	r := startRun(t, db, "r0002", testPlan(3), c)
	r.start(1)
	r.finish(1, engine.ResultProduced, "first try\n")
	r.decide(1, engine.DecideRedo, "k-redo", "shorter", "")
	r.start(1)
	r.finish(1, engine.ResultProduced, "second try\n")
	r.start(2)
	r.finish(2, engine.ResultProduced, "step two\n")
	r.decide(2, engine.DecideEdit, "k-edit", "", "step two, edited\n")
	crash(t, db)

	s1, s2 := r.run.Step(1), r.run.Step(2)
	want := map[string]string{
		s1.Attempts[0].File: "first try\n",
		s1.Attempts[1].File: "second try\n",
		s2.Attempts[0].File: "step two, edited\n",
	}
	if len(want) != 3 || s1.Attempts[0].File == s1.Attempts[1].File {
		t.Fatalf("files: %v", want)
	}
	must(t, os.Truncate(filepath.Join(dir, s1.Attempts[0].File), 0))
	must(t, os.Truncate(filepath.Join(dir, s1.Attempts[1].File), 3))
	must(t, os.Remove(filepath.Join(dir, s2.Attempts[0].File)))
	gone := filepath.Join(dir, synced.run.Step(1).Attempts[0].File)
	must(t, os.Remove(gone))

	db = openStore(t, dir, Options{})
	for path, body := range want {
		if got := readFile(t, dir, path); got != body {
			t.Errorf("%s after reopen = %q, want %q", path, got, body)
		}
	}
	if n := pendingCount(t, db); n != 0 {
		t.Errorf("%d file records and marks after reopen", n)
	}
	if got := db.files.syncs.Load(); got != 1 {
		t.Errorf("reopen synced %d times, want once", got)
	}
	// A run whose files were synced is not looked at: a file someone
	// deleted since stays deleted (show says so).
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("reopen recreated %s, a synced run's file deleted after: %v", gone, err)
	}
	assertNoTempFiles(t, dir)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A commit does not walk every run's written files to find none due: due
// keeps bounds on them (how many, the oldest), which must still let each
// run's files be synced once they are syncAfter old, however the runs'
// writes interleave with the syncs.
func TestStaggeredFilesAreSyncedWhenOld(t *testing.T) {
	start := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	now := start
	db := openStore(t, t.TempDir(), Options{Now: func() time.Time { return now }})
	c := newClock()
	at := func(d time.Duration, r *runner, n int) {
		t.Helper()
		now = start.Add(d)
		r.start(n)
		r.finish(n, engine.ResultProduced, "artifact\n")
	}
	marks := func(want ...engine.RunID) {
		t.Helper()
		if _, got := pendingRecords(t, db); !slices.Equal(got, want) {
			t.Fatalf("at +%v: marks %v, want %v", now.Sub(start), got, want)
		}
	}
	a := startRun(t, db, "r0001", testPlan(4), c)
	b := startRun(t, db, "r0002", testPlan(4), c)
	at(0, a, 1)
	at(20*time.Second, b, 1)
	at(syncAfter, b, 2) // a's file is due; b's are not
	marks("r0002")
	at(syncAfter+5*time.Second, a, 2) // nothing due
	marks("r0001", "r0002")
	if got := db.files.syncs.Load(); got != 1 {
		t.Fatalf("%d syncs before b's first file is %v old, want 1", got, syncAfter)
	}
	at(20*time.Second+syncAfter, a, 3) // b's first file is due, not its second
	marks("r0001", "r0002")
	if got := db.files.syncs.Load(); got != 2 {
		t.Fatalf("%d syncs once b's first file is %v old, want 2", got, syncAfter)
	}
	at(50*time.Second+syncAfter, b, 3) // every file but this one is due
	marks("r0002")
	if got := db.files.syncs.Load(); got != 3 {
		t.Fatalf("%d syncs once every file but the last is %v old, want 3", got, syncAfter)
	}
}
