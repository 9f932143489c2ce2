package engine

import (
	"strings"
	"time"
)

// RunID identifies a run. IDs sort by creation time.
type RunID string

// WellFormed reports whether id has the form NewRunID gives run ids: the
// UTC date and time (YYYYMMDD-HHMMSS), a dash and lower-case hex digits.
// Anything else names no run, and is never looked up (a path segment, a
// button's value).
func (id RunID) WellFormed() bool {
	const stamp = len("20060102-150405-")
	s := string(id)
	if len(s) <= stamp || len(s) > stamp+32 || s[8] != '-' || s[15] != '-' {
		return false
	}
	return allDigits(s[:8]) && allDigits(s[9:15]) && lowerHex(s[stamp:])
}

// allDigits reports whether s holds only the digits 0-9.
func allDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// lowerHex reports whether s holds only lower-case hex digits.
func lowerHex(s string) bool {
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Origin is where a run was started and where its messages go: a Slack
// channel and thread, or nothing for the terminal.
type Origin struct {
	Channel string
	Thread  string // the thread's root message ts
}

// Usage is the token usage an agent reported for one attempt.
type Usage struct {
	InputTokens  int64
	OutputTokens int64
	CacheRead    int64
	CacheCreate  int64
	Turns        int
}

// Run is one execution of a plan, a chain or a workflow. It keeps its own
// copy of the plan it started with, so editing the source document later
// changes nothing about the run.
type Run struct {
	ID        RunID
	State     RunState
	Input     InputKind
	Mode      Mode
	DryRun    bool
	Thread    bool // chain steps receive the previous step's confirmed artifact
	ForceAuto bool
	BudgetUSD float64 // 0: no budget
	// Quorum is how many distinct approvals a checkpoint needs (at least 1);
	// with ExcludeStarter the starter's own approval does not count.
	Quorum         int
	ExcludeStarter bool
	Plan           Plan
	Steps          []Step
	StartedBy      string
	Origin         Origin
	Created        time.Time
	Updated        time.Time
	CostUSD        float64
	Seq            uint64 // sequence number of the last journal event applied
	Halt           string // why the run is waiting on a step it cannot pass by itself
	// Paused says no new step starts until the run is resumed; steps
	// already running finish and wait at a checkpoint. PausedBy is who
	// paused it (RateLimitActor while an agent's rate limit is waited out),
	// PauseReason why, PausedAt when.
	Paused      bool
	PausedBy    string
	PauseReason string
	PausedAt    time.Time
	// Setup is how the run's steps are carried out, as recorded when it
	// started and changed since on resume; nil for a run recorded before
	// setups were kept.
	Setup *Setup
	// Oversight is who may decide besides the starter and how long a
	// checkpoint may wait, as recorded when the run started; nil for a run
	// recorded before runs kept it (see ApproversOf).
	Oversight *Oversight
}

// Oversight is what the front end that starts a run sets for its
// checkpoints, recorded with the run so that every front end and every
// restart applies the same: who may decide besides the starter, and the
// deadlines of a checkpoint left waiting.
type Oversight struct {
	// Approvers may decide besides the starter: people, or groups that
	// the service's Members callback says a person belongs to.
	Approvers []string
	// RemindAfter is how long a checkpoint waits before gonogo reminds the
	// approvers once; DecisionTimeout, before it acts as OnTimeout says.
	// Zero is never.
	RemindAfter     time.Duration
	DecisionTimeout time.Duration
	OnTimeout       TimeoutAction
}

// Clone returns a copy that shares nothing with o; nil stays nil.
func (o *Oversight) Clone() *Oversight {
	if o == nil {
		return nil
	}
	c := *o
	c.Approvers = append([]string(nil), o.Approvers...)
	return &c
}

// Step is one step of a run with every attempt at it: what the step is
// (its StepDef) and how it stands (its StepState). Both are shared by
// the versions of a run that did not change them: Fold gives a new run
// new states only for the steps its events touch, so a transition costs
// the same in a run of 3 steps and of 300. Never change a step of a run
// the engine handed out; Clone makes one that may be changed.
type Step struct {
	*StepDef
	*StepState
}

// StepState is how a step stands: its status and its attempts and
// decisions so far.
type StepState struct {
	Status StepStatus
	// Using is the skill the step's next attempt runs when it is not Skill:
	// its fallback, once Skill has failed.
	Using string
	// Held says the step waits at a checkpoint only because the run was
	// paused when it finished: resuming in a mode that would have let it
	// go on lets it go on.
	Held      bool
	Attempts  []Attempt
	Decisions []Decision
}

// StepDef is what a step is, fixed when the step is made. Every version of
// a run shares it (Fold copies a run's steps, not their definitions), so it
// is never changed in place: a change makes a new StepDef.
type StepDef struct {
	N          int // 1-based
	ID         string
	Skill      string
	Effort     string
	Prompt     string
	Category   Category
	Execution  Execution
	Leaf       string
	DependsOn  []int // steps (1-based) that must be settled before this one starts
	ThreadFrom int   // step whose confirmed artifact is handed in; 0 for none
	Gate       Gate
	Rules      StepRules // a workflow step's conditions, error policy, timeout and the like
	// Parent is the step (1-based) whose output added this one: a route
	// step's workflow, or a decompose step's task. 0 for steps of the plan.
	Parent int
}

// Attempt is one execution of a step.
type Attempt struct {
	N        int    // 1-based
	Skill    string // the skill this attempt ran, when not the step's own (a fallback)
	Result   Result
	Reason   string
	Summary  string // one line describing the artifact
	Feedback string // reviewer feedback the attempt was started with (redo)
	// Runner is the runner a candidate of a best-of step ran on, and
	// Candidate its number (1-based) among the candidates started with it;
	// "" and 0 for an attempt that is no candidate. Picked says people (or
	// guarded auto) took this candidate as the step's artifact.
	Runner    string
	Candidate int
	Picked    bool
	Artifact  bool // an artifact is stored for this attempt
	Edited    bool // the artifact was replaced by a person
	// Final says no retry, fallback or giving up followed this failed
	// attempt: a person cancelled it, or the run went over its budget.
	Final bool
	// ErrorKind is the kind of error the agent reported ("" for none).
	ErrorKind AgentErrorKind
	// RetryAt is when gonogo redoes the step by itself after the agent's
	// rate limit or overload; Retries is how many such retries it makes
	// at most. Zero when no such retry follows this attempt.
	RetryAt  time.Time
	Retries  int
	Size     int    // artifact size in bytes
	File     string // artifact path relative to the data dir, empty when not on disk
	CostUSD  float64
	Usage    Usage
	Started  time.Time
	Finished time.Time

	// Reminded is when gonogo reminded the approvers of this attempt's
	// checkpoint, TimedOut when its decision timed out and it kept
	// waiting; zero when it has not.
	Reminded time.Time
	TimedOut time.Time
}

// Decision is one person's go / no-go on one step attempt.
type Decision struct {
	Kind     DecisionKind
	Actor    string
	Time     time.Time
	Step     int
	Attempt  int
	Key      string // external idempotency key
	Feedback string // redo feedback; for a pick, the picker's optional note
	// Candidate is, for a pick, the number of the candidate picked (whose
	// attempt is Attempt).
	Candidate int
}

// Event is one entry of a run's append-only journal. Seq numbers are
// contiguous from 1. Every change to a run is an event; Apply folds events
// into a Run, so the journal alone rebuilds it.
type Event struct {
	Seq     uint64
	Time    time.Time
	Type    EventType
	Step    int // 1-based; 0 for run-level events
	Attempt int

	Actor    string       // who acted, for decisions and starts
	Decision DecisionKind // for EvDecision
	Key      string       // idempotency key of a decision
	Feedback string

	Status   StepStatus // the step's status after the event, for step events
	Result   Result     // for EvStepFinished
	Reason   string
	Summary  string
	Size     int    // artifact bytes stored with this event
	Artifact bool   // the event stored an artifact (finished, or an edit)
	File     string // where that artifact was written on disk, if it was
	CostUSD  float64
	Usage    Usage

	Skill string // the skill an attempt runs (EvStepStarted) or will run next (EvStepFinished, a fallback)
	// Runner and Candidate: for the start of a best-of step's candidate,
	// the runner it runs on and its number; for a pick, the number of the
	// candidate picked (see Attempt).
	Runner    string
	Candidate int
	Final     bool // for EvStepFinished: see Attempt.Final
	// For EvStepFinished: the agent's error kind, and the rate-limit retry
	// that follows (see Attempt); Held: the step waits only because the
	// run is paused (see StepState.Held).
	ErrorKind AgentErrorKind
	RetryAt   time.Time
	Retries   int
	Held      bool
	// Lost is, for EvStepInterrupted, when the attempt was lost as far as
	// gonogo knows: its last sign of life (see Recover), which the event's
	// own Time, when the loss was found and recorded, may be hours after.
	// Zero in events recorded before gonogo kept it, and when the loss was
	// seen as it happened (a worker lost): Time is then when.
	Lost time.Time
	// Agent is, for EvStepFinished, the agent that ran the attempt (see
	// Finished.Agent); "" in events recorded before gonogo kept it.
	Agent string
	Added []PlanStep // for EvStepsAdded: the steps a route or decompose step's output added

	Mode  Mode      // for EvModeChanged
	State RunState  // for EvRunFinished: completed or aborted
	Start *RunStart // for EvRunStarted

	Setup   *Setup        // for EvSetupChanged: the setup the run goes on with
	Changes []SetupChange // for EvSetupChanged: what changed, from what to what
}

// RunStart is everything a run-started event records: enough to rebuild the
// run from nothing.
type RunStart struct {
	ID        RunID
	Plan      Plan
	Mode      Mode
	DryRun    bool
	Thread    bool
	ForceAuto bool
	BudgetUSD float64
	StartedBy string
	Origin    Origin
	// Quorum and ExcludeStarter as in Run.
	Quorum         int
	ExcludeStarter bool
	// Setup is how the run's steps are carried out; nil when the starter
	// did not say.
	Setup *Setup
	// Oversight as in Run: nil in journals recorded before runs kept it.
	Oversight *Oversight
}

// Step returns the 1-based step n, or nil.
func (r *Run) Step(n int) *Step {
	if n < 1 || n > len(r.Steps) {
		return nil
	}
	return &r.Steps[n-1]
}

// Latest returns the attempt the step stands on, or nil before the
// first: its latest, or, once a candidate of its latest best-of round is
// picked, that candidate, whose artifact is then the step's (what a
// thread hands on, what {{steps.ID.output}} reads).
func (s *Step) Latest() *Attempt {
	if len(s.Attempts) == 0 {
		return nil
	}
	for _, i := range s.round() {
		if s.Attempts[i].Picked {
			return &s.Attempts[i]
		}
	}
	return &s.Attempts[len(s.Attempts)-1]
}

// LastDecision returns the step's last decision on any attempt, or nil:
// the end of its history (the redo whose feedback the next attempt takes),
// not what the step reads as decided, which is StepDecision.
func (s *Step) LastDecision() *Decision {
	if len(s.Decisions) == 0 {
		return nil
	}
	return &s.Decisions[len(s.Decisions)-1]
}

// Settled reports whether a step needs nothing more: done or skipped.
func (s *Step) Settled() bool {
	return s.Status == StepDone || s.Status == StepSkipped
}

// Finished reports whether the run has ended.
func (r *Run) Finished() bool {
	return r.State == RunCompleted || r.State == RunAborted
}

// StepsDone counts settled steps.
func (r *Run) StepsDone() int {
	n := 0
	for i := range r.Steps {
		if r.Steps[i].Settled() {
			n++
		}
	}
	return n
}

// Summary is the run's line in a listing.
func (r *Run) Summary() RunSummary {
	return RunSummary{
		ID: r.ID, State: r.State, Input: r.Input, Source: r.Plan.Source, Origin: r.Origin,
		Created: r.Created, Updated: r.Updated, StepsTotal: len(r.Steps), StepsDone: r.StepsDone(),
	}
}

// NewestFirst orders run summaries for a listing, newest first: by when
// each run was created, then by id. A run id says its creation time only
// to the second (NewRunID), so runs started in the same second are told
// apart by Created; a summary that has no Created (recorded before
// summaries kept it) is placed by its id.
func NewestFirst(a, b RunSummary) int {
	if !a.Created.IsZero() && !b.Created.IsZero() {
		if c := b.Created.Compare(a.Created); c != 0 {
			return c
		}
	}
	return strings.Compare(string(b.ID), string(a.ID))
}

// Clone returns a deep copy, so a caller can hand a run to another goroutine.
func (r *Run) Clone() *Run {
	c := *r
	c.Plan = clonePlan(r.Plan)
	c.Setup = r.Setup.Clone()
	c.Oversight = r.Oversight.Clone()
	c.Steps = make([]Step, len(r.Steps))
	for i, s := range r.Steps {
		if s.StepDef != nil {
			d := *s.StepDef
			d.DependsOn = append([]int(nil), d.DependsOn...)
			s.StepDef = &d
		}
		if s.StepState != nil {
			st := s.StepState.clone()
			s.StepState = &st
		}
		c.Steps[i] = s
	}
	return &c
}

func clonePlan(p Plan) Plan {
	p.Steps = append([]PlanStep(nil), p.Steps...)
	for i := range p.Steps {
		p.Steps[i].PTokens = append([]string(nil), p.Steps[i].PTokens...)
		p.Steps[i].DependsOn = append([]string(nil), p.Steps[i].DependsOn...)
	}
	p.Manual = append([]Block(nil), p.Manual...)
	p.Deferred = append([]Block(nil), p.Deferred...)
	p.Warnings = append([]string(nil), p.Warnings...)
	return p
}

// clone copies a step state with its own attempts and decisions.
func (s *StepState) clone() StepState {
	c := *s
	c.Attempts = append([]Attempt(nil), s.Attempts...)
	c.Decisions = append([]Decision(nil), s.Decisions...)
	return c
}
