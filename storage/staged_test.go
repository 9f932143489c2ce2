package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gonogo/gonogo/engine"
)

// finishCommit is the commit that ends step n of r with body as its
// artifact and its file, as runner.finish makes it, not yet committed.
func (r *runner) finishCommit(n int, body string) engine.Commit {
	r.t.Helper()
	s := r.run.Step(n)
	a := s.Latest().N
	file := engine.ArtifactFile(r.run.ID, n, s.Skill, a, true)
	f := engine.Finished{Result: engine.ResultProduced, Summary: "done", Artifact: true, Size: len(body), File: file}
	evs, err := engine.Finish(r.run, n, a, f, r.clock.now())
	if err != nil {
		r.t.Fatalf("Finish step %d: %v", n, err)
	}
	after, err := engine.Fold(r.run, evs)
	if err != nil {
		r.t.Fatal(err)
	}
	return engine.Commit{Run: after, Events: evs, After: r.run.Seq,
		Artifacts: []engine.ArtifactWrite{{Step: n, Attempt: a, Body: []byte(body)}},
		Files:     []engine.FileWrite{{Path: file, Body: []byte(body)}}}
}

// A commit writes its artifact file's body into what was made ahead while
// its transaction commits, and renames it into place only once that has:
// gonogo killed between the two leaves the body in aheadDir and nothing
// in place, and the next open writes the file from the store and clears
// aheadDir.
func TestFileStagedWhenGonogoStopsIsWrittenOnOpen(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Options{})
	must(t, err)
	c := newClock()
	first := startRun(t, db, "r0001", testPlan(2), c)
	first.start(1)
	first.finish(1, engine.ResultProduced, "one\n") // starts the maker
	db.files.ahead.settle()

	r := startRun(t, db, "r0002", testPlan(2), c)
	r.start(1)
	commit := r.finishCommit(1, "the agent's artifact\n")
	file := commit.Files[0].Path
	p, err := encodeCommit(commit)
	must(t, err)
	// The commit as far as a kill right after its transaction lets it go.
	db.fileMu.Lock()
	_, staged, err := db.commitStaging(p)
	db.fileMu.Unlock()
	must(t, err)
	if len(staged) != 1 || staged[0].folder == "" {
		t.Fatalf("staged %+v, want the file in the run folder made ahead", staged)
	}
	if got, err := os.ReadFile(filepath.Join(dir, staged[0].tmp)); err != nil || string(got) != "the agent's artifact\n" {
		t.Fatalf("staged file %s = %q, %v; want the body", staged[0].tmp, got, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "runs/r0002")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("runs/r0002 is in place before the commit's files are (%v)", err)
	}
	crash(t, db)

	db = openStore(t, dir, Options{})
	if got := readFile(t, dir, file); got != "the agent's artifact\n" {
		t.Fatalf("%s after reopening = %q", file, got)
	}
	if n := pendingCount(t, db); n != 0 || markedFlag(t, db) {
		t.Errorf("%d file records and marks after reopening (marked: %v)", n, markedFlag(t, db))
	}
	if _, err := os.Stat(filepath.Join(dir, staged[0].folder)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s, staged before the kill, is still there after reopening (%v)", staged[0].folder, err)
	}
	db.files.ahead.settle()
	madeAhead(t, dir) // the next ones, and nothing else
	assertNoTempFiles(t, dir)
}

// A commit refused in its transaction (here its key was applied already)
// puts no file in place and leaves nothing of what it staged: aheadDir
// holds only what is made ahead, empty.
func TestRefusedCommitDropsWhatItStaged(t *testing.T) {
	dir := t.TempDir()
	db := openStore(t, dir, Options{})
	c := newClock()
	first := startRun(t, db, "r0001", testPlan(2), c)
	first.start(1)
	first.finish(1, engine.ResultProduced, "one\n")
	first.decide(1, engine.DecideApprove, "k-1", "", "")
	first.start(2)
	second := startRun(t, db, "r0002", testPlan(2), c)
	second.start(1)
	for _, commit := range []engine.Commit{
		second.finishCommit(1, "never committed\n"), // its run folder is missing: staged in a folder
		first.finishCommit(2, "never committed\n"),  // its run folder is there: staged alone
	} {
		db.files.ahead.settle()
		commit.Key = "k-1"
		if err := db.Commit(context.Background(), commit); !errors.Is(err, engine.ErrDuplicate) {
			t.Fatalf("commit with a key applied already: %v", err)
		}
		if _, err := os.Lstat(filepath.Join(dir, commit.Files[0].Path)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is in place after a refused commit (%v)", commit.Files[0].Path, err)
		}
		db.files.ahead.settle()
		madeAhead(t, dir)
	}
	if _, err := os.Lstat(filepath.Join(dir, "runs/r0002")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("runs/r0002 is in place though its only file's commit was refused (%v)", err)
	}
	assertNoTempFiles(t, dir)
}

// A folder staged for a file whose folder was missing, which is there by
// the time it is placed (a rename of the same commit made it): the file
// goes in alone, beside what the folder holds, and the staged folder goes.
func TestStagedFolderMeetsItsFolderThere(t *testing.T) {
	dir := t.TempDir()
	db := openStore(t, dir, Options{})
	c := newClock()
	r := startRun(t, db, "r0001", testPlan(2), c)
	r.start(1)
	r.finish(1, engine.ResultProduced, "one\n")
	db.files.ahead.settle()

	db.fileMu.Lock()
	defer db.fileMu.Unlock()
	s, ok, err := db.files.stage("runs/r0009/01-a.md", []byte("staged\n"))
	if err != nil || !ok || s.folder == "" {
		t.Fatalf("stage: %+v, %v, %v; want a folder made ahead", s, ok, err)
	}
	must(t, os.MkdirAll(filepath.Join(dir, "runs/r0009"), 0o700))
	must(t, os.WriteFile(filepath.Join(dir, "runs/r0009/00-other.md"), []byte("other\n"), 0o600))
	must(t, db.files.place(s))
	if got := readFile(t, dir, "runs/r0009/01-a.md"); got != "staged\n" {
		t.Errorf("placed file = %q", got)
	}
	if got := readFile(t, dir, "runs/r0009/00-other.md"); got != "other\n" {
		t.Errorf("the file already in the folder = %q", got)
	}
	if _, err := os.Lstat(filepath.Join(dir, s.folder)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the staged folder %s is still there (%v)", s.folder, err)
	}
}

// A commit whose file cannot be put in place stops there (a later write
// may take the place of an earlier rename), and drops what it staged for
// the files after it; the next open writes them all.
func TestFailedFileDropsTheStagedOnesAfterIt(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Options{})
	must(t, err)
	c := newClock()
	first := startRun(t, db, "r0001", testPlan(2), c)
	first.start(1)
	first.finish(1, engine.ResultProduced, "one\n") // starts the maker
	first.decide(1, engine.DecideApprove, "k-1", "", "")
	first.start(2)
	db.files.ahead.settle()

	commit := first.finishCommit(2, "two\n")
	// A file stands where the first file's folder goes; the second, the
	// artifact's, is staged in the file made ahead.
	blocked := "notes/r0001.md"
	must(t, os.WriteFile(filepath.Join(dir, "notes"), nil, 0o600))
	commit.Files = append([]engine.FileWrite{{Path: blocked, Body: []byte("notes\n")}}, commit.Files...)
	if err := db.Commit(context.Background(), commit); !errors.Is(err, ErrFilesPending) {
		t.Fatalf("commit with a file that cannot be put in place: %v, want ErrFilesPending", err)
	}
	second := commit.Files[1].Path
	if _, err := os.Lstat(filepath.Join(dir, second)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s is in place though the file before it failed (%v)", second, err)
	}
	db.files.ahead.settle()
	madeAhead(t, dir) // nothing staged is left
	crash(t, db)

	must(t, os.Remove(filepath.Join(dir, "notes")))
	openStore(t, dir, Options{})
	if got := readFile(t, dir, blocked); got != "notes\n" {
		t.Errorf("%s after reopening = %q", blocked, got)
	}
	if got := readFile(t, dir, second); got != "two\n" {
		t.Errorf("%s after reopening = %q", second, got)
	}
	assertNoTempFiles(t, dir)
}
