package record

import (
	"reflect"
	"testing"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record/recordtest"
)

// sameRun fails the test when got and want differ after putting their
// times in UTC (in place: Clone would hide a nil slice coming back empty).
func sameRun(t testing.TB, what string, got, want *engine.Run) {
	t.Helper()
	recordtest.InUTC(got)
	recordtest.InUTC(want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: runs differ\n got: %+v\nwant: %+v", what, got, want)
	}
}
