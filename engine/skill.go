package engine

import (
	"cmp"
	"errors"
	"fmt"
	"path"
	"regexp"
)

// ErrBrokenSkill is wrapped by Catalog.Skill for a skill that is installed
// but cannot be used: its SKILL.md is missing, unreadable, not UTF-8, or
// its front matter cannot be read. The Skill returned with it carries the
// Problem and the Path.
var ErrBrokenSkill = errors.New("the skill cannot be used")

// Skill is one installed skill: <skills>/<name>/SKILL.md and, optionally,
// references/TEMPLATE.md whose "##" sections describe the artifact the skill
// is expected to produce.
type Skill struct {
	Name             string
	Description      string
	Instructions     string   // SKILL.md after its front matter
	TemplateSections []string // "##" headings of references/TEMPLATE.md, in order
	Template         string   // references/TEMPLATE.md itself, to recognise unfilled stubs
	// Path is the SKILL.md file. Loaded from disk it is absolute, so a
	// prompt can point the agent at the skill's folder wherever it runs.
	Path        string
	Dir         string // the skill's folder (absolute when loaded from disk); "" in memory
	Source      string // the skills folder it was found in; "" in memory
	HasTemplate bool   // references/TEMPLATE.md exists
	HasExample  bool   // references/EXAMPLE.md exists
	// Problem says why the skill cannot be used, naming file and line where
	// there is one; "" for a usable skill.
	Problem string
	// Warnings are what was read leniently or is missing in a usable
	// skill (a front-matter value taken as text, no description), naming
	// file and line; pre-flight shows them for the skills a run uses.
	Warnings []string
}

// Catalog is the set of installed skills a run may use.
type Catalog interface {
	// Skill returns the named skill, or an error wrapping ErrNotFound.
	// A skill that is installed but cannot be used comes back with its
	// Problem set and an error wrapping ErrBrokenSkill.
	Skill(name string) (Skill, error)
	// Names lists every installed skill name, sorted.
	Names() []string
	// Agent returns the instructions of a leaf agent (agents/<name>.md), for
	// dispatch skills that are run by inlining their leaf.
	Agent(name string) (string, error)
}

var skillNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// ValidSkillName reports whether name is safe to use as a skill name: lower
// case letters, digits and dashes, starting with a letter or digit. Names are
// checked before they ever touch the file system.
func ValidSkillName(name string) bool {
	return len(name) <= 128 && skillNameRE.MatchString(name)
}

// SkillClass is what the policy says about a skill name.
type SkillClass int

const (
	ClassContent   SkillClass = iota + 1 // delegate as it is
	ClassDispatch                        // run by inlining its leaf agent
	ClassComposite                       // a whole workflow: surfaced as a manual step
	ClassRefused                         // maintenance machinery: refused
	ClassSelf                            // the orchestrator or the plan producer: refused
)

// PolicyRule matches skill names by exact name or glob pattern (path.Match).
type PolicyRule struct {
	Pattern string
	Reason  string
}

func (r PolicyRule) matches(name string) bool {
	ok, err := path.Match(r.Pattern, name)
	return err == nil && ok
}

// Policy says which skill names are refused, which are dispatch skills run
// by inlining a leaf agent, and which are composite workflows surfaced as
// manual steps. DefaultPolicy is built in; a YAML file can replace it.
type Policy struct {
	Self      []PolicyRule      // the orchestrator itself and the plan producer
	Refused   []PolicyRule      // maintenance machinery
	Dispatch  map[string]string // dispatch skill -> leaf agent name
	Composite []PolicyRule      // whole workflows, surfaced as manual
}

// DefaultPolicy is pm-skills' policy: its maintenance machinery is refused,
// the orchestrator and the plan producer never run as steps, utility-pm-critic
// runs by inlining the pm-critic agent, and workflow-* are surfaced as manual.
func DefaultPolicy() Policy {
	return Policy{
		Self: []PolicyRule{
			{Pattern: "utility-pm-workflow-orchestrator", Reason: "the orchestrator does not run itself as a step"},
			{Pattern: "foundation-prioritized-action-plan", Reason: "the plan producer hands plans in; it is not a step a run executes"},
		},
		Refused: []PolicyRule{
			{Pattern: "utility-pm-skill-*", Reason: "library-maintenance machinery, not a work product"},
			{Pattern: "utility-pm-release-conductor", Reason: "library-maintenance machinery, not a work product"},
			{Pattern: "utility-pm-changelog-curator", Reason: "library-maintenance machinery, not a work product"},
			{Pattern: "utility-update-pm-skills", Reason: "library-maintenance machinery, not a work product"},
		},
		Dispatch: map[string]string{"utility-pm-critic": "pm-critic"},
		Composite: []PolicyRule{
			{Pattern: "workflow-*", Reason: "a whole workflow: run it separately, it is not nested inside a run"},
		},
	}
}

// Classify returns the class of a skill name and, for dispatch skills, the
// leaf agent to inline; reason explains a refusal or a composite.
func (p Policy) Classify(name string) (class SkillClass, leaf, reason string) {
	// The rule lists are read in this order: a name the policy reserves
	// for gonogo itself is that, whatever else matches it.
	for _, set := range []struct {
		class SkillClass
		rules []PolicyRule
	}{{ClassSelf, p.Self}, {ClassRefused, p.Refused}, {ClassComposite, p.Composite}} {
		if r, ok := matchRule(set.rules, name); ok {
			return set.class, "", r.Reason
		}
	}
	if leaf, ok := p.Dispatch[name]; ok {
		return ClassDispatch, leaf, ""
	}
	return ClassContent, "", ""
}

// matchRule is the first of rules that matches name.
func matchRule(rules []PolicyRule, name string) (PolicyRule, bool) {
	for _, r := range rules {
		if r.matches(name) {
			return r, true
		}
	}
	return PolicyRule{}, false
}

// hasSkill reports whether cat holds a skill called name, usable or
// broken (a broken one is refused for what is wrong with it, not as
// unknown).
func hasSkill(cat Catalog, name string) bool {
	_, err := cat.Skill(name)
	return err == nil || errors.Is(err, ErrBrokenSkill)
}

// Unusable says why the skill called name cannot run as a step of a run,
// "" when it can: the policy refuses it (the orchestrator, maintenance
// machinery, a whole workflow: the policy's reason), it is broken or not
// installed (its problem), or its leaf agent is missing. It is what
// listings of the skills say (gonogo skills, doctor, completion); a plan
// or chain naming such a skill is refused or made manual for the same
// reasons.
func Unusable(name string, cat Catalog, pol Policy) string {
	class, leaf, why := pol.Classify(name)
	switch class {
	case ClassSelf, ClassRefused, ClassComposite:
		return "refused by the policy: " + why
	}
	if s, err := cat.Skill(name); err != nil {
		return cmp.Or(s.Problem, err.Error())
	}
	if class != ClassDispatch {
		return ""
	}
	if _, err := cat.Agent(leaf); err != nil {
		return fmt.Sprintf("its leaf agent %s is not installed (%v)", leaf, err)
	}
	return ""
}

// LeafMissing are the problems of the dispatch skills among skills that
// read well but cannot run, their leaf agent missing, each "DIR: why". A
// catalog's own warnings do not hold them, since the policy says which
// skills dispatch.
func LeafMissing(skills []Skill, cat Catalog, pol Policy) []string {
	var out []string
	for _, s := range skills {
		if class, _, _ := pol.Classify(s.Name); class != ClassDispatch || s.Problem != "" {
			continue
		}
		if why := Unusable(s.Name, cat, pol); why != "" {
			out = append(out, s.Dir+": "+why)
		}
	}
	return out
}

// skillWarnings returns the warnings of the skills the steps use, each
// skill once, in step order.
func skillWarnings(cat Catalog, steps []PlanStep) []string {
	var out []string
	seen := map[string]bool{}
	for _, st := range steps {
		if seen[st.Skill] {
			continue
		}
		seen[st.Skill] = true
		if s, err := cat.Skill(st.Skill); err == nil {
			out = append(out, s.Warnings...)
		}
	}
	return out
}
