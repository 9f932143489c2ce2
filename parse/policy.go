package parse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/gonogo/gonogo/engine"
)

// Policy reads a skill policy file. The file replaces engine.DefaultPolicy
// as a whole (it is not merged with it), so it must list everything the team
// wants refused. name is the file name used in messages.
//
// The file is one YAML mapping with up to four keys, each optional:
//
//	# Never run as steps: the orchestrator and the plan producer.
//	self:
//	  - pattern: utility-pm-workflow-orchestrator
//	    reason: the orchestrator does not run itself as a step
//	  - foundation-prioritized-action-plan   # a plain name or glob: no reason
//	# Maintenance machinery: refused.
//	refused:
//	  - pattern: "utility-pm-skill-*"          # quote globs: YAML reads a bare * as an alias
//	    reason: library-maintenance machinery, not a work product
//	# Dispatch skills and the leaf agent (agents/<leaf>.md) gonogo inlines.
//	dispatch:
//	  utility-pm-critic: pm-critic
//	# Whole workflows: surfaced as manual steps.
//	composite:
//	  - pattern: "workflow-*"
//	    reason: a whole workflow; run it separately
//
// A rule is a plain string (the pattern) or a mapping with "pattern" and an
// optional "reason". Patterns are exact names or path.Match globs. Dispatch
// keys and leaf names are exact names.
//
// Mistakes are errors naming the file and line, never skipped: an unknown or
// repeated key, a value of the wrong type, an invalid glob, a plain pattern
// that is not a valid skill name (it could never match), and a dispatch
// entry that a self, refused or composite rule shadows (it could never
// apply). An empty file is an error too; write {} for a policy that refuses
// nothing.
func Policy(src []byte, name string) (engine.Policy, error) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return engine.Policy{}, fmt.Errorf("%s: the policy file is empty; write {} for a policy that refuses nothing, or leave GONOGO_POLICY unset for the built-in policy", name)
		}
		return engine.Policy{}, policyYAMLError(src, name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return engine.Policy{}, policyYAMLError(src, name, err)
		}
		return engine.Policy{}, policyErrorf(name, extra.Line, "a policy file holds one YAML document; a second one starts here")
	}
	p := policyReader{file: name}
	return p.read(&doc)
}

// LoadPolicy reads the policy file at path; an empty path is the built-in
// engine.DefaultPolicy.
func LoadPolicy(path string) (engine.Policy, error) {
	if path == "" {
		return engine.DefaultPolicy(), nil
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return engine.Policy{}, fmt.Errorf("reading policy file: %w", err)
	}
	return Policy(src, path)
}

type policyReader struct {
	file string
}

// policyRuleList is one of the rule lists (self, refused, composite) as
// read, with where each rule was written.
type policyRuleList struct {
	rules []engine.PolicyRule
	lines []int
}

// policyRuleKeys are the keys holding rule lists, in the order Classify
// checks them.
var policyRuleKeys = []string{"self", "refused", "composite"}

// policyRead is what the keys of a policy file hold, before the checks
// that need all of them.
type policyRead struct {
	lists         map[string]*policyRuleList
	dispatch      map[string]string
	dispatchLines map[string]int // where each dispatch entry was written
}

func (p *policyReader) read(doc *yaml.Node) (engine.Policy, error) {
	root := catalogDocRoot(doc)
	if root.Kind != yaml.MappingNode {
		return engine.Policy{}, policyErrorf(p.file, root.Line, "a policy must be a mapping with the keys self, refused, dispatch and composite, not a %s", catalogKindName(root))
	}
	got := policyRead{lists: map[string]*policyRuleList{}, dispatchLines: map[string]int{}}
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], catalogDeref(root.Content[i+1])
		if err := p.keyName(k, seen); err != nil {
			return engine.Policy{}, err
		}
		if err := p.key(k, v, &got); err != nil {
			return engine.Policy{}, err
		}
	}
	if err := p.checkDispatchReachable(got); err != nil {
		return engine.Policy{}, err
	}
	return got.policy(), nil
}

// keyName checks a top-level key: a plain word, given once. seen maps each
// key read so far to its line.
func (p *policyReader) keyName(k *yaml.Node, seen map[string]int) error {
	if k.Kind != yaml.ScalarNode {
		return policyErrorf(p.file, k.Line, "a policy key must be a plain word, not a %s", catalogKindName(k))
	}
	if at, dup := seen[k.Value]; dup {
		return policyErrorf(p.file, k.Line, "key %q is already given at line %d", k.Value, at)
	}
	seen[k.Value] = k.Line
	return nil
}

// key reads the value of one top-level key into got.
func (p *policyReader) key(k, v *yaml.Node, got *policyRead) error {
	switch k.Value {
	case "self", "refused", "composite":
		rules, lines, err := p.rules(k.Value, v)
		if err != nil {
			return err
		}
		got.lists[k.Value] = &policyRuleList{rules, lines}
	case "dispatch":
		m, err := p.dispatch(v, got.dispatchLines)
		if err != nil {
			return err
		}
		got.dispatch = m
	default:
		return policyErrorf(p.file, k.Line, "unknown key %q; a policy has the keys self, refused, dispatch and composite", k.Value)
	}
	return nil
}

// policy is the policy the keys read so far make.
func (got policyRead) policy() engine.Policy {
	pol := engine.Policy{Dispatch: got.dispatch}
	if l := got.lists["self"]; l != nil {
		pol.Self = l.rules
	}
	if l := got.lists["refused"]; l != nil {
		pol.Refused = l.rules
	}
	if l := got.lists["composite"]; l != nil {
		pol.Composite = l.rules
	}
	return pol
}

// checkDispatchReachable refuses a dispatch entry that a self, refused or
// composite rule matches: Classify checks those first, so the entry would
// never apply.
func (p *policyReader) checkDispatchReachable(got policyRead) error {
	for _, skill := range slices.Sorted(maps.Keys(got.dispatchLines)) {
		for _, kind := range policyRuleKeys {
			l := got.lists[kind]
			if l == nil {
				continue
			}
			for j, r := range l.rules {
				if ok, _ := path.Match(r.Pattern, skill); ok {
					return policyErrorf(p.file, got.dispatchLines[skill], "dispatch entry %q can never apply: the %s rule %q at line %d matches it first", skill, kind, r.Pattern, l.lines[j])
				}
			}
		}
	}
	return nil
}

// rules reads a list of rules; lines says where each was written.
func (p *policyReader) rules(key string, v *yaml.Node) ([]engine.PolicyRule, []int, error) {
	if policyIsNull(v) {
		return nil, nil, nil
	}
	if v.Kind != yaml.SequenceNode {
		return nil, nil, policyErrorf(p.file, v.Line, "%q must be a list of rules (a pattern, or a mapping with pattern and reason), not a %s", key, catalogKindName(v))
	}
	var rules []engine.PolicyRule
	var lines []int
	for _, item := range v.Content {
		item = catalogDeref(item)
		r, err := p.ruleItem(key, item)
		if err != nil {
			return nil, nil, err
		}
		rules = append(rules, r)
		lines = append(lines, item.Line)
	}
	return rules, lines, nil
}

// ruleItem reads one rule of the list key: a pattern, or a mapping with
// pattern and reason.
func (p *policyReader) ruleItem(key string, item *yaml.Node) (engine.PolicyRule, error) {
	var r engine.PolicyRule
	switch {
	case item.Kind == yaml.ScalarNode && !policyIsNull(item):
		r.Pattern = item.Value
	case item.Kind == yaml.MappingNode:
		var err error
		if r, err = p.rule(key, item); err != nil {
			return r, err
		}
	default:
		return r, policyErrorf(p.file, item.Line, "a %s rule must be a pattern or a mapping with pattern and reason, not a %s", key, policyValueKind(item))
	}
	return r, p.checkPattern(key, r.Pattern, item.Line)
}

func (p *policyReader) rule(key string, m *yaml.Node) (engine.PolicyRule, error) {
	var r engine.PolicyRule
	seen := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], catalogDeref(m.Content[i+1])
		if at, dup := seen[k.Value]; dup {
			return r, policyErrorf(p.file, k.Line, "key %q is already given at line %d", k.Value, at)
		}
		seen[k.Value] = k.Line
		if err := p.ruleField(key, k, v, &r); err != nil {
			return r, err
		}
	}
	if _, ok := seen["pattern"]; !ok {
		return r, policyErrorf(p.file, m.Line, "a %s rule needs a pattern", key)
	}
	return r, nil
}

// ruleField reads the pattern or the reason of a rule of the list key into r.
func (p *policyReader) ruleField(key string, k, v *yaml.Node, r *engine.PolicyRule) error {
	if k.Value != "pattern" && k.Value != "reason" {
		return policyErrorf(p.file, k.Line, "unknown key %q in a %s rule; a rule has the keys pattern and reason", k.Value, key)
	}
	if v.Kind != yaml.ScalarNode || (k.Value == "pattern" && policyIsNull(v)) {
		return policyErrorf(p.file, v.Line, "%q of a %s rule must be text, not a %s", k.Value, key, policyValueKind(v))
	}
	if k.Value == "pattern" {
		r.Pattern = v.Value
	} else if !policyIsNull(v) {
		r.Reason = strings.TrimSpace(v.Value)
	}
	return nil
}

func (p *policyReader) checkPattern(key, pattern string, line int) error {
	if pattern == "" {
		return policyErrorf(p.file, line, "a %s rule has an empty pattern", key)
	}
	if _, err := path.Match(pattern, ""); err != nil {
		return policyErrorf(p.file, line, "invalid glob pattern %q in %s: %v", pattern, key, err)
	}
	if !strings.ContainsAny(pattern, `*?[\`) && !engine.ValidSkillName(pattern) {
		return policyErrorf(p.file, line, "pattern %q in %s can never match: skill names are lower-case letters, digits and dashes", pattern, key)
	}
	return nil
}

// dispatch reads the skill-to-leaf mapping, recording where each skill was
// written in lines.
func (p *policyReader) dispatch(v *yaml.Node, lines map[string]int) (map[string]string, error) {
	if policyIsNull(v) {
		return nil, nil
	}
	if v.Kind != yaml.MappingNode {
		return nil, policyErrorf(p.file, v.Line, "\"dispatch\" must map skill names to leaf agent names (utility-pm-critic: pm-critic), not a %s", catalogKindName(v))
	}
	m := make(map[string]string, len(v.Content)/2)
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, leaf := v.Content[i], catalogDeref(v.Content[i+1])
		if err := p.checkDispatchEntry(k, leaf, lines); err != nil {
			return nil, err
		}
		lines[k.Value] = k.Line
		m[k.Value] = leaf.Value
	}
	return m, nil
}

// checkDispatchEntry checks one entry of dispatch: a skill name not given
// before (lines holds those) mapped to a leaf agent name.
func (p *policyReader) checkDispatchEntry(k, leaf *yaml.Node, lines map[string]int) error {
	if k.Kind != yaml.ScalarNode || !engine.ValidSkillName(k.Value) {
		return policyErrorf(p.file, k.Line, "dispatch key %q is not a skill name (exact names only, no patterns)", k.Value)
	}
	if at, dup := lines[k.Value]; dup {
		return policyErrorf(p.file, k.Line, "dispatch entry %q is already given at line %d", k.Value, at)
	}
	if leaf.Kind != yaml.ScalarNode || policyIsNull(leaf) {
		return policyErrorf(p.file, leaf.Line, "the leaf agent of dispatch skill %q must be an agent name, not a %s", k.Value, policyValueKind(leaf))
	}
	if !engine.ValidSkillName(leaf.Value) {
		return policyErrorf(p.file, leaf.Line, "leaf agent %q of dispatch skill %q is not a valid agent name (lower-case letters, digits and dashes)", leaf.Value, k.Value)
	}
	return nil
}

var policyAnchorRE = regexp.MustCompile(`^yaml: unknown anchor '(.*)' referenced$`)

// policyYAMLError is catalogYAMLError plus a line for the one mistake the
// YAML library reports without one: a glob written unquoted, which YAML
// reads as a reference to an anchor ("- *-draft").
func policyYAMLError(src []byte, file string, err error) error {
	m := policyAnchorRE.FindStringSubmatch(err.Error())
	if m == nil {
		return catalogYAMLError(file, 0, err)
	}
	e := &catalogYAMLErr{file: file, msg: fmt.Sprintf("unknown anchor '%s' referenced (quote glob patterns: \"*%s\")", m[1], m[1]), err: err}
	if i := bytes.Index(src, []byte("*"+m[1])); i >= 0 {
		e.line = bytes.Count(src[:i], []byte("\n")) + 1
	}
	return e
}

func policyIsNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func policyValueKind(n *yaml.Node) string {
	if policyIsNull(n) {
		return "null"
	}
	return catalogKindName(n)
}

func policyErrorf(file string, line int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", file, line, fmt.Sprintf(format, args...))
}
