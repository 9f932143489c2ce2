package temporalbackend

import (
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/worker"
)

// TestReplayRecordedHistories replays every workflow history kept in
// testdata (recorded by TestRecordHistories, under the temporal tag) with
// this release's workflow code. A change that would make a waiting run
// fail to replay, or do other than it did, fails here, without a server.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "history-*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no recorded histories in testdata; record them with go test -tags temporal -run TestRecordHistories -update")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) { replayFile(t, f) })
	}
}

func replayFile(t *testing.T, path string) {
	t.Helper()
	r := worker.NewWorkflowReplayer()
	RegisterWorkflow(r)
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, path); err != nil {
		t.Fatalf("replay %s: %v", path, err)
	}
}
