package bot

import (
	"context"
	"testing"

	"github.com/gonogo/gonogo/engine"
)

// loadOnly answers Load with one run, or with err; the bot asks nothing
// else of it here.
type loadOnly struct {
	Engine
	run *engine.Run
	err error
}

func (l loadOnly) Load(context.Context, engine.RunID) (*engine.Run, error) { return l.run, l.err }

// A Cancel click sent again (kept before a restart, or redelivered) needs
// nothing more once the attempt it names no longer runs; while it runs,
// or when the run cannot be read, it is carried out (and answered).
func TestReplayedCancelIsCarriedOutOnceTheAttemptStops(t *testing.T) {
	running := func(status engine.StepStatus, attempts int) *engine.Run {
		st := engine.Step{StepDef: &engine.StepDef{N: 1}, StepState: &engine.StepState{Status: status}}
		for n := 1; n <= attempts; n++ {
			st.Attempts = append(st.Attempts, engine.Attempt{N: n})
		}
		return &engine.Run{ID: "r1", Steps: []engine.Step{st}}
	}
	click := Action{Kind: ActCancel, Ref: StepRef{Run: "r1", Step: 1, Attempt: 1}}
	tests := []struct {
		name string
		eng  loadOnly
		want bool
	}{
		{"the attempt still runs", loadOnly{run: running(engine.StepRunning, 1)}, false},
		{"the step finished", loadOnly{run: running(engine.StepDone, 1)}, true},
		{"a later attempt runs", loadOnly{run: running(engine.StepRunning, 2)}, true},
		{"the step has no attempt", loadOnly{run: running(engine.StepRunning, 0)}, true},
		{"the run has no such step", loadOnly{run: &engine.Run{ID: "r1"}}, true},
		{"the run cannot be read", loadOnly{err: engine.ErrNotFound}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &Bot{eng: tt.eng}
			if got := b.actionCarriedOut(context.Background(), envelope{replayed: true}, click); got != tt.want {
				t.Errorf("carried out = %v, want %v", got, tt.want)
			}
		})
	}
}
