package storage

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/gonogo/gonogo/engine"
)

func TestOpenInterruptsRunningSteps(t *testing.T) {
	dir := t.TempDir()
	db := openStore(t, dir, Options{})
	c := newClock()
	running := startRun(t, db, "r0001", testPlan(2), c)
	running.start(1)
	waiting := startRun(t, db, "r0002", testPlan(2), c)
	waiting.start(1)
	waiting.finish(1, engine.ResultProduced, "ready for review\n")
	db.Close() // gonogo stops with step 1 of r0001 running

	restart := time.Date(2025, 3, 15, 8, 0, 0, 0, time.UTC)
	db = openStore(t, dir, Options{Now: func() time.Time { return restart }})
	if got := db.recovered; !reflect.DeepEqual(got, []engine.RunID{"r0001"}) {
		t.Fatalf("recovered = %v, want [r0001]", got)
	}
	r, err := db.Load(ctx, "r0001")
	if err != nil {
		t.Fatal(err)
	}
	// No pulse was kept: the attempt's last sign of life is its start, the
	// run's last change; the event is recorded at the restart.
	if s := r.Step(1); s.Status != engine.StepInterrupted || s.Latest().Result != engine.ResultFailed ||
		!s.Latest().Finished.Equal(s.Latest().Started) {
		t.Fatalf("step 1 after restart: status %s, attempt %+v; want it lost when it started", s.Status, s.Latest())
	}
	if r.State != engine.RunWaiting || r.Halt == "" {
		t.Fatalf("run after restart: state %s, halt %q; want waiting with a reason", r.State, r.Halt)
	}
	j, err := db.Journal(ctx, "r0001")
	if err != nil {
		t.Fatal(err)
	}
	last := j[len(j)-1]
	if last.Type != engine.EvStepInterrupted || last.Step != 1 || last.Attempt != 1 || last.Seq != r.Seq || !last.Time.Equal(restart) {
		t.Fatalf("last journal event = %+v, want step-interrupted for step 1 attempt 1", last)
	}
	rebuilt, err := rebuild(ctx, db, "r0001")
	if err != nil {
		t.Fatal(err)
	}
	sameRun(t, "rebuilt after recovery", rebuilt, r)

	// The waiting run is left exactly as it was.
	loadEquals(t, db, waiting, "waiting run after restart")

	// The interrupted step is offered for redo, and the redo commits.
	running.run, running.db = r, db
	running.decide(1, engine.DecideRedo, "redo-after-crash", "", "")
	running.start(1)
	// The gonogo running attempt 2 said it was alive, then stopped.
	alive := running.run.Updated.Add(7 * time.Minute)
	db.Alive(alive)
	db.Close()

	// Recovery is not repeated for what it already handled, and handles the
	// new attempt: lost at the last pulse, recorded at the restart.
	db = openStore(t, dir, Options{Now: func() time.Time { return restart.Add(time.Hour) }})
	if got := db.recovered; !reflect.DeepEqual(got, []engine.RunID{"r0001"}) {
		t.Fatalf("second restart: recovered = %v", got)
	}
	r, _ = db.Load(ctx, "r0001")
	if s := r.Step(1); s.Status != engine.StepInterrupted || len(s.Attempts) != 2 || !s.Latest().Finished.Equal(alive) {
		t.Fatalf("second restart: step 1 is %s with %d attempts, the last finished %v; want lost at %v",
			s.Status, len(s.Attempts), s.Latest().Finished, alive)
	}
	if j, _ := db.Journal(ctx, "r0001"); !j[len(j)-1].Lost.Equal(alive) || !j[len(j)-1].Time.Equal(restart.Add(time.Hour)) {
		t.Fatalf("second restart: the event %+v", j[len(j)-1])
	}
	db.Close()
	db = openStore(t, dir, Options{})
	if got := db.recovered; len(got) != 0 {
		t.Fatalf("third open with nothing running: recovered = %v", got)
	}
}

// Recovery reads only the running index: in a store of many runs, only the
// runs that had a running step change.
func TestReopenTouchesOnlyRunningRuns(t *testing.T) {
	dir := t.TempDir()
	db := openStore(t, dir, Options{NoSync: true})
	c := newClock()
	seqs := map[engine.RunID]uint64{}
	var want, wantActive []engine.RunID
	for i := range 500 {
		id := engine.RunID(fmt.Sprintf("r%05d", i))
		r := startRun(t, db, id, testPlan(2), c)
		r.noFiles = true
		r.start(1)
		switch {
		case i%50 == 7:
			want = append(want, id) // left running
			wantActive = append(wantActive, id)
		case i%3 == 0:
			r.finish(1, engine.ResultProduced, "one\n")
			wantActive = append(wantActive, id)
		default:
			r.finish(1, engine.ResultProduced, "one\n")
			r.decide(1, engine.DecideApprove, "", "", "")
			r.start(2)
			r.finish(2, engine.ResultProduced, "two\n")
			r.decide(2, engine.DecideApprove, "", "", "")
		}
		seqs[id] = r.run.Seq
	}
	db.Close()

	db = openStore(t, dir, Options{})
	if got := db.recovered; !reflect.DeepEqual(got, want) {
		t.Fatalf("recovered = %v, want %v", got, want)
	}
	recovered := map[engine.RunID]bool{}
	for _, id := range want {
		recovered[id] = true
	}
	err := db.bolt.View(func(tx *bbolt.Tx) error {
		c := tx.Bucket(bucketRuns).Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if id := runningOf(k); id != nil {
				t.Errorf("run %s is still marked running after recovery", id)
			}
		}
		return tx.Bucket(bucketJournal).ForEach(func(k, _ []byte) error {
			id := engine.RunID(k)
			last, _ := tx.Bucket(bucketJournal).Bucket(k).Cursor().Last()
			got, wantSeq := seqNum(last), seqs[id]
			if recovered[id] {
				wantSeq++
			}
			if got != wantSeq {
				t.Errorf("run %s at event %d after reopen, want %d", id, got, wantSeq)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	active, err := activeRuns(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(active, wantActive) {
		t.Fatalf("Active() = %d runs, want the %d waiting or recovered ones", len(active), len(wantActive))
	}
}
