package engine

import (
	"reflect"
	"testing"
	"time"
)

// Merging two tallies adds every figure a run's pass counts: a field
// added to StatsCounts and not to merge fails here. The figures done
// derives are left to done.
func TestTallyMergeAddsEveryCount(t *testing.T) {
	derived := map[string]bool{"EditChange": true, "Decided": true, "DecisionMedianSeconds": true, "CostPerApproved": true}
	var a, b tally
	va, vb := reflect.ValueOf(&a.StatsCounts).Elem(), reflect.ValueOf(&b.StatsCounts).Elem()
	for i := range va.NumField() {
		switch va.Field(i).Kind() {
		case reflect.Int:
			va.Field(i).SetInt(int64(i + 1))
			vb.Field(i).SetInt(int64(100 * (i + 1)))
		case reflect.Float64:
			va.Field(i).SetFloat(0.25 * float64(i+1))
			vb.Field(i).SetFloat(0.5 * float64(i+1))
		}
	}
	a.editSum, b.editSum = 0.5, 0.25
	a.waits, b.waits = []time.Duration{1}, []time.Duration{2, 3}
	a.merge(&b)
	for i := range va.NumField() {
		name := va.Type().Field(i).Name
		if derived[name] {
			continue
		}
		switch f := va.Field(i); f.Kind() {
		case reflect.Int:
			if f.Int() != int64(101*(i+1)) {
				t.Errorf("%s merged to %d, want %d", name, f.Int(), 101*(i+1))
			}
		case reflect.Float64:
			if f.Float() != 0.75*float64(i+1) {
				t.Errorf("%s merged to %g, want %g", name, f.Float(), 0.75*float64(i+1))
			}
		default:
			t.Errorf("%s: a %s, which merge does not know", name, f.Kind())
		}
	}
	if a.editSum != 0.75 || len(a.waits) != 3 {
		t.Errorf("edit sum %g, %d waits, want 0.75 and 3", a.editSum, len(a.waits))
	}
}
