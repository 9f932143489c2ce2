package engine

import (
	"fmt"
	"strings"
)

// InputKind says what a run was started from.
type InputKind string

const (
	InputPlan     InputKind = "plan"
	InputChain    InputKind = "chain"
	InputWorkflow InputKind = "workflow"
)

// Domain is a Cynefin domain read from a plan. The empty Domain means the
// plan did not say, or said it ambiguously.
type Domain string

const (
	DomainClear       Domain = "Clear"
	DomainComplicated Domain = "Complicated"
	DomainComplex     Domain = "Complex"
	DomainChaotic     Domain = "Chaotic"
)

// Domains lists the Cynefin domains in their canonical spelling.
var Domains = []Domain{DomainClear, DomainComplicated, DomainComplex, DomainChaotic}

// Flags are the run flags a user can give on the command line, in a chain
// expression or in a Slack message.
type Flags struct {
	Auto      bool
	ForceAuto bool
	DryRun    bool
	Thread    bool
}

// Category is how a skill is executed once it resolves.
type Category string

const (
	// CategoryContent skills are delegated to the agent as they are.
	CategoryContent Category = "content"
	// CategoryDispatch skills fan out to a sub-agent; gonogo runs their
	// leaf agent's instructions inline instead.
	CategoryDispatch Category = "dispatch"
)

// Execution names the mechanism used for a step.
type Execution string

const (
	ExecDelegate   Execution = "delegate"
	ExecInlineLeaf Execution = "inline-leaf"
)

// PlanStep is one step a run will execute, in order.
type PlanStep struct {
	Skill     string
	Effort    string   // the human title of the step (a plan block's heading, empty for chains)
	PTokens   []string // plan priority tokens, as written; empty for chains
	Prompt    string   // the step's own prompt; chains use the shared context
	Category  Category
	Execution Execution
	Leaf      string // the leaf agent inlined for a dispatch skill
	Line      int    // where the step was written (1-based), 0 when unknown

	// Workflow fields. Plans and chains leave them empty.
	ID        string
	DependsOn []string
	Gate      Gate
	Rules     StepRules
}

// Block is a plan block that will not run: a manual block (shown, never
// executed) or a deferred one (runnable, but past the top-3 cap).
type Block struct {
	Effort  string
	PTokens []string
	Skill   string // empty when the block names no skill
	Prompt  string
	Reason  string
	Line    int
}

// Plan is everything a run needs to start, after pre-flight: the steps in
// order, what was surfaced but will not run, and the header facts.
type Plan struct {
	Input            InputKind
	Source           string // file name, chain expression or workflow name
	Domain           Domain
	DomainSource     string // "section-2", "section-0" or empty
	DomainAmbiguous  bool
	Confidence       string
	ConfidenceReason string
	Context          string // a chain's shared context
	// Args are a workflow's argument values, as resolved at the start; a
	// workflow a route step continues with reads them too.
	Args     map[string]string
	Flags    Flags
	Steps    []PlanStep
	Manual   []Block
	Deferred []Block
	Warnings []string
}

// RefusalReason is the machine-readable reason a run was refused before any
// step ran. The values are part of gonogo's JSON contract.
type RefusalReason string

const (
	RefuseNoSection7        RefusalReason = "no-section-7"
	RefuseNoRunnableSteps   RefusalReason = "no-runnable-steps"
	RefuseUnknownSkill      RefusalReason = "unknown-skill"
	RefuseRefusedSkill      RefusalReason = "refused-skill"
	RefuseSelfReference     RefusalReason = "self-reference"
	RefuseParseError        RefusalReason = "parse-error"
	RefuseTrailingSeparator RefusalReason = "trailing-separator"
	RefuseEmptyChain        RefusalReason = "empty-chain"
	RefuseInvalidInput      RefusalReason = "invalid-input"
	RefuseInvalidSkillName  RefusalReason = "invalid-skill-name"
	RefuseInvalidWorkflow   RefusalReason = "invalid-workflow"
	RefuseMissingArg        RefusalReason = "missing-arg"
	RefuseConflictingFlags  RefusalReason = "conflicting-flags"
	RefuseUnknownWorkflow   RefusalReason = "unknown-workflow"
	// RefuseBrokenSkill: a named skill is installed but cannot run (its
	// SKILL.md cannot be read, or its leaf agent is missing).
	RefuseBrokenSkill RefusalReason = "broken-skill"
)

// Refusal is the error returned when an input cannot start a run. It says
// what is wrong, where (Line, 1-based, when the input has lines), and for an
// unknown skill which installed names are close. A suggestion is an offer,
// never a substitution.
type Refusal struct {
	Reason      RefusalReason
	Message     string
	Source      string // file, chain or workflow the refusal is about
	Line        int
	Suggestions map[string][]string
	// Problems are, for a refused workflow, every problem found in it,
	// each with its line, in the order found: Message lists them as one
	// text, for a front end that shows a list (the Slack bot) to show them
	// one by one.
	Problems []Problem
}

func (r *Refusal) Error() string {
	var b strings.Builder
	if r.Source != "" {
		b.WriteString(r.Source)
		if r.Line > 0 {
			fmt.Fprintf(&b, ":%d", r.Line)
		}
		b.WriteString(": ")
	} else if r.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", r.Line)
	}
	b.WriteString(r.Message)
	return b.String()
}
