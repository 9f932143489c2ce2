package parse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/gonogo/gonogo/engine"
)

const (
	// WorkflowMaxBytes is the largest workflow file read. Real workflows
	// are a few kilobytes; the cap keeps a stray file from being parsed.
	WorkflowMaxBytes = 1 << 20
	// WorkflowMaxSteps is the most steps a workflow file may hold.
	WorkflowMaxSteps = 1000
	// workflowMaxProblems caps the list of problems reported for one file,
	// so a pasted log does not print thousands of lines; the last entry
	// says how many more there were.
	workflowMaxProblems = 200
	// workflowMaxVisits bounds the work done on one file. YAML aliases let a
	// small file name the same big list many times; a budget of visited
	// values turns such a file into one problem instead of minutes of work.
	workflowMaxVisits = 1 << 20
	// workflowMaxRetries bounds on_error: {retry: N}.
	workflowMaxRetries = 20
)

// Workflow reads a workflow file: a named, reusable graph of skill steps.
// name is the file name, used in messages and, when the file has no "name"
// key, as the workflow's name (its base name without .yaml or .yml).
//
//	name: feature-kickoff            # optional: defaults to the file name
//	description: From problem to stories.
//	args:
//	  feature: {required: true}      # must be given: --arg feature=...
//	  audience: mobile shoppers      # a bare value is the default
//	  tone:                          # optional, empty when not given
//	steps:
//	  - id: problem                  # [a-z0-9][a-z0-9_-]*, unique
//	    skill: define-problem-statement
//	    prompt: Frame the problem of {{feature}} for {{audience}}.
//	  - id: prd
//	    skill: deliver-prd
//	    depends_on: problem          # an id, or a list of ids
//	    prompt: |
//	      Write the PRD. The problem statement:
//	      {{steps.problem.output}}
//	    gate: always                 # always | never | on-failure | on-empty
//	    preconditions:
//	      - file_absent: docs/prd.md
//	    postconditions:
//	      - output_contains: "## Goals"
//	      - output_matches: '(?m)^## Success metrics'
//	      - json_field: {field: status.ok, equals: true}
//	      - command: [test, -s, docs/prd.md]   # or "test -s docs/prd.md"
//	    on_error: {retry: 2, backoff: 5s}      # or stop (the default), or gate
//	    timeout: 20m
//	    optional: false
//	    fallback: deliver-user-stories
//	    runner: {model: opus}
//	    route: false
//	    decompose: {skill: deliver-user-stories}
//
// Decisions a workflow author should know:
//
//   - Argument names are what --arg accepts (letters, digits, '_' and '-',
//     starting with a letter or '_'); steps, run and today are taken by
//     {{steps.ID.output}}, {{run.id}} and {{today}}. A required argument
//     cannot also have a default.
//   - A condition is a list item with exactly one key. output_contains,
//     output_matches and json_field check the step's output, so they are
//     postconditions only. Paths are relative to the run's working directory
//     and may not leave it (no absolute paths, no leading ".."). An
//     output_matches pattern is compiled here (Go RE2 syntax). The string form
//     of command is split on spaces with no quoting at all; a string holding
//     a quote mark is refused: write the list form instead. json_field's
//     equals is the YAML value's text (true, 3, "ok"); a null is refused.
//     Condition values are used as written: they are not interpolated.
//   - on_error is stop, gate, or a mapping {retry: N, backoff: DURATION}
//     (N from 1 to 20; backoff is optional, default 0s, and doubles between
//     attempts). timeout is a Go duration with a unit ("90s", "20m").
//   - runner options are passed to the runner as text; their keys are the
//     runner's business (model for claude).
//   - Skill names, ids and dependencies are checked for form here; whether
//     skills are installed, dependencies exist, the graph has no cycle and
//     {{...}} references are upstream is engine.PreflightWorkflow's job.
//   - YAML anchors and aliases work; merge keys ("<<") do not.
//
// Every problem in the file is reported at once, each with its line, as an
// *engine.Problems whose Source is name: YAML syntax errors (the YAML
// library stops at the first), unknown keys (naming the valid ones, with a
// close match offered), repeated keys, wrong types, bad values, duplicate
// ids and missing required fields. Past 200 problems the list ends with a
// count of the rest, on the line of the first of them. A file that cannot
// be read as text at all (empty, over WorkflowMaxBytes, not UTF-8) is an
// *engine.Refusal with reason engine.RefuseInvalidInput.
func Workflow(src []byte, name string) (engine.WorkflowSpec, error) {
	return workflowRead(src, name, "")
}

// WorkflowFile reads a workflow file that was looked up by its name (the
// file <name>.yaml or <name>.yml, at path): as Workflow does, with path as
// Source, except that a "name" key must repeat name, since a workflow is
// run by its file name. Finding the file is internal/intake's (intake.Dir).
func WorkflowFile(src []byte, path, name string) (engine.WorkflowSpec, error) {
	return workflowRead(src, path, name)
}

// WorkflowExtensions are the file extensions of a workflow file, in the
// order a name is looked up.
var WorkflowExtensions = []string{".yaml", ".yml"}

// WorkflowStem is the workflow name a file name gives (its base name
// without .yaml or .yml), and whether it has a workflow's extension at all.
// The name may still be invalid: see CheckWorkflowName.
func WorkflowStem(file string) (string, bool) {
	for _, ext := range WorkflowExtensions {
		if stem, ok := strings.CutSuffix(file, ext); ok {
			return stem, true
		}
	}
	return file, false
}

// CheckWorkflowName holds a name a workflow is looked up by to the rule of
// skill names (lower-case letters, digits and dashes), since the name picks
// a file in a directory: an invalid name is an *engine.Refusal (reason
// invalid-input) saying what is wrong with it.
func CheckWorkflowName(name string) error {
	if engine.ValidSkillName(name) {
		return nil
	}
	return &engine.Refusal{Reason: engine.RefuseInvalidInput, Source: name,
		Message: fmt.Sprintf("invalid workflow name %q: %s", name, strings.Replace(chainNameProblem(name), "skill name", "workflow name", 1))}
}

// workflowRead is Workflow; wantName, when set, is the name the file was
// looked up by, which a "name" key must repeat.
func workflowRead(src []byte, source, wantName string) (engine.WorkflowSpec, error) {
	if r := workflowCheckInput(src, source); r != nil {
		return engine.WorkflowSpec{}, r
	}
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return engine.WorkflowSpec{}, &engine.Refusal{Reason: engine.RefuseInvalidInput, Source: source, Line: 1,
				Message: "the workflow file is empty (only spaces or comments): it needs at least a steps list"}
		}
		return engine.WorkflowSpec{}, &engine.Problems{Source: source, List: []engine.Problem{workflowYAMLProblem(src, err)}}
	}
	r := &wfReader{source: source}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
	case err != nil:
		r.problems = append(r.problems, workflowYAMLProblem(src, err))
	default:
		r.add(max(extra.Line, 1), "a workflow file holds one YAML document; a second one starts here")
	}
	spec := r.read(&doc, wantName)
	if len(r.problems) > 0 {
		return spec, &engine.Problems{Source: source, List: r.list()}
	}
	return spec, nil
}

var workflowUTF16BOMs = [][]byte{{0xff, 0xfe}, {0xfe, 0xff}}

// workflowCheckInput refuses bytes that are not a text file at all.
func workflowCheckInput(src []byte, source string) *engine.Refusal {
	refuse := func(off int, format string, args ...any) *engine.Refusal {
		return &engine.Refusal{Reason: engine.RefuseInvalidInput, Source: source, Line: planLineAt(src, off),
			Message: fmt.Sprintf(format, args...)}
	}
	if len(src) > WorkflowMaxBytes {
		return refuse(0, "the workflow file is over the %s limit", planSize(WorkflowMaxBytes))
	}
	for _, bom := range workflowUTF16BOMs {
		if bytes.HasPrefix(src, bom) {
			return refuse(0, "the workflow file is UTF-16 text; save it as UTF-8")
		}
	}
	if !utf8.Valid(src) {
		i := planFirstInvalid(src)
		return refuse(i, "the workflow file is not valid UTF-8 (byte 0x%02x is not part of a UTF-8 character); save it as UTF-8", src[i])
	}
	if len(bytes.TrimSpace(bytes.TrimPrefix(src, planBOM))) == 0 {
		return refuse(0, "the workflow file is empty: it needs at least a steps list")
	}
	return nil
}

var (
	workflowYAMLLineRE   = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
	workflowYAMLAnchorRE = regexp.MustCompile(`^yaml: unknown anchor '(.*)' referenced$`)
)

// workflowYAMLProblem turns a YAML syntax error into a problem with a line.
// The YAML library leaves the line out for a few errors: an alias naming no
// anchor and a control character (both found here in the text), and errors
// on the first line.
func workflowYAMLProblem(src []byte, err error) engine.Problem {
	msg := err.Error()
	line, problem := 0, strings.TrimPrefix(msg, "yaml: ")
	if m := workflowYAMLLineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		problem = m[2]
	}
	switch {
	case slices.Contains(workflowYAMLParserProblems, problem):
		// The YAML parser (not its scanner) counts lines from 0, leaving
		// the number out for line 0, and names the line where the
		// unfinished construct starts; at the end of the file that can be
		// the line after the last.
		last := planLineAt(src, len(src))
		if bytes.HasSuffix(src, []byte("\n")) || bytes.HasSuffix(src, []byte("\r")) {
			last--
		}
		return engine.Problem{Line: max(min(line+1, last), 1), Message: "invalid YAML: " + problem}
	case line > 0 && strings.Contains(problem, "tab character"):
		return engine.Problem{Line: workflowTabLine(src, line), Message: "invalid YAML: " + problem}
	case line > 0:
		return engine.Problem{Line: line, Message: "invalid YAML: " + problem}
	}
	p := engine.Problem{Line: 1, Message: "invalid YAML: " + problem}
	switch m := workflowYAMLAnchorRE.FindStringSubmatch(msg); {
	case m != nil:
		p.Message = fmt.Sprintf("invalid YAML: unknown anchor '%s' referenced (a value starting with * is an alias; quote it: \"*%s\")", m[1], m[1])
		if i := bytes.Index(src, []byte("*"+m[1])); i >= 0 {
			p.Line = planLineAt(src, i)
		}
	case strings.Contains(msg, "control characters"):
		if i := bytes.IndexFunc(src, workflowIsBadControl); i >= 0 {
			p.Line = planLineAt(src, i)
		}
	}
	return p
}

// workflowYAMLParserProblems are the errors of the YAML library's parser
// stage, whose line numbers count from 0.
var workflowYAMLParserProblems = []string{
	"did not find expected <stream-start>",
	"did not find expected <document start>",
	"found undefined tag handle",
	"did not find expected node content",
	"did not find expected '-' indicator",
	"did not find expected key",
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found duplicate %TAG directive",
}

// workflowTabLine is the first line, from the one the YAML library named
// on, indented with a tab: the library names the line before it.
func workflowTabLine(src []byte, from int) int {
	n := 0
	for line := range strings.Lines(string(src)) {
		n++
		indent := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
		if n >= from && strings.Contains(indent, "\t") {
			return n
		}
	}
	return from
}

// workflowIsBadControl reports the characters YAML refuses in a file.
func workflowIsBadControl(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r' || r == '\ufeff':
		return false
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f && r != 0x85:
		return true
	case r == 0xfffe || r == 0xffff:
		return true
	}
	return false
}

// Keys of each kind of mapping, in the order messages list them.
var (
	workflowTopKeys       = []string{"name", "description", "args", "steps"}
	workflowArgKeys       = []string{"required", "default"}
	workflowStepKeys      = []string{"id", "skill", "prompt", "depends_on", "gate", "preconditions", "postconditions", "on_error", "timeout", "optional", "fallback", "runner", "route", "decompose"}
	workflowCondKeys      = []string{"file_exists", "file_absent", "output_contains", "output_matches", "json_field", "command"}
	workflowJSONFieldKeys = []string{"field", "equals"}
	workflowOnErrorKeys   = []string{"retry", "backoff"}
	workflowDecomposeKeys = []string{"skill"}
)

var (
	workflowIDRE     = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
	workflowArgRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)
	workflowOptionRE = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)
)

// workflowReservedArgs are the names {{...}} references use for other things.
var workflowReservedArgs = []string{"steps", "run", "today"}

const workflowMaxNameLen = 64

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
		if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
			what := kindName(k)
			switch {
			case k.Kind == yaml.AliasNode:
				what = "alias"
			case k.Tag == "!!merge":
				what = "merge key (<<)"
			}
			r.add(k.Line, "%s: a key must be a plain word, not a %s; write the keys out", where, what)
			continue
		}
		if at, dup := seen[k.Value]; dup {
			r.add(k.Line, "%s: key %q is already given at line %d", where, k.Value, at)
			continue
		}
		seen[k.Value] = k.Line
		if !slices.Contains(valid, k.Value) {
			if r.full() {
				r.add(k.Line, "")
				continue
			}
			r.add(k.Line, "%s: unknown key %q%s; the keys are %s", where, workflowClip(k.Value), workflowDidYouMean(k.Value, valid), strings.Join(valid, ", "))
			continue
		}
		out = append(out, wfEntry{key: k.Value, k: k, v: v})
	}
	return out
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
	if n.Kind == yaml.ScalarNode {
		switch n.Tag {
		case "!!int", "!!float":
			return "number"
		case "!!bool":
			return "true/false value"
		}
		return "text value"
	}
	return catalogKindName(n)
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

func (r *wfReader) read(doc *yaml.Node, wantName string) engine.WorkflowSpec {
	spec := engine.WorkflowSpec{Source: r.source}
	root := doc
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = catalogDeref(root.Content[0])
	}
	if root.Kind != yaml.MappingNode {
		r.add(root.Line, "a workflow must be a mapping with the keys %s, not a %s", strings.Join(workflowTopKeys, ", "), kindName(root))
		return spec
	}
	const where = "workflow"
	var hasSteps, hasName bool
	for _, e := range r.entries(root, workflowTopKeys, where) {
		switch e.key {
		case "name":
			hasName = true
			s, ok := r.text(e, where)
			switch {
			case !ok:
			case !engine.ValidSkillName(s):
				r.add(e.v.Line, "workflow name %q is not valid: %s", workflowClip(s), strings.Replace(chainNameProblem(s), "skill name", "workflow name", 1))
			case wantName != "" && s != wantName:
				r.add(e.v.Line, "the workflow is named %q but its file is %s: a workflow is run by its file name, so make them the same", s, filepath.Base(r.source))
			default:
				spec.Name = s
			}
		case "description":
			if isNull(e.v) {
				break
			}
			if s, ok := r.text(e, where); ok {
				spec.Description = strings.TrimSpace(s)
			}
		case "args":
			spec.Args = r.args(e)
		case "steps":
			hasSteps = true
			spec.Steps = r.steps(e)
		}
	}
	if !hasName {
		switch stem, _ := WorkflowStem(filepath.Base(r.source)); {
		case wantName != "":
			spec.Name = wantName
		case engine.ValidSkillName(stem):
			spec.Name = stem
		default:
			r.add(root.Line, "the workflow has no name key and its file name %q is not a workflow name (lower-case letters, digits and dashes): add name: ...", workflowClip(stem))
		}
	}
	if !hasSteps {
		r.add(root.Line, "the workflow has no steps key: list its steps under steps:")
	}
	return spec
}

func (r *wfReader) args(e wfEntry) []engine.WorkflowArg {
	if isNull(e.v) {
		return nil
	}
	if e.v.Kind != yaml.MappingNode {
		r.add(e.v.Line, "workflow: \"args\" must map argument names to a default or {required: true}, not a %s", kindName(e.v))
		return nil
	}
	// Argument names are the author's, so the mapping is read by hand
	// rather than through entries.
	var out []engine.WorkflowArg
	seen := map[string]int{}
	for i := 0; i+1 < len(e.v.Content); i += 2 {
		k, v := e.v.Content[i], catalogDeref(e.v.Content[i+1])
		if !r.visit(k) {
			return out
		}
		if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
			r.add(k.Line, "args: an argument name must be a plain word, not a %s", kindName(catalogDeref(k)))
			continue
		}
		name := k.Value
		if at, dup := seen[name]; dup {
			r.add(k.Line, "args: argument %q is already declared at line %d", name, at)
			continue
		}
		seen[name] = k.Line
		switch {
		case !workflowArgRE.MatchString(name) || len(name) > workflowMaxNameLen:
			r.add(k.Line, "args: %q is not an argument name (letters, digits, '_' and '-', starting with a letter or '_', at most %d)", workflowClip(name), workflowMaxNameLen)
			continue
		case slices.Contains(workflowReservedArgs, name):
			r.add(k.Line, "args: %q is reserved for {{%s...}} references; choose another name", name, name)
			continue
		}
		arg := engine.WorkflowArg{Name: name, Line: k.Line}
		where := fmt.Sprintf("argument %q", name)
		switch {
		case isNull(v):
		case v.Kind == yaml.ScalarNode:
			arg.Default, arg.HasDefault = v.Value, true
		case v.Kind == yaml.MappingNode:
			for _, f := range r.entries(v, workflowArgKeys, where) {
				switch f.key {
				case "required":
					arg.Required = r.boolean(f, where)
				case "default":
					if isNull(f.v) {
						break
					}
					if s, ok := r.text(f, where); ok {
						arg.Default, arg.HasDefault = s, true
					}
				}
			}
			if arg.Required && arg.HasDefault {
				r.add(k.Line, "%s is required and has a default: a default is only used when the argument is not given, so drop one of them", where)
			}
		default:
			r.add(v.Line, "%s must be a default value or a mapping {required: true, default: ...}, not a %s", where, kindName(v))
		}
		out = append(out, arg)
	}
	return out
}

func (r *wfReader) steps(e wfEntry) []engine.WorkflowStep {
	if e.v.Kind != yaml.SequenceNode {
		r.add(e.v.Line, "workflow: \"steps\" must be a list of steps, not a %s", kindName(e.v))
		return nil
	}
	switch n := len(e.v.Content); {
	case n == 0:
		r.add(e.k.Line, "workflow: the steps list is empty: a workflow needs at least one step")
		return nil
	case n > WorkflowMaxSteps:
		r.add(e.k.Line, "workflow: %d steps, over the limit of %d: split the workflow", n, WorkflowMaxSteps)
		return nil
	}
	var out []engine.WorkflowStep
	ids := map[string]int{}
	for i, item := range e.v.Content {
		item = catalogDeref(item)
		if !r.visit(item) {
			return out
		}
		if item.Kind != yaml.MappingNode {
			r.add(item.Line, "step %d: a step must be a mapping with at least id and skill, not a %s", i+1, kindName(item))
			continue
		}
		s := r.step(item, i+1)
		if s.ID != "" {
			if at, dup := ids[s.ID]; dup {
				r.add(s.Line, "step %q: the id is already used by the step at line %d", s.ID, at)
			} else {
				ids[s.ID] = s.Line
			}
		}
		out = append(out, s)
	}
	return out
}

// step reads one step; n is its 1-based place in the list, for messages
// about a step whose id cannot be read.
func (r *wfReader) step(m *yaml.Node, n int) engine.WorkflowStep {
	s := engine.WorkflowStep{Line: m.Line}
	// The id names the step in every other message, so it is read first.
	where := r.stepID(m, n, &s)
	entries := r.entries(m, workflowStepKeys, where)
	has := map[string]bool{}
	for _, e := range entries {
		has[e.key] = true
		r.stepField(e, where, &s)
	}
	if !has["id"] {
		r.add(m.Line, "%s has no id: give it one (lower-case letters, digits, '-' and '_')", where)
	}
	if !has["skill"] {
		r.add(m.Line, "%s has no skill: name the skill it runs", where)
	}
	if s.Fallback != "" && s.Fallback == s.Skill {
		r.add(m.Line, "%s: the fallback is the step's own skill; to run it again write on_error: {retry: 1}", where)
	}
	if s.Route && s.Decompose != "" {
		r.add(m.Line, "%s: a step either routes (route: true) or decomposes (decompose: ...), not both", where)
	}
	return s
}

// stepID reads the step's id into s and returns how messages name the step:
// by its id when it is valid, else by its place.
func (r *wfReader) stepID(m *yaml.Node, n int, s *engine.WorkflowStep) string {
	where := fmt.Sprintf("step %d", n)
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], catalogDeref(m.Content[i+1])
		if k.Kind != yaml.ScalarNode || k.Value != "id" {
			continue
		}
		e := wfEntry{key: "id", k: k, v: v}
		id, ok := r.text(e, where)
		switch {
		case !ok:
		case !workflowIDRE.MatchString(id) || len(id) > workflowMaxNameLen:
			r.add(e.v.Line, "%s: id %q is not valid: ids are lower-case letters, digits, '-' and '_', starting with a letter or digit, at most %d characters", where, workflowClip(id), workflowMaxNameLen)
		default:
			s.ID = id
			where = fmt.Sprintf("step %q", id)
		}
		break // a repeated id key is reported by entries
	}
	return where
}

// stepField reads one key of a step into s.
func (r *wfReader) stepField(e wfEntry, where string, s *engine.WorkflowStep) {
	switch e.key {
	case "skill":
		s.Skill = r.skillName(e, where)
	case "prompt":
		if !isNull(e.v) {
			s.Prompt, _ = r.text(e, where)
		}
	case "depends_on":
		s.DependsOn = r.dependsOn(e, where)
	case "gate":
		if g, ok := r.text(e, where); ok {
			gate, err := engine.ParseGate(g)
			if err != nil {
				r.add(e.v.Line, "%s: gate %q is not one of always, never, on-failure, on-empty", where, workflowClip(g))
			}
			s.Gate = gate
		}
	case "preconditions":
		s.Pre = r.conditions(e, where, true)
	case "postconditions":
		s.Post = r.conditions(e, where, false)
	case "on_error":
		s.OnError = r.onError(e, where)
	case "timeout":
		s.Timeout = r.duration(e, where, false)
	case "optional":
		s.Optional = r.boolean(e, where)
	case "fallback":
		s.Fallback = r.skillName(e, where)
	case "runner":
		s.Options = r.runnerOptions(e, where)
	case "route":
		s.Route = r.boolean(e, where)
	case "decompose":
		s.Decompose = r.decompose(e, where)
	}
}

func (r *wfReader) dependsOn(e wfEntry, where string) []string {
	var items []*yaml.Node
	switch {
	case isNull(e.v):
		return nil
	case e.v.Kind == yaml.ScalarNode:
		items = []*yaml.Node{e.v}
	case e.v.Kind == yaml.SequenceNode:
		items = e.v.Content
	default:
		r.add(e.v.Line, "%s: \"depends_on\" must be a step id or a list of step ids, not a %s", where, kindName(e.v))
		return nil
	}
	var out []string
	for _, it := range items {
		it = catalogDeref(it)
		if !r.visit(it) {
			return out
		}
		if it.Kind != yaml.ScalarNode || isNull(it) {
			r.add(it.Line, "%s: depends_on lists step ids, not a %s", where, kindName(it))
			continue
		}
		id := it.Value
		switch {
		case !workflowIDRE.MatchString(id) || len(id) > workflowMaxNameLen:
			r.add(it.Line, "%s: depends_on %q is not a step id (lower-case letters, digits, '-' and '_')", where, workflowClip(id))
		case slices.Contains(out, id):
			r.add(it.Line, "%s: depends_on lists %q twice", where, id)
		default:
			out = append(out, id)
		}
	}
	return out
}

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

func (r *wfReader) onError(e wfEntry, where string) engine.ErrorPolicy {
	switch {
	case e.v.Kind == yaml.ScalarNode && !isNull(e.v):
		switch e.v.Value {
		case string(engine.OnErrorStop):
			return engine.ErrorPolicy{Kind: engine.OnErrorStop}
		case string(engine.OnErrorGate):
			return engine.ErrorPolicy{Kind: engine.OnErrorGate}
		case string(engine.OnErrorRetry):
			r.add(e.v.Line, "%s: on_error retry needs a count: write on_error: {retry: 2, backoff: 5s}", where)
		default:
			r.add(e.v.Line, "%s: on_error %q is not one of stop, gate or {retry: N, backoff: DURATION}", where, workflowClip(e.v.Value))
		}
		return engine.ErrorPolicy{}
	case e.v.Kind == yaml.MappingNode:
		p := engine.ErrorPolicy{Kind: engine.OnErrorRetry}
		hasRetry := false
		for _, f := range r.entries(e.v, workflowOnErrorKeys, where+" on_error") {
			switch f.key {
			case "retry":
				hasRetry = true
				var n int
				if f.v.Kind != yaml.ScalarNode || f.v.Tag != "!!int" || f.v.Decode(&n) != nil || n < 1 || n > workflowMaxRetries {
					r.add(f.v.Line, "%s: on_error retry must be a whole number from 1 to %d, not %s", where, workflowMaxRetries, workflowShow(f.v))
					break
				}
				p.Retries = n
			case "backoff":
				p.Backoff = r.duration(f, where+" on_error", true)
			}
		}
		if !hasRetry {
			r.add(e.v.Line, "%s: on_error as a mapping needs retry: N", where)
		}
		return p
	}
	r.add(e.v.Line, "%s: on_error must be stop, gate or {retry: N, backoff: DURATION}, not a %s", where, kindName(e.v))
	return engine.ErrorPolicy{}
}

func (r *wfReader) runnerOptions(e wfEntry, where string) map[string]string {
	if isNull(e.v) {
		return nil
	}
	if e.v.Kind != yaml.MappingNode {
		r.add(e.v.Line, "%s: \"runner\" must map option names to values (model: NAME), not a %s", where, kindName(e.v))
		return nil
	}
	out := map[string]string{}
	seen := map[string]int{}
	for i := 0; i+1 < len(e.v.Content); i += 2 {
		k, v := e.v.Content[i], catalogDeref(e.v.Content[i+1])
		if !r.visit(k) {
			return out
		}
		if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" || !workflowOptionRE.MatchString(k.Value) || len(k.Value) > workflowMaxNameLen {
			r.add(k.Line, "%s: runner option %s is not an option name (lower-case letters, digits, '-' and '_')", where, workflowShow(catalogDeref(k)))
			continue
		}
		if at, dup := seen[k.Value]; dup {
			r.add(k.Line, "%s: runner option %q is already given at line %d", where, k.Value, at)
			continue
		}
		seen[k.Value] = k.Line
		if v.Kind != yaml.ScalarNode || isNull(v) {
			r.add(v.Line, "%s: runner option %q must be text, not a %s", where, k.Value, kindName(v))
			continue
		}
		out[k.Value] = v.Value
	}
	return out
}

func (r *wfReader) decompose(e wfEntry, where string) string {
	if e.v.Kind != yaml.MappingNode {
		r.add(e.v.Line, "%s: decompose must be a mapping {skill: NAME} naming the skill each task runs, not a %s", where, kindName(e.v))
		return ""
	}
	var skill string
	has := false
	for _, f := range r.entries(e.v, workflowDecomposeKeys, where+" decompose") {
		has = true
		skill = r.skillName(f, where+" decompose")
	}
	if !has {
		r.add(e.v.Line, "%s: decompose needs skill: NAME, the skill each task runs", where)
	}
	return skill
}
