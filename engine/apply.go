package engine

import (
	"fmt"
	"slices"
)

// Apply folds one journal event into r. It is the only code that changes a
// run, for live transitions and for rebuilding a run from its journal alike.
// It trusts the event (transition functions validated it) but refuses an
// event out of sequence, so a gap in a journal is never papered over.
func Apply(r *Run, ev Event) error {
	s, err := eventStep(r, ev)
	if err != nil {
		return err
	}
	if err := applyEvent(r, s, ev); err != nil {
		return err
	}
	if writesArtifact(ev) {
		madeWay(r, s, ev)
	}
	applied(r, ev)
	return nil
}

// applied records on r that ev was folded into it: its sequence number,
// its time as the run's last change, and the run's state as it now
// stands (a finished run's state is the one its end recorded).
func applied(r *Run, ev Event) {
	r.Seq = ev.Seq
	if ev.Type != EvStepReminded && ev.Type != EvStepTimedOut {
		// A deadline that leaves its step waiting is no change to the
		// run: it is not its last change.
		r.Updated = ev.Time
	}
	if ev.Type != EvRunFinished && !r.Finished() {
		r.State = derivedState(r)
	}
}

// eventStep checks that ev may follow r, in this order: its sequence
// number, a run-started event first, and the step it names; it returns
// that step, or nil for an event about the whole run.
func eventStep(r *Run, ev Event) (*Step, error) {
	if ev.Seq != r.Seq+1 {
		return nil, fmt.Errorf("run %s: event %d (%s) does not follow event %d", r.ID, ev.Seq, ev.Type, r.Seq)
	}
	if ev.Type != EvRunStarted && r.ID == "" {
		return nil, fmt.Errorf("event %d (%s) before run-started", ev.Seq, ev.Type)
	}
	if ev.Step == 0 {
		return nil, nil
	}
	s := r.Step(ev.Step)
	if s == nil {
		return nil, fmt.Errorf("run %s: event %d names step %d of %d", r.ID, ev.Seq, ev.Step, len(r.Steps))
	}
	return s, nil
}

// applyEvent folds ev by its type: the start of the run, an event about
// step s, or one about the whole run.
func applyEvent(r *Run, s *Step, ev Event) error {
	switch ev.Type {
	case EvRunStarted:
		if ev.Start == nil {
			return fmt.Errorf("run-started event %d carries no run", ev.Seq)
		}
		start(r, ev)
		return nil
	case EvStepQueued, EvStepStarted, EvStepFinished, EvStepInterrupted, EvDecision, EvStepReleased,
		EvStepReminded, EvStepTimedOut, EvStepsAdded:
		return applyStepEvent(r, s, ev)
	}
	return applyRunEvent(r, ev)
}

// writesArtifact reports whether ev writes an artifact file at its step:
// a finished attempt's, an edit's or a picked candidate's.
func writesArtifact(ev Event) bool {
	if ev.File == "" {
		return false
	}
	return ev.Type == EvStepFinished || ev.Type == EvDecision && (ev.Decision == DecideEdit || ev.Decision == DecidePick)
}

// applyStepEvent folds an event about step s.
func applyStepEvent(r *Run, s *Step, ev Event) error {
	switch ev.Type {
	case EvStepQueued:
		s.Status = ev.Status
	case EvStepStarted:
		started(s, ev)
	case EvStepFinished:
		return finished(r, s, ev)
	case EvStepInterrupted:
		interrupted(r, s, ev)
	case EvDecision:
		decided(r, s, ev)
	case EvStepReleased:
		s.Status, s.Held = ev.Status, false
	case EvStepReminded, EvStepTimedOut:
		deadlinePassed(s, ev)
	case EvStepsAdded:
		if err := addSteps(r, ev.Step, ev.Added); err != nil {
			return fmt.Errorf("run %s: event %d: %w", r.ID, ev.Seq, err)
		}
	}
	return nil
}

// started applies a step-started event to its step s: a new attempt.
func started(s *Step, ev Event) {
	s.Status = ev.Status
	s.Attempts = append(s.Attempts, Attempt{N: ev.Attempt, Skill: ev.Skill, Started: ev.Time, Feedback: ev.Feedback,
		Runner: ev.Runner, Candidate: ev.Candidate})
}

// interrupted applies a step-interrupted event to its step s: the attempt
// that was lost failed, and the run halts on it.
func interrupted(r *Run, s *Step, ev Event) {
	s.Status = ev.Status
	if a := attempt(s, ev.Attempt); a != nil {
		a.Result, a.Reason, a.Finished = ResultFailed, ev.Reason, LostAt(ev)
	}
	r.Halt = ev.Reason
}

// madeWay renames, in s, the file of an earlier attempt that made way for
// the artifact ev wrote at its place.
func madeWay(r *Run, s *Step, ev Event) {
	for i := range s.Attempts {
		if a := &s.Attempts[i]; a.N != ev.Attempt && a.File == ev.File {
			a.File = ArtifactFile(r.ID, s.N, s.Skill, a.N, false)
		}
	}
}

// applyRunEvent folds an event about the whole run.
func applyRunEvent(r *Run, ev Event) error {
	switch ev.Type {
	case EvModeChanged:
		r.Mode = ev.Mode
	case EvSetupChanged:
		if ev.Setup == nil {
			return fmt.Errorf("run %s: setup-changed event %d carries no setup", r.ID, ev.Seq)
		}
		r.Setup = ev.Setup.Clone()
	case EvRunPaused:
		applyPaused(r, ev)
	case EvRunResumed:
		applyResumed(r, ev)
	case EvRunFinished:
		runFinished(r, ev)
	default:
		return fmt.Errorf("run %s: unknown event type %q", r.ID, ev.Type)
	}
	return nil
}

// runFinished folds a run-finished event: an abort settles every step
// that is not settled yet, and a finished run is no longer paused.
func runFinished(r *Run, ev Event) {
	if ev.State == RunAborted {
		for i := range r.Steps {
			if st := &r.Steps[i]; !st.Settled() && st.Status != StepAborted {
				st.Status = StepAborted
			}
		}
	}
	r.State = ev.State
	applyResumed(r, Event{})
	if ev.Reason != "" {
		r.Halt = ev.Reason
	}
}

// finished applies a step-finished event to its step s.
func finished(r *Run, s *Step, ev Event) error {
	a := attempt(s, ev.Attempt)
	if a == nil {
		return fmt.Errorf("run %s: step %d finished attempt %d it never started", r.ID, ev.Step, ev.Attempt)
	}
	a.Result, a.Reason, a.Summary = ev.Result, ev.Reason, ev.Summary
	a.Artifact, a.Size, a.File = ev.Artifact, ev.Size, ev.File
	a.CostUSD, a.Usage, a.Finished, a.Final = ev.CostUSD, ev.Usage, ev.Time, ev.Final
	a.ErrorKind, a.RetryAt, a.Retries = ev.ErrorKind, ev.RetryAt, ev.Retries
	r.CostUSD += ev.CostUSD
	s.Status, s.Held = ev.Status, ev.Held
	if ev.Skill != "" {
		s.Using = ev.Skill
	}
	if ev.Status == StepWaiting {
		r.Halt = ev.Reason
	}
	return nil
}

// deadlinePassed records on its attempt that a checkpoint's reminder, or
// its decision timeout, has been acted on.
func deadlinePassed(s *Step, ev Event) {
	a := attempt(s, ev.Attempt)
	if a == nil {
		return
	}
	if ev.Type == EvStepReminded {
		a.Reminded = ev.Time
	} else {
		a.TimedOut = ev.Time
	}
}

// decided applies a decision event to its step s.
func decided(r *Run, s *Step, ev Event) {
	s.Decisions = append(s.Decisions, Decision{
		Kind: ev.Decision, Actor: ev.Actor, Time: ev.Time,
		Step: ev.Step, Attempt: ev.Attempt, Key: ev.Key, Feedback: ev.Feedback, Candidate: ev.Candidate,
	})
	if a := attempt(s, ev.Attempt); a != nil {
		decidedAttempt(r, s, a, ev)
	}
	s.Status, s.Held = ev.Status, false
	if ev.Decision == DecideRedo && !automatic(ev.Actor) {
		// A person's redo starts the step over: its own skill, its
		// retries and its fallback again.
		s.Using = ""
	}
	r.Halt = ""
}

// decidedAttempt applies decision ev to the attempt a of s it names: a
// pick marks the candidate the step's, a skip moves its artifact out of
// the step's latest place, an edit replaces its artifact.
func decidedAttempt(r *Run, s *Step, a *Attempt, ev Event) {
	switch ev.Decision {
	case DecidePick:
		a.Picked = true
		if ev.File != "" {
			a.File = ev.File
		}
	case DecideSkip:
		if a.File != "" && a.File == ArtifactFile(r.ID, s.N, s.Skill, a.N, true) {
			a.File = ArtifactFile(r.ID, s.N, s.Skill, a.N, false)
		}
	case DecideEdit:
		edited(a, ev)
	}
}

// edited applies an edit decision's replacement artifact to a.
func edited(a *Attempt, ev Event) {
	a.Edited, a.Artifact, a.Size = true, true, ev.Size
	if ev.File != "" {
		a.File = ev.File
	}
	if ev.Summary != "" {
		a.Summary = ev.Summary
	}
}

func start(r *Run, ev Event) {
	st := ev.Start
	*r = Run{
		ID: st.ID, State: RunRunning, Input: st.Plan.Input, Mode: st.Mode,
		DryRun: st.DryRun, Thread: st.Thread, ForceAuto: st.ForceAuto, BudgetUSD: st.BudgetUSD,
		Quorum: max(st.Quorum, 1), ExcludeStarter: st.ExcludeStarter,
		Plan: clonePlan(st.Plan), StartedBy: st.StartedBy, Origin: st.Origin,
		Created: ev.Time, Updated: ev.Time, Setup: st.Setup.Clone(), Oversight: st.Oversight.Clone(),
	}
	ids := map[string]int{}
	for i, ps := range st.Plan.Steps {
		if ps.ID != "" {
			ids[ps.ID] = i + 1
		}
	}
	r.Steps = make([]Step, len(st.Plan.Steps))
	for i, ps := range st.Plan.Steps {
		s := newStep(i+1, ps)
		s.DependsOn = startDeps(ids, ps, i+1, st.Plan.Input)
		s.ThreadFrom = threadFrom(r, &s)
		r.Steps[i] = s
	}
}

// startDeps are the steps step n (ps) of a new run waits for: those its
// depends_on names by id (ids), unknown ids left out; without any, in a
// plan or a chain, the step before it, as they run one step after another
// (each checkpoint is settled before the next step starts).
func startDeps(ids map[string]int, ps PlanStep, n int, input InputKind) []int {
	var deps []int
	if len(ps.DependsOn) > 0 {
		for _, d := range ps.DependsOn {
			if m, ok := ids[d]; ok {
				deps = append(deps, m)
			}
		}
		return deps
	}
	if n > 1 && input != InputWorkflow {
		return []int{n - 1}
	}
	return nil
}

func newStep(n int, ps PlanStep) Step {
	return Step{StepDef: &StepDef{
		N: n, ID: ps.ID, Skill: ps.Skill, Effort: ps.Effort, Prompt: ps.Prompt,
		Category: ps.Category, Execution: ps.Execution, Leaf: ps.Leaf, Gate: ps.Gate,
		Rules: ps.Rules,
	}, StepState: &StepState{Status: StepPending}}
}

// threadFrom is the step whose confirmed artifact a threaded run hands to
// s: a chain's previous step; in a workflow, the one step s depends on
// (a step that joins branches, or starts one, is handed nothing: its
// prompt names the outputs it needs with {{steps.ID.output}}).
func threadFrom(r *Run, s *Step) int {
	switch {
	case !r.Thread || r.Input == InputPlan || s.N == 1:
		return 0
	case r.Input == InputWorkflow:
		if len(s.DependsOn) == 1 {
			return s.DependsOn[0]
		}
		return 0
	}
	return s.N - 1
}

// addSteps appends the steps a route or decompose step (from) added. Their
// dependencies name steps by id, theirs or the run's; every step that
// depended on from now waits for them too, so the run goes on past from
// only once its expansion is settled.
func addSteps(r *Run, from int, added []PlanStep) error {
	ids, err := addedIDs(r, added)
	if err != nil {
		return err
	}
	first := len(r.Steps) + 1
	var news []int
	for i, ps := range added {
		s := newStep(first+i, ps)
		s.Parent = from
		if s.DependsOn, err = addedDeps(ids, ps, s.N); err != nil {
			return err
		}
		if s.ThreadFrom = threadFrom(r, &s); s.ThreadFrom == from {
			// The adding step's output is a workflow name or a task
			// list, not the input of the steps it added.
			s.ThreadFrom = 0
		}
		r.Steps = append(r.Steps, s)
		news = append(news, s.N)
	}
	waitForAdded(r, from, first, news)
	return nil
}

// addedIDs maps the ids of r's steps and of the steps added to it to
// their numbers; an added step needs an id no other step has.
func addedIDs(r *Run, added []PlanStep) (map[string]int, error) {
	ids := make(map[string]int, len(r.Steps)+len(added))
	for i := range r.Steps {
		if id := r.Steps[i].ID; id != "" {
			ids[id] = r.Steps[i].N
		}
	}
	first := len(r.Steps) + 1
	for i, ps := range added {
		if _, dup := ids[ps.ID]; dup || ps.ID == "" {
			return nil, fmt.Errorf("added step %q: the id is empty or already used", ps.ID)
		}
		ids[ps.ID] = first + i
	}
	return ids, nil
}

// addedDeps resolves the depends_on ids of added step n (ps); each must
// name an earlier step of the run.
func addedDeps(ids map[string]int, ps PlanStep, n int) ([]int, error) {
	var deps []int
	for _, d := range ps.DependsOn {
		m, ok := ids[d]
		if !ok || m >= n {
			return nil, fmt.Errorf("added step %q depends on %q, which is not an earlier step of the run", ps.ID, d)
		}
		deps = append(deps, m)
	}
	return deps, nil
}

// waitForAdded makes every step before first that depended on from wait
// for the steps it added (news) too.
func waitForAdded(r *Run, from, first int, news []int) {
	for i := range first - 1 {
		s := &r.Steps[i]
		if slices.Contains(s.DependsOn, from) {
			// A new definition: the old one is shared with earlier
			// versions of the run.
			d := *s.StepDef
			d.DependsOn = append(slices.Clip(d.DependsOn), news...)
			s.StepDef = &d
			s.ThreadFrom = threadFrom(r, s)
		}
	}
}

func attempt(s *Step, n int) *Attempt {
	for i := range s.Attempts {
		if s.Attempts[i].N == n {
			return &s.Attempts[i]
		}
	}
	return nil
}

// derivedState is the state of a run that has not finished: running while
// any step is queued or running, waiting while a step needs a decision or
// the run is paused and nothing runs, running otherwise (the service is about to start the next
// step or finish the run).
func derivedState(r *Run) RunState {
	waiting := false
	for i := range r.Steps {
		switch r.Steps[i].Status {
		case StepRunning:
			return RunRunning
		case StepQueued:
			// A paused run starts no queued step (a fallback queued as
			// its step failed): it waits for the resume.
			if !r.Paused {
				return RunRunning
			}
		case StepWaiting, StepInterrupted:
			waiting = true
		}
	}
	if waiting || r.Paused {
		return RunWaiting
	}
	return RunRunning
}
