package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/storage"
)

func newRunsCmd(a *cli) *cobra.Command {
	f := &runFlags{}
	c := &cobra.Command{
		Use:               "runs [flags]",
		Short:             "List the runs in the store, newest first",
		RunE:              a.action(f, cmdRuns),
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	a.addJSONFlag(c, f)
	a.addDataFlag(c, f)
	return c
}

func cmdRuns(ctx context.Context, e env, cfg config, f *runFlags) int {
	if len(f.positional) > 0 {
		return fail(e, "runs", usagef("takes no arguments (got %q)", f.positional[0]))
	}
	db, err := openStore(f.data)
	if err != nil {
		return fail(e, "runs", err)
	}
	defer db.Close()
	list, err := db.List(ctx)
	if err != nil {
		return fail(e, "runs", err)
	}
	// A waiting run may be halted on a FAILED step (or on an interrupted
	// one): only its snapshot says, so waiting runs, and only they, are
	// read whole.
	states := make([]string, len(list))
	for i, s := range list {
		states[i] = string(s.State)
		if s.State != engine.RunWaiting {
			continue
		}
		if r, err := db.Load(ctx, s.ID); err == nil {
			states[i], _ = runState(r)
		}
	}
	if f.json {
		out := make([]jsonRunLine, 0, len(list))
		for i, s := range list {
			out = append(out, jsonRunLine{ID: string(s.ID), State: string(s.State), Input: string(s.Input),
				Created: s.Created, Updated: s.Updated, StepsTotal: s.StepsTotal, StepsDone: s.StepsDone,
				Halted: states[i] == stateHalted})
		}
		return writeJSON(e, "runs", out)
	}
	if len(list) == 0 {
		fmt.Fprintf(e.stdout, "No runs in %s.\n", f.data)
		return exitOK
	}
	idW, stateW, stepsW := len("RUN"), len("STATE"), len("STEPS")
	for i, s := range list {
		idW, stateW = max(idW, len(s.ID)), max(stateW, len(states[i]))
		stepsW = max(stepsW, len(fmt.Sprintf("%d/%d", s.StepsDone, s.StepsTotal)))
	}
	row := fmt.Sprintf("%%-%ds  %%-%ds  %%-8s  %%-%ds  %%-16s  %%s\n", idW, stateW, stepsW)
	fmt.Fprintf(e.stdout, row, "RUN", "STATE", "INPUT", "STEPS", "UPDATED", "SOURCE")
	for i, s := range list {
		src := clip(oneLine(s.Source), 60)
		if s.Input == engine.InputPlan {
			src = clipLeft(oneLine(s.Source), 60) // a path: its file name matters most
		}
		fmt.Fprintf(e.stdout, row, s.ID, states[i], s.Input,
			fmt.Sprintf("%d/%d", s.StepsDone, s.StepsTotal), s.Updated.Local().Format("2006-01-02 15:04"), src)
	}
	return exitOK
}

const (
	stateHalted      = "halted"
	stateInterrupted = "interrupted"
)

// runState is how a run stands, for people: its state, except that a run
// waiting on a FAILED step (that gonogo does not retry by itself) is
// halted and one waiting on an interrupted step is interrupted; and a
// sentence saying where it stands, "halted at step 2 (deliver-prd):
// FAILED - the agent exited with code 1".
func runState(r *engine.Run) (state, detail string) {
	state = string(r.State)
	switch r.State {
	case engine.RunAborted:
		if r.Halt != "" {
			return state, "aborted (" + r.Halt + ")"
		}
		return state, state
	case engine.RunWaiting:
	default:
		return state, state
	}
	s := askable(r)
	if s == nil {
		return state, "waiting: a step waits for its automatic retry"
	}
	where := fmt.Sprintf("step %d (%s)", s.N, s.Skill)
	l := s.Latest()
	switch {
	case s.Status == engine.StepInterrupted:
		return stateInterrupted, fmt.Sprintf("halted at %s: interrupted (gonogo stopped while it ran); redo it or abort", where)
	case l != nil && l.Result == engine.ResultFailed:
		return stateHalted, fmt.Sprintf("halted at %s: %s", where, resultText(l.Result, l.Reason))
	case l != nil:
		return state, fmt.Sprintf("waiting for a decision at %s: %s", where, resultText(l.Result, l.Reason))
	}
	return state, "waiting for a decision at " + where
}

type jsonRunLine struct {
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

type jsonRun struct {
	ID      string      `json:"id"`
	State   string      `json:"state"`
	Input   string      `json:"input"`
	Source  string      `json:"source"`
	Mode    string      `json:"mode"`
	Created time.Time   `json:"created"`
	Updated time.Time   `json:"updated"`
	CostUSD float64     `json:"cost_usd"`
	Halt    *string     `json:"halt"`
	Halted  bool        `json:"halted,omitempty"` // waiting, halted on a FAILED step
	Steps   []jsonStep  `json:"steps"`
	Journal []jsonEvent `json:"journal"`
}

type jsonStep struct {
	N        int           `json:"n"`
	Skill    string        `json:"skill"`
	Effort   string        `json:"effort"`
	Status   string        `json:"status"`
	Result   *string       `json:"result"`
	Decision *string       `json:"decision"`
	Attempts []jsonAttempt `json:"attempts"`
	// Workflow steps only.
	ID        string `json:"id,omitempty"`
	DependsOn []int  `json:"depends_on,omitempty"`
	Parent    int    `json:"parent,omitempty"` // the step whose output added this one
}

type jsonAttempt struct {
	N              int        `json:"n"`
	Result         *string    `json:"result"`
	Reason         string     `json:"reason"`
	Artifact       *string    `json:"artifact"`
	ArtifactStored bool       `json:"artifact_stored"`
	Edited         bool       `json:"edited"`
	CostUSD        float64    `json:"cost_usd"`
	Started        time.Time  `json:"started"`
	Finished       *time.Time `json:"finished"`
	Skill          string     `json:"skill,omitempty"` // a fallback skill the attempt ran instead of the step's
}

type jsonEvent struct {
	Seq      uint64    `json:"seq"`
	Time     time.Time `json:"time"`
	Type     string    `json:"type"`
	Step     int       `json:"step,omitempty"`
	Attempt  int       `json:"attempt,omitempty"`
	Actor    string    `json:"actor,omitempty"`
	Kind     string    `json:"kind,omitempty"`
	Key      string    `json:"key,omitempty"`
	Feedback string    `json:"feedback,omitempty"`
	Status   string    `json:"status,omitempty"`
	Result   string    `json:"result,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	CostUSD  float64   `json:"cost_usd,omitempty"`
	Mode     string    `json:"mode,omitempty"`
	State    string    `json:"state,omitempty"`
}

func newShowCmd(a *cli) *cobra.Command {
	f := &runFlags{}
	c := &cobra.Command{
		Use:   "show [flags] RUN",
		Short: "Show one run: its steps, attempts and journal",
		Long: `Show one run from the store: its steps, every attempt, and the journal of what
happened. RUN is an id from gonogo runs.`,
		RunE:              a.action(f, cmdShow),
		ValidArgsFunction: a.completeRunIDs(f),
	}
	a.addJSONFlag(c, f)
	a.addDataFlag(c, f)
	return c
}

func cmdShow(ctx context.Context, e env, cfg config, f *runFlags) int {
	if len(f.positional) != 1 {
		return fail(e, "show", usagef("expected one run id (see gonogo runs)"))
	}
	db, err := openStore(f.data)
	if err != nil {
		return fail(e, "show", err)
	}
	defer db.Close()
	id := engine.RunID(f.positional[0])
	r, journal, err := loadWithJournal(ctx, db, id)
	if err != nil {
		if errors.Is(err, engine.ErrNotFound) {
			return fail(e, "show", fmt.Errorf("no run %s in %s (see gonogo runs)", id, f.data))
		}
		return fail(e, "show", err)
	}
	if f.json {
		return writeJSON(e, "show", runJSON(r, journal, f.data))
	}
	printHeader(e.stdout, r.Plan, r.ID, engine.RunModeName(r.Mode, r.DryRun))
	_, detail := runState(r)
	fmt.Fprintf(e.stdout, "State:      %s\n", detail)
	if r.State == engine.RunWaiting {
		fmt.Fprintf(e.stdout, "Continue:   gonogo resume %s\n", r.ID)
	}
	if r.CostUSD > 0 {
		fmt.Fprintf(e.stdout, "Cost:       $%.2f\n", r.CostUSD)
	}
	fmt.Fprintln(e.stdout)
	printSteps(e.stdout, r, f.data)
	printLeftovers(e.stdout, r.Plan)
	fmt.Fprintln(e.stdout, "\nJournal:")
	for _, ev := range journal {
		fmt.Fprintf(e.stdout, "  %4d %s %-17s %s\n", ev.Seq, ev.Time.Local().Format("2006-01-02 15:04:05"), ev.Type, eventDetail(r, ev))
	}
	return exitOK
}

func loadWithJournal(ctx context.Context, db *storage.DB, id engine.RunID) (*engine.Run, []engine.Event, error) {
	r, err := db.Load(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	j, err := db.Journal(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return r, j, nil
}

func eventDetail(r *engine.Run, ev engine.Event) string {
	s := r.Step(ev.Step)
	switch ev.Type {
	case engine.EvRunStarted:
		return fmt.Sprintf("%s %s by %s", r.Input, clip(oneLine(r.Plan.Source), 60), ev.Actor)
	case engine.EvStepStarted, engine.EvStepQueued:
		return fmt.Sprintf("%s, attempt %d", stepTitle(r, s), ev.Attempt)
	case engine.EvStepFinished:
		return fmt.Sprintf("%s, attempt %d: %s", stepTitle(r, s), ev.Attempt, clip(resultText(ev.Result, ev.Reason), 120))
	case engine.EvStepInterrupted:
		return fmt.Sprintf("%s, attempt %d: interrupted", stepTitle(r, s), ev.Attempt)
	case engine.EvDecision:
		return fmt.Sprintf("%s, attempt %d: %s by %s", stepTitle(r, s), ev.Attempt, ev.Decision, ev.Actor)
	case engine.EvModeChanged:
		return string(ev.Mode)
	case engine.EvStepsAdded:
		ids := make([]string, 0, len(ev.Added))
		for _, a := range ev.Added {
			ids = append(ids, a.ID)
		}
		return fmt.Sprintf("%s added %d steps: %s", stepTitle(r, s), len(ev.Added), clip(strings.Join(ids, ", "), 100))
	case engine.EvRunFinished:
		if ev.Reason != "" {
			return string(ev.State) + ": " + ev.Reason
		}
		return string(ev.State)
	}
	return ""
}

func runJSON(r *engine.Run, journal []engine.Event, data string) jsonRun {
	out := jsonRun{
		ID: string(r.ID), State: string(r.State), Input: string(r.Input), Source: r.Plan.Source,
		Mode: engine.RunModeName(r.Mode, r.DryRun), Created: r.Created, Updated: r.Updated, CostUSD: r.CostUSD,
		Halt: strOrNil(r.Halt), Steps: []jsonStep{}, Journal: []jsonEvent{},
	}
	if state, _ := runState(r); state == stateHalted {
		out.Halted = true
	}
	for i := range r.Steps {
		s := &r.Steps[i]
		js := jsonStep{N: s.N, Skill: s.Skill, Effort: s.Effort, Status: string(s.Status), Attempts: []jsonAttempt{},
			ID: s.ID, Parent: s.Parent}
		if r.Input == engine.InputWorkflow {
			js.DependsOn = s.DependsOn
		}
		if l := s.Latest(); l != nil {
			js.Result = strOrNil(string(l.Result))
		}
		if d := s.LastDecision(); d != nil {
			js.Decision = strOrNil(string(d.Kind))
		}
		for _, a := range s.Attempts {
			ja := jsonAttempt{N: a.N, Result: strOrNil(string(a.Result)), Reason: a.Reason, ArtifactStored: a.Artifact,
				Edited: a.Edited, CostUSD: a.CostUSD, Started: a.Started, Skill: a.Skill}
			if a.File != "" {
				p := filepath.Join(data, filepath.FromSlash(a.File))
				ja.Artifact = &p
			}
			if !a.Finished.IsZero() {
				t := a.Finished
				ja.Finished = &t
			}
			js.Attempts = append(js.Attempts, ja)
		}
		out.Steps = append(out.Steps, js)
	}
	for _, ev := range journal {
		out.Journal = append(out.Journal, jsonEvent{
			Seq: ev.Seq, Time: ev.Time, Type: string(ev.Type), Step: ev.Step, Attempt: ev.Attempt, Actor: ev.Actor,
			Kind: string(ev.Decision), Key: ev.Key, Feedback: ev.Feedback, Status: string(ev.Status), Result: string(ev.Result),
			Reason: ev.Reason, CostUSD: ev.CostUSD, Mode: string(ev.Mode), State: string(ev.State),
		})
	}
	return out
}

func writeJSON(e env, cmd string, v any) int {
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fail(e, cmd, err)
	}
	return exitOK
}
