package temporalbackend

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/gonogo/gonogo/engine"
)

// foldFile folds a recorded history, and returns with it the summary the
// workflow last wrote to its memo: the workflow's own word on its run.
func foldFile(t *testing.T, name string) (reading, engine.RunSummary) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fold := newHistoryFold()
	var memo engine.RunSummary
	for _, ev := range h.GetEvents() {
		if err := fold.add(ev); err != nil {
			t.Fatalf("event %d (%s): %v", ev.GetEventId(), ev.GetEventType(), err)
		}
		if ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED {
			p := ev.GetWorkflowPropertiesModifiedEventAttributes().GetUpsertedMemo().GetFields()[memoSummary]
			if s, ok := fromMemo("", p); ok {
				memo = s
			}
		}
	}
	r, err := fold.reading()
	if err != nil {
		t.Fatal(err)
	}
	memo.ID = r.run.ID
	return r, memo
}

// A run read from its workflow's history alone is the run the workflow
// held: the summary it last published is the folded run's, the journal
// is whole and rebuilds it, and every attempt that stored an artifact has
// its key (an edit's, once edited), and no other attempt has one.
func TestHistoryFoldsTheRun(t *testing.T) {
	cases := []struct {
		file   string
		state  engine.RunState
		edited []string // refKeys whose current artifact is an edit
	}{
		{"history-completed.json", engine.RunCompleted, []string{"1/2"}},
		{"history-waiting.json", engine.RunWaiting, nil},
		{"history-continued-as-new.json", engine.RunWaiting, nil},
		{"history-cancelled-aborted.json", engine.RunAborted, nil},
		{"history-workflow-cancelled.json", engine.RunAborted, nil},
		{"history-pause-while-running.json", engine.RunCompleted, nil},
		{"history-decompose-at-a-checkpoint.json", "", nil},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			got, memo := foldFile(t, c.file)
			r := got.run
			if c.state != "" && r.State != c.state {
				t.Errorf("the run folds %s, want %s", r.State, c.state)
			}
			if memo.State != "" && !reflect.DeepEqual(r.Summary(), memo) {
				t.Errorf("the folded run's summary differs from the workflow's memo:\n got: %+v\nwant: %+v", r.Summary(), memo)
			}
			rebuilt, err := engine.Rebuild(got.journal)
			if err != nil || rebuilt.Seq != r.Seq || uint64(len(got.journal)) != r.Seq {
				t.Errorf("journal of %d events rebuilds to %v (%v); the run is at %d", len(got.journal), rebuilt, err, r.Seq)
			}
			want := map[string]bool{}
			for _, st := range r.Steps {
				for _, a := range st.Attempts {
					if a.Artifact {
						want[refKey(st.N, a.N)] = true
						if k := got.keys[refKey(st.N, a.N)]; !strings.HasPrefix(k, strings.TrimSuffix(agentKey(r.ID, &st, a.N), ".md")) {
							t.Errorf("step %d attempt %d: key %q is not the attempt's", st.N, a.N, k)
						}
					}
				}
			}
			for _, ref := range c.edited {
				if !strings.Contains(got.keys[ref], ".edit-") {
					t.Errorf("attempt %s: key %q, want its edit's", ref, got.keys[ref])
				}
			}
			for ref := range got.keys {
				if !want[ref] {
					t.Errorf("attempt %s has a key (%q) but stored no artifact", ref, got.keys[ref])
				}
			}
			if len(want) == 0 && c.state != engine.RunAborted {
				t.Error("no attempt stored an artifact: the case shows nothing about keys")
			}
		})
	}
}
