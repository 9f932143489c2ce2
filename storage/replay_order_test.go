package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gonogo/gonogo/engine"
)

// A file write that failed at commit time (ErrFilesPending) stays pending.
// A later commit writing the same path carries it out first, in commit
// order, so reopening never puts an older body back: an edit on disk stays
// the edit the store records.
func TestPendingReplayKeepsLaterWrite(t *testing.T) {
	dir := t.TempDir()
	db := openStore(t, dir, Options{})
	c := newClock()
	r := startRun(t, db, "r0001", testPlan(2), c)
	r.start(1)

	s := r.run.Step(1)
	file := engine.ArtifactFile(r.run.ID, 1, s.Skill, 1, true)
	// Something stands where the file goes, so the write fails the way a
	// full disk or a permission problem would make it fail.
	block := filepath.Join(dir, filepath.FromSlash(file))
	if err := os.MkdirAll(filepath.Join(block, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	orig := "# The agent's original\n\nFirst draft.\n"
	f := engine.Finished{Result: engine.ResultProduced, Artifact: true, Size: len(orig), File: file}
	evs, err := engine.Finish(r.run, 1, 1, f, c.now())
	if err != nil {
		t.Fatal(err)
	}
	after, err := engine.Fold(r.run, evs)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Commit(ctx, engine.Commit{Run: after, Events: evs, After: r.run.Seq,
		Artifacts: []engine.ArtifactWrite{{Step: 1, Attempt: 1, Body: []byte(orig)}},
		Files:     []engine.FileWrite{{Path: file, Body: []byte(orig)}}})
	if !errors.Is(err, ErrFilesPending) {
		t.Fatalf("commit = %v, want ErrFilesPending", err)
	}
	r.run = after // the change stands

	// The obstacle is gone; a person edits the artifact, and that write works.
	if err := os.RemoveAll(block); err != nil {
		t.Fatal(err)
	}
	edited := "# Edited by a person\n\nThe version the team approved.\n"
	r.decide(1, engine.DecideEdit, "k-edit", "", edited)
	if got, _ := os.ReadFile(block); string(got) != edited {
		t.Fatalf("after the edit the file holds %q", got)
	}

	db.Close()
	openStore(t, dir, Options{}) // reopening replays what is pending
	got, _ := os.ReadFile(block)
	if string(got) != edited {
		t.Fatalf("after reopening, %s holds %q; the store's current artifact is the edit %q", file, got, edited)
	}
}

// A pending file write that still cannot be done (a full disk at start-up,
// a directory in the way) does not lock anyone out of the store: Open
// succeeds, reports the pending files, and the change stands.
func TestPendingFileThatStillFailsDoesNotBlockOpen(t *testing.T) {
	dir := t.TempDir()
	db := openStore(t, dir, Options{})
	c := newClock()
	r := startRun(t, db, "r0001", testPlan(2), c)
	r.start(1)
	file := engine.ArtifactFile(r.run.ID, 1, r.run.Step(1).Skill, 1, true)
	block := filepath.Join(dir, filepath.FromSlash(file))
	if err := os.MkdirAll(filepath.Join(block, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	body := "# Draft\n\nText.\n"
	f := engine.Finished{Result: engine.ResultProduced, Artifact: true, Size: len(body), File: file}
	evs, err := engine.Finish(r.run, 1, 1, f, c.now())
	if err != nil {
		t.Fatal(err)
	}
	after, _ := engine.Fold(r.run, evs)
	err = db.Commit(ctx, engine.Commit{Run: after, Events: evs, After: r.run.Seq,
		Artifacts: []engine.ArtifactWrite{{Step: 1, Attempt: 1, Body: []byte(body)}},
		Files:     []engine.FileWrite{{Path: file, Body: []byte(body)}}})
	if !errors.Is(err, ErrFilesPending) {
		t.Fatalf("commit = %v, want ErrFilesPending", err)
	}
	db.Close()
	db2, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("the store cannot be opened at all while one artifact file cannot be written: %v", err)
	}
	db2.Close()
}

// While one run's file is pending, another run's commits still put their
// files on disk before Commit returns, the run's earlier files included.
func TestFilesOfOtherRunsAreWrittenWhileOneIsPending(t *testing.T) {
	dir := t.TempDir()
	db := openStore(t, dir, Options{})
	c := newClock()
	a := startRun(t, db, "r0001", testPlan(2), c)
	a.start(1)
	a.finish(1, engine.ResultProduced, "a one\n")

	b := startRun(t, db, "r0002", testPlan(2), c)
	b.start(1)
	blocked := engine.ArtifactFile(b.run.ID, 1, b.run.Step(1).Skill, 1, true)
	must(t, os.MkdirAll(filepath.Join(dir, filepath.FromSlash(blocked), "x"), 0o700))
	body := "b one\n"
	f := engine.Finished{Result: engine.ResultProduced, Artifact: true, Size: len(body), File: blocked}
	evs, err := engine.Finish(b.run, 1, 1, f, c.now())
	must(t, err)
	err = b.tryCommit(evs, []engine.ArtifactWrite{{Step: 1, Attempt: 1, Body: []byte(body)}},
		[]engine.FileWrite{{Path: blocked, Body: []byte(body)}}, "")
	if !errors.Is(err, ErrFilesPending) {
		t.Fatalf("commit with an unwritable file: %v, want ErrFilesPending", err)
	}

	a.decide(1, engine.DecideApprove, "k-a1", "", "")
	a.start(2)
	a.finish(2, engine.ResultProduced, "a two\n") // tries r0002's file again, which still fails
	for _, st := range a.run.Steps {
		file := st.Latest().File
		if got := readFile(t, dir, file); got != fmt.Sprintf("a %s\n", map[int]string{1: "one", 2: "two"}[st.N]) {
			t.Errorf("%s = %q after the commit", file, got)
		}
	}
}
