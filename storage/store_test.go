package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/gonogo/gonogo/engine"
)

var ctx = context.Background()

// loadEquals fails the test unless Load returns exactly the run last
// committed.
func loadEquals(t *testing.T, db *DB, r *runner, what string) {
	t.Helper()
	got, err := db.Load(ctx, r.run.ID)
	if err != nil {
		t.Fatalf("%s: Load: %v", what, err)
	}
	sameRun(t, what, got, r.run)
}

func TestRoundTripThroughEveryDecision(t *testing.T) {
	dir := t.TempDir()
	db := openStore(t, dir, Options{})
	c := newClock()

	a := startRun(t, db, "r0001", testPlan(3), c)
	loadEquals(t, db, a, "started")
	steps := []struct {
		what string
		do   func()
	}{
		{"start 1", func() { a.start(1) }},
		{"finish 1", func() { a.finish(1, engine.ResultProduced, "# PRD\n\nstep one, attempt one\n") }},
		{"approve 1", func() { a.decide(1, engine.DecideApprove, "k-approve", "", "") }},
		{"start 2", func() { a.start(2) }},
		{"finish 2", func() { a.finish(2, engine.ResultProduced, "step two, attempt one\n") }},
		{"redo 2", func() { a.decide(2, engine.DecideRedo, "k-redo", "more detail on refunds", "") }},
		{"start 2 again", func() { a.start(2) }},
		{"finish 2 again", func() { a.finish(2, engine.ResultProduced, "step two, attempt two\n") }},
		{"edit 2", func() { a.decide(2, engine.DecideEdit, "k-edit", "", "step two, attempt two, edited\n") }},
		{"start 3", func() { a.start(3) }},
		{"finish 3 empty", func() { a.finish(3, engine.ResultEmpty, "## Goals\n[fill in the goals]\n") }},
		{"skip 3", func() { a.decide(3, engine.DecideSkip, "k-skip", "", "") }},
	}
	for _, s := range steps {
		s.do()
		loadEquals(t, db, a, s.what)
	}
	if a.run.State != engine.RunCompleted {
		t.Fatalf("run A is %s after its last step was skipped, want completed", a.run.State)
	}

	b := startRun(t, db, "r0002", testPlan(2), c)
	b.start(1)
	b.finish(1, engine.ResultFailed, "")
	b.decide(1, engine.DecideAbort, "k-abort", "", "")
	loadEquals(t, db, b, "aborted")
	if b.run.State != engine.RunAborted {
		t.Fatalf("run B is %s, want aborted", b.run.State)
	}

	w := startRun(t, db, "r0003", testPlan(2), c)
	w.start(1)
	w.finish(1, engine.ResultProduced, "waiting for a decision\n")

	// The journal alone rebuilds every snapshot, and its seqs are contiguous.
	for _, r := range []*runner{a, b, w} {
		j, err := db.Journal(ctx, r.run.ID)
		if err != nil {
			t.Fatal(err)
		}
		for i, ev := range j {
			if ev.Seq != uint64(i)+1 {
				t.Fatalf("run %s: journal entry %d has seq %d", r.run.ID, i, ev.Seq)
			}
		}
		if uint64(len(j)) != r.run.Seq {
			t.Fatalf("run %s: %d journal events, run at seq %d", r.run.ID, len(j), r.run.Seq)
		}
		rebuilt, err := rebuild(ctx, db, r.run.ID)
		if err != nil {
			t.Fatal(err)
		}
		sameRun(t, "rebuilt "+string(r.run.ID), rebuilt, r.run)
	}

	// Artifacts: the edit is a new version; the agent's original is kept.
	vs, err := db.ArtifactVersions(ctx, "r0001", 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]byte{[]byte("step two, attempt two\n"), []byte("step two, attempt two, edited\n")}
	if !reflect.DeepEqual(vs, want) {
		t.Fatalf("versions of step 2 attempt 2 = %q, want %q", vs, want)
	}
	cur, err := db.Artifact(ctx, "r0001", 2, 2)
	if err != nil || string(cur) != "step two, attempt two, edited\n" {
		t.Fatalf("Artifact(2,2) = %q, %v; want the edit", cur, err)
	}
	if _, err := db.Artifact(ctx, "r0002", 1, 1); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("artifact of a failed attempt: %v, want ErrNotFound", err)
	}

	// Files: the latest attempt at NN-skill.md, earlier ones made way.
	for name, body := range map[string]string{
		"runs/r0001/01-skill-1.md":           "# PRD\n\nstep one, attempt one\n",
		"runs/r0001/02-skill-2.md":           "step two, attempt two, edited\n",
		"runs/r0001/02-skill-2.attempt-1.md": "step two, attempt one\n",
		"runs/r0001/03-skill-3.md":           "## Goals\n[fill in the goals]\n",
	} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != body {
			t.Errorf("%s = %q, %v; want %q", name, got, err, body)
		}
	}
	if sa := a.run.Step(2).Attempts[0].File; sa != "runs/r0001/02-skill-2.attempt-1.md" {
		t.Errorf("attempt 1 of step 2 records file %q", sa)
	}
	assertNoTempFiles(t, dir)

	list, err := db.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []engine.RunID
	for _, s := range list {
		ids = append(ids, s.ID)
	}
	if !reflect.DeepEqual(ids, []engine.RunID{"r0003", "r0002", "r0001"}) {
		t.Fatalf("List order = %v, want newest first", ids)
	}
	if s := list[2]; s.State != engine.RunCompleted || s.StepsTotal != 3 || s.StepsDone != 3 || s.Source != "plans/checkout.md" ||
		s.Input != engine.InputPlan || s.Origin.Channel != "C1" || !s.Updated.Equal(a.run.Updated) {
		t.Fatalf("summary of r0001 = %+v", s)
	}
	active, err := activeRuns(ctx, db)
	if err != nil || !reflect.DeepEqual(active, []engine.RunID{"r0003"}) {
		t.Fatalf("Active = %v, %v; want only the waiting run", active, err)
	}
	for _, k := range []string{"k-approve", "k-redo", "k-edit", "k-skip", "k-abort"} {
		if seen, err := db.SeenKey(ctx, k); err != nil || !seen {
			t.Errorf("SeenKey(%s) = %v, %v", k, seen, err)
		}
	}
	if seen, _ := db.SeenKey(ctx, "never-used"); seen {
		t.Error("SeenKey reports a key never applied")
	}

	// And everything survives a reopen.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2 := openStore(t, dir, Options{})
	for _, r := range []*runner{a, b, w} {
		loadEquals(t, db2, r, "after reopen "+string(r.run.ID))
	}
	if rec := db2.recovered; len(rec) != 0 {
		t.Fatalf("recovered = %v with nothing running", rec)
	}
}

func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && p == filepath.Join(dir, aheadDir) {
			return filepath.SkipDir // made ahead for the next file, not left behind
		}
		if err == nil && strings.HasSuffix(p, ".tmp") {
			t.Errorf("temp file left behind: %s", p)
		}
		return nil
	})
}

// snapshotOf reads everything in the file, to show a refused commit
// changed nothing.
func snapshotOf(t *testing.T, db *DB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := db.bolt.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bbolt.Bucket) error {
			return b.ForEach(func(k, v []byte) error {
				key := string(name) + "/" + string(k)
				if v == nil {
					if nb := b.Bucket(k); nb != nil {
						return nb.ForEach(func(k2, v2 []byte) error {
							out[key+"/"+string(k2)] = bytes.Clone(v2)
							return nil
						})
					}
				}
				out[key] = bytes.Clone(v)
				return nil
			})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCommitRefusesAndWritesNothing(t *testing.T) {
	dir := t.TempDir()
	db := openStore(t, dir, Options{})
	c := newClock()
	x := startRun(t, db, "r0001", testPlan(2), c)
	x.start(1)
	x.finish(1, engine.ResultProduced, "x one\n")
	y := startRun(t, db, "r0002", testPlan(2), c)
	y.start(1)
	y.finish(1, engine.ResultProduced, "y one\n")
	x.decide(1, engine.DecideApprove, "click-1", "", "")

	before := snapshotOf(t, db)
	unchanged := func(what string) {
		t.Helper()
		if after := snapshotOf(t, db); !reflect.DeepEqual(before, after) {
			t.Fatalf("%s: the store changed", what)
		}
	}

	// The same click delivered to another run's checkpoint.
	if err := y.tryDecide(1, engine.DecideApprove, "click-1", "", ""); !errors.Is(err, engine.ErrDuplicate) {
		t.Fatalf("repeated key: %v, want ErrDuplicate", err)
	}
	unchanged("duplicate key")

	// A change computed against an older journal.
	old := x.run.Clone()
	evs, err := engine.Start(x.run, 2, c.now())
	if err != nil {
		t.Fatal(err)
	}
	x.commit(evs, nil, nil, "")
	before = snapshotOf(t, db)
	stale := &runner{t: t, db: db, clock: c, run: old}
	if err := stale.tryCommit(evs, nil, nil, ""); !errors.Is(err, engine.ErrStale) {
		t.Fatalf("stale After: %v, want ErrStale", err)
	}
	unchanged("stale After")

	// A run started twice.
	evs, _ = engine.NewRun("r0001", testPlan(1), engine.StartOptions{}, c.now())
	fresh := &runner{t: t, db: db, clock: c, run: &engine.Run{}}
	if err := fresh.tryCommit(evs, nil, nil, ""); !errors.Is(err, engine.ErrStale) {
		t.Fatalf("second start of a run: %v, want ErrStale", err)
	}
	unchanged("second start")

	// A change to a run that is not stored.
	ghost := x.run.Clone()
	ghost.ID = "r9999"
	gevs := engine.Interrupt(ghost, c.now())
	gafter, _ := engine.Fold(ghost, gevs)
	err = db.Commit(ctx, engine.Commit{Run: gafter, Events: gevs, After: ghost.Seq})
	if !errors.Is(err, engine.ErrStale) || !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("change to an unknown run: %v, want ErrStale and ErrNotFound", err)
	}
	unchanged("unknown run")

	// Events that leave a gap, or a run that does not match them.
	evs = engine.Interrupt(x.run, c.now())
	after, _ := engine.Fold(x.run, evs)
	gap := append([]engine.Event(nil), evs...)
	gap[0].Seq++
	if err := db.Commit(ctx, engine.Commit{Run: after, Events: gap, After: x.run.Seq}); err == nil || errors.Is(err, engine.ErrStale) {
		t.Fatalf("gap in seqs: %v, want a refusal that is not ErrStale", err)
	}
	behind := after.Clone()
	behind.Seq--
	if err := db.Commit(ctx, engine.Commit{Run: behind, Events: evs, After: x.run.Seq}); err == nil {
		t.Fatal("run seq that is not the last event's: accepted")
	}
	if err := db.Commit(ctx, engine.Commit{Run: x.run, After: x.run.Seq}); err == nil {
		t.Fatal("commit with no events: accepted")
	}
	bad := after.Clone()
	bad.Steps[0].Status = "sleeping"
	if err := db.Commit(ctx, engine.Commit{Run: bad, Events: evs, After: x.run.Seq}); err == nil || !strings.Contains(err.Error(), "sleeping") {
		t.Fatalf("unknown step status: %v, want a refusal naming it", err)
	}
	if err := db.Commit(ctx, engine.Commit{Run: after, Events: evs, After: x.run.Seq,
		Artifacts: []engine.ArtifactWrite{{Step: 7, Attempt: 1, Body: []byte("x")}}}); err == nil {
		t.Fatal("artifact for a step the run does not have: accepted")
	}
	unchanged("malformed commits")

	// Paths that could leave the data directory, or are not clean.
	for _, p := range []string{"", "../escape.md", "runs/../../escape.md", "/etc/passwd", "runs/a/../../../x",
		`runs\x.md`, "./runs/x.md", "runs//x.md", "runs/x/", ".", "gonogo.db", "runs/..hidden"} {
		err := db.Commit(ctx, engine.Commit{Run: after, Events: evs, After: x.run.Seq,
			Files: []engine.FileWrite{{Path: "runs/ok.md", Body: []byte("ok")}, {Path: p, Body: []byte("x")}}})
		if err == nil {
			t.Fatalf("file path %q: accepted", p)
		}
		if p == "" {
			continue // no From: not a rename
		}
		err = db.Commit(ctx, engine.Commit{Run: after, Events: evs, After: x.run.Seq,
			Files: []engine.FileWrite{{Path: "runs/ok.md", From: p}}})
		if err == nil {
			t.Fatalf("rename from %q: accepted", p)
		}
	}
	unchanged("bad paths")
	if _, err := os.Stat(filepath.Join(dir, "runs/ok.md")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused commit wrote a file: %v", err)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := db.Commit(cancelled, engine.Commit{Run: after, Events: evs, After: x.run.Seq}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: %v", err)
	}
	unchanged("cancelled")
}

func TestUnknownStoredStateIsAnError(t *testing.T) {
	dir := t.TempDir()
	db := openStore(t, dir, Options{})
	c := newClock()
	r := startRun(t, db, "r0001", testPlan(1), c)
	r.start(1)
	r.finish(1, engine.ResultProduced, "body\n")
	db.Close()

	rawUpdate(t, dir, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketRuns)
		v := bytes.Replace(b.Get([]byte("r0001")), []byte(`"status":"waiting"`), []byte(`"status":"dozing"`), 1)
		if err := b.Put([]byte("r0001"), v); err != nil {
			return err
		}
		j := tx.Bucket(bucketJournal).Bucket([]byte("r0001"))
		v = bytes.Replace(j.Get(seqKey(3)), []byte(`"type":"step-finished"`), []byte(`"type":"step-teleported"`), 1)
		return j.Put(seqKey(3), v)
	})
	db = openStore(t, dir, Options{})
	_, err := db.Load(ctx, "r0001")
	if err == nil || !strings.Contains(err.Error(), "r0001") || !strings.Contains(err.Error(), "dozing") {
		t.Fatalf("Load of an unknown state: %v, want an error naming the run and the state", err)
	}
	_, err = db.Journal(ctx, "r0001")
	if err == nil || !strings.Contains(err.Error(), "r0001") || !strings.Contains(err.Error(), "step-teleported") {
		t.Fatalf("Journal with an unknown event type: %v, want an error naming the run and the type", err)
	}
	if _, err := db.Load(ctx, "r0404"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("Load of a missing run: %v, want ErrNotFound", err)
	}
	if _, err := db.Journal(ctx, "r0404"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("Journal of a missing run: %v, want ErrNotFound", err)
	}
}

// Runs advance side by side: commits to different runs, and readers, do not
// get in each other's way.
func TestConcurrentRuns(t *testing.T) {
	dir := t.TempDir()
	db := openStore(t, dir, Options{NoSync: true})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			c := newClock()
			r := startRun(t, db, engine.RunID(fmt.Sprintf("r%04d", g)), testPlan(2), c)
			for n := 1; n <= 2; n++ {
				r.start(n)
				r.finish(n, engine.ResultProduced, fmt.Sprintf("run %d step %d\n", g, n))
				r.decide(n, engine.DecideApprove, fmt.Sprintf("key-%d-%d", g, n), "", "")
				if _, err := db.List(ctx); err != nil {
					t.Error(err)
				}
			}
			loadEquals(t, db, r, "after concurrent commits")
		})
	}
	wg.Wait()
	if active, err := activeRuns(ctx, db); err != nil || len(active) != 0 {
		t.Fatalf("Active() = %v, %v after every run completed", active, err)
	}
}
