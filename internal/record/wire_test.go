package record

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record/recordtest"
)

func TestWireCarriesEveryField(t *testing.T) {
	var run engine.Run
	var ev engine.Event
	f := &recordtest.Filler{}
	f.Fill(&run)
	f.Fill(&ev)
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
	recordtest.InUTC(j)
	recordtest.InUTC(&ev)
	recordtest.InUTC(&second)
	if !reflect.DeepEqual(j, []engine.Event{ev, second}) {
		t.Fatalf("journal differs:\n got: %+v\nwant: %+v", j, []engine.Event{ev, second})
	}

	var sum engine.RunSummary
	f.Fill(&sum)
	b, err = MarshalSummaries([]engine.RunSummary{sum})
	if err != nil {
		t.Fatal(err)
	}
	list, err := UnmarshalSummaries(b)
	if err != nil {
		t.Fatal(err)
	}
	recordtest.InUTC(list)
	recordtest.InUTC(&sum)
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
	if _, _, err := UnmarshalRun([]byte(newer)); !errors.Is(err, ErrNewer) || !strings.Contains(err.Error(), "written by a newer gonogo") {
		t.Fatalf("newer record: %v", err)
	}
}

// Events on their own (a Temporal workflow's history keeps them) carry
// every field too, a run-started event with its plan.
func TestEventsOnTheirOwnCarryEveryField(t *testing.T) {
	var ev engine.Event
	(&recordtest.Filler{}).Fill(&ev)
	ev.Seq = 1
	b, err := MarshalEvents([]engine.Event{ev})
	if err != nil {
		t.Fatal(err)
	}
	got, err := UnmarshalEvents(b)
	if err != nil {
		t.Fatal(err)
	}
	recordtest.InUTC(got)
	recordtest.InUTC(&ev)
	if !reflect.DeepEqual(got, []engine.Event{ev}) {
		t.Fatalf("events differ:\n got: %+v\nwant: %+v", got, ev)
	}
	if _, err := UnmarshalEvents([]byte(`[{"v":99,"seq":1,"type":"run-started"}]`)); !errors.Is(err, ErrNewer) {
		t.Errorf("an event from a newer gonogo: %v", err)
	}
	// On their own, events have no stored plan to refer to.
	stored := `[{"v":1,"seq":1,"type":"run-started","start":{"id":"r1","plan_stored":true,"mode":"checkpointed"}}]`
	if _, err := UnmarshalEvents([]byte(stored)); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "event 1") {
		t.Errorf("a run-started event that refers to a stored plan: %v; want ErrDamaged naming event 1", err)
	}
}

// A run's summary on its own reads back as the store lists it, and one
// written by a newer gonogo is refused.
func TestSummaryOnItsOwnReadsBack(t *testing.T) {
	// Every field set, as TestWireCarriesEveryField does; a state the
	// engine knows, as a stored run has.
	var r engine.Run
	(&recordtest.Filler{}).Fill(&r)
	r.ID, r.State = "20260302-140000-a1b2c3d4", engine.RunWaiting
	b, err := EncodeSummary(&r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeSummary(r.ID, b)
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
	if _, err := DecodeSummary(r.ID, []byte(newer)); !errors.Is(err, ErrNewer) {
		t.Errorf("a summary from a newer gonogo: %v", err)
	}
}
