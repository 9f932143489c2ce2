package engine

import (
	"strconv"
	"time"
)

// WorkflowSpec is a named workflow file as read: a reusable chain or graph
// of steps the team keeps in git and runs by name. PreflightWorkflow checks
// it against the installed skills and the arguments given, and turns it
// into the Plan a run executes.
type WorkflowSpec struct {
	Name        string
	Description string
	Source      string // the file, for messages
	Args        []WorkflowArg
	Steps       []WorkflowStep
}

// WorkflowArg is one declared argument.
type WorkflowArg struct {
	Name       string
	Required   bool
	Default    string
	HasDefault bool
	Line       int
}

// WorkflowStep is one step of a workflow file.
type WorkflowStep struct {
	ID        string
	Skill     string
	Prompt    string // may hold {{var}} references: args, {{steps.ID.output}}, {{run.id}}, {{today}}
	DependsOn []string
	Gate      Gate // "" means the run's mode decides

	Pre  []Condition // checked before the step runs
	Post []Condition // checked on its output

	OnError  ErrorPolicy
	Timeout  time.Duration // 0: the runner's default
	Optional bool          // a failure is recorded and the run goes on
	Fallback string        // a skill to try when this one fails
	Options  map[string]string

	// Route: the step's output names another workflow (a name, or JSON
	// {"workflow": "..."}) whose steps continue the run.
	Route bool
	// Decompose: the step's output is JSON {"tasks": [{"name", "group",
	// "depends_on"}]}, expanded into one step per task run with this skill.
	Decompose string
	// BestOf: the step runs on these runners at once, one candidate each,
	// and people pick one (see StepRules.BestOf).
	BestOf []string

	Line int // where the step starts in the file
}

// StepRules is what a workflow file says about how one step runs, beyond
// its skill and prompt. Plans and chains leave it empty: a FAILED step
// halts, nothing is retried, and nothing is checked but the rubric.
type StepRules struct {
	Pre      []Condition // checked before the agent runs; one failing fails the attempt
	Post     []Condition // checked on the agent's output; one failing fails the attempt
	OnError  ErrorPolicy
	Timeout  time.Duration // 0: the runner's default
	Optional bool          // a failure is recorded and the run goes on without the step
	Fallback string        // a skill to try once the step's own has failed (after its retries)
	Options  map[string]string
	// Route: the step's output names the workflow whose steps continue the
	// run. Decompose: the step's output is a task list, one step per task,
	// each run with this skill.
	Route     bool
	Decompose string
	// BestOf names the runners a best-of step runs on at once, one
	// candidate each (a name may come twice); fewer than two is none.
	BestOf []string
}

// Empty reports whether the rules change nothing about how a step runs.
func (r StepRules) Empty() bool {
	return len(r.Pre) == 0 && len(r.Post) == 0 && r.OnError == (ErrorPolicy{}) && r.Timeout == 0 &&
		!r.Optional && r.Fallback == "" && len(r.Options) == 0 && !r.Route && r.Decompose == "" && len(r.BestOf) == 0
}

// ErrorKind is what a workflow step does when it fails.
type ErrorKind string

const (
	OnErrorStop  ErrorKind = "stop"  // halt the run (the default)
	OnErrorRetry ErrorKind = "retry" // run it again, up to Retries times, waiting Backoff (doubling)
	OnErrorGate  ErrorKind = "gate"  // ask the team: fix and continue, or abort
)

// ErrorPolicy is a step's on_error.
type ErrorPolicy struct {
	Kind    ErrorKind
	Retries int
	Backoff time.Duration
}

// ConditionKind names a pre- or postcondition.
type ConditionKind string

const (
	CondFileExists     ConditionKind = "file-exists"     // Path exists under the working directory
	CondFileAbsent     ConditionKind = "file-absent"     // Path does not
	CondOutputContains ConditionKind = "output-contains" // the step's output contains Text
	CondOutputMatches  ConditionKind = "output-matches"  // the step's output matches the regexp Pattern
	CondJSONField      ConditionKind = "json-field"      // the JSON output's Field (dotted path) equals Value
	CondCommand        ConditionKind = "command"         // Command (argv, no shell) exits 0
)

// Condition is one pre- or postcondition of a workflow step.
type Condition struct {
	Kind    ConditionKind
	Path    string
	Text    string
	Pattern string
	Field   string
	Value   string
	Command []string
	Line    int
}

// Problem is one thing wrong with an input, and where.
type Problem struct {
	Line    int
	Message string
	// Reason is the refusal reason the problem is, when it is more
	// specific than an invalid workflow (a missing argument).
	Reason RefusalReason
}

// Problems is every problem found in one input, reported at once.
type Problems struct {
	Source string
	List   []Problem
}

func (p *Problems) Error() string {
	s := p.Source + ": "
	if len(p.List) == 1 {
		return s + problemText(p.List[0])
	}
	s += strconv.Itoa(len(p.List)) + " problems:"
	for _, x := range p.List {
		s += "\n  " + problemText(x)
	}
	return s
}

func problemText(p Problem) string {
	if p.Line > 0 {
		return "line " + strconv.Itoa(p.Line) + ": " + p.Message
	}
	return p.Message
}
