package storage

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/record/recordtest"
)

func TestEveryFieldSurvivesARoundTrip(t *testing.T) {
	for _, samePlan := range []bool{false, true} {
		t.Run(fmt.Sprintf("steps from plan %v", samePlan), func(t *testing.T) {
			var run engine.Run
			var ev engine.Event
			f := &recordtest.Filler{}
			f.Fill(&run)
			f.Fill(&ev)
			run.ID, run.Seq = "r0001", 1
			ev.Seq, ev.Start.ID = 1, run.ID
			// nil and empty slices are kept apart.
			run.Steps[0].Attempts = []engine.Attempt{}
			run.Steps[1].Decisions = nil
			run.Plan.Warnings = []string{}
			if samePlan {
				// Steps as a run starts them: copied from the plan, which
				// the run-started event carries too.
				for i := range run.Steps {
					s, p := &run.Steps[i], &run.Plan.Steps[i]
					s.ID, s.Skill, s.Effort, s.Prompt = p.ID, p.Skill, p.Effort, p.Prompt
					s.Category, s.Execution, s.Leaf, s.Gate, s.Rules = p.Category, p.Execution, p.Leaf, p.Gate, p.Rules
				}
				ev.Start.Plan = run.Plan
			}

			db := openStore(t, t.TempDir(), Options{})
			if err := db.Commit(ctx, engine.Commit{Run: &run, Events: []engine.Event{ev}}); err != nil {
				t.Fatal(err)
			}
			got, err := db.Load(ctx, run.ID)
			if err != nil {
				t.Fatal(err)
			}
			sameRun(t, "filled run", got, &run)
			j, err := db.Journal(ctx, run.ID)
			if err != nil {
				t.Fatal(err)
			}
			recordtest.InUTC(j)
			recordtest.InUTC(&ev)
			if len(j) != 1 || !reflect.DeepEqual(j[0], ev) {
				t.Fatalf("journal differs:\n got: %+v\nwant: %+v", j, ev)
			}
			// The plan is stored once; the snapshot and the event refer to it.
			var snap, first []byte
			db.bolt.View(func(tx *bbolt.Tx) error {
				snap = bytes.Clone(tx.Bucket(bucketRuns).Get([]byte(run.ID)))
				first = bytes.Clone(tx.Bucket(bucketJournal).Bucket([]byte(run.ID)).Get(seqKey(1)))
				return nil
			})
			p0 := run.Plan.Steps[0].Prompt
			prompt := []byte(p0[:strings.IndexByte(p0, ' ')+1]) // "text-N ": unique, nothing to escape
			if samePlan && (bytes.Contains(snap, prompt) || bytes.Contains(first, prompt)) {
				t.Fatalf("the plan's prompts are stored again in the snapshot or the run-started event")
			}
		})
	}
}
