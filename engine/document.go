package engine

// PlanDocument is what the plan parser read from a prioritized-action-plan
// document, before any skill name is resolved. Pre-flight (PreflightPlan)
// turns it into a Plan or a Refusal.
type PlanDocument struct {
	Source       string // file name, for messages
	HasSection7  bool
	Section7Line int
	Blocks       []PlanBlock // Section 7 "To execute" blocks, in document order

	Domain          Domain // empty when absent or ambiguous
	DomainSource    string // "section-2" or "section-0" when Domain is set
	DomainAmbiguous bool   // a domain line was found but named zero or several domains
	DomainLine      int

	Confidence       string // "High", "Medium-High", ...; empty when absent
	ConfidenceReason string

	Warnings []string
}

// PlanBlock is one "#### To execute ..." block of Section 7.
type PlanBlock struct {
	Line    int    // line of the heading, 1-based
	Heading string // heading text as written
	PTokens []string
	Effort  string // the title after the P-tokens and colon
	Skill   string // the backticked name after **Skill:**, empty when absent
	Prompt  string // the prompt body, markers stripped
	// Err is set when the block cannot be classified (malformed heading,
	// no prompt body); pre-flight refuses the run naming Line.
	Err string
}

// ChainExpr is a parsed chain expression: the skill names in order, the
// flags found anywhere in it, and the shared context after the chain.
type ChainExpr struct {
	Source  string // the expression as given
	Names   []string
	Flags   Flags
	Context string
	// ExplicitContext is set when the context followed a lone "--"; an
	// implicit context starting with a skill name is likely a forgotten
	// separator, and pre-flight warns about it.
	ExplicitContext bool
}
