package parse

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/gonogo/gonogo/engine"
)

// wfReader reads one workflow document, collecting every problem with its
// line instead of stopping at the first.
type wfReader struct {
	source   string
	problems []engine.Problem
	visits   int
	overrun  bool // the visit budget ran out

	dropped     int // problems past the cap, counted only
	droppedLine int // where the first of them is
}

// add records a problem. Past the cap only the count is kept, with the
// line of the first problem left out.
func (r *wfReader) add(line int, format string, args ...any) {
	if r.full() {
		if r.dropped == 0 {
			r.droppedLine = max(line, 1)
		}
		r.dropped++
		return
	}
	r.problems = append(r.problems, engine.Problem{Line: max(line, 1), Message: fmt.Sprintf(format, args...)})
}

// full reports whether the problem list is at its cap, so that messages
// are not built for nothing.
func (r *wfReader) full() bool {
	return len(r.problems) >= workflowMaxProblems
}

// visit counts one value read and reports whether the budget allows it.
func (r *wfReader) visit(n *yaml.Node) bool {
	r.visits++
	if r.visits > workflowMaxVisits {
		if !r.overrun {
			r.overrun = true
			r.add(n.Line, "the file expands to more than %d values through YAML aliases; write it out instead", workflowMaxVisits)
		}
		return false
	}
	return true
}

// list returns the problems in line order, and how many more there were.
func (r *wfReader) list() []engine.Problem {
	list := slices.Clone(r.problems)
	sort.SliceStable(list, func(i, j int) bool { return list[i].Line < list[j].Line })
	if r.dropped > 0 {
		list = append(list, engine.Problem{Line: r.droppedLine,
			Message: fmt.Sprintf("%d more problems not shown (the first on this line)", r.dropped)})
	}
	return list
}

// wfEntry is one key of a mapping and its value.
type wfEntry struct {
	key string
	k   *yaml.Node
	v   *yaml.Node // aliases resolved
}

// entries reads a mapping's keys: each must be a plain text key, one of
// valid, given once. where names the mapping in messages ("step \"prd\"").
// Entries with a bad key are reported and left out.
func (r *wfReader) entries(m *yaml.Node, valid []string, where string) []wfEntry {
	var out []wfEntry
	seen := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], catalogDeref(m.Content[i+1])
		if !r.visit(k) {
			return out
		}
		if r.key(k, valid, seen, where) {
			out = append(out, wfEntry{key: k.Value, k: k, v: v})
		}
	}
	return out
}

// key checks a mapping's key: a plain word, given once, one of valid.
// seen maps each key read so far to its line.
func (r *wfReader) key(k *yaml.Node, valid []string, seen map[string]int, where string) bool {
	if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
		r.add(k.Line, "%s: a key must be a plain word, not a %s; write the keys out", where, workflowKeyKind(k))
		return false
	}
	if at, dup := seen[k.Value]; dup {
		r.add(k.Line, "%s: key %q is already given at line %d", where, k.Value, at)
		return false
	}
	seen[k.Value] = k.Line
	if !slices.Contains(valid, k.Value) {
		r.unknownKey(k, valid, where)
		return false
	}
	return true
}

// workflowKeyKind names what a key that is not a plain word is.
func workflowKeyKind(k *yaml.Node) string {
	switch {
	case k.Kind == yaml.AliasNode:
		return "alias"
	case k.Tag == "!!merge":
		return "merge key (<<)"
	}
	return kindName(k)
}

// unknownKey reports a key that is not one of valid, suggesting the
// nearest; past the problem cap the suggestion is not worked out.
func (r *wfReader) unknownKey(k *yaml.Node, valid []string, where string) {
	if r.full() {
		r.add(k.Line, "")
		return
	}
	r.add(k.Line, "%s: unknown key %q%s; the keys are %s", where, workflowClip(k.Value), workflowDidYouMean(k.Value, valid), strings.Join(valid, ", "))
}

func workflowDidYouMean(name string, names []string) string {
	if s := engine.Suggest(name, names); len(s) > 0 {
		return fmt.Sprintf(" (did you mean %q?)", s[0])
	}
	return ""
}

// workflowClip shortens text quoted in a message.
func workflowClip(s string) string {
	if utf8.RuneCountInString(s) <= 60 {
		return s
	}
	r := []rune(s)
	return string(r[:57]) + "..."
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

func kindName(n *yaml.Node) string {
	if isNull(n) {
		return "null"
	}
	if n.Kind != yaml.ScalarNode {
		return catalogKindName(n)
	}
	if name, ok := workflowTagNames[n.Tag]; ok {
		return name
	}
	return "text value"
}

// workflowTagNames are the words messages use for scalars that are not text.
var workflowTagNames = map[string]string{
	"!!int":   "number",
	"!!float": "number",
	"!!bool":  "true/false value",
}

// text reads a scalar as text; numbers and booleans are text too. A null
// or a list or mapping is a problem.
func (r *wfReader) text(e wfEntry, where string) (string, bool) {
	if e.v.Kind != yaml.ScalarNode || isNull(e.v) {
		r.add(e.v.Line, "%s: %q must be text, not a %s", where, e.key, kindName(e.v))
		return "", false
	}
	return e.v.Value, true
}

func (r *wfReader) boolean(e wfEntry, where string) bool {
	var b bool
	if e.v.Kind != yaml.ScalarNode || e.v.Tag != "!!bool" || e.v.Decode(&b) != nil {
		r.add(e.v.Line, "%s: %q must be true or false, not %s", where, e.key, workflowShow(e.v))
	}
	return b
}

// workflowShow names a value in a message: the text of a scalar, else its kind.
func workflowShow(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode && !isNull(n) {
		return strconv.Quote(workflowClip(n.Value))
	}
	return "a " + kindName(n)
}

func (r *wfReader) duration(e wfEntry, where string, allowZero bool) time.Duration {
	s, ok := r.text(e, where)
	if !ok {
		return 0
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	switch {
	case err != nil && e.v.Tag == "!!int":
		r.add(e.v.Line, "%s: %q %s needs a unit, like %ss or %sm", where, e.key, s, s, s)
	case err != nil:
		r.add(e.v.Line, "%s: %q %q is not a duration (write it like 90s, 20m or 1h30m)", where, e.key, workflowClip(s))
	case d < 0 || (d == 0 && !allowZero):
		r.add(e.v.Line, "%s: %q must be more than zero, not %s", where, e.key, s)
	default:
		return d
	}
	return 0
}

// skillName reads a skill name; whether it is installed is pre-flight's
// business.
func (r *wfReader) skillName(e wfEntry, where string) string {
	s, ok := r.text(e, where)
	if !ok {
		return ""
	}
	if !engine.ValidSkillName(s) {
		r.add(e.v.Line, "%s: %q %q is not a skill name: %s", where, e.key, workflowClip(s), chainNameProblem(s))
		return ""
	}
	return s
}

// optionalText reads a text value that may be left out as null, reporting
// whether one was given.
func (r *wfReader) optionalText(e wfEntry, where string) (string, bool) {
	if isNull(e.v) {
		return "", false
	}
	return r.text(e, where)
}
