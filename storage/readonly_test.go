package storage

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/gonogo/gonogo/engine"
)

// treeOf reads every file under dir, to show that nothing changed.
func treeOf(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, what string, got, want map[string][]byte) {
	t.Helper()
	for p, b := range want {
		if g, ok := got[p]; !ok || !bytes.Equal(g, b) {
			t.Errorf("%s changed %s", what, p)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s created %s", what, p)
		}
	}
}

// storeLeftByACrash is a store as a gonogo killed mid-step leaves it: a
// step recorded running and a file write recorded but not carried out.
func storeLeftByACrash(t *testing.T) (string, engine.RunID) {
	t.Helper()
	dir := t.TempDir()
	db := openStore(t, dir, Options{})
	r := startRun(t, db, "r0001", testPlan(2), newClock())
	r.start(1)
	r.finish(1, engine.ResultProduced, "one\n")
	r.decide(1, engine.DecideApprove, "", "", "")
	r.start(2)
	db.Close()
	rawUpdate(t, dir, func(tx *bbolt.Tx) error {
		putPending(t, tx, fileRecord{Run: "r0001", Path: "runs/r0001/notes.md"}, []byte("not written yet\n"))
		return nil
	})
	return dir, r.run.ID
}

// Reading a store read-only writes nothing, not even crash recovery: the
// step stays recorded running, the pending file stays unwritten, and the
// file's bytes stay as they were.
func TestReadOnlyOpenWritesNothing(t *testing.T) {
	dir, id := storeLeftByACrash(t)
	before := treeOf(t, dir)

	db, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if !db.ReadOnly() {
		t.Error("ReadOnly() = false for a store opened read-only")
	}
	r, err := db.Load(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if st := r.Step(2).Status; st != engine.StepRunning {
		t.Errorf("step 2 read as %s, want running as recorded", st)
	}
	if list, err := db.List(context.Background()); err != nil || len(list) != 1 {
		t.Errorf("List: %v %v", list, err)
	}
	if body, err := db.Artifact(context.Background(), id, 1, 1); err != nil || string(body) != "one\n" {
		t.Errorf("Artifact: %q %v", body, err)
	}
	evs, c, err := recoverChange(r)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Commit(context.Background(), engine.Commit{Run: c, Events: evs, After: r.Seq})
	if !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), db.path) {
		t.Errorf("Commit on a read-only store: %v, want ErrReadOnly naming the file", err)
	}
	if err := db.SetNotes(context.Background(), id, map[string]string{"k": "v"}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("SetNotes on a read-only store: %v, want ErrReadOnly", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	sameTree(t, "a read-only open", treeOf(t, dir), before)

	// A gonogo that can write the store brings it up to date.
	db = openStore(t, dir, Options{})
	if r, _ := db.Load(context.Background(), id); r.Step(2).Status != engine.StepInterrupted {
		t.Errorf("after a writable open step 2 is %s, want interrupted", r.Step(2).Status)
	}
	if got := readFile(t, dir, "runs/r0001/notes.md"); got != "not written yet\n" {
		t.Errorf("pending file after a writable open = %q", got)
	}
}

func recoverChange(r *engine.Run) ([]engine.Event, *engine.Run, error) {
	c, _, err := engine.Recover(r, time.Now(), time.Time{})
	return c.Events, c.Run, err
}

func TestReadOnlyOpenRefusesALayoutToMigrate(t *testing.T) {
	dir := t.TempDir()
	makeVersion0(t, dir)
	before := treeOf(t, dir)
	_, err := Open(dir, Options{ReadOnly: true})
	if !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), "write access") {
		t.Fatalf("read-only Open of an old layout: %v, want ErrReadOnly saying write access is needed", err)
	}
	sameTree(t, "a refused read-only open", treeOf(t, dir), before)
}

// Readers share the store; a writer waits for them, and they for it.
func TestReadersShareTheLock(t *testing.T) {
	dir, _ := storeLeftByACrash(t)
	a, err := Open(dir, Options{ReadOnly: true, LockTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(dir, Options{ReadOnly: true, LockTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("a second reader: %v", err)
	}
	defer b.Close()
	if w, err := Open(dir, Options{LockTimeout: 100 * time.Millisecond}); !errors.Is(err, engine.ErrLocked) {
		if w != nil {
			w.Close()
		}
		t.Fatalf("a writer while readers read: %v, want ErrLocked", err)
	}
}

// OpenToRead opens for writing when it may, and falls back to reading
// when opening for writing is refused, as on a read-only mount or a file
// of another user (injected here: root may write any file).
func TestOpenToReadFallsBackWhenWritingIsRefused(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EROFS, syscall.EACCES, syscall.EPERM} {
		t.Run(errno.Error(), func(t *testing.T) {
			dir, id := storeLeftByACrash(t)
			before := treeOf(t, dir)
			refuse := func(name string, flag int, perm os.FileMode) (*os.File, error) {
				if flag&(os.O_WRONLY|os.O_RDWR) != 0 {
					return nil, &fs.PathError{Op: "open", Path: name, Err: errno}
				}
				return os.OpenFile(name, flag, perm)
			}
			db, err := OpenToRead(dir, Options{openFile: refuse})
			if err != nil {
				t.Fatal(err)
			}
			if !db.ReadOnly() {
				t.Error("opened for writing though writing was refused")
			}
			if r, err := db.Load(context.Background(), id); err != nil || r.Step(2).Status != engine.StepRunning {
				t.Errorf("Load: %v", err)
			}
			db.Close()
			sameTree(t, "reading a store it may not write", treeOf(t, dir), before)
		})
	}
	dir, id := storeLeftByACrash(t)
	db, err := OpenToRead(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.ReadOnly() {
		t.Error("a store this user may write was opened read-only")
	}
	if r, _ := db.Load(context.Background(), id); r.Step(2).Status != engine.StepInterrupted {
		t.Errorf("opened for writing, step 2 is %s, want interrupted", r.Step(2).Status)
	}
}

// An empty or missing gonogo.db beside runs/ that holds runs is refused,
// saying what was found and what to do, and left as it is.
func TestStoreIsNotReplacedBesideItsRuns(t *testing.T) {
	cases := []struct {
		name  string
		db    []byte // nil: no file
		found string
	}{
		{"empty", []byte{}, "is empty (0 bytes)"},
		{"missing", nil, "is missing"},
		{"damaged", []byte("# my notes\nnot a database\n"), "not a gonogo database, or damaged"},
	}
	for _, c := range cases {
		for _, readOnly := range []bool{false, true} {
			t.Run(c.name+map[bool]string{false: "", true: "/read-only"}[readOnly], func(t *testing.T) {
				dir := t.TempDir()
				for _, run := range []string{"r0001", "r0002"} {
					must(t, os.MkdirAll(filepath.Join(dir, "runs", run), 0o700))
					must(t, os.WriteFile(filepath.Join(dir, "runs", run, "01-prd.md"), []byte("kept\n"), 0o600))
				}
				if c.db != nil {
					must(t, os.WriteFile(filepath.Join(dir, FileName), c.db, 0o600))
				}
				before := treeOf(t, dir)
				db, err := Open(dir, Options{ReadOnly: readOnly, LockTimeout: 100 * time.Millisecond})
				if err == nil {
					db.Close()
					t.Fatal("Open made a new store beside runs/ holding 2 runs")
				}
				msg := err.Error()
				for _, want := range []string{filepath.Join(dir, FileName), c.found, "2 runs", "restore " + FileName + " from a backup", "move the data directory " + dir + " aside"} {
					if !strings.Contains(msg, want) {
						t.Errorf("error %q does not say %q", msg, want)
					}
				}
				if !errors.Is(err, ErrDamaged) {
					t.Errorf("error %v is not ErrDamaged", err)
				}
				sameTree(t, "a refused open", treeOf(t, dir), before)
			})
		}
	}
}

// Without runs beside it an empty file is a new store, as before; read
// only, it is no store at all.
func TestEmptyFileWithoutRuns(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, FileName), nil, 0o600))
	if _, err := Open(dir, Options{ReadOnly: true}); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("read-only Open of an empty file: %v", err)
	}
	openStore(t, dir, Options{})
}
