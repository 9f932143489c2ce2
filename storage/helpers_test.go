package storage

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record/recordtest"
)

// openStore opens a store in dir and, when the test ends, closes it and
// checks the file's consistency with bbolt's own checker. A test may Close
// the store itself; the check still runs on the file.
func openStore(t testing.TB, dir string, opt Options) *DB {
	t.Helper()
	db, err := Open(dir, opt)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		checkFile(t, db.path)
	})
	return db
}

// checkFile runs bbolt's consistency check over a closed store file.
func checkFile(t testing.TB, path string) {
	t.Helper()
	bdb, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Errorf("reopen %s for check: %v", path, err)
		return
	}
	defer bdb.Close()
	err = bdb.View(func(tx *bbolt.Tx) error {
		for err := range tx.Check() {
			t.Errorf("%s: consistency: %v", path, err)
		}
		return nil
	})
	if err != nil {
		t.Errorf("check %s: %v", path, err)
	}
}

// rawUpdate changes the file behind gonogo's back, to set up what a crash
// or an older gonogo would leave. The store must be closed.
func rawUpdate(t testing.TB, dir string, fn func(tx *bbolt.Tx) error) {
	t.Helper()
	bdb, err := bbolt.Open(filepath.Join(dir, FileName), 0o600, &bbolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatalf("raw open: %v", err)
	}
	defer bdb.Close()
	if err := bdb.Update(fn); err != nil {
		t.Fatalf("raw update: %v", err)
	}
}

// clock hands out distinct times in a zone other than UTC, so a round trip
// that loses the instant or mixes up zones shows.
type clock struct{ t time.Time }

func newClock() *clock {
	return &clock{t: time.Date(2025, 3, 14, 9, 26, 53, 589793238, time.FixedZone("CET", 3600))}
}

func (c *clock) now() time.Time {
	c.t = c.t.Add(1500 * time.Millisecond)
	return c.t
}

func testPlan(steps int) engine.Plan {
	p := engine.Plan{
		Input: engine.InputPlan, Source: "plans/checkout.md", Domain: engine.DomainComplicated,
		DomainSource: "section-2", Confidence: "Medium-High", ConfidenceReason: "two interviews agree",
		Manual:   []engine.Block{{Effort: "Talk to finance", PTokens: []string{"P4"}, Prompt: "Ask about refunds.", Reason: "no skill", Line: 88}},
		Deferred: []engine.Block{{Effort: "Pricing page", PTokens: []string{"P5"}, Skill: "deliver-prd", Prompt: "Draft it.", Line: 95}},
		Warnings: []string{"confidence written without a reason separator"},
	}
	for i := 1; i <= steps; i++ {
		p.Steps = append(p.Steps, engine.PlanStep{
			Skill: fmt.Sprintf("skill-%d", i), Effort: fmt.Sprintf("effort %d", i),
			PTokens: []string{fmt.Sprintf("P%d", i)}, Prompt: fmt.Sprintf("Write the thing number %d for the mobile checkout.", i),
			Category: engine.CategoryContent, Execution: engine.ExecDelegate, Line: 40 + 10*i,
		})
	}
	return p
}

// runner drives one run through real engine transitions, committing each.
type runner struct {
	t       testing.TB
	db      *DB
	clock   *clock
	run     *engine.Run
	noFiles bool // keep artifacts in the store only
}

func startRun(t testing.TB, db *DB, id engine.RunID, p engine.Plan, c *clock) *runner {
	t.Helper()
	evs, err := engine.NewRun(id, p, engine.StartOptions{StartedBy: "U123", Origin: engine.Origin{Channel: "C1", Thread: "1700000000.000100"}}, c.now())
	if err != nil {
		t.Fatalf("NewRun: %v", err)
	}
	r := &runner{t: t, db: db, clock: c, run: &engine.Run{}}
	r.commit(evs, nil, nil, "")
	return r
}

// commit folds evs into the run and commits them.
func (r *runner) commit(evs []engine.Event, arts []engine.ArtifactWrite, files []engine.FileWrite, key string) {
	r.t.Helper()
	if err := r.tryCommit(evs, arts, files, key); err != nil {
		r.t.Fatalf("commit %v: %v", evs[0].Type, err)
	}
}

func (r *runner) tryCommit(evs []engine.Event, arts []engine.ArtifactWrite, files []engine.FileWrite, key string) error {
	r.t.Helper()
	after, err := engine.Fold(r.run, evs)
	if err != nil {
		r.t.Fatalf("fold: %v", err)
	}
	if r.noFiles {
		files = nil
	}
	err = r.db.Commit(context.Background(), engine.Commit{Run: after, Events: evs, After: r.run.Seq, Artifacts: arts, Files: files, Key: key})
	if err == nil {
		r.run = after
	}
	return err
}

func (r *runner) start(n int) {
	r.t.Helper()
	evs, err := engine.Start(r.run, n, r.clock.now())
	if err != nil {
		r.t.Fatalf("Start step %d: %v", n, err)
	}
	r.commit(evs, nil, nil, "")
}

// finish ends the latest attempt of step n with body as its artifact,
// written to disk like the service does: the step's earlier file makes way.
func (r *runner) finish(n int, res engine.Result, body string) {
	r.t.Helper()
	s := r.run.Step(n)
	a := s.Latest().N
	f := engine.Finished{Result: res, Summary: fmt.Sprintf("summary of %d.%d", n, a), CostUSD: 0.125, Usage: engine.Usage{InputTokens: 1200, OutputTokens: 340, Turns: 3}}
	var arts []engine.ArtifactWrite
	var files []engine.FileWrite
	if body != "" {
		f.Artifact, f.Size = true, len(body)
		f.File = engine.ArtifactFile(r.run.ID, n, s.Skill, a, true)
		arts = []engine.ArtifactWrite{{Step: n, Attempt: a, Body: []byte(body)}}
		for _, old := range s.Attempts {
			if old.N != a && old.File == f.File {
				files = append(files, engine.FileWrite{From: f.File, Path: engine.ArtifactFile(r.run.ID, n, s.Skill, old.N, false)})
			}
		}
		files = append(files, engine.FileWrite{Path: f.File, Body: []byte(body)})
	}
	evs, err := engine.Finish(r.run, n, a, f, r.clock.now())
	if err != nil {
		r.t.Fatalf("Finish step %d: %v", n, err)
	}
	r.commit(evs, arts, files, "")
}

func (r *runner) decide(n int, kind engine.DecisionKind, key, feedback, edit string) {
	r.t.Helper()
	if err := r.tryDecide(n, kind, key, feedback, edit); err != nil {
		r.t.Fatalf("decide %s on step %d: %v", kind, n, err)
	}
}

func (r *runner) tryDecide(n int, kind engine.DecisionKind, key, feedback, edit string) error {
	r.t.Helper()
	s := r.run.Step(n)
	d := engine.Decision{Kind: kind, Actor: "U456", Step: n, Attempt: s.Latest().N, Key: key, Feedback: feedback}
	var e *engine.Edit
	var arts []engine.ArtifactWrite
	var files []engine.FileWrite
	if kind == engine.DecideEdit {
		file := engine.ArtifactFile(r.run.ID, n, s.Skill, d.Attempt, true)
		e = &engine.Edit{Size: len(edit), File: file, Summary: "edited by hand"}
		arts = []engine.ArtifactWrite{{Step: n, Attempt: d.Attempt, Body: []byte(edit)}}
		files = []engine.FileWrite{{Path: file, Body: []byte(edit)}}
	}
	evs, err := engine.Decide(r.run, d, e, r.clock.now())
	if err != nil {
		r.t.Fatalf("Decide: %v", err)
	}
	return r.tryCommit(evs, arts, files, key)
}

// sameRun fails the test when got and want differ after normalising times
// (in place: Clone would hide a nil slice coming back empty).
func sameRun(t testing.TB, what string, got, want *engine.Run) {
	t.Helper()
	recordtest.InUTC(got)
	recordtest.InUTC(want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: runs differ\n got: %+v\nwant: %+v", what, got, want)
	}
}

// rebuild folds the stored journal of a run into a run: what the snapshot
// should say, derived from the events alone.
func rebuild(ctx context.Context, db *DB, id engine.RunID) (*engine.Run, error) {
	j, err := db.Journal(ctx, id)
	if err != nil {
		return nil, err
	}
	r, err := engine.Rebuild(j)
	if err != nil {
		return nil, fmt.Errorf("rebuild run %s: %w", id, err)
	}
	return r, nil
}

// activeRuns lists the runs in the active index: neither completed nor
// aborted, oldest first.
func activeRuns(ctx context.Context, db *DB) ([]engine.RunID, error) {
	if err := live(ctx); err != nil {
		return nil, err
	}
	var out []engine.RunID
	err := db.view(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketActive).ForEach(func(k, _ []byte) error {
			out = append(out, engine.RunID(k))
			return nil
		})
	})
	return out, err
}
