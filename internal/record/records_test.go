package record

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record/recordtest"
)

// Every field of a run, its plan, an event and a summary survives the
// records a store keeps, and a run's steps as it starts them refer to the
// plan instead of repeating it.
func TestStoreRecordsKeepEveryField(t *testing.T) {
	for _, samePlan := range []bool{false, true} {
		t.Run(fmt.Sprintf("steps from plan %v", samePlan), func(t *testing.T) {
			var run engine.Run
			var ev engine.Event
			f := &recordtest.Filler{}
			f.Fill(&run)
			f.Fill(&ev)
			// nil and empty slices are kept apart.
			run.Steps[0].Attempts = []engine.Attempt{}
			run.Steps[1].Decisions = nil
			run.Plan.Warnings = []string{}
			if samePlan {
				for i := range run.Steps {
					s, p := &run.Steps[i], &run.Plan.Steps[i]
					s.ID, s.Skill, s.Effort, s.Prompt = p.ID, p.Skill, p.Effort, p.Prompt
					s.Category, s.Execution, s.Leaf, s.Gate, s.Rules = p.Category, p.Execution, p.Leaf, p.Gate, p.Rules
				}
				ev.Start.Plan = run.Plan
			}
			planBytes, runBytes, evBytes := must(EncodePlan(run.Plan)), must(EncodeRun(&run)), must(EncodeEvent(ev, &run.Plan))
			plan, err := DecodePlan(planBytes)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeRun(runBytes, plan)
			if err != nil {
				t.Fatal(err)
			}
			sameRun(t, "filled run", got, &run)
			asked := false
			gotEv, err := DecodeEvent(evBytes, func() (engine.Plan, error) { asked = true; return plan, nil })
			if err != nil {
				t.Fatal(err)
			}
			same(t, "event", &gotEv, &ev)
			if asked != samePlan {
				t.Errorf("the run-started event read the stored plan: %v, want %v", asked, samePlan)
			}
			p0 := run.Plan.Steps[0].Prompt
			prompt := []byte(p0[:strings.IndexByte(p0, ' ')+1]) // "text-N ": unique, nothing to escape
			if samePlan && (bytes.Contains(runBytes, prompt) || bytes.Contains(evBytes, prompt)) {
				t.Errorf("the plan's prompts are encoded again in the snapshot or the run-started event")
			}
			sum, err := DecodeSummary(run.ID, must(EncodeSummary(&run)))
			if err != nil {
				t.Fatal(err)
			}
			if want := run.Summary(); !reflect.DeepEqual(sum, want) {
				t.Errorf("summary differs:\n got: %+v\nwant: %+v", sum, want)
			}
		})
	}
}

// A run record written before runs could be paused, and an event without
// the new fields, decode as a run that is not paused and an attempt with
// no agent error kind.
func TestRecordsFromBeforePausesDecode(t *testing.T) {
	old := `{"v":1,"id":"r1","state":"waiting","input":"chain","mode":"checkpointed","steps":[{"n":1,"status":"waiting",` +
		`"depends_on":null,"attempts":[{"n":1,"result":"FAILED","reason":"boom"}],"decisions":null}],"seq":3}`
	run, err := DecodeRun([]byte(old), engine.Plan{})
	if err != nil {
		t.Fatal(err)
	}
	if run.Paused || run.PausedBy != "" || run.Steps[0].Held || run.Steps[0].Attempts[0].ErrorKind != "" || !run.Steps[0].Attempts[0].RetryAt.IsZero() {
		t.Fatalf("an old record decoded as %+v", run)
	}
	e, err := DecodeEvent([]byte(`{"v":1,"seq":2,"type":"step-finished","step":1,"attempt":1,"status":"waiting","result":"FAILED"}`), nil)
	if err != nil || e.ErrorKind != "" || e.Held || !e.RetryAt.IsZero() {
		t.Fatalf("an old event decoded as %+v, %v", e, err)
	}
}
