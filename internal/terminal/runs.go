package terminal

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// The states gonogo runs and show --json give a run beside the engine's
// own (running, waiting, completed, ...).
const (
	StateHalted      = "halted"
	StateInterrupted = "interrupted"
	StatePaused      = "paused"
	// StateQueued: running in the store, carried out by no gonogo
	StateQueued = "queued"
)

// RunLoader loads one run (a store, or the gonogo holding it).
type RunLoader interface {
	Load(ctx context.Context, id engine.RunID) (*engine.Run, error)
}

// Runs is what gonogo runs prints: the runs of a data directory, newest
// first, each with its STATE (see RunStates).
type Runs struct {
	List   []engine.RunSummary
	States []string
	Data   string // the data directory, as given
}

// RunStates is the state gonogo runs gives each run of list. unheld says
// the runs are read from the store itself, which no gonogo holds;
// readOnly that this user may only read it.
func RunStates(ctx context.Context, rd RunLoader, list []engine.RunSummary, unheld, readOnly bool) []string {
	// A waiting run may be halted on a FAILED step (or on an interrupted
	// one): only its snapshot says, so waiting runs, and only they, are
	// read whole.
	// A running run in a store nobody holds is carried out by no one: a
	// decision recorded from another shell queued its next step, which
	// waits for gonogo resume; read read-only, one with a step recorded
	// running was interrupted (see NotRunning).
	states := make([]string, len(list))
	for i, s := range list {
		states[i] = listedState(ctx, rd, s, unheld, readOnly)
	}
	return states
}

// listedState is the state gonogo runs gives run s (see RunStates).
func listedState(ctx context.Context, rd RunLoader, s engine.RunSummary, unheld, readOnly bool) string {
	if s.State == engine.RunRunning && unheld {
		return unheldState(ctx, rd, s.ID, readOnly)
	}
	if s.State != engine.RunWaiting {
		return string(s.State)
	}
	r, err := rd.Load(ctx, s.ID)
	if err != nil {
		return string(s.State)
	}
	state, _ := RunState(r)
	return state
}

// unheldState is the state of a running run in a store nobody holds:
// queued, or interrupted when read read-only with a step recorded running.
func unheldState(ctx context.Context, rd RunLoader, id engine.RunID, readOnly bool) string {
	if !readOnly {
		return StateQueued
	}
	if r, err := rd.Load(ctx, id); err == nil && len(NotRunning(r)) > 0 {
		return StateInterrupted
	}
	return StateQueued
}

// RunLineJSON is one entry of gonogo runs --json. The keys are part of
// gonogo's JSON contract (see the README).
type RunLineJSON struct {
	ID         string    `json:"id"`
	State      string    `json:"state"`
	Input      string    `json:"input"`
	Created    time.Time `json:"created"`
	Updated    time.Time `json:"updated"`
	StepsTotal int       `json:"steps_total"`
	StepsDone  int       `json:"steps_done"`
	// Halted marks a waiting run halted on a FAILED step: its state stays
	// waiting (resume offers redo or abort).
	Halted bool `json:"halted,omitempty"`
}

// JSON is gonogo runs --json.
func (v Runs) JSON() []RunLineJSON {
	out := make([]RunLineJSON, 0, len(v.List))
	for i, s := range v.List {
		out = append(out, RunLineJSON{ID: string(s.ID), State: string(s.State), Input: string(s.Input),
			Created: s.Created, Updated: s.Updated, StepsTotal: s.StepsTotal, StepsDone: s.StepsDone,
			Halted: v.States[i] == StateHalted})
	}
	return out
}

// Print writes gonogo runs as a table, for people; w should be Printable,
// since a run's source may hold anything a person typed.
func (v Runs) Print(w io.Writer) {
	if len(v.List) == 0 {
		fmt.Fprintf(w, "No runs in %s.\n", v.Data)
		return
	}
	idW, stateW, stepsW := len("RUN"), len("STATE"), len("STEPS")
	for i, s := range v.List {
		idW, stateW = max(idW, len(s.ID)), max(stateW, len(v.States[i]))
		stepsW = max(stepsW, len(fmt.Sprintf("%d/%d", s.StepsDone, s.StepsTotal)))
	}
	row := fmt.Sprintf("%%-%ds  %%-%ds  %%-8s  %%-%ds  %%-16s  %%s\n", idW, stateW, stepsW)
	fmt.Fprintf(w, row, "RUN", "STATE", "INPUT", "STEPS", "UPDATED", "SOURCE")
	for i, s := range v.List {
		fmt.Fprintf(w, row, s.ID, v.States[i], s.Input,
			fmt.Sprintf("%d/%d", s.StepsDone, s.StepsTotal), s.Updated.Local().Format("2006-01-02 15:04"), listedSource(s))
	}
}

// listedSource is a run's source as its row shows it, clipped to fit.
func listedSource(s engine.RunSummary) string {
	if s.Input == engine.InputPlan {
		return ClipLeft(OneLine(s.Source), 60) // a path: its file name matters most
	}
	return Clip(OneLine(s.Source), 60)
}

// RunState puts a run's standing (engine.StandingOf) into words: its
// state for runs and show --json (a run a person paused while nothing runs
// is paused, one halted on a FAILED or interrupted step is halted or
// interrupted; otherwise the run's own state), and a sentence saying
// where it stands, "halted at step 2 (deliver-prd): FAILED - the agent
// exited with code 1".
func RunState(r *engine.Run) (state, detail string) {
	st := engine.StandingOf(r)
	state = string(r.State)
	if st.PausedByPerson {
		return pausedState(r, st)
	}
	var where string
	if s := st.At; s != nil {
		where = fmt.Sprintf("step %d (%s)", s.N, s.Skill)
	}
	switch st.Stand {
	case engine.StandAborted:
		return state, abortedDetail(r)
	case engine.StandInterrupted:
		return StateInterrupted, fmt.Sprintf("halted at %s: interrupted (%s); redo it or abort", where, InterruptedWhy(st.At))
	case engine.StandHalted:
		l := st.At.Latest()
		return StateHalted, fmt.Sprintf("halted at %s: %s", where, engine.ResultText(l.Result, l.Reason))
	case engine.StandRetrying:
		return state, retryingDetail(r, st)
	case engine.StandWaiting:
		return state, waitingDetail(st, where)
	}
	return state, state
}

// abortedDetail says a run was aborted, and why when it was told.
func abortedDetail(r *engine.Run) string {
	if r.Halt != "" {
		return "aborted (" + r.Halt + ")"
	}
	return string(r.State)
}

// retryingDetail says what a run that retries a step by itself waits for.
func retryingDetail(r *engine.Run, st engine.Standing) string {
	if st.RateLimited {
		return "paused: " + r.PauseReason
	}
	return "waiting: a step waits for its automatic retry"
}

// waitingDetail says what a waiting run waits for at the step where
// names.
func waitingDetail(st engine.Standing, where string) string {
	if st.At == nil {
		return "waiting: a step waits for its automatic retry"
	}
	if l := st.At.Latest(); l != nil {
		return fmt.Sprintf("waiting for a decision at %s: %s", where, engine.ResultText(l.Result, l.Reason))
	}
	return "waiting for a decision at " + where
}

// pausedState is how a run a person paused stands: still running its
// steps, or waiting (at their checkpoints, or before its next step).
func pausedState(r *engine.Run, st engine.Standing) (state, detail string) {
	who := fmt.Sprintf("paused by %s at %s", r.PausedBy, r.PausedAt.Local().Format("2006-01-02 15:04:05"))
	if st.Stand == engine.StandRunning {
		return string(r.State), who + ": the running steps finish and wait at a checkpoint; no step starts"
	}
	if s := st.At; s != nil && len(st.Waiting) > 0 {
		return StatePaused, fmt.Sprintf("%s; waiting for a decision at step %d (%s), or resume", who, s.N, s.Skill)
	}
	return StatePaused, who + "; no step starts until it is resumed"
}

// NotRunning is the steps of r, read read-only from a store, that it
// records as running though no gonogo runs them: none holds the store (a
// writer would hold it, and the reader would have asked it instead), so
// the gonogo that ran them has stopped. A gonogo that may write the store
// records them interrupted as it opens it; a reader writes nothing, and
// shows them as recorded, saying so (PrintNotRunning).
func NotRunning(r *engine.Run) []*engine.Step {
	var out []*engine.Step
	for _, ev := range engine.Interrupt(r, time.Now()) {
		if s := r.Step(ev.Step); s != nil {
			out = append(out, s)
		}
	}
	return out
}

// PrintNotRunning says, under a run's state, which of its steps are
// recorded running in a read-only store though nothing runs them.
func PrintNotRunning(w io.Writer, steps []*engine.Step) {
	for _, s := range steps {
		fmt.Fprintf(w, "Not running: step %d (%s) is recorded running, but no gonogo holds this store: the one running it has stopped.\n", s.N, s.Skill)
		fmt.Fprintf(w, "             This store is read-only for you, so it is shown as recorded; it reads interrupted once a gonogo that can write the store opens it.\n")
	}
}
