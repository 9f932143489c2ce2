package terminal

import (
	"fmt"
	"io"
	"strings"

	"github.com/gonogo/gonogo/engine"
)

// Check is what gonogo check prints: the run a plan, chain or workflow
// would make, or why it is refused.
type Check struct {
	Kind engine.InputKind // what was given, should the plan not say
	// Plan carries every flag given (the intake merged them), also when
	// it was refused.
	Plan    engine.Plan
	Refusal *engine.Refusal // nil: accepted
}

// CheckJSON is gonogo check --json. The keys are part of gonogo's JSON
// contract (see the README).
type CheckJSON struct {
	Input            string          `json:"input"`
	Accepted         bool            `json:"accepted"`
	Refusal          *RefusalJSON    `json:"refusal"`
	Domain           *string         `json:"domain"`
	DomainSource     *string         `json:"domain_source"`
	DomainAmbiguous  bool            `json:"domain_ambiguous"`
	Confidence       *string         `json:"confidence"`
	ConfidenceReason *string         `json:"confidence_reason"`
	RunMode          string          `json:"run_mode"`
	Flags            FlagsJSON       `json:"flags"`
	Context          *string         `json:"context"`
	Steps            []CheckStepJSON `json:"steps"`
	Manual           []BlockJSON     `json:"manual"`
	Deferred         []BlockJSON     `json:"deferred"`
	Warnings         []string        `json:"warnings"`
	Levels           [][]string      `json:"levels,omitempty"` // workflows: steps (by id) that may run in parallel, level by level
}

// RefusalJSON is why an input was refused, in CheckJSON.
type RefusalJSON struct {
	Reason      string              `json:"reason"`
	Message     string              `json:"message"`
	Source      string              `json:"source,omitempty"`
	Line        int                 `json:"line,omitempty"`
	Suggestions map[string][]string `json:"suggestions"`
}

// FlagsJSON is the flags a run was given, in CheckJSON.
type FlagsJSON struct {
	Auto      bool `json:"auto"`
	ForceAuto bool `json:"force_auto"`
	DryRun    bool `json:"dry_run"`
	Thread    bool `json:"thread"`
}

// CheckStepJSON is one step that would run, in CheckJSON.
type CheckStepJSON struct {
	N         int      `json:"n"`
	Skill     string   `json:"skill"`
	Effort    string   `json:"effort"`
	PTokens   []string `json:"p_tokens"`
	Prompt    string   `json:"prompt"`
	Category  string   `json:"category"`
	Execution string   `json:"execution"`
	Line      int      `json:"line,omitempty"`
}

// BlockJSON is a manual or deferred block of a plan, in CheckJSON.
type BlockJSON struct {
	Effort  string   `json:"effort"`
	PTokens []string `json:"p_tokens"`
	Skill   *string  `json:"skill"`
	Prompt  string   `json:"prompt"`
	Reason  string   `json:"reason,omitempty"`
	Line    int      `json:"line,omitempty"`
}

// JSON is gonogo check --json.
func (v Check) JSON() CheckJSON {
	p, ref := v.Plan, v.Refusal
	if p.Input == "" {
		p.Input = v.Kind
	}
	flags := p.Flags
	mode, _ := engine.ResolveMode(p)
	out := CheckJSON{
		Input: string(p.Input), Accepted: ref == nil,
		Domain: strOrNil(string(p.Domain)), DomainSource: strOrNil(p.DomainSource), DomainAmbiguous: p.DomainAmbiguous,
		Confidence: strOrNil(p.Confidence), ConfidenceReason: strOrNil(p.ConfidenceReason),
		RunMode: engine.RunModeName(mode, flags.DryRun),
		Flags:   FlagsJSON{Auto: flags.Auto, ForceAuto: flags.ForceAuto, DryRun: flags.DryRun, Thread: flags.Thread},
		Context: strOrNil(p.Context), Steps: []CheckStepJSON{}, Manual: []BlockJSON{}, Deferred: []BlockJSON{},
		Warnings: nonNil(p.Warnings),
	}
	if ref != nil {
		out.Refusal = refusalJSON(ref)
		return out
	}
	for i, s := range p.Steps {
		out.Steps = append(out.Steps, CheckStepJSON{N: i + 1, Skill: s.Skill, Effort: s.Effort, PTokens: nonNil(s.PTokens),
			Prompt: s.Prompt, Category: string(s.Category), Execution: string(s.Execution), Line: s.Line})
	}
	for _, b := range p.Manual {
		out.Manual = append(out.Manual, blockJSON(b))
	}
	for _, b := range p.Deferred {
		out.Deferred = append(out.Deferred, blockJSON(b))
	}
	if p.Input == engine.InputWorkflow {
		out.Levels = engine.WorkflowLevels(p)
	}
	return out
}

// refusalJSON is why check refused its input, in CheckJSON; suggestions
// are an empty object, never null.
func refusalJSON(ref *engine.Refusal) *RefusalJSON {
	sug := ref.Suggestions
	if sug == nil {
		sug = map[string][]string{}
	}
	return &RefusalJSON{Reason: string(ref.Reason), Message: ref.Message, Source: ref.Source, Line: ref.Line, Suggestions: sug}
}

func blockJSON(b engine.Block) BlockJSON {
	return BlockJSON{Effort: b.Effort, PTokens: nonNil(b.PTokens), Skill: strOrNil(b.Skill), Prompt: b.Prompt, Reason: b.Reason, Line: b.Line}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Print writes the run a check would make, or why it was refused, for
// people.
func (v Check) Print(w io.Writer) {
	p := v.Plan
	if v.Refusal != nil {
		PrintRefusal(w, v.Kind, v.Refusal)
		return
	}
	mode, _ := engine.ResolveMode(p)
	PrintHeader(w, p, "", engine.RunModeName(mode, p.Flags.DryRun))
	printCheckSteps(w, p)
	if p.Input == engine.InputWorkflow {
		fmt.Fprintln(w, "\nLevels (steps on one level may run in parallel):")
		for i, l := range engine.WorkflowLevels(p) {
			fmt.Fprintf(w, "  %d. %s\n", i+1, strings.Join(l, ", "))
		}
	}
	printCheckLeftovers(w, p)
	if len(p.Warnings) > 0 {
		fmt.Fprintln(w, "\nWarnings:")
		for _, s := range p.Warnings {
			fmt.Fprintf(w, "  ! %s\n", s)
		}
	}
}

// printCheckSteps lists the steps a check would run, each with its leaf
// agent when it runs one inline and the start of its prompt.
func printCheckSteps(w io.Writer, p engine.Plan) {
	fmt.Fprintf(w, "\nSteps (%d):\n", len(p.Steps))
	for i, s := range p.Steps {
		fmt.Fprintf(w, "  %d. %s%s\n", i+1, s.Skill, EffortSuffix(s.Effort, s.PTokens))
		if s.Execution == engine.ExecInlineLeaf {
			fmt.Fprintf(w, "     runs its leaf agent %s inline\n", s.Leaf)
		}
		if s.Prompt != "" {
			fmt.Fprintf(w, "     %s\n", Clip(OneLine(s.Prompt), 110))
		}
	}
}

// printCheckLeftovers lists the blocks a check would not run: the manual
// ones, and those deferred past the step limit.
func printCheckLeftovers(w io.Writer, p engine.Plan) {
	if len(p.Manual) > 0 {
		fmt.Fprintf(w, "\nManual, shown and never run (%d):\n", len(p.Manual))
		for _, b := range p.Manual {
			fmt.Fprintf(w, "  - %s%s: %s\n", OrDash(b.Skill), EffortSuffix(b.Effort, b.PTokens), b.Reason)
		}
	}
	if len(p.Deferred) > 0 {
		fmt.Fprintf(w, "\nDeferred, past the first %d runnable blocks (%d):\n", engine.MaxPlanSteps, len(p.Deferred))
		for _, b := range p.Deferred {
			fmt.Fprintf(w, "  - %s%s\n", b.Skill, EffortSuffix(b.Effort, b.PTokens))
		}
	}
}

// PrintRefusal says why an input was refused and where: the file and line
// of a plan, the expression of a chain.
func PrintRefusal(w io.Writer, kind engine.InputKind, ref *engine.Refusal) {
	if kind == engine.InputChain {
		fmt.Fprintf(w, "REFUSED (%s): %s\n  chain: %s\n", ref.Reason, ref.Message, ref.Source)
	} else {
		fmt.Fprintf(w, "REFUSED (%s): %s\n", ref.Reason, ref.Error())
	}
	fmt.Fprintln(w, "Nothing was run.")
}

// PrintHeader prints what a run is: its input, mode, domain and
// confidence; id is "" for a run not started (check).
func PrintHeader(w io.Writer, p engine.Plan, id engine.RunID, mode string) {
	if id != "" {
		fmt.Fprintf(w, "gonogo run %s\n", id)
	}
	fmt.Fprintf(w, "Input:      %s %s\n", p.Input, p.Source)
	fmt.Fprintf(w, "Mode:       %s\n", mode)
	if p.Input == engine.InputPlan {
		fmt.Fprintf(w, "Domain:     %s\n", domainWords(p))
		fmt.Fprintf(w, "Confidence: %s\n", confidenceWords(p))
	}
	if p.Context != "" {
		fmt.Fprintf(w, "Context:    %s\n", Clip(OneLine(p.Context), 110))
	}
	if p.Flags.Thread {
		fmt.Fprintln(w, "Threaded:   "+threadedWords(p.Input))
	}
}

// threadedWords says which artifact each step of a threaded run receives.
func threadedWords(input engine.InputKind) string {
	if input == engine.InputWorkflow {
		return "a step that depends on exactly one step receives its confirmed artifact"
	}
	return "each step receives the previous step's confirmed artifact"
}

func domainWords(p engine.Plan) string {
	d := string(p.Domain)
	switch {
	case p.DomainAmbiguous:
		return "ambiguous (stays checkpointed)"
	case d == "":
		return "not stated (stays checkpointed)"
	}
	return d + " (" + p.DomainSource + ")"
}

func confidenceWords(p engine.Plan) string {
	c := p.Confidence
	if c == "" {
		return "not stated"
	} else if p.ConfidenceReason != "" {
		c += " - " + p.ConfidenceReason
	}
	return c
}
