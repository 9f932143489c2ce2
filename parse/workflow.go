package parse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
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
	r.secondDocument(dec, src)
	spec := r.read(&doc, wantName)
	if len(r.problems) > 0 {
		return spec, &engine.Problems{Source: source, List: r.list()}
	}
	return spec, nil
}

// secondDocument reports a YAML document after the first, or the syntax
// error where the first one should have ended.
func (r *wfReader) secondDocument(dec *yaml.Decoder, src []byte) {
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
	case err != nil:
		r.problems = append(r.problems, workflowYAMLProblem(src, err))
	default:
		r.add(max(extra.Line, 1), "a workflow file holds one YAML document; a second one starts here")
	}
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

// Keys of each kind of mapping, in the order messages list them.
var (
	workflowTopKeys       = []string{"name", "description", "args", "steps"}
	workflowArgKeys       = []string{"required", "default"}
	workflowStepKeys      = []string{"id", "skill", "prompt", "depends_on", "gate", "preconditions", "postconditions", "on_error", "timeout", "optional", "fallback", "runner", "route", "decompose", "best_of"}
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

func (r *wfReader) read(doc *yaml.Node, wantName string) engine.WorkflowSpec {
	spec := engine.WorkflowSpec{Source: r.source}
	root := catalogDocRoot(doc)
	if root.Kind != yaml.MappingNode {
		r.add(root.Line, "a workflow must be a mapping with the keys %s, not a %s", strings.Join(workflowTopKeys, ", "), kindName(root))
		return spec
	}
	has := map[string]bool{}
	for _, e := range r.entries(root, workflowTopKeys, "workflow") {
		has[e.key] = true
		r.topField(e, wantName, &spec)
	}
	if !has["name"] {
		spec.Name = r.nameFromFile(root, wantName)
	}
	if !has["steps"] {
		r.add(root.Line, "the workflow has no steps key: list its steps under steps:")
	}
	return spec
}

// topField reads one top-level key of the workflow into spec.
func (r *wfReader) topField(e wfEntry, wantName string, spec *engine.WorkflowSpec) {
	switch e.key {
	case "name":
		spec.Name = r.name(e, wantName)
	case "description":
		if s, ok := r.optionalText(e, "workflow"); ok {
			spec.Description = strings.TrimSpace(s)
		}
	case "args":
		spec.Args = r.args(e)
	case "steps":
		spec.Steps = r.steps(e)
	}
}

// name reads the "name" key; wantName, when set, is the name the file
// was looked up by, which the key must repeat.
func (r *wfReader) name(e wfEntry, wantName string) string {
	s, ok := r.text(e, "workflow")
	switch {
	case !ok:
	case !engine.ValidSkillName(s):
		r.add(e.v.Line, "workflow name %q is not valid: %s", workflowClip(s), strings.Replace(chainNameProblem(s), "skill name", "workflow name", 1))
	case wantName != "" && s != wantName:
		r.add(e.v.Line, "the workflow is named %q but its file is %s: a workflow is run by its file name, so make them the same", s, filepath.Base(r.source))
	default:
		return s
	}
	return ""
}

// nameFromFile names a workflow that has no "name" key: by the name it
// was looked up by, else by its file name.
func (r *wfReader) nameFromFile(root *yaml.Node, wantName string) string {
	switch stem, _ := WorkflowStem(filepath.Base(r.source)); {
	case wantName != "":
		return wantName
	case engine.ValidSkillName(stem):
		return stem
	default:
		r.add(root.Line, "the workflow has no name key and its file name %q is not a workflow name (lower-case letters, digits and dashes): add name: ...", workflowClip(stem))
	}
	return ""
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
		if !r.argName(k, seen) {
			continue
		}
		out = append(out, r.arg(k, v))
	}
	return out
}

// argName checks an argument's key: a plain word, declared once, usable
// in --arg and not taken by another {{...}} reference. seen maps each name
// read so far to its line; a repeated name is reported even when invalid.
func (r *wfReader) argName(k *yaml.Node, seen map[string]int) bool {
	if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
		r.add(k.Line, "args: an argument name must be a plain word, not a %s", kindName(catalogDeref(k)))
		return false
	}
	name := k.Value
	if at, dup := seen[name]; dup {
		r.add(k.Line, "args: argument %q is already declared at line %d", name, at)
		return false
	}
	seen[name] = k.Line
	switch {
	case !workflowArgRE.MatchString(name) || len(name) > workflowMaxNameLen:
		r.add(k.Line, "args: %q is not an argument name (letters, digits, '_' and '-', starting with a letter or '_', at most %d)", workflowClip(name), workflowMaxNameLen)
		return false
	case slices.Contains(workflowReservedArgs, name):
		r.add(k.Line, "args: %q is reserved for {{%s...}} references; choose another name", name, name)
		return false
	}
	return true
}

// arg reads the value of the argument named by k: nothing, a bare default,
// or a mapping {required: ..., default: ...}.
func (r *wfReader) arg(k, v *yaml.Node) engine.WorkflowArg {
	arg := engine.WorkflowArg{Name: k.Value, Line: k.Line}
	where := fmt.Sprintf("argument %q", k.Value)
	switch {
	case isNull(v):
	case v.Kind == yaml.ScalarNode:
		arg.Default, arg.HasDefault = v.Value, true
	case v.Kind == yaml.MappingNode:
		r.argFields(v, where, &arg)
		if arg.Required && arg.HasDefault {
			r.add(k.Line, "%s is required and has a default: a default is only used when the argument is not given, so drop one of them", where)
		}
	default:
		r.add(v.Line, "%s must be a default value or a mapping {required: true, default: ...}, not a %s", where, kindName(v))
	}
	return arg
}

// argFields reads the keys of an argument written as a mapping into arg.
func (r *wfReader) argFields(m *yaml.Node, where string, arg *engine.WorkflowArg) {
	for _, f := range r.entries(m, workflowArgKeys, where) {
		switch f.key {
		case "required":
			arg.Required = r.boolean(f, where)
		case "default":
			if s, ok := r.optionalText(f, where); ok {
				arg.Default, arg.HasDefault = s, true
			}
		}
	}
}
