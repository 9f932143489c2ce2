package terminal

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/engine/audit"
)

// Show is what gonogo show prints of one run.
type Show struct {
	Run     *engine.Run
	Journal []engine.Event
	Data    string // the data directory, as given
	// NotRunning is the steps a read-only store records running though
	// nothing runs them (see NotRunning).
	NotRunning []*engine.Step
	// Unheld says the run was read from the store itself, which no gonogo
	// holds; Holder names the gonogo that holds the data directory when
	// the run was read through it.
	Unheld bool
	Holder string
}

// Print writes the run for people: where it stands, how to go on, its
// steps and its journal. w should be Printable: the agent's words are
// shown, never obeyed.
func (v Show) Print(w io.Writer) {
	r := v.Run
	PrintHeader(w, r.Plan, r.ID, engine.RunModeName(r.Mode, r.DryRun))
	_, detail := RunState(r)
	fmt.Fprintf(w, "State:      %s\n", detail)
	PrintNotRunning(w, v.NotRunning)
	v.printContinue(w)
	if r.CostUSD > 0 {
		fmt.Fprintf(w, "Cost:       $%.2f\n", r.CostUSD)
	}
	printSetup(w, r.Setup)
	fmt.Fprintln(w)
	PrintSteps(w, r, v.Data)
	PrintLeftovers(w, r.Plan)
	fmt.Fprintln(w, "\nJournal:")
	for _, ev := range v.Journal {
		fmt.Fprintf(w, "  %4d %s %-17s %s\n", ev.Seq, ev.Time.Local().Format("2006-01-02 15:04:05"), ev.Type, EventDetail(r, ev))
	}
}

// printContinue says how the run goes on when it needs a command to: a
// queued run no gonogo carries out, or a run that waits.
func (v Show) printContinue(w io.Writer) {
	r := v.Run
	if v.Unheld && r.State == engine.RunRunning && len(v.NotRunning) == 0 {
		fmt.Fprintf(w, "Queued:     no gonogo carries it out now; its next step runs with gonogo resume\n")
		fmt.Fprintf(w, "Continue:   gonogo resume %s%s\n", r.ID, DataFlag(v.Data))
	}
	if r.State != engine.RunWaiting {
		return
	}
	if v.Holder != "" && !r.PausedByPerson() {
		// resume cannot open a held data directory; decide can (and
		// resume of a paused run goes to its holder).
		fmt.Fprintf(w, "Continue:   gonogo decide %s approve|skip|redo|abort%s (%s holds the data directory)\n", r.ID, DataFlag(v.Data), v.Holder)
		return
	}
	fmt.Fprintf(w, "Continue:   gonogo resume %s%s\n", r.ID, DataFlag(v.Data))
}

// printSetup names the runner and skills a run is carried out with, when
// the run records them.
func printSetup(w io.Writer, st *engine.Setup) {
	if st == nil {
		return
	}
	agent := st.Runner
	if st.RunnerCmd != "" {
		agent += " (" + st.RunnerCmd + ")"
	}
	fmt.Fprintf(w, "Runner:     %s\n", agent)
	if len(st.Skills) > 0 {
		fmt.Fprintf(w, "Skills:     %s\n", strings.Join(st.Skills, ", "))
	}
}

// EventDetail is what the journal of gonogo show (and the run web page)
// says of one event.
func EventDetail(r *engine.Run, ev engine.Event) string {
	switch ev.Type {
	case engine.EvRunStarted:
		return fmt.Sprintf("%s %s by %s", r.Input, Clip(OneLine(r.Plan.Source), 60), ev.Actor)
	case engine.EvStepStarted, engine.EvStepQueued:
		return attemptHead(r, ev)
	case engine.EvModeChanged:
		return string(ev.Mode)
	case engine.EvRunPaused:
		return fmt.Sprintf("by %s: %s", ev.Actor, ev.Reason)
	case engine.EvRunResumed:
		return resumedDetail(ev)
	case engine.EvSetupChanged:
		return setupChangedDetail(ev)
	case engine.EvStepsAdded:
		return stepsAddedDetail(r, ev)
	case engine.EvRunFinished:
		return finishedDetail(ev)
	}
	what, ok := attemptWhat(ev)
	if !ok {
		return ""
	}
	return attemptHead(r, ev) + ": " + what
}

// attemptHead names the step and attempt an event is about.
func attemptHead(r *engine.Run, ev engine.Event) string {
	return fmt.Sprintf("%s, attempt %d", StepTitle(r, r.Step(ev.Step)), ev.Attempt)
}

// attemptSaying is what the journal says of the attempt events whose words
// never change.
var attemptSaying = map[engine.EventType]string{
	engine.EvStepReleased: "went on as the run resumed",
	engine.EvStepReminded: "the approvers were reminded",
}

// attemptWhat is what happened to the attempt an event is about; ok is
// false for an event that is about no attempt.
func attemptWhat(ev engine.Event) (what string, ok bool) {
	switch ev.Type {
	case engine.EvStepFinished:
		return Clip(engine.ResultText(ev.Result, ev.Reason), 120), true
	case engine.EvStepInterrupted:
		return interruptedDetail(ev), true
	case engine.EvDecision:
		return fmt.Sprintf("%s by %s", ev.Decision, ev.Actor), true
	case engine.EvStepTimedOut:
		return ev.Reason, true
	}
	what, ok = attemptSaying[ev.Type]
	return what, ok
}

// interruptedDetail says an attempt was interrupted and, when known, when
// its agent last showed it was alive.
func interruptedDetail(ev engine.Event) string {
	if ev.Lost.IsZero() {
		return "interrupted"
	}
	return "interrupted; last sign of life " + ev.Lost.Local().Format("2006-01-02 15:04:05")
}

func resumedDetail(ev engine.Event) string {
	if ev.Mode != "" {
		return fmt.Sprintf("by %s, now %s", ev.Actor, ev.Mode)
	}
	return "by " + ev.Actor
}

func setupChangedDetail(ev engine.Event) string {
	parts := make([]string, 0, len(ev.Changes))
	for _, c := range ev.Changes {
		parts = append(parts, c.String())
	}
	return fmt.Sprintf("%s by %s", strings.Join(parts, "; "), ev.Actor)
}

func stepsAddedDetail(r *engine.Run, ev engine.Event) string {
	ids := make([]string, 0, len(ev.Added))
	for _, a := range ev.Added {
		ids = append(ids, a.ID)
	}
	return fmt.Sprintf("%s added %d steps: %s", StepTitle(r, r.Step(ev.Step)), len(ev.Added), Clip(strings.Join(ids, ", "), 100))
}

func finishedDetail(ev engine.Event) string {
	if ev.Reason != "" {
		return string(ev.State) + ": " + ev.Reason
	}
	return string(ev.State)
}

// RunJSON is gonogo show --json. The keys are part of gonogo's JSON
// contract (see the README).
type RunJSON struct {
	ID      string    `json:"id"`
	State   string    `json:"state"`
	Input   string    `json:"input"`
	Source  string    `json:"source"`
	Mode    string    `json:"mode"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	CostUSD float64   `json:"cost_usd"`
	Halt    *string   `json:"halt"`
	Halted  bool      `json:"halted,omitempty"` // waiting, halted on a FAILED step
	// Paused: no step starts until the run is resumed (a person paused
	// it, or gonogo waits out an agent's rate limit); by whom, when, why.
	Paused      bool       `json:"paused"`
	PausedBy    string     `json:"paused_by,omitempty"`
	PausedAt    *time.Time `json:"paused_at,omitempty"`
	PauseReason string     `json:"pause_reason,omitempty"`
	// Setup is how the run is carried out (resume goes on with it); null
	// for a run recorded before gonogo kept it.
	Setup   *SetupJSON    `json:"setup"`
	Steps   []StepJSON    `json:"steps"`
	Journal []audit.Event `json:"journal"`
}

// SetupJSON is how a run is carried out, in RunJSON.
type SetupJSON struct {
	Runner     string   `json:"runner"`
	RunnerCmd  string   `json:"runner_cmd"`
	RunnerArgs []string `json:"runner_args"`
	Skills     []string `json:"skills"`
	Workflows  string   `json:"workflows"`
	Policy     string   `json:"policy"`
}

// StepJSON is one step of a run, in RunJSON.
type StepJSON struct {
	N        int           `json:"n"`
	Skill    string        `json:"skill"`
	Effort   string        `json:"effort"`
	Status   string        `json:"status"`
	Result   *string       `json:"result"`
	Decision *string       `json:"decision"`
	Attempts []AttemptJSON `json:"attempts"`
	// Workflow steps only.
	ID        string `json:"id,omitempty"`
	DependsOn []int  `json:"depends_on,omitempty"`
	Parent    int    `json:"parent,omitempty"` // the step whose output added this one
}

// AttemptJSON is one attempt of a step, in RunJSON.
type AttemptJSON struct {
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
	// ErrorKind is the kind of error the agent reported (rate-limit,
	// overloaded, auth, ...); RetryAt when gonogo redoes the step by itself.
	ErrorKind string     `json:"error_kind,omitempty"`
	RetryAt   *time.Time `json:"retry_at,omitempty"`
	// SHA256 is the hex digest of the attempt's current artifact (the edit,
	// if edited), null when it has none; StoreOnly says the artifact is in
	// the database and on no file (a one-step run): gonogo show RUN
	// --artifact N --attempt K prints it.
	SHA256    *string `json:"sha256"`
	StoreOnly bool    `json:"store_only"`
	// ArtifactGone says the file Artifact names is gone from disk; the
	// store still has the artifact (gonogo show RUN --artifact N).
	ArtifactGone bool `json:"artifact_gone,omitempty"`
}

// AttemptKey names one attempt of one step of a run.
type AttemptKey struct{ Step, Attempt int }

// JSON is gonogo show --json; sums holds the hex sha256 of each stored
// artifact's current version.
func (v Show) JSON(sums map[AttemptKey]string) RunJSON {
	r := v.Run
	out := RunJSON{
		ID: string(r.ID), State: string(r.State), Input: string(r.Input), Source: r.Plan.Source,
		Mode: engine.RunModeName(r.Mode, r.DryRun), Created: r.Created, Updated: r.Updated, CostUSD: r.CostUSD,
		Halt: strOrNil(r.Halt), Steps: []StepJSON{},
	}
	if st := r.Setup; st != nil {
		out.Setup = &SetupJSON{Runner: st.Runner, RunnerCmd: st.RunnerCmd, RunnerArgs: append([]string{}, st.RunnerArgs...),
			Skills: append([]string{}, st.Skills...), Workflows: st.Workflows, Policy: st.Policy}
	}
	if state, _ := RunState(r); state == StateHalted {
		out.Halted = true
	}
	if r.Paused {
		at := r.PausedAt
		out.Paused, out.PausedBy, out.PausedAt, out.PauseReason = true, r.PausedBy, &at, r.PauseReason
	}
	for i := range r.Steps {
		out.Steps = append(out.Steps, v.stepJSON(&r.Steps[i], sums))
	}
	out.Journal = audit.Journal(v.Journal)
	return out
}

// stepJSON is step s as show --json gives it.
func (v Show) stepJSON(s *engine.Step, sums map[AttemptKey]string) StepJSON {
	js := StepJSON{N: s.N, Skill: s.Skill, Effort: s.Effort, Status: string(s.Status), Attempts: []AttemptJSON{},
		ID: s.ID, Parent: s.Parent}
	if v.Run.Input == engine.InputWorkflow {
		js.DependsOn = s.DependsOn
	}
	if l := s.Latest(); l != nil {
		js.Result = strOrNil(string(l.Result))
	}
	if d := engine.StepDecision(s); d != nil {
		js.Decision = strOrNil(string(d.Kind))
	}
	for _, a := range s.Attempts {
		js.Attempts = append(js.Attempts, attemptJSON(s.N, a, v.Data, sums))
	}
	return js
}

// attemptJSON is attempt a of step n as show --json gives it.
func attemptJSON(n int, a engine.Attempt, data string, sums map[AttemptKey]string) AttemptJSON {
	ja := AttemptJSON{N: a.N, Result: strOrNil(string(a.Result)), Reason: a.Reason, ArtifactStored: a.Artifact,
		Edited: a.Edited, CostUSD: a.CostUSD, Started: a.Started, Skill: a.Skill, ErrorKind: string(a.ErrorKind),
		RetryAt: timeOrNil(a.RetryAt), Finished: timeOrNil(a.Finished)}
	if a.File != "" {
		p := filepath.Join(data, filepath.FromSlash(a.File))
		ja.Artifact, ja.ArtifactGone = &p, ArtifactGone(data, a.File)
	}
	if h, ok := sums[AttemptKey{n, a.N}]; ok && a.Artifact {
		ja.SHA256 = &h
		ja.StoreOnly = a.File == ""
	}
	return ja
}

// timeOrNil is t, or null in JSON when t is unset.
func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func strOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
