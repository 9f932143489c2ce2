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
	"github.com/gonogo/gonogo/engine/audit"
	"github.com/gonogo/gonogo/internal/localapi"
	"github.com/gonogo/gonogo/internal/terminal"
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
	db, err := openReader(ctx, e, f.data)
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
	// A running run in a store nobody holds is carried out by no one: a
	// decision recorded from another shell queued its next step, which
	// waits for gonogo resume; read read-only, one with a step recorded
	// running was interrupted (see notRunning).
	_, unheld := db.(storeReader)
	states := make([]string, len(list))
	for i, s := range list {
		states[i] = string(s.State)
		if s.State == engine.RunRunning && unheld {
			states[i] = stateQueued
			if !readOnly(db) {
				continue
			}
			if r, err := db.Load(ctx, s.ID); err == nil && len(notRunning(db, r)) > 0 {
				states[i] = stateInterrupted
			}
		}
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
	e = printableOut(e) // a run's source may hold anything a person typed
	if len(list) == 0 {
		fmt.Fprintf(e.stdout, "No runs in %s.\n", f.data)
		return terminal.ExitOK
	}
	idW, stateW, stepsW := len("RUN"), len("STATE"), len("STEPS")
	for i, s := range list {
		idW, stateW = max(idW, len(s.ID)), max(stateW, len(states[i]))
		stepsW = max(stepsW, len(fmt.Sprintf("%d/%d", s.StepsDone, s.StepsTotal)))
	}
	row := fmt.Sprintf("%%-%ds  %%-%ds  %%-8s  %%-%ds  %%-16s  %%s\n", idW, stateW, stepsW)
	fmt.Fprintf(e.stdout, row, "RUN", "STATE", "INPUT", "STEPS", "UPDATED", "SOURCE")
	for i, s := range list {
		src := terminal.Clip(terminal.OneLine(s.Source), 60)
		if s.Input == engine.InputPlan {
			src = terminal.ClipLeft(terminal.OneLine(s.Source), 60) // a path: its file name matters most
		}
		fmt.Fprintf(e.stdout, row, s.ID, states[i], s.Input,
			fmt.Sprintf("%d/%d", s.StepsDone, s.StepsTotal), s.Updated.Local().Format("2006-01-02 15:04"), src)
	}
	return terminal.ExitOK
}

const (
	stateHalted      = "halted"
	stateInterrupted = "interrupted"
	statePaused      = "paused"
	// stateQueued: running in the store, carried out by no gonogo
	stateQueued = "queued"
)

// runState puts a run's standing (engine.StandingOf) into words: its
// state for runs and show --json (a run a person paused while nothing runs
// is paused, one halted on a FAILED or interrupted step is halted or
// interrupted; otherwise the run's own state), and a sentence saying
// where it stands, "halted at step 2 (deliver-prd): FAILED - the agent
// exited with code 1".
func runState(r *engine.Run) (state, detail string) {
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
		if r.Halt != "" {
			return state, "aborted (" + r.Halt + ")"
		}
		return state, state
	case engine.StandInterrupted:
		return stateInterrupted, fmt.Sprintf("halted at %s: interrupted (gonogo stopped while it ran); redo it or abort", where)
	case engine.StandHalted:
		l := st.At.Latest()
		return stateHalted, fmt.Sprintf("halted at %s: %s", where, engine.ResultText(l.Result, l.Reason))
	case engine.StandRetrying:
		if st.RateLimited {
			return state, "paused: " + r.PauseReason
		}
		return state, "waiting: a step waits for its automatic retry"
	case engine.StandWaiting:
		if st.At == nil {
			return state, "waiting: a step waits for its automatic retry"
		}
		if l := st.At.Latest(); l != nil {
			return state, fmt.Sprintf("waiting for a decision at %s: %s", where, engine.ResultText(l.Result, l.Reason))
		}
		return state, "waiting for a decision at " + where
	}
	return state, state
}

// pausedState is how a run a person paused stands: still running its
// steps, or waiting (at their checkpoints, or before its next step).
func pausedState(r *engine.Run, st engine.Standing) (state, detail string) {
	who := fmt.Sprintf("paused by %s at %s", r.PausedBy, r.PausedAt.Local().Format("2006-01-02 15:04:05"))
	if st.Stand == engine.StandRunning {
		return string(r.State), who + ": the running steps finish and wait at a checkpoint; no step starts"
	}
	if s := st.At; s != nil && len(st.Waiting) > 0 {
		return statePaused, fmt.Sprintf("%s; waiting for a decision at step %d (%s), or resume", who, s.N, s.Skill)
	}
	return statePaused, who + "; no step starts until it is resumed"
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
	Setup   *jsonSetup    `json:"setup"`
	Steps   []jsonStep    `json:"steps"`
	Journal []audit.Event `json:"journal"`
}

type jsonSetup struct {
	Runner     string   `json:"runner"`
	RunnerCmd  string   `json:"runner_cmd"`
	RunnerArgs []string `json:"runner_args"`
	Skills     []string `json:"skills"`
	Workflows  string   `json:"workflows"`
	Policy     string   `json:"policy"`
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

func newShowCmd(a *cli) *cobra.Command {
	f := &runFlags{}
	var art artifactFlags
	c := &cobra.Command{
		Use:   "show [flags] RUN",
		Short: "Show one run: its steps, attempts and journal",
		Long: `Show one run from the store: its steps, every attempt, and the journal of what
happened. RUN is an id from gonogo runs. With --artifact N, print step N's artifact
instead, byte for byte: the step's current one (the edit, if it was edited), or with
--attempt K that attempt's (on a terminal, its control characters are shown, not
obeyed). It works while another gonogo holds the data directory.

Exit codes: 0 shown, 1 the step or attempt has no artifact, 2 no such run, step or
attempt, or another usage or I/O error.`,
		RunE: a.action(f, func(ctx context.Context, e env, cfg config, f *runFlags) int {
			return cmdShow(ctx, e, cfg, f, art)
		}),
		ValidArgsFunction: a.completeRunIDs(f),
	}
	a.addJSONFlag(c, f)
	a.addDataFlag(c, f)
	c.Flags().Var(numberFlag{&art.step, "step"}, "artifact", "print step `N`'s artifact, byte for byte")
	c.Flags().Var(numberFlag{&art.attempt, "attempt"}, "attempt", "with --artifact: attempt `K`'s artifact instead of the current one")
	a.completeFlag(c, "artifact", cobra.NoFileCompletions)
	a.completeFlag(c, "attempt", cobra.NoFileCompletions)
	return c
}

// artifactFlags are show's --artifact N and --attempt K.
type artifactFlags struct{ step, attempt int }

func (a artifactFlags) check(json bool) error {
	switch {
	case a.attempt != 0 && a.step == 0:
		return usagef("--attempt goes with --artifact N")
	case a.step != 0 && json:
		return usagef("--artifact prints the artifact itself; --json is for the run")
	}
	return nil
}

func cmdShow(ctx context.Context, e env, cfg config, f *runFlags, art artifactFlags) int {
	if len(f.positional) != 1 {
		return fail(e, "show", usagef("expected one run id (see gonogo runs)"))
	}
	if err := art.check(f.json); err != nil {
		return fail(e, "show", err)
	}
	db, err := openReader(ctx, e, f.data)
	if err != nil {
		return fail(e, "show", err)
	}
	defer db.Close()
	id := engine.RunID(f.positional[0])
	if art.step != 0 {
		return showArtifact(ctx, e, db, f.data, id, art.step, art.attempt)
	}
	r, journal, err := db.RunWithJournal(ctx, id)
	if err != nil {
		if errors.Is(err, engine.ErrNotFound) {
			return fail(e, "show", fmt.Errorf("no run %s in %s (see gonogo runs)", id, f.data))
		}
		return fail(e, "show", err)
	}
	lost := notRunning(db, r)
	if f.json {
		sums, err := db.ArtifactSums(ctx, id)
		if err != nil {
			return fail(e, "show", err)
		}
		printNotRunning(e.stderr, lost)
		return writeJSON(e, "show", runJSON(r, journal, f.data, sums))
	}
	e = printableOut(e) // the agent's words are shown, never obeyed
	printHeader(e.stdout, r.Plan, r.ID, engine.RunModeName(r.Mode, r.DryRun))
	_, detail := runState(r)
	fmt.Fprintf(e.stdout, "State:      %s\n", detail)
	printNotRunning(e.stdout, lost)
	if _, unheld := db.(storeReader); unheld && r.State == engine.RunRunning && len(lost) == 0 {
		fmt.Fprintf(e.stdout, "Queued:     no gonogo carries it out now; its next step runs with gonogo resume\n")
		fmt.Fprintf(e.stdout, "Continue:   gonogo resume %s%s\n", r.ID, terminal.DataFlag(f.data))
	}
	if r.State == engine.RunWaiting {
		if c, held := db.(*localapi.Client); held && !r.PausedByPerson() {
			// resume cannot open a held data directory; decide can (and
			// resume of a paused run goes to its holder).
			fmt.Fprintf(e.stdout, "Continue:   gonogo decide %s approve|skip|redo|abort%s (%s holds the data directory)\n", r.ID, terminal.DataFlag(f.data), c.Describe())
		} else {
			fmt.Fprintf(e.stdout, "Continue:   gonogo resume %s%s\n", r.ID, terminal.DataFlag(f.data))
		}
	}
	if r.CostUSD > 0 {
		fmt.Fprintf(e.stdout, "Cost:       $%.2f\n", r.CostUSD)
	}
	if st := r.Setup; st != nil {
		agent := st.Runner
		if st.RunnerCmd != "" {
			agent += " (" + st.RunnerCmd + ")"
		}
		fmt.Fprintf(e.stdout, "Runner:     %s\n", agent)
		if len(st.Skills) > 0 {
			fmt.Fprintf(e.stdout, "Skills:     %s\n", strings.Join(st.Skills, ", "))
		}
	}
	fmt.Fprintln(e.stdout)
	terminal.PrintSteps(e.stdout, r, f.data)
	terminal.PrintLeftovers(e.stdout, r.Plan)
	fmt.Fprintln(e.stdout, "\nJournal:")
	for _, ev := range journal {
		fmt.Fprintf(e.stdout, "  %4d %s %-17s %s\n", ev.Seq, ev.Time.Local().Format("2006-01-02 15:04:05"), ev.Type, eventDetail(r, ev))
	}
	return terminal.ExitOK
}

// showArtifact prints the artifact of step n of a run to stdout, byte for
// byte: the step's current one (its latest attempt's, the edit if it was
// edited), or attempt k's. A run, step or attempt that does not exist is
// exit 2; one that exists and has no artifact is exit 1.
func showArtifact(ctx context.Context, e env, db runReader, data string, id engine.RunID, n, k int) int {
	r, err := db.Load(ctx, id)
	if errors.Is(err, engine.ErrNotFound) {
		return fail(e, "show", fmt.Errorf("no run %s in %s (see gonogo runs)", id, data))
	}
	if err != nil {
		return fail(e, "show", err)
	}
	a, why, err := artifactAttempt(r, n, k)
	if err != nil {
		return fail(e, "show", err)
	}
	if a == nil {
		fmt.Fprintf(e.stderr, "gonogo show: %s\n", why)
		return terminal.ExitRefused
	}
	body, err := db.Artifact(ctx, id, n, a.N)
	if errors.Is(err, engine.ErrNotFound) {
		fmt.Fprintf(e.stderr, "gonogo show: step %d attempt %d of run %s has no artifact stored\n", n, a.N, id)
		return terminal.ExitRefused
	}
	if err != nil {
		return fail(e, "show", err)
	}
	if terminal.IsTerminal(e.stdout) {
		// On a terminal the artifact is read, not kept: its control
		// sequences are shown, never obeyed. Redirected, it is the bytes
		// as stored.
		body = []byte(engine.Printable(string(body)))
	}
	if _, err := e.stdout.Write(body); err != nil {
		return fail(e, "show", err)
	}
	return terminal.ExitOK
}

// artifactAttempt finds the attempt whose artifact show --artifact n
// [--attempt k] prints. It returns an error for a step or attempt that does
// not exist, and a nil attempt with the reason for one without an artifact.
func artifactAttempt(r *engine.Run, n, k int) (*engine.Attempt, string, error) {
	s := r.Step(n)
	if s == nil {
		return nil, "", usagef("run %s has no step %d (it has %d)", r.ID, n, len(r.Steps))
	}
	with := attemptsWithArtifact(s)
	if k != 0 {
		a := terminal.AttemptOf(s, k)
		switch {
		case a == nil:
			return nil, "", usagef("step %d of run %s has no attempt %d (it has %d)", n, r.ID, k, len(s.Attempts))
		case !a.Artifact:
			return nil, fmt.Sprintf("step %d attempt %d has no artifact (%s)%s", n, k, terminal.OrDash(string(a.Result)), with), nil
		}
		return a, "", nil
	}
	l := s.Latest()
	switch {
	case l == nil:
		return nil, fmt.Sprintf("step %d has not run (%s): no artifact", n, s.Status), nil
	case s.Status == engine.StepSkipped:
		return nil, fmt.Sprintf("step %d was skipped: it has no current artifact%s", n, with), nil
	case !l.Artifact:
		return nil, fmt.Sprintf("step %d attempt %d has no artifact (%s)%s", n, l.N, terminal.OrDash(string(l.Result)), with), nil
	}
	return l, "", nil
}

// attemptsWithArtifact names the attempts of s that have an artifact, for
// a message about one that has none.
func attemptsWithArtifact(s *engine.Step) string {
	var ks []string
	for _, a := range s.Attempts {
		if a.Artifact {
			ks = append(ks, fmt.Sprintf("--attempt %d", a.N))
		}
	}
	if len(ks) == 0 {
		return ""
	}
	return "; stored: " + strings.Join(ks, ", ")
}

func eventDetail(r *engine.Run, ev engine.Event) string {
	s := r.Step(ev.Step)
	switch ev.Type {
	case engine.EvRunStarted:
		return fmt.Sprintf("%s %s by %s", r.Input, terminal.Clip(terminal.OneLine(r.Plan.Source), 60), ev.Actor)
	case engine.EvStepStarted, engine.EvStepQueued:
		return fmt.Sprintf("%s, attempt %d", terminal.StepTitle(r, s), ev.Attempt)
	case engine.EvStepFinished:
		return fmt.Sprintf("%s, attempt %d: %s", terminal.StepTitle(r, s), ev.Attempt, terminal.Clip(engine.ResultText(ev.Result, ev.Reason), 120))
	case engine.EvStepInterrupted:
		if ev.Lost.IsZero() {
			return fmt.Sprintf("%s, attempt %d: interrupted", terminal.StepTitle(r, s), ev.Attempt)
		}
		return fmt.Sprintf("%s, attempt %d: interrupted; last sign of life %s", terminal.StepTitle(r, s), ev.Attempt,
			ev.Lost.Local().Format("2006-01-02 15:04:05"))
	case engine.EvDecision:
		return fmt.Sprintf("%s, attempt %d: %s by %s", terminal.StepTitle(r, s), ev.Attempt, ev.Decision, ev.Actor)
	case engine.EvModeChanged:
		return string(ev.Mode)
	case engine.EvRunPaused:
		return fmt.Sprintf("by %s: %s", ev.Actor, ev.Reason)
	case engine.EvRunResumed:
		if ev.Mode != "" {
			return fmt.Sprintf("by %s, now %s", ev.Actor, ev.Mode)
		}
		return "by " + ev.Actor
	case engine.EvStepReleased:
		return fmt.Sprintf("%s, attempt %d: went on as the run resumed", terminal.StepTitle(r, s), ev.Attempt)
	case engine.EvStepReminded:
		return fmt.Sprintf("%s, attempt %d: the approvers were reminded", terminal.StepTitle(r, s), ev.Attempt)
	case engine.EvStepTimedOut:
		return fmt.Sprintf("%s, attempt %d: %s", terminal.StepTitle(r, s), ev.Attempt, ev.Reason)
	case engine.EvSetupChanged:
		parts := make([]string, 0, len(ev.Changes))
		for _, c := range ev.Changes {
			parts = append(parts, c.String())
		}
		return fmt.Sprintf("%s by %s", strings.Join(parts, "; "), ev.Actor)
	case engine.EvStepsAdded:
		ids := make([]string, 0, len(ev.Added))
		for _, a := range ev.Added {
			ids = append(ids, a.ID)
		}
		return fmt.Sprintf("%s added %d steps: %s", terminal.StepTitle(r, s), len(ev.Added), terminal.Clip(strings.Join(ids, ", "), 100))
	case engine.EvRunFinished:
		if ev.Reason != "" {
			return string(ev.State) + ": " + ev.Reason
		}
		return string(ev.State)
	}
	return ""
}

func runJSON(r *engine.Run, journal []engine.Event, data string, sums []storage.ArtifactSum) jsonRun {
	sha := map[[2]int]string{}
	for _, s := range sums {
		sha[[2]int{s.Step, s.Attempt}] = s.SHA256
	}
	out := jsonRun{
		ID: string(r.ID), State: string(r.State), Input: string(r.Input), Source: r.Plan.Source,
		Mode: engine.RunModeName(r.Mode, r.DryRun), Created: r.Created, Updated: r.Updated, CostUSD: r.CostUSD,
		Halt: strOrNil(r.Halt), Steps: []jsonStep{},
	}
	if st := r.Setup; st != nil {
		out.Setup = &jsonSetup{Runner: st.Runner, RunnerCmd: st.RunnerCmd, RunnerArgs: append([]string{}, st.RunnerArgs...),
			Skills: append([]string{}, st.Skills...), Workflows: st.Workflows, Policy: st.Policy}
	}
	if state, _ := runState(r); state == stateHalted {
		out.Halted = true
	}
	if r.Paused {
		at := r.PausedAt
		out.Paused, out.PausedBy, out.PausedAt, out.PauseReason = true, r.PausedBy, &at, r.PauseReason
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
		if d := engine.StepDecision(s); d != nil {
			js.Decision = strOrNil(string(d.Kind))
		}
		for _, a := range s.Attempts {
			ja := jsonAttempt{N: a.N, Result: strOrNil(string(a.Result)), Reason: a.Reason, ArtifactStored: a.Artifact,
				Edited: a.Edited, CostUSD: a.CostUSD, Started: a.Started, Skill: a.Skill, ErrorKind: string(a.ErrorKind)}
			if !a.RetryAt.IsZero() {
				t := a.RetryAt
				ja.RetryAt = &t
			}
			if a.File != "" {
				p := filepath.Join(data, filepath.FromSlash(a.File))
				ja.Artifact, ja.ArtifactGone = &p, terminal.ArtifactGone(data, a.File)
			}
			if h, ok := sha[[2]int{s.N, a.N}]; ok && a.Artifact {
				ja.SHA256 = &h
				ja.StoreOnly = a.File == ""
			}
			if !a.Finished.IsZero() {
				t := a.Finished
				ja.Finished = &t
			}
			js.Attempts = append(js.Attempts, ja)
		}
		out.Steps = append(out.Steps, js)
	}
	out.Journal = audit.Journal(journal)
	return out
}

func writeJSON(e env, cmd string, v any) int {
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fail(e, cmd, err)
	}
	return terminal.ExitOK
}
