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
		return fail(e, "runs", usagef("runs takes no arguments (got %q)", f.positional[0]))
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
	if f.json {
		out := make([]jsonRunLine, 0, len(list))
		for _, s := range list {
			out = append(out, jsonRunLine{ID: string(s.ID), State: string(s.State), Input: string(s.Input),
				Created: s.Created, Updated: s.Updated, StepsTotal: s.StepsTotal, StepsDone: s.StepsDone})
		}
		return writeJSON(e, "runs", out)
	}
	if len(list) == 0 {
		fmt.Fprintf(e.stdout, "No runs in %s.\n", f.data)
		return exitOK
	}
	fmt.Fprintf(e.stdout, "%-24s %-10s %-6s %-6s %-17s %s\n", "RUN", "STATE", "INPUT", "STEPS", "UPDATED", "SOURCE")
	for _, s := range list {
		fmt.Fprintf(e.stdout, "%-24s %-10s %-6s %-6s %-17s %s\n", s.ID, s.State, s.Input,
			fmt.Sprintf("%d/%d", s.StepsDone, s.StepsTotal), s.Updated.Local().Format("2006-01-02 15:04"), clip(oneLine(s.Source), 60))
	}
	return exitOK
}

type jsonRunLine struct {
	ID         string    `json:"id"`
	State      string    `json:"state"`
	Input      string    `json:"input"`
	Created    time.Time `json:"created"`
	Updated    time.Time `json:"updated"`
	StepsTotal int       `json:"steps_total"`
	StepsDone  int       `json:"steps_done"`
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
		return fail(e, "show", usagef("show takes one run id (see gonogo runs)"))
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
	fmt.Fprintf(e.stdout, "State:      %s", r.State)
	if r.Halt != "" {
		fmt.Fprintf(e.stdout, " (%s)", r.Halt)
	}
	fmt.Fprintln(e.stdout)
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
		out := fmt.Sprintf("%s, attempt %d: %s", stepTitle(r, s), ev.Attempt, ev.Result)
		if ev.Reason != "" {
			out += " - " + clip(ev.Reason, 100)
		}
		return out
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
