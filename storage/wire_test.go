package storage

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
)

func TestWireCarriesEveryField(t *testing.T) {
	var run engine.Run
	var ev engine.Event
	f := &filler{}
	f.fill(reflect.ValueOf(&run).Elem())
	f.fill(reflect.ValueOf(&ev).Elem())
	run.ID, run.Seq = "r0001", 1
	ev.Seq, ev.Start.ID = 1, run.ID
	second := ev
	second.Seq, second.Start = 2, &engine.RunStart{ID: run.ID, Plan: run.Plan, Mode: engine.ModeCheckpointed}

	b, err := MarshalRun(&run, []engine.Event{ev, second})
	if err != nil {
		t.Fatal(err)
	}
	got, j, err := UnmarshalRun(b)
	if err != nil {
		t.Fatal(err)
	}
	sameRun(t, "run over the wire", got, &run)
	normTimes(j)
	normTimes(&ev)
	normTimes(&second)
	if !reflect.DeepEqual(j, []engine.Event{ev, second}) {
		t.Fatalf("journal differs:\n got: %+v\nwant: %+v", j, []engine.Event{ev, second})
	}

	var sum engine.RunSummary
	f.fill(reflect.ValueOf(&sum).Elem())
	b, err = MarshalSummaries([]engine.RunSummary{sum})
	if err != nil {
		t.Fatal(err)
	}
	list, err := UnmarshalSummaries(b)
	if err != nil {
		t.Fatal(err)
	}
	normTimes(list)
	normTimes(&sum)
	if !reflect.DeepEqual(list, []engine.RunSummary{sum}) {
		t.Fatalf("summary differs:\n got: %+v\nwant: %+v", list, sum)
	}
}

func TestWireRefusesARecordFromANewerGonogo(t *testing.T) {
	b, err := MarshalRun(&engine.Run{ID: "r1", State: engine.RunWaiting, Mode: engine.ModeCheckpointed}, nil)
	if err != nil {
		t.Fatal(err)
	}
	newer := strings.Replace(string(b), `"v":1`, `"v":99`, 1)
	if _, _, err := UnmarshalRun([]byte(newer)); err == nil || !strings.Contains(err.Error(), "newer gonogo") {
		t.Fatalf("newer record: %v", err)
	}
}

func TestArtifactSumsAreOfTheCurrentBodies(t *testing.T) {
	db := openStore(t, t.TempDir(), Options{})
	r := startRun(t, db, "r1", testPlan(2), newClock())
	r.start(1)
	r.finish(1, engine.ResultProduced, "# first\n\nthe agent's words\n")
	r.decide(1, engine.DecideRedo, "k1", "shorter", "")
	r.start(1)
	r.finish(1, engine.ResultProduced, "# second\n")
	r.decide(1, engine.DecideEdit, "k2", "", "# second, edited\n")
	r.start(2)
	r.finish(2, engine.ResultFailed, "")

	got, err := db.ArtifactSums(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	hash := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	want := []ArtifactSum{
		{Step: 1, Attempt: 1, Size: 27, SHA256: hash("# first\n\nthe agent's words\n")},
		{Step: 1, Attempt: 2, Size: 17, SHA256: hash("# second, edited\n")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("sums = %+v\nwant %+v", got, want)
	}
	if none, err := db.ArtifactSums(ctx, "nope"); !errors.Is(err, engine.ErrNotFound) || none != nil {
		t.Fatalf("unknown run: %v, %v; want ErrNotFound", none, err)
	}
}

// Events on their own (a Temporal workflow's history keeps them) carry
// every field too, a run-started event with its plan.
func TestEventsOnTheirOwnCarryEveryField(t *testing.T) {
	var ev engine.Event
	(&filler{}).fill(reflect.ValueOf(&ev).Elem())
	ev.Seq = 1
	b, err := MarshalEvents([]engine.Event{ev})
	if err != nil {
		t.Fatal(err)
	}
	got, err := UnmarshalEvents(b)
	if err != nil {
		t.Fatal(err)
	}
	normTimes(got)
	normTimes(&ev)
	if !reflect.DeepEqual(got, []engine.Event{ev}) {
		t.Fatalf("events differ:\n got: %+v\nwant: %+v", got, ev)
	}
	if _, err := UnmarshalEvents([]byte(`[{"v":99,"seq":1,"type":"run-started"}]`)); err == nil {
		t.Error("an event from a newer gonogo was read")
	}
}

// A run's summary on its own reads back as the store lists it, and one
// written by a newer gonogo is refused.
func TestSummaryOnItsOwnReadsBack(t *testing.T) {
	// Every field set, as TestWireCarriesEveryField does; a state the
	// engine knows, as a stored run has.
	var r engine.Run
	(&filler{}).fill(reflect.ValueOf(&r).Elem())
	r.ID, r.State = "20260302-140000-a1b2c3d4", engine.RunWaiting
	b, err := MarshalSummary(&r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := UnmarshalSummary(r.ID, b)
	if err != nil {
		t.Fatal(err)
	}
	if want := r.Summary(); !reflect.DeepEqual(got, want) {
		t.Errorf("read back %+v, want %+v", got, want)
	}
	newer := strings.Replace(string(b), `"v":1`, `"v":99`, 1)
	if newer == string(b) {
		t.Fatalf("the record carries no version: %s", b)
	}
	if _, err := UnmarshalSummary(r.ID, []byte(newer)); err == nil {
		t.Error("a summary from a newer gonogo was read")
	}
}
