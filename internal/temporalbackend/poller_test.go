package temporalbackend

import (
	"testing"
	"time"

	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// A worker the cluster lists but that has not polled for longer than a
// live worker's long poll lasts is gone: reads go to the history at once.
func TestAnyFresh(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) *taskqueuepb.PollerInfo {
		return &taskqueuepb.PollerInfo{LastAccessTime: timestamppb.New(now.Add(-ago))}
	}
	for _, c := range []struct {
		name    string
		pollers []*taskqueuepb.PollerInfo
		want    bool
	}{
		{"none listed", nil, false},
		{"one polling now", []*taskqueuepb.PollerInfo{at(time.Second)}, true},
		{"one in a long poll a minute old", []*taskqueuepb.PollerInfo{at(65 * time.Second)}, true},
		{"only ones killed minutes ago", []*taskqueuepb.PollerInfo{at(2 * time.Minute), at(4 * time.Minute)}, false},
		{"a killed one beside a live one", []*taskqueuepb.PollerInfo{at(4 * time.Minute), at(3 * time.Second)}, true},
		{"one with no time", []*taskqueuepb.PollerInfo{{}}, true},
	} {
		if got := anyFresh(c.pollers, now); got != c.want {
			t.Errorf("%s: anyFresh = %v, want %v", c.name, got, c.want)
		}
	}
}
