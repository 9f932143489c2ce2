package temporalbackend

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/engine/statstest"
	"github.com/gonogo/gonogo/internal/record"
)

// editedRun is a run of two steps whose step 1 attempt 1 the agent
// produced and people edited `edits` times: the engine lets an attempt be
// edited once (an edit settles its step), so the later edits are folded
// in as a recorded history would bring them.
func editedRun(t *testing.T, edits int) *engine.Run {
	t.Helper()
	r, _ := editedJournal(t, edits)
	return r
}

// editedJournal is editedRun and its journal in package record's encoding.
func editedJournal(t *testing.T, edits int) (*engine.Run, json.RawMessage) {
	t.Helper()
	t0 := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	p := engine.Plan{Input: engine.InputChain, Source: "deliver-prd -> deliver-user-stories",
		Steps: []engine.PlanStep{{Skill: "deliver-prd"}, {Skill: "deliver-user-stories"}}}
	f := statstest.Fold(t)
	f.Apply(engine.NewRun("20260501-090000-abc", p, engine.StartOptions{StartedBy: "U1"}, t0))
	f.Apply(engine.Start(f.Run, 1, t0))
	f.Apply(engine.Finish(f.Run, 1, 1, engine.Finished{Result: engine.ResultProduced, Artifact: true, Size: 9}, t0))
	for i := range edits {
		d := engine.Decision{Kind: engine.DecideEdit, Actor: "U1", Step: 1, Attempt: 1, Key: "k" + string(rune('a'+i))}
		if i == 0 {
			f.Apply(engine.Decide(f.Run, d, &engine.Edit{Size: 5}, t0))
			continue
		}
		f.Apply([]engine.Event{{Type: engine.EvDecision, Seq: f.Run.Seq + 1, Time: t0, Step: 1, Attempt: 1, Actor: d.Actor,
			Decision: d.Kind, Key: d.Key, Status: engine.StepDone, Artifact: true, Size: 5}}, nil)
	}
	b, err := record.MarshalEvents(f.Journal)
	if err != nil {
		t.Fatal(err)
	}
	return f.Run, b
}

// An attempt's versions are named by the key of every edit the workflow
// recorded, in order, not guessed from its current key: an attempt
// edited twice has both edits; one edited once before the workflow
// continued as new under a release that named only the current key still
// has its edit; one edited twice then has none named rather than a body
// paired with the wrong edit.
func TestEditKeysNameEveryEdit(t *testing.T) {
	two := editedRun(t, 2)
	once := editedRun(t, 1)
	for _, c := range []struct {
		name   string
		r      *engine.Run
		v      reading
		want   []string
		edited bool
	}{
		{"never edited", editedRun(t, 0), reading{keys: map[string]string{"1/1": "agent"}}, nil, false},
		{"edited twice", two, reading{keys: map[string]string{"1/1": "e2"}, edits: map[string][]string{"1/1": {"e1", "e2"}}},
			[]string{"e1", "e2"}, true},
		{"edited once", once, reading{keys: map[string]string{"1/1": "e1"}, edits: map[string][]string{"1/1": {"e1"}}},
			[]string{"e1"}, true},
		{"edited once, named by an older release", once, reading{keys: map[string]string{"1/1": "e1"}}, []string{"e1"}, true},
		{"edited twice, named by an older release", two, reading{keys: map[string]string{"1/1": "e2"}}, nil, true},
	} {
		got, edited := editKeys(c.v, c.r.Step(1), 1)
		if !slices.Equal(got, c.want) || edited != c.edited {
			t.Errorf("%s: keys %q (edited %t), want %q (%t)", c.name, got, edited, c.want, c.edited)
		}
	}
}

// The workflow keeps each edit's key as it records the edit: the run
// query names every one, in order, apart from the current key, and a
// workflow continuing as new carries them on; the query's answer shares
// nothing with the workflow's own state.
func TestWorkflowKeepsEveryEditsKey(t *testing.T) {
	_, evs := editedJournal(t, 0)
	f, err := newFlow(startRecord{V: record.Version, Events: evs})
	if err != nil {
		t.Fatal(err)
	}
	f.keys[refKey(1, 1)] = "agent"
	f.keepEdit(1, 1, "e1")
	f.keepEdit(1, 1, "e2")
	v, err := f.view()
	if err != nil {
		t.Fatal(err)
	}
	if v.Keys["1/1"] != "e2" || !slices.Equal(v.Edits["1/1"], []string{"e1", "e2"}) {
		t.Fatalf("view keys %v edits %v, want the current e2 and the edits e1, e2", v.Keys, v.Edits)
	}
	// A reader that folds a run from its history names them as the
	// query does.
	if b, err := json.Marshal(v); err != nil || !strings.Contains(string(b), `"edits":{"1/1":["e1","e2"]}`) {
		t.Errorf("the run query's JSON names the edits otherwise: %s (%v)", b, err)
	}
	v.Edits["1/1"][0] = "changed"
	if f.edits["1/1"][0] != "e1" {
		t.Error("the query's answer shares the workflow's edits")
	}
	next, err := newFlow(startRecord{V: record.Version, Events: evs, Keys: f.keys, Edits: cloneEdits(f.edits)})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(next.edits["1/1"], []string{"e1", "e2"}) {
		t.Errorf("a workflow continued as new has edits %v", next.edits)
	}
}
