package parse

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/gonogo/gonogo/engine"
)

// workflowPostOnly are the conditions that read the step's output.
var workflowPostOnly = []string{"output_contains", "output_matches", "json_field"}

func (r *wfReader) conditions(e wfEntry, where string, pre bool) []engine.Condition {
	if isNull(e.v) {
		return nil
	}
	if e.v.Kind != yaml.SequenceNode {
		r.add(e.v.Line, "%s: %q must be a list of conditions (- file_exists: PATH, ...), not a %s", where, e.key, kindName(e.v))
		return nil
	}
	var out []engine.Condition
	for _, item := range e.v.Content {
		item = catalogDeref(item)
		if !r.visit(item) {
			return out
		}
		if c, ok := r.conditionItem(item, where+" "+e.key, where, pre); ok {
			out = append(out, c)
		}
	}
	return out
}

// conditionItem reads one item of a conditions list: a mapping of one
// condition key, and for a precondition one that does not read the step's
// output. list names the list in messages about its keys.
func (r *wfReader) conditionItem(item *yaml.Node, list, where string, pre bool) (engine.Condition, bool) {
	if item.Kind != yaml.MappingNode {
		r.add(item.Line, "%s: a condition is a mapping with one key (%s), not a %s", where, strings.Join(workflowCondKeys, ", "), kindName(item))
		return engine.Condition{}, false
	}
	if len(item.Content) != 2 {
		r.add(item.Line, "%s: a condition has exactly one key (%s); this one has %d: write each as its own list item", where, strings.Join(workflowCondKeys, ", "), len(item.Content)/2)
		return engine.Condition{}, false
	}
	entries := r.entries(item, workflowCondKeys, list)
	if len(entries) == 0 {
		return engine.Condition{}, false
	}
	c, ok := r.condition(entries[0], where)
	if ok && pre && slices.Contains(workflowPostOnly, entries[0].key) {
		r.add(entries[0].k.Line, "%s: %s checks the step's output, which does not exist before the step runs: move it to postconditions", where, entries[0].key)
		return c, false
	}
	return c, ok
}

// workflowCondKinds maps each condition key to the kind of check it is.
var workflowCondKinds = map[string]engine.ConditionKind{
	"file_exists":     engine.CondFileExists,
	"file_absent":     engine.CondFileAbsent,
	"output_contains": engine.CondOutputContains,
	"output_matches":  engine.CondOutputMatches,
	"json_field":      engine.CondJSONField,
	"command":         engine.CondCommand,
}

func (r *wfReader) condition(e wfEntry, where string) (engine.Condition, bool) {
	c := engine.Condition{Line: e.k.Line, Kind: workflowCondKinds[e.key]}
	var ok bool
	switch e.key {
	case "file_exists", "file_absent":
		c.Path, ok = r.condPath(e, where)
	case "output_contains":
		c.Text, ok = r.condText(e, where)
	case "output_matches":
		c.Pattern, ok = r.condPattern(e, where)
	case "json_field":
		ok = r.jsonField(e, where, &c)
	case "command":
		c.Command, ok = r.command(e, where)
	}
	return c, ok
}

// condPath reads the path of file_exists or file_absent: relative, inside
// the working directory.
func (r *wfReader) condPath(e wfEntry, where string) (string, bool) {
	p, ok := r.text(e, where)
	if !ok {
		return "", false
	}
	if !filepath.IsLocal(filepath.FromSlash(p)) {
		r.add(e.v.Line, "%s: %s %q must be a relative path inside the working directory", where, e.key, workflowClip(p))
		return "", false
	}
	return p, true
}

// condText reads the text output_contains looks for, which cannot be empty.
func (r *wfReader) condText(e wfEntry, where string) (string, bool) {
	t, ok := r.text(e, where)
	if !ok {
		return "", false
	}
	if t == "" {
		r.add(e.v.Line, "%s: output_contains needs the text to look for", where)
		return "", false
	}
	return t, true
}

// condPattern reads the regular expression of output_matches.
func (r *wfReader) condPattern(e wfEntry, where string) (string, bool) {
	t, ok := r.text(e, where)
	if !ok {
		return "", false
	}
	if _, err := regexp.Compile(t); err != nil {
		r.add(e.v.Line, "%s: output_matches %q is not a valid regular expression: %s", where, workflowClip(t), strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		return "", false
	}
	return t, true
}

func (r *wfReader) jsonField(e wfEntry, where string, c *engine.Condition) bool {
	if e.v.Kind != yaml.MappingNode {
		r.add(e.v.Line, "%s: json_field must be a mapping {field: a.b, equals: VALUE}, not a %s", where, kindName(e.v))
		return false
	}
	ok := true
	has := map[string]bool{}
	for _, f := range r.entries(e.v, workflowJSONFieldKeys, where+" json_field") {
		has[f.key] = true
		var good bool
		switch f.key {
		case "field":
			c.Field, good = r.jsonPath(f, where)
		case "equals":
			c.Value, good = r.text(f, where+" json_field")
		}
		ok = ok && good
	}
	return r.jsonFieldComplete(e, has, where) && ok
}

// jsonFieldComplete reports each key json_field lacks (has holds those
// given) and whether it has them all.
func (r *wfReader) jsonFieldComplete(e wfEntry, has map[string]bool, where string) bool {
	complete := true
	for _, k := range workflowJSONFieldKeys {
		if !has[k] {
			r.add(e.v.Line, "%s: json_field needs %q", where, k)
			complete = false
		}
	}
	return complete
}

// jsonPath reads the field of json_field: a dotted path of names.
func (r *wfReader) jsonPath(f wfEntry, where string) (string, bool) {
	s, ok := r.text(f, where+" json_field")
	if !ok {
		return "", false
	}
	if slices.Contains(strings.Split(s, "."), "") {
		r.add(f.v.Line, "%s: json_field field %q must be a dotted path of names, like result.status", where, workflowClip(s))
		return "", false
	}
	return s, true
}

// command reads a command's argv: a list, or a string split on spaces.
func (r *wfReader) command(e wfEntry, where string) ([]string, bool) {
	switch {
	case e.v.Kind == yaml.ScalarNode && !isNull(e.v):
		return r.commandString(e, where)
	case e.v.Kind == yaml.SequenceNode:
		return r.commandList(e, where)
	}
	r.add(e.v.Line, "%s: command must be a list [prog, arg, ...] or a string, not a %s", where, kindName(e.v))
	return nil, false
}

// commandString reads a command written as one string, split on spaces.
func (r *wfReader) commandString(e wfEntry, where string) ([]string, bool) {
	if strings.ContainsAny(e.v.Value, "\"'`") {
		r.add(e.v.Line, "%s: the string form of command is split on spaces and does not understand quotes; write it as a list: [prog, arg, \"two words\"]", where)
		return nil, false
	}
	argv := strings.Fields(e.v.Value)
	if len(argv) == 0 {
		r.add(e.v.Line, "%s: command is empty", where)
		return nil, false
	}
	return argv, true
}

// commandList reads a command written as a list of words, the first the
// program.
func (r *wfReader) commandList(e wfEntry, where string) ([]string, bool) {
	var argv []string
	for _, it := range e.v.Content {
		it = catalogDeref(it)
		if !r.visit(it) {
			return nil, false
		}
		if it.Kind != yaml.ScalarNode || isNull(it) {
			r.add(it.Line, "%s: each word of command must be text, not a %s", where, kindName(it))
			return nil, false
		}
		argv = append(argv, it.Value)
	}
	if len(argv) == 0 || argv[0] == "" {
		r.add(e.v.Line, "%s: command needs a program to run", where)
		return nil, false
	}
	return argv, true
}
