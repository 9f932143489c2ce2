package storetest

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// A change computed against a run the journal has moved past is stale,
// and a refused commit changes nothing.
func staleCommit(t *testing.T, open func() Opened) {
	s := open()
	clk := newClock()
	d := begin(t, s, clk, "r0001", 2)
	old := *d
	d.start(1)
	before := look(t, s, "r0001")

	err := s.Commit(ctx, old.stepStarted(2))
	if !errors.Is(err, engine.ErrStale) {
		t.Fatalf("commit computed at event %d, the run at %d: %v, want ErrStale", old.run.Seq, d.run.Seq, err)
	}
	unchanged(t, s, "r0001", before, "a stale commit")
}

// The first commit of a run whose id is held is stale: two starts never
// share a run.
func heldRunID(t *testing.T, open func() Opened) {
	s := open()
	clk := newClock()
	begin(t, s, clk, "r0001", 1)
	before := look(t, s, "r0001")

	again := &driver{t: t, s: s, clk: clk, run: &engine.Run{}}
	if err := s.Commit(ctx, again.runStarted("r0001", 3, "")); !errors.Is(err, engine.ErrStale) {
		t.Fatalf("second start of run r0001: %v, want ErrStale", err)
	}
	unchanged(t, s, "r0001", before, "a second start")
}

// A key seen once, in any run, refuses a later commit with ErrDuplicate:
// a repeated decision (its artifact and file not written), or a repeated
// start of a new run.
func seenKey(t *testing.T, open func() Opened) {
	s := open()
	clk := newClock()
	a := begin(t, s, clk, "r0001", 2)
	a.start(1)
	a.commit(a.finished(1, "one\n"))
	a.commit(a.decided(1, engine.DecideApprove, "k-approve", ""))
	b := begin(t, s, clk, "r0002", 1)
	b.start(1)
	b.commit(b.finished(1, "two\n"))
	before := look(t, s, "r0002")

	if err := s.Commit(ctx, b.decided(1, engine.DecideEdit, "k-approve", "edited\n")); !errors.Is(err, engine.ErrDuplicate) {
		t.Fatalf("decision with a key seen in another run: %v, want ErrDuplicate", err)
	}
	unchanged(t, s, "r0002", before, "a repeated key")
	if vs, err := s.Versions(ctx, "r0002", 1, 1); err != nil || len(vs) != 1 || string(vs[0]) != "two\n" {
		t.Errorf("artifact versions after the refused edit = %q, %v; want the original only", vs, err)
	}
	if file := engine.ArtifactFile("r0002", 1, "skill-1", 1, true); s.Dir != "" && readFile(t, s, file) != "two\n" {
		t.Errorf("the refused edit was written to %s", file)
	}

	c := &driver{t: t, s: s, clk: clk, run: &engine.Run{}}
	if err := s.Commit(ctx, c.runStarted("r0003", 1, "k-approve")); !errors.Is(err, engine.ErrDuplicate) {
		t.Fatalf("new run with a seen key: %v, want ErrDuplicate", err)
	}
	if _, err := s.Load(ctx, "r0003"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("Load of the refused run: %v, want ErrNotFound", err)
	}
	unchanged(t, s, "r0002", before, "a repeated start")
}

// Each run's journal is numbered 1, 2, 3, ... without a gap, Load returns
// the run as committed, and a commit that would break the journal is
// refused.
func contiguousJournal(t *testing.T, open func() Opened) {
	s := open()
	d := begin(t, s, newClock(), "r0001", 2)
	d.start(1)
	d.commit(d.finished(1, "one\n"))
	d.commit(d.decided(1, engine.DecideRedo, "k-redo", ""))
	d.start(1)
	before := look(t, s, "r0001")
	for i, ev := range before.journal {
		if ev.Seq != uint64(i+1) {
			t.Fatalf("journal event %d has seq %d", i+1, ev.Seq)
		}
	}
	if n := uint64(len(before.journal)); n != d.run.Seq || before.run.Seq != n {
		t.Fatalf("%d journal events; the committed run is at %d, the loaded one at %d", n, d.run.Seq, before.run.Seq)
	}
	if !reflect.DeepEqual(before.run, d.run) {
		t.Fatalf("Load differs from the committed run:\n got: %+v\nwant: %+v", before.run, d.run)
	}

	next := d.finished(1, "again\n")
	// Events that skip a seq, in a run that ends at the last of them.
	gap := next
	gap.Events = append([]engine.Event(nil), next.Events...)
	for i := range gap.Events {
		gap.Events[i].Seq++
	}
	gap.Run = next.Run.Clone()
	gap.Run.Seq++
	if err := s.Commit(ctx, gap); err == nil {
		t.Error("events with a gap before them: accepted")
	}
	behind := next
	behind.Run = next.Run.Clone()
	behind.Run.Seq--
	if err := s.Commit(ctx, behind); err == nil {
		t.Error("a run that does not end at its last event: accepted")
	}
	none := next
	none.Events, none.Run = nil, d.run
	if err := s.Commit(ctx, none); err == nil {
		t.Error("a commit without events: accepted")
	}
	unchanged(t, s, "r0001", before, "refused commits")
}

// An edit replaces an attempt's current body; the agent's original stays
// as the first version.
func editVersions(t *testing.T, open func() Opened) {
	s := open()
	d := begin(t, s, newClock(), "r0001", 2)
	d.start(1)
	d.commit(d.finished(1, "the agent's\n"))
	if _, err := s.Artifact(ctx, "r0001", 2, 1); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("artifact of a step that produced none: %v, want ErrNotFound", err)
	}
	d.commit(d.decided(1, engine.DecideEdit, "k-edit", "the team's\n"))

	body, err := s.Artifact(ctx, "r0001", 1, 1)
	if err != nil || string(body) != "the team's\n" {
		t.Fatalf("artifact after the edit = %q, %v; want the edit", body, err)
	}
	vs, err := s.Versions(ctx, "r0001", 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]byte{[]byte("the agent's\n"), []byte("the team's\n")}
	if !reflect.DeepEqual(vs, want) {
		t.Fatalf("versions = %q, want the original then the edit", vs)
	}
}

func readFile(t *testing.T, s Opened, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.Dir, filepath.FromSlash(path)))
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return string(b)
}

// A commit's files are on disk when Commit returns; a file of an earlier
// attempt makes way for the new one.
func filesWritten(t *testing.T, open func() Opened) {
	s := open()
	if s.Dir == "" {
		t.Skip("the store has no data directory")
	}
	d := begin(t, s, newClock(), "r0001", 1)
	d.start(1)
	d.commit(d.finished(1, "attempt one\n"))
	latest := engine.ArtifactFile("r0001", 1, "skill-1", 1, true)
	if got := readFile(t, s, latest); got != "attempt one\n" {
		t.Fatalf("%s = %q after the commit", latest, got)
	}
	d.commit(d.decided(1, engine.DecideRedo, "k-redo", ""))
	d.start(1)
	d.commit(d.finished(1, "attempt two\n"))
	if got := readFile(t, s, latest); got != "attempt two\n" {
		t.Errorf("%s = %q after attempt two", latest, got)
	}
	earlier := engine.ArtifactFile("r0001", 1, "skill-1", 1, false)
	if got := readFile(t, s, earlier); got != "attempt one\n" {
		t.Errorf("%s = %q, want attempt one moved aside", earlier, got)
	}
}

// A file that cannot be written leaves the commit standing, with
// ErrFilesPending, and is written when the store is next opened.
func filesPending(t *testing.T, open func() Opened) {
	s := open()
	if s.Dir == "" {
		t.Skip("the store has no data directory")
	}
	d := begin(t, s, newClock(), "r0001", 1)
	d.start(1)
	file := engine.ArtifactFile("r0001", 1, "skill-1", 1, true)
	// A directory stands where the file goes, as a full disk or a
	// permission problem would stop the write.
	blocker := filepath.Join(s.Dir, filepath.FromSlash(file))
	if err := os.MkdirAll(filepath.Join(blocker, "in-the-way"), 0o700); err != nil {
		t.Fatal(err)
	}
	c := d.finished(1, "the artifact\n")
	if err := s.Commit(ctx, c); !errors.Is(err, engine.ErrFilesPending) {
		t.Fatalf("commit with an unwritable file: %v, want ErrFilesPending", err)
	}
	if r, err := s.Load(ctx, "r0001"); err != nil || r.Seq != c.Run.Seq {
		t.Fatalf("after ErrFilesPending the run is at %v (%v), want the commit standing at %d", r, err, c.Run.Seq)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(blocker); err != nil {
		t.Fatal(err)
	}
	s = open()
	if got := readFile(t, s, file); got != "the artifact\n" {
		t.Fatalf("%s after reopening = %q", file, got)
	}
}

// Opening a store interrupts every step recorded as running, with a
// journal event, before anything reads it; other runs stay as they were,
// and a second open finds nothing to do.
func recovery(t *testing.T, open func() Opened) {
	s := open()
	clk := newClock()
	running := begin(t, s, clk, "r0001", 2)
	running.start(1)
	waiting := begin(t, s, clk, "r0002", 1)
	waiting.start(1)
	waiting.commit(waiting.finished(1, "ready\n"))
	keep := look(t, s, "r0002")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	t0 := time.Now()
	s = open()
	t1 := time.Now()
	r, err := s.Load(ctx, "r0001")
	if err != nil {
		t.Fatal(err)
	}
	if st := r.Step(1).Status; st != engine.StepInterrupted || r.State != engine.RunWaiting {
		t.Fatalf("after reopening, run %s with step 1 %s; want waiting with step 1 interrupted", r.State, st)
	}
	j, err := s.Journal(ctx, "r0001")
	if err != nil {
		t.Fatal(err)
	}
	last := j[len(j)-1]
	if last.Type != engine.EvStepInterrupted || last.Step != 1 || last.Attempt != 1 ||
		last.Seq != running.run.Seq+1 || r.Seq != last.Seq {
		t.Fatalf("last journal event %+v (run at %d), want step-interrupted for step 1 attempt 1 at seq %d",
			last, r.Seq, running.run.Seq+1)
	}
	if last.Time.Before(t0) || last.Time.After(t1) {
		t.Errorf("the interruption is stamped %v, not at the open (%v to %v)", last.Time, t0, t1)
	}
	// The attempt was lost at its last sign of life the store knows, not
	// when it was opened: here the run's last change, its start.
	if a := r.Step(1).Latest(); !last.Lost.Equal(running.run.Updated) || !a.Finished.Equal(running.run.Updated) {
		t.Errorf("the attempt is lost at %v and finished %v; want its last sign of life, %v", last.Lost, a.Finished, running.run.Updated)
	}
	runUnchanged(t, s, "r0002", keep, "reopening")

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open()
	if j2, err := s.Journal(ctx, "r0001"); err != nil || len(j2) != len(j) {
		t.Fatalf("second reopen: %d events (%v), want %d", len(j2), err, len(j))
	}
}

// List gives every run's summary as of its last commit, newest first (by
// creation, not by the last change), and the same after reopening.
func listing(t *testing.T, open func() Opened) {
	s := open()
	if l, err := s.List(ctx); err != nil || len(l) != 0 {
		t.Fatalf("List of an empty store = %v, %v", l, err)
	}
	clk := newClock()
	first := begin(t, s, clk, "r0001", 2)
	begin(t, s, clk, "r0002", 1)
	begin(t, s, clk, "r0003", 3)
	first.start(1)
	first.commit(first.finished(1, "one\n"))
	first.commit(first.decided(1, engine.DecideApprove, "", ""))

	check := func(when string) {
		t.Helper()
		l, err := s.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var ids []engine.RunID
		for _, sum := range l {
			ids = append(ids, sum.ID)
		}
		if want := []engine.RunID{"r0003", "r0002", "r0001"}; !reflect.DeepEqual(ids, want) {
			t.Fatalf("%s: List order %v, want %v", when, ids, want)
		}
		for _, sum := range l {
			r, err := s.Load(ctx, sum.ID)
			if err != nil {
				t.Fatal(err)
			}
			if want := r.Summary(); !reflect.DeepEqual(sum, want) {
				t.Errorf("%s: summary of %s\n got: %+v\nwant: %+v", when, sum.ID, sum, want)
			}
		}
		if l[2].StepsDone != 1 || l[2].Updated.Equal(l[2].Created) {
			t.Errorf("%s: r0001 lists %d steps done, updated %v; want its approval counted", when, l[2].StepsDone, l[2].Updated)
		}
	}
	check("open")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open()
	check("after reopening")
}

// Runs started in the same second, whose ids (which tell the time only
// to the second) sort against their start, are listed by when they
// started, also after reopening.
func listingSameSecond(t *testing.T, open func() Opened) {
	s := open()
	clk := &clock{t: time.Date(2031, 4, 2, 9, 0, 1, 0, time.UTC), step: 100 * time.Millisecond}
	ids := []engine.RunID{"20310402-090001-f0", "20310402-090001-a0", "20310402-090001-c0", "20310402-090001-b0"}
	for _, id := range ids {
		begin(t, s, clk, id, 1)
	}
	want := slices.Clone(ids)
	slices.Reverse(want)
	check := func(when string) {
		t.Helper()
		l, err := s.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []engine.RunID
		for _, sum := range l {
			got = append(got, sum.ID)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: List order %v, want %v (newest started first)", when, got, want)
		}
	}
	check("open")
	// A run listed already is placed by its start when it commits again.
	late := begin(t, s, clk, "20310402-090001-00", 1)
	want = append([]engine.RunID{"20310402-090001-00"}, want...)
	check("after a later run")
	late.start(1)
	check("after it changed")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open()
	check("after reopening")
}

// Notes merge, an empty value deletes its key, the map returned is the
// caller's own, and the run itself does not change.
func notes(t *testing.T, open func() Opened) {
	s := open()
	begin(t, s, newClock(), "r0001", 1)
	before := look(t, s, "r0001")
	n, err := s.Notes(ctx, "r0001")
	if err != nil || n == nil || len(n) != 0 {
		t.Fatalf("notes of a new run = %v, %v; want an empty map", n, err)
	}
	if err := s.SetNotes(ctx, "r0001", map[string]string{"thread": "1.1", "step/1": "1.2"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetNotes(ctx, "r0001", map[string]string{"step/1": "", "step/2": "1.3"}); err != nil {
		t.Fatal(err)
	}
	n, err = s.Notes(ctx, "r0001")
	want := map[string]string{"thread": "1.1", "step/2": "1.3"}
	if err != nil || !reflect.DeepEqual(n, want) {
		t.Fatalf("notes after a merge and a delete = %v, %v; want %v", n, err, want)
	}
	n["thread"] = "changed by the caller"
	if again, _ := s.Notes(ctx, "r0001"); again["thread"] != "1.1" {
		t.Errorf("changing the returned map changed the notes: thread = %q", again["thread"])
	}
	unchanged(t, s, "r0001", before, "setting notes")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open()
	if n, err := s.Notes(ctx, "r0001"); err != nil || !reflect.DeepEqual(n, want) {
		t.Fatalf("notes after reopening = %v, %v; want %v", n, err, want)
	}
}

// Every read of a run the store does not hold is ErrNotFound, and a change
// to one is stale as well.
func unknownRun(t *testing.T, open func() Opened) {
	s := open()
	clk := newClock()
	d := begin(t, s, clk, "r0001", 1)
	before := look(t, s, "r0001")
	if _, err := s.Load(ctx, "r9999"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("Load: %v, want ErrNotFound", err)
	}
	if _, err := s.Artifact(ctx, "r9999", 1, 1); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("Artifact: %v, want ErrNotFound", err)
	}
	if _, err := s.Notes(ctx, "r9999"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("Notes: %v, want ErrNotFound", err)
	}
	if err := s.SetNotes(ctx, "r9999", map[string]string{"a": "b"}); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("SetNotes: %v, want ErrNotFound", err)
	}
	if _, err := s.Journal(ctx, "r9999"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("Journal: %v, want ErrNotFound", err)
	}
	ghost := &driver{t: t, s: s, clk: clk, run: d.run.Clone()}
	ghost.run.ID = "r9999"
	err := s.Commit(ctx, ghost.stepStarted(1))
	if !errors.Is(err, engine.ErrStale) || !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("change to a run not stored: %v, want ErrStale and ErrNotFound", err)
	}
	if _, err := s.Load(ctx, "r9999"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("Load after the refused change: %v, want ErrNotFound", err)
	}
	unchanged(t, s, "r0001", before, "a change to a run not stored")
}
