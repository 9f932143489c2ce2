package storage

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/gonogo/gonogo/engine"
)

// validText gives each typed state a value its parser accepts, so a filled
// run can be committed.
var validText = map[reflect.Type]string{
	reflect.TypeFor[engine.RunState]():       string(engine.RunWaiting),
	reflect.TypeFor[engine.StepStatus]():     string(engine.StepInterrupted),
	reflect.TypeFor[engine.Result]():         string(engine.ResultNotExecuted),
	reflect.TypeFor[engine.DecisionKind]():   string(engine.DecideEdit),
	reflect.TypeFor[engine.Mode]():           string(engine.ModeGuardedAuto),
	reflect.TypeFor[engine.Gate]():           string(engine.GateOnEmpty),
	reflect.TypeFor[engine.EventType]():      string(engine.EvRunStarted),
	reflect.TypeFor[engine.InputKind]():      string(engine.InputWorkflow),
	reflect.TypeFor[engine.Domain]():         string(engine.DomainChaotic),
	reflect.TypeFor[engine.Category]():       string(engine.CategoryDispatch),
	reflect.TypeFor[engine.Execution]():      string(engine.ExecInlineLeaf),
	reflect.TypeFor[engine.AgentErrorKind](): string(engine.AgentErrOverloaded),
	reflect.TypeFor[engine.TimeoutAction]():  string(engine.TimeoutAbort),
}

// filler sets every field of a value to something distinct and non-zero,
// so a field the store forgets to keep shows up as a difference, including
// fields added to the engine's types after this test was written.
type filler struct{ n int }

func (f *filler) fill(v reflect.Value) {
	f.n++
	switch v.Kind() {
	case reflect.String:
		if s, ok := validText[v.Type()]; ok {
			v.SetString(s)
		} else {
			v.SetString(fmt.Sprintf("text-%d \"quoted\" ünïcode\n", f.n))
		}
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(f.n))
	case reflect.Uint64, reflect.Uint32, reflect.Uint:
		v.SetUint(uint64(f.n))
	case reflect.Float64:
		v.SetFloat(float64(f.n) + 0.1) // not exact in binary: must still round-trip
	case reflect.Struct:
		if v.Type() == timeType {
			v.Set(reflect.ValueOf(time.Date(2025, 1, f.n%28+1, 10, 0, f.n, 123456789, time.FixedZone("", -7*3600))))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				f.fill(v.Field(i))
			}
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			f.fill(s.Index(i))
		}
		v.Set(s)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		f.fill(p.Elem())
		v.Set(p)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for range 2 {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			f.fill(k)
			f.fill(e)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	default:
		panic(fmt.Sprintf("filler: no rule for %s", v.Type()))
	}
}

func TestEveryFieldSurvivesARoundTrip(t *testing.T) {
	for _, samePlan := range []bool{false, true} {
		t.Run(fmt.Sprintf("steps from plan %v", samePlan), func(t *testing.T) {
			var run engine.Run
			var ev engine.Event
			f := &filler{}
			f.fill(reflect.ValueOf(&run).Elem())
			f.fill(reflect.ValueOf(&ev).Elem())
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
			normTimes(j)
			normTimes(&ev)
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
