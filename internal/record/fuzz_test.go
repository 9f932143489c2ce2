package record

import (
	"reflect"
	"testing"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record/recordtest"
)

// FuzzDecode feeds arbitrary bytes to the record decoders, as a damaged
// or hand-edited store, history or reply would: they must return an error
// or a value, never panic, and a value they accept must survive another
// round trip unchanged.
func FuzzDecode(f *testing.F) {
	r := goldenRun()
	evs := goldenEvents(r)
	for _, b := range [][]byte{
		must(EncodeRun(r)), must(EncodePlan(r.Plan)), must(EncodeSummary(r)),
		must(EncodeEvent(evs[0], &r.Plan)), must(EncodeEvent(evs[0], nil)), must(EncodeEvent(evs[3], nil)),
		must(MarshalRun(r, evs)), must(MarshalEvents(evs)),
	} {
		f.Add(b)
	}
	f.Add([]byte(`{"v":1,"id":"r","state":"waiting","mode":"checkpointed","steps":[{"n":1,"status":"bogus"}]}`))
	f.Add([]byte(`{"v":1,"id":"r","state":"waiting","mode":"checkpointed","steps":[{"n":1,"from_plan":true,"status":"done"}]}`))
	f.Add([]byte(`{"v":2}`))
	f.Add([]byte(`null`))

	f.Fuzz(func(t *testing.T, data []byte) {
		plan := r.Plan
		if r, err := DecodeRun(data, plan); err == nil {
			r2, err := DecodeRun(must(EncodeRun(r)), plan)
			if err != nil {
				t.Fatalf("re-encoded snapshot refused: %v", err)
			}
			same(t, "snapshot", r, r2)
		}
		if p, err := DecodePlan(data); err == nil {
			p2, err := DecodePlan(must(EncodePlan(p)))
			if err != nil {
				t.Fatalf("re-encoded plan refused: %v", err)
			}
			same(t, "plan", &p, &p2)
		}
		stored := func() (engine.Plan, error) { return plan, nil }
		if e, err := DecodeEvent(data, stored); err == nil {
			e2, err := DecodeEvent(must(EncodeEvent(e, nil)), stored)
			if err != nil {
				t.Fatalf("re-encoded event refused: %v", err)
			}
			same(t, "event", &e, &e2)
		}
		_, _ = DecodeSummary("r", data)
		if r, j, err := UnmarshalRun(data); err == nil {
			r2, j2, err := UnmarshalRun(must(MarshalRun(r, j)))
			if err != nil {
				t.Fatalf("re-encoded wire run refused: %v", err)
			}
			same(t, "wire run", r, r2)
			same(t, "wire journal", &j, &j2)
		}
		if evs, err := UnmarshalEvents(data); err == nil {
			evs2, err := UnmarshalEvents(must(MarshalEvents(evs)))
			if err != nil {
				t.Fatalf("re-encoded events refused: %v", err)
			}
			same(t, "events", &evs, &evs2)
		}
		_, _ = UnmarshalSummaries(data)
	})
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// same fails the test when a value changed in a round trip.
func same[T any](t *testing.T, what string, a, b *T) {
	t.Helper()
	recordtest.InUTC(a)
	recordtest.InUTC(b)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("%s changed in a round trip:\n%+v\n%+v", what, a, b)
	}
}
