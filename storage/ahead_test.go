package storage

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
)

// madeAhead returns what the store has made ahead: its one empty file,
// and its one empty folder with the empty file in it.
func madeAhead(t *testing.T, dir string) (file, folder, inFolder os.FileInfo) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, aheadDir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		p := filepath.Join(dir, aheadDir, e.Name())
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasPrefix(e.Name(), "file-") && file == nil && st.Mode().IsRegular() && st.Size() == 0:
			file = st
		case strings.HasPrefix(e.Name(), "dir-") && folder == nil && st.IsDir():
			folder = st
			in, err := os.ReadDir(p)
			if err != nil || len(in) != 1 || in[0].Name() != spareName {
				t.Fatalf("%s holds %v (%v), want only %s", p, in, err, spareName)
			}
			if inFolder, err = os.Stat(filepath.Join(p, spareName)); err != nil || inFolder.Size() != 0 {
				t.Fatalf("%s: %v", spareName, err)
			}
		default:
			t.Fatalf("%s holds %s besides one empty file and one folder", aheadDir, e.Name())
		}
	}
	if file == nil || folder == nil {
		t.Fatalf("%s holds %v, want one empty file and one folder", aheadDir, entries)
	}
	return file, folder, inFolder
}

func aheadNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, aheadDir))
	must(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func aheadGone(t *testing.T, dir, when string) {
	t.Helper()
	if _, err := os.Lstat(filepath.Join(dir, aheadDir)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s: %s is still there (%v)", when, aheadDir, err)
	}
}

// Making a file is the dearest step of writing one: a commit takes the
// file and the run folder made ahead, writes the body and renames them
// into place, so it makes no inode itself.
func TestArtifactFileTakesWhatWasMadeAhead(t *testing.T) {
	dir := t.TempDir()
	db := openStore(t, dir, Options{})
	c := newClock()
	r := startRun(t, db, "r0001", testPlan(2), c)
	r.start(1)
	r.finish(1, engine.ResultProduced, "one\n") // the first file starts the maker
	db.files.ahead.settle()
	file, folder, inFolder := madeAhead(t, dir)

	same := func(path string, want os.FileInfo, perm os.FileMode) {
		t.Helper()
		st, err := os.Stat(filepath.Join(dir, path))
		if err != nil {
			t.Fatal(err)
		}
		if !os.SameFile(st, want) || st.Mode().Perm() != perm {
			t.Errorf("%s is not the one made ahead (mode %v)", path, st.Mode())
		}
	}
	// A run's first file: its folder, and the file in it.
	r2 := startRun(t, db, "r0002", testPlan(2), c)
	r2.start(1)
	r2.finish(1, engine.ResultProduced, "two\n")
	first := r2.run.Step(1).Latest().File
	if got := readFile(t, dir, first); got != "two\n" {
		t.Fatalf("%s = %q right after the commit", first, got)
	}
	same("runs/r0002", folder, 0o700)
	same(first, inFolder, 0o600)
	if entries, _ := os.ReadDir(filepath.Join(dir, "runs/r0002")); len(entries) != 1 {
		t.Errorf("runs/r0002 holds %v, want only %s", entries, first)
	}

	// A file in a folder already there.
	r2.decide(1, engine.DecideApprove, "k-1", "", "")
	r2.start(2)
	r2.finish(2, engine.ResultProduced, "three\n")
	second := r2.run.Step(2).Latest().File
	if got := readFile(t, dir, second); got != "three\n" {
		t.Fatalf("%s = %q right after the commit", second, got)
	}
	same(second, file, 0o600)

	db.files.ahead.settle()
	madeAhead(t, dir) // the next ones
	assertNoTempFiles(t, dir)
}

// Close stops the maker and removes what it made; a store that writes no
// artifact file makes nothing ahead.
func TestCloseRemovesWhatWasMadeAhead(t *testing.T) {
	dir := t.TempDir()
	db := openStore(t, dir, Options{})
	r := startRun(t, db, "r0001", testPlan(2), newClock())
	r.start(1)
	db.files.ahead.settle()
	aheadGone(t, dir, "before any artifact file")
	r.finish(1, engine.ResultProduced, "one\n")
	db.files.ahead.settle()
	madeAhead(t, dir)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	aheadGone(t, dir, "after Close")
	if got := readFile(t, dir, r.run.Step(1).Latest().File); got != "one\n" {
		t.Errorf("artifact file after Close = %q", got)
	}
}

// What a gonogo stopped before Close made ahead stays until a gonogo that
// may write the store opens it; one that reads it only leaves it.
func TestOpenRemovesWhatACrashLeftAhead(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Options{})
	must(t, err)
	r := startRun(t, db, "r0001", testPlan(2), newClock())
	r.start(1)
	r.finish(1, engine.ResultProduced, "one\n")
	db.files.ahead.settle()
	crash(t, db)
	madeAhead(t, dir)
	left := aheadNames(t, dir)

	ro, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	must(t, ro.Close())
	if got := aheadNames(t, dir); !slices.Equal(got, left) {
		t.Errorf("a read-only open changed what a crash left ahead: %v, then %v", left, got)
	}

	// The writable open rewrites the crashed run's file, so it makes new
	// ones ahead: the old ones are gone all the same.
	db = openStore(t, dir, Options{})
	db.files.ahead.settle()
	madeAhead(t, dir)
	for _, name := range aheadNames(t, dir) {
		if slices.Contains(left, name) {
			t.Errorf("%s, left by the crash, is still there after a writable open", name)
		}
	}
	must(t, db.Close())
	aheadGone(t, dir, "after Close")
}

// A commit's artifact file needs no record of its own: the run is marked
// in the same transaction, and when gonogo stops between the commit and
// the file (nothing of the file or its folder on disk), the next open
// writes it from the store and forgets the mark.
func TestFileOfACrashedCommitIsWrittenOnOpen(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Options{})
	must(t, err)
	r := startRun(t, db, "r0001", testPlan(2), newClock())
	r.start(1)
	r.finish(1, engine.ResultProduced, "the agent's artifact\n")
	if records, marks := pendingRecords(t, db); records != 0 || len(marks) != 1 || marks[0] != "r0001" || !markedFlag(t, db) {
		t.Fatalf("after the commit: %d file records, marks %v (marked: %v); want none and r0001", records, marks, markedFlag(t, db))
	}
	crash(t, db)
	must(t, os.RemoveAll(filepath.Join(dir, "runs")))

	db = openStore(t, dir, Options{})
	file := r.run.Step(1).Latest().File
	if got := readFile(t, dir, file); got != "the agent's artifact\n" {
		t.Fatalf("%s after reopening = %q", file, got)
	}
	if n := pendingCount(t, db); n != 0 || markedFlag(t, db) {
		t.Errorf("%d file records and marks after reopening (marked: %v)", n, markedFlag(t, db))
	}
	if got := db.files.syncs.Load(); got != 1 {
		t.Errorf("reopening synced %d times, want once", got)
	}
}

// The mark sits beside the run's artifacts bucket, on a page the commit
// writes anyway: a transition with its artifact file writes no more pages
// than the same transition without it.
func TestArtifactFileCostsNoPageOfItsOwn(t *testing.T) {
	pages := func(withFiles bool) int64 {
		db := openStore(t, t.TempDir(), Options{NoSync: true})
		c := newClock()
		before := db.bolt.Stats()
		for i := range 40 {
			r := startRun(t, db, engine.RunID(filepathSafe(i)), testPlan(2), c)
			r.noFiles = !withFiles
			r.start(1)
			r.finish(1, engine.ResultProduced, strings.Repeat("A requirement, in words.\n", 200))
		}
		after := db.bolt.Stats()
		d := after.TxStats.Sub(&before.TxStats)
		return d.GetWrite()
	}
	without, with := pages(false), pages(true)
	t.Logf("%d pages without, %d with", without, with)
	// 40 file commits: a record of their own would write 40 pages more.
	if with > without+4 {
		t.Errorf("40 transitions wrote %d pages with their artifact files, %d without", with, without)
	}
}
