package engine

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// PreflightWorkflow checks a workflow against the installed skills, the
// policy and the arguments given, and turns it into the Plan a run
// executes. Nothing runs unless every check passes; every problem found is
// reported at once as a *Problems (Source: the workflow's file), each with
// the line of the step or argument it is about (0 for an argument given on
// the command line that the workflow does not declare):
//
//   - a step, fallback or decompose skill that is not installed (close names
//     are offered, never substituted), that the policy refuses or that names
//     the orchestrator or plan producer, a whole workflow (workflow-*: run it
//     separately), or a dispatch skill whose leaf agent is missing;
//   - a missing or repeated step id, a dependency on no step, a dependency
//     cycle, printed in the order the run would flow: "a -> b -> a" means b
//     depends on a and a on b;
//   - a required argument not given (or given blank), an argument given that
//     the workflow does not declare, an argument value holding "{{";
//   - a {{...}} reference in a prompt that is malformed or unclosed, names no
//     declared argument, or reads {{steps.ID.output}} of a step that is not
//     upstream of it (a dependency, directly or through other steps);
//   - for specs not read from a file: a gate, error policy or condition the
//     run could not carry out (an unknown gate, retry without a count, a
//     pattern that does not compile, a command with no program).
//
// Problems come in line order.
//
// Arguments are interpolated now: a step's Prompt holds their values (a
// declared argument not given takes its default, or ""). The references the
// run fills in are kept as written: {{steps.ID.output}} (the confirmed
// output of an upstream step), {{run.id}} and {{today}}. Since argument
// values may not contain "{{", nothing a person types can become a
// reference.
//
// Steps come out in a topological order that keeps file order wherever the
// dependencies allow: the next step is always the earliest one in the file
// whose dependencies are all placed. Each PlanStep's Effort is its id.
func PreflightWorkflow(w WorkflowSpec, args map[string]string, context string, flags Flags, cat Catalog, pol Policy) (Plan, error) {
	p := Plan{Input: InputWorkflow, Source: w.Name, Context: context, Flags: flags}
	c := &wfCheck{w: w, cat: cat, pol: pol, ids: map[string]int{}}
	c.graph()
	values := c.args(args)
	resolved := c.steps()
	c.cycles()
	c.upstream()
	prompts := c.prompts(values)
	if len(w.Steps) == 0 {
		c.add(0, "the workflow has no steps")
	}
	if len(c.problems) > 0 {
		return p, c.refusal()
	}
	for _, i := range c.order() {
		p.Steps = append(p.Steps, wfPlanStep(w.Steps[i], resolved[i], prompts[i]))
	}
	p.Args = values
	p.Warnings = append(p.Warnings, wfWarnings(p, cat)...)
	return p, nil
}

// wfWarnings are what pre-flight notes about a workflow it accepts as p:
// its skills' warnings, --thread on steps that branch or join, and --auto
// the run does not take.
func wfWarnings(p Plan, cat Catalog) []string {
	out := skillWarnings(cat, p.Steps)
	if p.Flags.Thread && !wfLinear(p.Steps) {
		out = append(out, "--thread hands a step the artifact of the one step it depends on; "+
			"a step that joins branches gets none: {{steps.ID.output}} in its prompt names the outputs it needs")
	}
	if _, warn := ResolveMode(p); warn != "" {
		out = append(out, warn)
	}
	return out
}

// steps checks each step's skills (its own, its fallback, its decompose
// skill) and its conditions; it returns the resolved step of each whose
// own skill can run, the zero PlanStep for the others.
func (c *wfCheck) steps() []PlanStep {
	resolved := make([]PlanStep, len(c.w.Steps))
	for i, s := range c.w.Steps {
		what := fmt.Sprintf("step %q", s.ID)
		ps, ok := c.skill(s.Skill, what, s.Line, true)
		if ok {
			resolved[i] = ps
		}
		if s.Fallback != "" {
			c.skill(s.Fallback, what+" fallback", s.Line, false)
		}
		if s.Decompose != "" {
			c.skill(s.Decompose, what+" decompose", s.Line, false)
		}
		c.conditions(s)
	}
	return resolved
}

// prompts checks each step's prompt and returns them with the argument
// values filled in.
func (c *wfCheck) prompts(values map[string]string) []string {
	prompts := make([]string, len(c.w.Steps))
	for i, s := range c.w.Steps {
		prompts[i] = c.prompt(i, s, values)
	}
	return prompts
}

// refusal is every problem found, in line order, under the workflow's
// file (its name when it was not read from a file).
func (c *wfCheck) refusal() *Problems {
	sort.SliceStable(c.problems, func(i, j int) bool { return c.problems[i].Line < c.problems[j].Line })
	src := c.w.Source
	if src == "" {
		src = c.w.Name
	}
	return &Problems{Source: src, List: c.problems}
}

// wfPlanStep is the step a run executes for workflow step s, whose skill
// resolved to ps, with its prompt interpolated.
func wfPlanStep(s WorkflowStep, ps PlanStep, prompt string) PlanStep {
	ps.ID, ps.Effort, ps.Prompt, ps.Line, ps.Gate = s.ID, s.ID, prompt, s.Line, s.Gate
	ps.DependsOn = slices.Clone(s.DependsOn)
	ps.Rules = StepRules{
		Pre: s.Pre, Post: s.Post, OnError: s.OnError, Timeout: s.Timeout, Optional: s.Optional,
		Fallback: s.Fallback, Options: s.Options, Route: s.Route, Decompose: s.Decompose,
		BestOf: slices.Clone(s.BestOf),
	}
	return ps
}

// WorkflowLevels groups a plan's steps into levels that may run in
// parallel: level 0 holds the steps with no dependency, level k the steps
// whose latest dependency is on level k-1. Steps are named by id and keep
// plan order within a level; p.Steps must be in topological order, as
// PreflightWorkflow returns them. Plans and chains run one step after
// another, so each of their steps (named by skill) is a level of its own.
func WorkflowLevels(p Plan) [][]string {
	var levels [][]string
	level := map[string]int{}
	for i, s := range p.Steps {
		l, name := i, s.Skill
		if p.Input == InputWorkflow {
			l, name = 0, s.ID
			for _, d := range s.DependsOn {
				if ld, ok := level[d]; ok {
					l = max(l, ld+1)
				}
			}
			level[s.ID] = l
		}
		for len(levels) <= l {
			levels = append(levels, nil)
		}
		levels[l] = append(levels[l], name)
	}
	return levels
}

// wfCheck collects the problems of one workflow and the graph it forms.
type wfCheck struct {
	w        WorkflowSpec
	cat      Catalog
	pol      Policy
	problems []Problem

	ids   map[string]int // step id -> index, first occurrence
	deps  [][]int        // step -> the steps it depends on
	up    [][]uint64     // step -> bit set of the steps upstream of it
	comps [][]int        // strongly connected components, dependencies first
}

func (c *wfCheck) add(line int, format string, args ...any) {
	c.problems = append(c.problems, Problem{Line: line, Message: fmt.Sprintf(format, args...)})
}

// graph indexes the step ids and reads the dependencies.
func (c *wfCheck) graph() {
	c.indexIDs()
	c.readDeps()
}

// indexIDs maps each step id to its step; a missing or repeated id is a
// problem.
func (c *wfCheck) indexIDs() {
	for i, s := range c.w.Steps {
		switch at, dup := c.ids[s.ID]; {
		case s.ID == "":
			c.add(s.Line, "step %d has no id", i+1)
		case dup:
			c.add(s.Line, "step %q: the id is already used by the step at line %d", s.ID, c.w.Steps[at].Line)
		default:
			c.ids[s.ID] = i
		}
	}
}

// readDeps reads each step's dependencies, once each; one naming no step
// is a problem.
func (c *wfCheck) readDeps() {
	c.deps = make([][]int, len(c.w.Steps))
	for i, s := range c.w.Steps {
		for _, d := range s.DependsOn {
			j, ok := c.ids[d]
			if !ok {
				c.add(s.Line, "step %q depends on %q, which is not a step of this workflow%s", s.ID, d, wfDidYouMean(d, c.idNames(), 1))
				continue
			}
			if !slices.Contains(c.deps[i], j) {
				c.deps[i] = append(c.deps[i], j)
			}
		}
	}
}

func (c *wfCheck) idNames() []string {
	names := make([]string, 0, len(c.ids))
	for id := range c.ids {
		names = append(names, id)
	}
	sort.Strings(names)
	return names
}

// wfDidYouMean offers the names close to name: up to three skill names,
// as a chain does, but only the closest id or argument, since short names
// are all close to each other.
func wfDidYouMean(name string, names []string, most int) string {
	s := Suggest(name, names)
	if len(s) == 0 {
		return ""
	}
	return fmt.Sprintf(" (did you mean `%s`?)", strings.Join(s[:min(most, len(s))], "`, `"))
}

// args resolves the argument values: given, else the default, else "".
func (c *wfCheck) args(given map[string]string) map[string]string {
	values := map[string]string{}
	declared := make([]string, 0, len(c.w.Args))
	for _, a := range c.w.Args {
		declared = append(declared, a.Name)
		c.arg(a, given, values)
	}
	c.undeclared(given, declared)
	return values
}

// arg sets the value of declared argument a in values: given, else its
// default; a required argument not given, or given blank, is a problem,
// and so is a value holding "{{".
func (c *wfCheck) arg(a WorkflowArg, given, values map[string]string) {
	v, ok := given[a.Name]
	switch {
	case ok && a.Required && strings.TrimSpace(v) == "":
		c.add(a.Line, "argument %q is required and was given empty", a.Name)
	case ok:
		if strings.Contains(v, "{{") {
			c.add(a.Line, "the value of argument %q contains \"{{\", which prompts read as a reference; leave it out", a.Name)
		}
		values[a.Name] = v
	case a.Required:
		c.add(a.Line, "missing required argument %q: give it with --arg %s=VALUE", a.Name, a.Name)
		c.problems[len(c.problems)-1].Reason = RefuseMissingArg
	default:
		values[a.Name] = a.Default
	}
}

// undeclared reports each argument given that the workflow does not
// declare, in name order.
func (c *wfCheck) undeclared(given map[string]string, declared []string) {
	extra := make([]string, 0, len(given))
	for name := range given {
		if !slices.Contains(declared, name) {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	for _, name := range extra {
		if len(declared) == 0 {
			c.add(0, "argument %q was given, but the workflow takes no arguments", name)
			continue
		}
		c.add(0, "argument %q was given, but the workflow does not declare it%s; its arguments are %s",
			name, wfDidYouMean(name, declared, 1), strings.Join(declared, ", "))
	}
}

// skill checks one skill name; runnable says the name is a step's own
// skill, whose resolved PlanStep (category, execution, leaf) is returned.
func (c *wfCheck) skill(name, what string, line int, runnable bool) (PlanStep, bool) {
	if name == "" {
		if runnable {
			c.add(line, "%s names no skill", what)
		}
		return PlanStep{}, false
	}
	if !c.knownSkill(name, what, line) {
		return PlanStep{}, false
	}
	ps, reason, kind := resolve(name, c.cat, c.pol)
	if reason != "" {
		c.add(line, "%s: %s", what, reason)
		if kind == RefuseBrokenSkill {
			c.problems[len(c.problems)-1].Reason = kind
		}
		return PlanStep{}, false
	}
	return ps, true
}

// knownSkill reports whether name is a skill name the policy allows and
// the catalog holds; each that is not is a problem.
func (c *wfCheck) knownSkill(name, what string, line int) bool {
	if !ValidSkillName(name) {
		c.add(line, "%s: %q is not a valid skill name (lower-case letters, digits and dashes)", what, name)
		return false
	}
	if class, _, why := c.pol.Classify(name); classRefusals[class] != "" {
		c.add(line, "%s names `%s`: %s", what, name, why)
		return false
	}
	if !hasSkill(c.cat, name) {
		c.add(line, "%s: `%s` is not an installed skill%s", what, name, wfDidYouMean(name, c.cat.Names(), 3))
		return false
	}
	return true
}

// conditions re-checks what the run relies on, for specs not read by the
// parser (a saved chain, a test): the gate, the error policy and the
// conditions.
func (c *wfCheck) conditions(s WorkflowStep) {
	if s.Gate != "" {
		if _, err := ParseGate(string(s.Gate)); err != nil {
			c.add(s.Line, "step %q: gate %q is not one of always, never, on-failure, on-empty", s.ID, s.Gate)
		}
	}
	if e := s.OnError; !wfOnErrorRunnable(e) {
		c.add(s.Line, "step %q: on_error %s with %d retries and backoff %s cannot be carried out", s.ID, e.Kind, e.Retries, e.Backoff)
	}
	for _, cond := range append(slices.Clone(s.Pre), s.Post...) {
		c.condition(s, cond)
	}
}

// wfOnErrorRunnable reports whether the run can carry out error policy
// e: none, stop, gate, or retry with at least one retry and a backoff
// that is not negative.
func wfOnErrorRunnable(e ErrorPolicy) bool {
	switch e.Kind {
	case "", OnErrorStop, OnErrorGate:
		return true
	case OnErrorRetry:
		return e.Retries >= 1 && e.Backoff >= 0
	}
	return false
}

// condition checks one pre or post condition of step s: a known kind, a
// pattern that compiles, a command with a program.
func (c *wfCheck) condition(s WorkflowStep, cond Condition) {
	line := cond.Line
	if line == 0 {
		line = s.Line
	}
	switch cond.Kind {
	case CondOutputMatches:
		if _, err := regexp.Compile(cond.Pattern); err != nil {
			c.add(line, "step %q: output_matches %q is not a valid regular expression: %v", s.ID, cond.Pattern, err)
		}
	case CondCommand:
		if len(cond.Command) == 0 || cond.Command[0] == "" {
			c.add(line, "step %q: a command condition needs a program to run", s.ID)
		}
	case CondFileExists, CondFileAbsent, CondOutputContains, CondJSONField:
	default:
		c.add(line, "step %q: unknown condition %q", s.ID, cond.Kind)
	}
}

// prompt checks the references of a step's prompt and returns it with the
// arguments filled in.
func (c *wfCheck) prompt(i int, s WorkflowStep, values map[string]string) string {
	refs, bad := promptRefs(s.Prompt)
	for _, b := range bad {
		c.add(s.Line, "step %q prompt: %s", s.ID, b)
	}
	declared := make([]string, 0, len(c.w.Args))
	for _, a := range c.w.Args {
		declared = append(declared, a.Name)
	}
	seen := map[string]bool{}
	for _, r := range refs {
		if seen[r.name] {
			continue
		}
		seen[r.name] = true
		c.checkRef(i, s, r.name, declared)
	}
	return expandPromptRefs(s.Prompt, func(name string) (string, bool) {
		if slices.Contains(declared, name) {
			v, ok := values[name]
			return v, ok
		}
		return "", false
	})
}

func (c *wfCheck) checkRef(i int, s WorkflowStep, name string, declared []string) {
	switch {
	case name == "run.id" || name == "today":
	case strings.HasPrefix(name, "steps."):
		c.checkStepRef(i, s, name)
	case strings.HasPrefix(name, "run."):
		c.add(s.Line, "step %q prompt: {{%s}} is not a reference gonogo knows: the run's own values are {{run.id}} and {{today}}", s.ID, name)
	case !slices.Contains(declared, name):
		msg := fmt.Sprintf("step %q prompt: {{%s}} is not a declared argument%s", s.ID, name, wfDidYouMean(name, declared, 1))
		if len(declared) == 0 {
			msg += "; declare it under args:"
		} else {
			msg += "; the arguments are " + strings.Join(declared, ", ")
		}
		c.add(s.Line, "%s", msg)
	}
}

// checkStepRef checks a {{steps.ID.output}} reference in the prompt of
// step i (s): it must name the output of another step upstream of it.
func (c *wfCheck) checkStepRef(i int, s WorkflowStep, name string) {
	id, rest, _ := strings.Cut(strings.TrimPrefix(name, "steps."), ".")
	if rest != "output" {
		c.add(s.Line, "step %q prompt: {{%s}} is not a reference gonogo knows: a step's output is {{steps.ID.output}}", s.ID, name)
		return
	}
	j, ok := c.ids[id]
	switch {
	case !ok:
		c.add(s.Line, "step %q prompt: {{%s}} names no step of this workflow%s", s.ID, name, wfDidYouMean(id, c.idNames(), 1))
	case j == i:
		c.add(s.Line, "step %q prompt: {{%s}} is the step's own output, which does not exist while it runs", s.ID, name)
	case !c.isUpstream(i, j):
		c.add(s.Line, "step %q prompt: {{%s}} reads step %q, which is not upstream of %q: add %q to its depends_on (directly or through a step it depends on)",
			s.ID, name, id, s.ID, id)
	}
}

// A reference in a prompt is "{{", optional spaces, a name of letters,
// digits, '_', '-' and '.', optional spaces, "}}". There is no escape: a
// prompt cannot hold a literal "{{".
var promptRefNameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

type promptRef struct {
	start, end int // byte offsets of "{{" and just past "}}"
	name       string
}

// promptRefs returns the well-formed references of a prompt, in order, and
// a description of each malformed one.
func promptRefs(s string) (refs []promptRef, bad []string) {
	for off := 0; ; {
		i := strings.Index(s[off:], "{{")
		if i < 0 {
			return refs, bad
		}
		start := off + i
		j := strings.Index(s[start+2:], "}}")
		if j < 0 {
			bad = append(bad, fmt.Sprintf("%q is never closed with \"}}\"", wfClip(s[start:], 30)))
			return refs, bad
		}
		end := start + 2 + j + 2
		name := strings.Trim(s[start+2:end-2], " \t")
		if !promptRefNameRE.MatchString(name) {
			bad = append(bad, fmt.Sprintf("%q is not a reference: write {{ARG}}, {{steps.ID.output}}, {{run.id}} or {{today}}", wfClip(s[start:end], 40)))
		} else {
			refs = append(refs, promptRef{start: start, end: end, name: name})
		}
		off = end
	}
}

// expandPromptRefs replaces each reference that value knows, in one pass:
// text put in is never read again as a reference. Other references, and
// anything malformed, are left as written.
func expandPromptRefs(s string, value func(name string) (string, bool)) string {
	refs, _ := promptRefs(s)
	if len(refs) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, r := range refs {
		v, ok := value(r.name)
		if !ok {
			continue
		}
		b.WriteString(s[last:r.start])
		b.WriteString(v)
		last = r.end
	}
	b.WriteString(s[last:])
	return b.String()
}

func wfClip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-3]) + "..."
}
