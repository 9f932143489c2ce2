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
		if item.Kind != yaml.MappingNode {
			r.add(item.Line, "%s: a condition is a mapping with one key (%s), not a %s", where, strings.Join(workflowCondKeys, ", "), kindName(item))
			continue
		}
		if len(item.Content) != 2 {
			r.add(item.Line, "%s: a condition has exactly one key (%s); this one has %d: write each as its own list item", where, strings.Join(workflowCondKeys, ", "), len(item.Content)/2)
			continue
		}
		entries := r.entries(item, workflowCondKeys, where+" "+e.key)
		if len(entries) == 0 {
			continue
		}
		c, ok := r.condition(entries[0], where)
		if !ok {
			continue
		}
		if pre && slices.Contains(workflowPostOnly, entries[0].key) {
			r.add(entries[0].k.Line, "%s: %s checks the step's output, which does not exist before the step runs: move it to postconditions", where, entries[0].key)
			continue
		}
		out = append(out, c)
	}
	return out
}

func (r *wfReader) condition(e wfEntry, where string) (engine.Condition, bool) {
	c := engine.Condition{Line: e.k.Line}
	switch e.key {
	case "file_exists", "file_absent":
		c.Kind = engine.CondFileExists
		if e.key == "file_absent" {
			c.Kind = engine.CondFileAbsent
		}
		p, ok := r.text(e, where)
		if !ok {
			return c, false
		}
		if !filepath.IsLocal(filepath.FromSlash(p)) {
			r.add(e.v.Line, "%s: %s %q must be a relative path inside the working directory", where, e.key, workflowClip(p))
			return c, false
		}
		c.Path = p
	case "output_contains":
		c.Kind = engine.CondOutputContains
		t, ok := r.text(e, where)
		if !ok {
			return c, false
		}
		if t == "" {
			r.add(e.v.Line, "%s: output_contains needs the text to look for", where)
			return c, false
		}
		c.Text = t
	case "output_matches":
		c.Kind = engine.CondOutputMatches
		t, ok := r.text(e, where)
		if !ok {
			return c, false
		}
		if _, err := regexp.Compile(t); err != nil {
			r.add(e.v.Line, "%s: output_matches %q is not a valid regular expression: %s", where, workflowClip(t), strings.TrimPrefix(err.Error(), "error parsing regexp: "))
			return c, false
		}
		c.Pattern = t
	case "json_field":
		c.Kind = engine.CondJSONField
		return c, r.jsonField(e, where, &c)
	case "command":
		c.Kind = engine.CondCommand
		argv, ok := r.command(e, where)
		if !ok {
			return c, false
		}
		c.Command = argv
	}
	return c, true
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
		switch f.key {
		case "field":
			s, good := r.text(f, where+" json_field")
			if !good {
				ok = false
				break
			}
			if slices.Contains(strings.Split(s, "."), "") {
				r.add(f.v.Line, "%s: json_field field %q must be a dotted path of names, like result.status", where, workflowClip(s))
				ok = false
				break
			}
			c.Field = s
		case "equals":
			s, good := r.text(f, where+" json_field")
			if !good {
				ok = false
				break
			}
			c.Value = s
		}
	}
	for _, k := range workflowJSONFieldKeys {
		if !has[k] {
			r.add(e.v.Line, "%s: json_field needs %q", where, k)
			ok = false
		}
	}
	return ok
}

// command reads a command's argv: a list, or a string split on spaces.
func (r *wfReader) command(e wfEntry, where string) ([]string, bool) {
	switch {
	case e.v.Kind == yaml.ScalarNode && !isNull(e.v):
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
	case e.v.Kind == yaml.SequenceNode:
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
	r.add(e.v.Line, "%s: command must be a list [prog, arg, ...] or a string, not a %s", where, kindName(e.v))
	return nil, false
}
