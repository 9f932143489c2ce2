package storetest

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// An Opener makes a new, empty store for one case and returns the function
// that opens it. The case calls open once to begin and, after closing what
// it returned, again to open the same store as gonogo does after a restart
// (recovery included). open fails the test when the store does not open.
type Opener func(t *testing.T) (open func() Opened)

// Opened is a store as a case sees it: the engine.Store under test, and
// what a case needs to look behind it.
type Opened struct {
	engine.Store
	// Close lets the store go, as gonogo stopping would: what it committed
	// stays for the next open. A case calls nothing on it afterwards.
	Close func() error
	// Journal returns a run's events in seq order, or an error wrapping
	// engine.ErrNotFound.
	Journal func(ctx context.Context, id engine.RunID) ([]engine.Event, error)
	// Versions returns every version of an attempt's artifact, the
	// agent's original first, then each edit.
	Versions func(ctx context.Context, id engine.RunID, step, attempt int) ([][]byte, error)
	// Dir is the data directory the store writes a commit's files under;
	// "" for a store that writes none, which skips the cases about files.
	Dir string
}

// Run runs every case, each as a subtest on a store of its own.
func Run(t *testing.T, open Opener) {
	cases := []struct {
		name string
		run  func(t *testing.T, open func() Opened)
	}{
		{"StaleCommitChangesNothing", staleCommit},
		{"HeldRunIDIsStale", heldRunID},
		{"SeenKeyIsDuplicate", seenKey},
		{"JournalIsContiguous", contiguousJournal},
		{"EditKeepsOriginal", editVersions},
		{"FilesWrittenAfterCommit", filesWritten},
		{"FilesPendingUntilReopen", filesPending},
		{"RecoveryOnOpen", recovery},
		{"ListNewestFirst", listing},
		{"ListSameSecondByStart", listingSameSecond},
		{"NotesMergeAndDelete", notes},
		{"UnknownRunNotFound", unknownRun},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, open(t)) })
	}
}

var ctx = context.Background()

// clock hands out distinct UTC times, a second apart (or step apart, when
// set). UTC, so that runs read back from a store compare equal with
// reflect.DeepEqual.
type clock struct {
	t    time.Time
	step time.Duration
}

func newClock() *clock { return &clock{t: time.Date(2031, 4, 2, 9, 0, 0, 0, time.UTC)} }

func (c *clock) now() time.Time {
	if c.step == 0 {
		c.t = c.t.Add(time.Second)
	} else {
		c.t = c.t.Add(c.step)
	}
	return c.t
}

// plan is a plan of independent steps named skill-1, skill-2, ...
func plan(steps int) engine.Plan {
	p := engine.Plan{Input: engine.InputPlan, Source: "plans/storetest.md", Domain: engine.DomainClear}
	for i := 1; i <= steps; i++ {
		p.Steps = append(p.Steps, engine.PlanStep{
			Skill: fmt.Sprintf("skill-%d", i), Effort: fmt.Sprintf("effort %d", i),
			Prompt: fmt.Sprintf("Write thing %d.", i), Category: engine.CategoryContent,
			Execution: engine.ExecDelegate, Line: 10 * i,
		})
	}
	return p
}

// driver moves one run through the engine's transitions. Its methods
// named for an event (runStarted, finished, ...) return the change for a
// case to commit or to see refused; commit applies one that must stand.
type driver struct {
	t   *testing.T
	s   Opened
	clk *clock
	run *engine.Run // as last committed; empty before the run starts
}

// begin commits the start of run id with steps independent steps.
func begin(t *testing.T, s Opened, clk *clock, id engine.RunID, steps int) *driver {
	t.Helper()
	d := &driver{t: t, s: s, clk: clk, run: &engine.Run{}}
	d.commit(d.runStarted(id, steps, ""))
	return d
}

func (d *driver) change(evs []engine.Event, err error, c engine.Commit) engine.Commit {
	d.t.Helper()
	if err != nil {
		d.t.Fatalf("transition: %v", err)
	}
	after, err := engine.Fold(d.run, evs)
	if err != nil {
		d.t.Fatalf("fold: %v", err)
	}
	c.Run, c.Events, c.After = after, evs, d.run.Seq
	return c
}

func (d *driver) commit(c engine.Commit) {
	d.t.Helper()
	if err := d.s.Commit(ctx, c); err != nil {
		d.t.Fatalf("commit %s: %v", c.Events[0].Type, err)
	}
	d.run = c.Run
}

// runStarted is the first change of run id, with an idempotency key.
func (d *driver) runStarted(id engine.RunID, steps int, key string) engine.Commit {
	d.t.Helper()
	evs, err := engine.NewRun(id, plan(steps), engine.StartOptions{StartedBy: "U-starter", Key: key}, d.clk.now())
	return d.change(evs, err, engine.Commit{Key: key})
}

func (d *driver) stepStarted(n int) engine.Commit {
	d.t.Helper()
	evs, err := engine.Start(d.run, n, d.clk.now())
	return d.change(evs, err, engine.Commit{})
}

func (d *driver) start(n int) {
	d.t.Helper()
	d.commit(d.stepStarted(n))
}

// finished ends step n's latest attempt with body as its artifact, written
// to its file as the service does: the step's file of an earlier attempt
// makes way first.
func (d *driver) finished(n int, body string) engine.Commit {
	d.t.Helper()
	s := d.run.Step(n)
	a := s.Latest().N
	file := engine.ArtifactFile(d.run.ID, n, s.Skill, a, true)
	var files []engine.FileWrite
	if a > 1 {
		files = append(files, engine.FileWrite{From: file, Path: engine.ArtifactFile(d.run.ID, n, s.Skill, a-1, false)})
	}
	files = append(files, engine.FileWrite{Path: file, Body: []byte(body)})
	f := engine.Finished{Result: engine.ResultProduced, Summary: "summary", Artifact: true, Size: len(body), File: file}
	evs, err := engine.Finish(d.run, n, a, f, d.clk.now())
	return d.change(evs, err, engine.Commit{
		Artifacts: []engine.ArtifactWrite{{Step: n, Attempt: a, Body: []byte(body)}}, Files: files,
	})
}

// decided is a decision on step n's latest attempt; edit is the new body
// of an edit.
func (d *driver) decided(n int, kind engine.DecisionKind, key, edit string) engine.Commit {
	d.t.Helper()
	s := d.run.Step(n)
	dec := engine.Decision{Kind: kind, Actor: "U-reviewer", Step: n, Attempt: s.Latest().N, Key: key}
	c := engine.Commit{Key: key}
	var e *engine.Edit
	if kind == engine.DecideEdit {
		file := engine.ArtifactFile(d.run.ID, n, s.Skill, dec.Attempt, true)
		e = &engine.Edit{Size: len(edit), File: file, Summary: "edited"}
		c.Artifacts = []engine.ArtifactWrite{{Step: n, Attempt: dec.Attempt, Body: []byte(edit)}}
		c.Files = []engine.FileWrite{{Path: file, Body: []byte(edit)}}
	}
	evs, err := engine.Decide(d.run, dec, e, d.clk.now())
	return d.change(evs, err, c)
}

// view is what a reader sees of one run and of the listing.
type view struct {
	run     *engine.Run
	journal []engine.Event
	list    []engine.RunSummary
}

func look(t *testing.T, s Opened, id engine.RunID) view {
	t.Helper()
	var v view
	var err error
	if v.run, err = s.Load(ctx, id); err != nil {
		t.Fatalf("Load(%s): %v", id, err)
	}
	if v.journal, err = s.Journal(ctx, id); err != nil {
		t.Fatalf("Journal(%s): %v", id, err)
	}
	if v.list, err = s.List(ctx); err != nil {
		t.Fatalf("List: %v", err)
	}
	return v
}

// unchanged fails the test when run id or the listing differ from before.
func unchanged(t *testing.T, s Opened, id engine.RunID, before view, after string) {
	t.Helper()
	now := runUnchanged(t, s, id, before, after)
	if !reflect.DeepEqual(now.list, before.list) {
		t.Errorf("after %s, the listing changed:\n got: %+v\nwant: %+v", after, now.list, before.list)
	}
}

// runUnchanged fails the test when run id or its journal differ from
// before, and returns what it sees now.
func runUnchanged(t *testing.T, s Opened, id engine.RunID, before view, after string) view {
	t.Helper()
	now := look(t, s, id)
	if !reflect.DeepEqual(now.run, before.run) {
		t.Errorf("after %s, run %s changed:\n got: %+v\nwant: %+v", after, id, now.run, before.run)
	}
	if !reflect.DeepEqual(now.journal, before.journal) {
		t.Errorf("after %s, run %s's journal changed: %d events, was %d", after, id, len(now.journal), len(before.journal))
	}
	return now
}
