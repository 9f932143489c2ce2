package storage

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/gonogo/gonogo/engine"
)

// FuzzStoredRecords feeds arbitrary bytes to the record decoders, as a
// damaged or hand-edited file would: they must return an error or a value,
// never panic, and a value they accept must survive another round trip
// unchanged.
func FuzzStoredRecords(f *testing.F) {
	c := newClock()
	run, _ := engine.Fold(&engine.Run{}, mustEvents(engine.NewRun("r0001", testPlan(2), engine.StartOptions{StartedBy: "U1"}, c.now())))
	evs := mustEvents(engine.Start(run, 1, c.now()))
	run, _ = engine.Fold(run, evs)
	snap, _ := json.Marshal(toRunRecord(run))
	ev, _ := json.Marshal(toEventRecord(evs[0], nil))
	startEv := mustEvents(engine.NewRun("r0001", testPlan(1), engine.StartOptions{}, c.now()))[0]
	start, _ := json.Marshal(toEventRecord(startEv, nil))
	startRef, _ := json.Marshal(toEventRecord(startEv, &startEv.Start.Plan))
	f.Add(startRef)
	f.Add(snap)
	f.Add(ev)
	f.Add(start)
	f.Add([]byte(`{"v":1,"id":"r","state":"waiting","mode":"checkpointed","steps":[{"n":1,"status":"bogus"}]}`))
	f.Add([]byte(`{"v":2}`))
	f.Add([]byte(`null`))

	f.Fuzz(func(t *testing.T, data []byte) {
		var rr runRecord
		if json.Unmarshal(data, &rr) == nil {
			if r, err := fromRunRecord(&rr, engine.Plan{}); err == nil {
				again, _ := json.Marshal(toRunRecord(r))
				var rr2 runRecord
				if err := json.Unmarshal(again, &rr2); err != nil {
					t.Fatalf("re-encoded snapshot does not decode: %v", err)
				}
				r2, err := fromRunRecord(&rr2, engine.Plan{})
				if err != nil {
					t.Fatalf("re-encoded snapshot refused: %v", err)
				}
				normTimes(r)
				normTimes(r2)
				if !reflect.DeepEqual(r, r2) {
					t.Fatalf("snapshot changed in a round trip:\n%+v\n%+v", r, r2)
				}
			}
		}
		var er eventRecord
		if json.Unmarshal(data, &er) == nil {
			if e, err := fromEventRecord(&er, storedPlan); err == nil {
				again, _ := json.Marshal(toEventRecord(e, nil))
				var er2 eventRecord
				if err := json.Unmarshal(again, &er2); err != nil {
					t.Fatalf("re-encoded event does not decode: %v", err)
				}
				e2, err := fromEventRecord(&er2, storedPlan)
				if err != nil {
					t.Fatalf("re-encoded event refused: %v", err)
				}
				normTimes(&e)
				normTimes(&e2)
				if !reflect.DeepEqual(e, e2) {
					t.Fatalf("event changed in a round trip:\n%+v\n%+v", e, e2)
				}
			}
		}
		var sr summaryRecord
		if json.Unmarshal(data, &sr) == nil {
			_, _ = fromSummaryRecord("r", &sr)
		}
		var fr fileRecord
		_, _ = unframe(data, &fr)
	})
}

// storedPlan stands in for the plans bucket.
func storedPlan() (engine.Plan, error) { return testPlan(1), nil }

func mustEvents(evs []engine.Event, err error) []engine.Event {
	if err != nil {
		panic(err)
	}
	return evs
}
