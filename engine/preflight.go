package engine

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// MaxPlanSteps is how many runnable plan blocks a run takes, in document
// order; later runnable blocks are deferred and reported, not run.
const MaxPlanSteps = 3

// chainWarnAfter is the chain length past which gonogo warns that each
// step's context adds up.
const chainWarnAfter = 3

// PreflightPlan turns a parsed plan document into the Plan a run executes,
// or refuses it before any step runs: no Section 7, a block that cannot be
// parsed, a step naming the orchestrator or the plan producer, a maintenance
// skill, no runnable block at all, or --thread (a plan's blocks are
// independent: none takes another's artifact). A block whose skill does not resolve,
// is a placeholder or a whole workflow is manual: shown, never run.
func PreflightPlan(doc PlanDocument, cat Catalog, pol Policy, flags Flags) (Plan, error) {
	p := Plan{
		Input: InputPlan, Source: doc.Source, Domain: doc.Domain, DomainSource: doc.DomainSource,
		DomainAmbiguous: doc.DomainAmbiguous, Confidence: doc.Confidence, ConfidenceReason: doc.ConfidenceReason,
		Flags: flags, Warnings: append([]string(nil), doc.Warnings...),
	}
	if err := refusePlanDoc(doc, pol, flags); err != nil {
		return p, err
	}
	for _, b := range doc.Blocks {
		placeBlock(&p, b, cat, pol)
	}
	if len(p.Steps) == 0 {
		msg := "no runnable step: Section 7 has no `#### To execute ...` block"
		if n := len(p.Manual); n > 0 {
			msg = fmt.Sprintf("no runnable step: all %d Section 7 blocks are manual (%s)", n, p.Manual[0].Reason)
		}
		line := doc.Section7Line
		return p, &Refusal{Reason: RefuseNoRunnableSteps, Source: doc.Source, Line: line, Message: msg}
	}
	p.Warnings = append(p.Warnings, skillWarnings(cat, p.Steps)...)
	if w := domainWarning(p, doc); w != "" {
		p.Warnings = append(p.Warnings, w)
	}
	return p, nil
}

// refusePlanDoc refuses a plan document whole, in this order: no Section
// 7, a block that cannot be parsed, --thread, then a block naming the
// orchestrator, the plan producer or a maintenance skill.
func refusePlanDoc(doc PlanDocument, pol Policy, flags Flags) error {
	if !doc.HasSection7 {
		return &Refusal{Reason: RefuseNoSection7, Source: doc.Source,
			Message: "no Section 7 found: gonogo runs the `#### To execute ...` blocks under a `## Section 7` (or `### Section 7.`) heading"}
	}
	for _, b := range doc.Blocks {
		if b.Err != "" {
			return &Refusal{Reason: RefuseParseError, Source: doc.Source, Line: b.Line,
				Message: fmt.Sprintf("Section 7 block %q: %s", b.Heading, b.Err)}
		}
	}
	if flags.Thread {
		// Section 7 blocks are independent by the parse contract: each
		// carries its own prompt, and none takes another's artifact.
		return &Refusal{Reason: RefuseInvalidInput, Source: doc.Source,
			Message: "--thread is for chains and workflows. A plan's Section 7 blocks are independent steps, " +
				"so no step takes another's artifact; run the plan without --thread, or run its skills as a chain with --thread"}
	}
	return refusedBlock(doc, pol)
}

// refusedBlock refuses the first block naming a skill the policy refuses
// outright. Refusals come first and cover every block, past the cap too: a
// plan that names the orchestrator anywhere in Section 7 is refused whole.
func refusedBlock(doc PlanDocument, pol Policy) error {
	for _, b := range doc.Blocks {
		if !ValidSkillName(b.Skill) {
			continue
		}
		class, _, why := pol.Classify(b.Skill)
		if reason, ok := classRefusals[class]; ok {
			return &Refusal{Reason: reason, Source: doc.Source, Line: b.Line,
				Message: fmt.Sprintf("Section 7 block %q names `%s`: %s", b.Heading, b.Skill, why)}
		}
	}
	return nil
}

// classRefusals are the skill classes that refuse a plan, a chain or a
// workflow naming them anywhere, and the reason each is refused with.
var classRefusals = map[SkillClass]RefusalReason{
	ClassSelf:    RefuseSelfReference,
	ClassRefused: RefuseRefusedSkill,
}

// placeBlock adds block b to p: a step while p has fewer than
// MaxPlanSteps, else deferred; manual when its skill cannot run.
func placeBlock(p *Plan, b PlanBlock, cat Catalog, pol Policy) {
	block := Block{Effort: b.Effort, PTokens: append([]string(nil), b.PTokens...), Skill: b.Skill, Prompt: b.Prompt, Line: b.Line}
	ps, reason, _ := resolve(b.Skill, cat, pol)
	if reason != "" {
		block.Reason = reason
		if !ValidSkillName(b.Skill) {
			block.Skill = ""
		}
		p.Manual = append(p.Manual, block)
		return
	}
	if len(p.Steps) >= MaxPlanSteps {
		block.Reason = fmt.Sprintf("past the first %d runnable blocks", MaxPlanSteps)
		p.Deferred = append(p.Deferred, block)
		return
	}
	ps.Effort, ps.PTokens, ps.Prompt, ps.Line = b.Effort, block.PTokens, b.Prompt, b.Line
	p.Steps = append(p.Steps, ps)
}

// domainWarning is the warning about the plan's Cynefin domain, if any:
// the --auto warning when there is one, as it names the domain problem
// already; else an ambiguous or missing domain and what the run does
// about it.
func domainWarning(p Plan, doc PlanDocument) string {
	floor := "; the run stays checkpointed"
	if p.Flags.ForceAuto {
		floor = "; --force-auto runs it guarded-auto anyway"
	}
	_, autoWarning := ResolveMode(p)
	switch {
	case autoWarning != "":
		return autoWarning
	case doc.DomainAmbiguous:
		return "the plan's Cynefin domain is ambiguous" + floor
	case doc.Domain == "":
		return "the plan names no Cynefin domain" + floor
	}
	return ""
}

// resolve classifies one skill name: a runnable step, or why it cannot run
// (a plan shows that block as manual; a chain or workflow is refused with
// kind as the reason).
func resolve(name string, cat Catalog, pol Policy) (ps PlanStep, why string, kind RefusalReason) {
	switch {
	case name == "":
		return PlanStep{}, "names no skill", RefuseEmptyChain
	case !ValidSkillName(name):
		return PlanStep{}, fmt.Sprintf("`%s` is a placeholder, not a skill name", name), RefuseInvalidSkillName
	}
	class, leaf, reason := pol.Classify(name)
	if class == ClassComposite {
		return PlanStep{}, fmt.Sprintf("`%s` is %s", name, reason), RefuseRefusedSkill
	}
	if s, err := cat.Skill(name); err != nil {
		why, kind := skillProblem(name, s, err, cat)
		return PlanStep{}, why, kind
	}
	ps = PlanStep{Skill: name, Category: CategoryContent, Execution: ExecDelegate}
	if class == ClassDispatch {
		if _, err := cat.Agent(leaf); err != nil {
			return PlanStep{}, fmt.Sprintf("`%s` runs its leaf agent `%s`, which is not installed (%v)", name, leaf, err), RefuseBrokenSkill
		}
		ps.Category, ps.Execution, ps.Leaf = CategoryDispatch, ExecInlineLeaf, leaf
	}
	return ps, "", ""
}

// skillProblem says why the catalog could not give skill name (s, err):
// it is broken, or not installed, with the closest installed name offered.
func skillProblem(name string, s Skill, err error, cat Catalog) (string, RefusalReason) {
	if errors.Is(err, ErrBrokenSkill) {
		return brokenReason(name, s, err), RefuseBrokenSkill
	}
	why := fmt.Sprintf("`%s` is not an installed skill", name)
	if s := Suggest(name, cat.Names()); len(s) > 0 {
		why += fmt.Sprintf(" (did you mean `%s`?)", s[0])
	}
	return why, RefuseUnknownSkill
}

// brokenReason says why an installed skill cannot be used, naming its file.
func brokenReason(name string, s Skill, err error) string {
	if s.Problem != "" {
		return fmt.Sprintf("`%s` cannot be used: %s", name, s.Problem)
	}
	return fmt.Sprintf("`%s` cannot be used: %v", name, err)
}

// PreflightChain turns a parsed chain into the Plan a run executes. Every
// name must be an installed skill, exactly: one miss refuses the whole chain
// and offers close names, never substitutes them. Refused and self-naming
// skills refuse the chain too.
func PreflightChain(c ChainExpr, cat Catalog, pol Policy) (Plan, error) {
	p := Plan{Input: InputChain, Source: c.Source, Context: c.Context, Flags: c.Flags}
	if len(c.Names) == 0 {
		return p, &Refusal{Reason: RefuseEmptyChain, Source: c.Source, Line: 1, Message: "the chain names no skill"}
	}
	if err := checkChainNames(c, cat, pol); err != nil {
		return p, err
	}
	// A chain is all or nothing: a step that cannot run (a broken skill, a
	// dispatch skill without its leaf agent, a whole workflow) refuses it,
	// rather than running the others around a gap.
	for _, name := range c.Names {
		ps, reason, kind := resolve(name, cat, pol)
		if reason != "" {
			return p, &Refusal{Reason: kind, Source: c.Source, Line: 1, Message: reason}
		}
		p.Steps = append(p.Steps, ps)
	}
	p.Warnings = append(p.Warnings, chainWarnings(c, p, cat)...)
	return p, nil
}

// checkChainNames refuses a chain for the first name that can never be a
// step (not a skill name, or one the policy refuses), else for all the
// names that are not installed at once, each with close names offered.
func checkChainNames(c ChainExpr, cat Catalog, pol Policy) error {
	for _, name := range c.Names {
		if err := chainNameRefusal(c, name, pol); err != nil {
			return err
		}
	}
	unknown, suggestions := unknownSkills(c.Names, cat)
	if len(unknown) > 0 {
		return unknownSkillsRefusal(c, unknown, suggestions)
	}
	return nil
}

// unknownSkills are the names the catalog does not hold, each once in the
// order written, with the close names offered for each.
func unknownSkills(names []string, cat Catalog) ([]string, map[string][]string) {
	var unknown []string
	suggestions := map[string][]string{}
	for _, name := range names {
		if _, seen := suggestions[name]; seen || hasSkill(cat, name) {
			continue
		}
		unknown = append(unknown, name)
		suggestions[name] = Suggest(name, cat.Names())
	}
	return unknown, suggestions
}

// chainNameRefusal refuses a name that is not a skill name, or that the
// policy refuses or reserves for gonogo itself; nil otherwise.
func chainNameRefusal(c ChainExpr, name string, pol Policy) error {
	if !ValidSkillName(name) {
		return &Refusal{Reason: RefuseInvalidSkillName, Source: c.Source, Line: 1,
			Message: fmt.Sprintf("%q is not a valid skill name (lower-case letters, digits and dashes)", name)}
	}
	class, _, why := pol.Classify(name)
	if reason, ok := classRefusals[class]; ok {
		return &Refusal{Reason: reason, Source: c.Source, Line: 1, Message: fmt.Sprintf("`%s`: %s", name, why)}
	}
	return nil
}

// unknownSkillsRefusal names every skill of a chain that is not installed,
// in the order written, each with the close names suggestions holds.
func unknownSkillsRefusal(c ChainExpr, unknown []string, suggestions map[string][]string) *Refusal {
	var parts []string
	for _, n := range unknown {
		part := fmt.Sprintf("`%s`", n)
		if s := suggestions[n]; len(s) > 0 {
			part += fmt.Sprintf(" (did you mean `%s`?)", strings.Join(s, "`, `"))
		}
		parts = append(parts, part)
	}
	noun := "unknown skill"
	if len(unknown) > 1 {
		noun = "unknown skills"
	}
	return &Refusal{Reason: RefuseUnknownSkill, Source: c.Source, Line: 1, Suggestions: suggestions,
		Message: fmt.Sprintf("%s %s", noun, strings.Join(parts, ", "))}
}

// chainWarnings are what pre-flight notes about a chain it accepts as p.
func chainWarnings(c ChainExpr, p Plan, cat Catalog) []string {
	var out []string
	if w := forgottenArrow(c, cat); w != "" {
		out = append(out, w)
	}
	out = append(out, skillWarnings(cat, p.Steps)...)
	if len(p.Steps) > chainWarnAfter {
		out = append(out, fmt.Sprintf("%d steps: every step's context adds up; past %d steps consider splitting the chain", len(p.Steps), chainWarnAfter))
	}
	if strings.TrimSpace(c.Context) == "" {
		out = append(out, "no shared context: each step gets only its skill's instructions")
	}
	if _, w := ResolveMode(p); w != "" {
		out = append(out, w)
	}
	return out
}

// forgottenArrow warns when a chain's implicit context starts with
// installed skill names ("deliver-prd deliver-user-stories -- x"): the
// chain still ends at the first name not followed by a separator, as the
// contract says, but the writer most likely forgot an arrow.
func forgottenArrow(c ChainExpr, cat Catalog) string {
	if c.ExplicitContext || len(c.Names) == 0 {
		return ""
	}
	more := leadingSkills(c.Context, cat)
	if len(more) == 0 {
		return ""
	}
	names := append(append([]string(nil), c.Names...), more...)
	return fmt.Sprintf("the context starts with `%s`, an installed skill, so it is read as context, not as a step: did you mean `%s`?",
		strings.Join(more, " "), strings.Join(names, " -> "))
}

// leadingSkills are the installed skill names context starts with, quotes
// and commas trimmed.
func leadingSkills(context string, cat Catalog) []string {
	var more []string
	for _, w := range strings.Fields(context) {
		w = strings.Trim(w, "\"'`“”‘’,")
		if !ValidSkillName(w) {
			break
		}
		if !hasSkill(cat, w) {
			break
		}
		more = append(more, w)
	}
	return more
}

// Suggest returns up to three installed names close to name, closest first:
// names containing it (or contained in it), and names within a small edit
// distance. It only offers; callers never substitute.
func Suggest(name string, names []string) []string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	limit := max(2, len(name)/3)
	for _, n := range names {
		if d, ok := suggestDistance(name, n, limit); ok {
			cs = append(cs, cand{n, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].name < cs[j].name
	})
	var out []string
	for i := 0; i < len(cs) && i < 3; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

// suggestDistance ranks n as a suggestion for name: within limit edits
// first, then names containing it (or contained in it), then names
// sharing a dash-separated word; ok is false for a name too far to offer.
func suggestDistance(name, n string, limit int) (d int, ok bool) {
	d = editDistance(name, n)
	switch {
	case d <= limit:
	case len(name) >= 3 && (strings.Contains(n, name) || strings.Contains(name, n)):
		d = limit + 1 + abs(len(n)-len(name))
	case sharesSegment(name, n):
		d = limit + 20 + d
	default:
		return 0, false
	}
	return d, true
}

func sharesSegment(a, b string) bool {
	for _, x := range strings.Split(a, "-") {
		if len(x) < 4 {
			continue
		}
		for _, y := range strings.Split(b, "-") {
			if x == y {
				return true
			}
		}
	}
	return false
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
