package parse_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/parse"
)

func workflowFixturesDir(t testing.TB) string {
	return filepath.Join(planModuleRoot(t), "testdata", "workflows")
}

// workflowView is a WorkflowSpec as the golden files show it: durations as
// text, empty fields left out.
type workflowView struct {
	Name        string             `json:"name"`
	Description string             `json:"description,omitempty"`
	Args        []workflowArgView  `json:"args,omitempty"`
	Steps       []workflowStepView `json:"steps"`
}

type workflowArgView struct {
	Line     int     `json:"line"`
	Name     string  `json:"name"`
	Required bool    `json:"required,omitempty"`
	Default  *string `json:"default,omitempty"`
}

type workflowCondView struct {
	Line    int                  `json:"line"`
	Kind    engine.ConditionKind `json:"kind"`
	Path    string               `json:"path,omitempty"`
	Text    string               `json:"text,omitempty"`
	Pattern string               `json:"pattern,omitempty"`
	Field   string               `json:"field,omitempty"`
	Value   string               `json:"value,omitempty"`
	Command []string             `json:"command,omitempty"`
}

func workflowConds(cs []engine.Condition) []workflowCondView {
	var out []workflowCondView
	for _, c := range cs {
		out = append(out, workflowCondView{Line: c.Line, Kind: c.Kind, Path: c.Path, Text: c.Text,
			Pattern: c.Pattern, Field: c.Field, Value: c.Value, Command: c.Command})
	}
	return out
}

type workflowStepView struct {
	Line      int                `json:"line"`
	ID        string             `json:"id"`
	Skill     string             `json:"skill"`
	Prompt    string             `json:"prompt,omitempty"`
	DependsOn []string           `json:"depends_on,omitempty"`
	Gate      engine.Gate        `json:"gate,omitempty"`
	Pre       []workflowCondView `json:"pre,omitempty"`
	Post      []workflowCondView `json:"post,omitempty"`
	OnError   string             `json:"on_error,omitempty"`
	Timeout   string             `json:"timeout,omitempty"`
	Optional  bool               `json:"optional,omitempty"`
	Fallback  string             `json:"fallback,omitempty"`
	Options   map[string]string  `json:"options,omitempty"`
	Route     bool               `json:"route,omitempty"`
	Decompose string             `json:"decompose,omitempty"`
}

func workflowGoldenText(spec engine.WorkflowSpec, err error) ([]byte, error) {
	if err != nil {
		return []byte(fmt.Sprintf("%T\n%s\n", err, err)), nil
	}
	v := workflowView{Name: spec.Name, Description: spec.Description}
	for _, a := range spec.Args {
		av := workflowArgView{Line: a.Line, Name: a.Name, Required: a.Required}
		if a.HasDefault {
			av.Default = &a.Default
		}
		v.Args = append(v.Args, av)
	}
	for _, s := range spec.Steps {
		sv := workflowStepView{Line: s.Line, ID: s.ID, Skill: s.Skill, Prompt: s.Prompt, DependsOn: s.DependsOn,
			Gate: s.Gate, Pre: workflowConds(s.Pre), Post: workflowConds(s.Post), Optional: s.Optional, Fallback: s.Fallback, Options: s.Options,
			Route: s.Route, Decompose: s.Decompose}
		if s.OnError.Kind != "" {
			sv.OnError = string(s.OnError.Kind)
			if s.OnError.Kind == engine.OnErrorRetry {
				sv.OnError += fmt.Sprintf(" %d, backoff %s", s.OnError.Retries, s.OnError.Backoff)
			}
		}
		if s.Timeout != 0 {
			sv.Timeout = s.Timeout.String()
		}
		v.Steps = append(v.Steps, sv)
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(append([]byte("ok\n"), out...), '\n'), nil
}

// TestWorkflowGolden pins what every fixture reads as, the spec or the
// whole error; run with -update after an intended change and review the
// diff.
func TestWorkflowGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(workflowFixturesDir(t), "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no workflow fixtures: %v", err)
	}
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			got, err := workflowGoldenText(parse.Workflow(src, name))
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, strings.TrimSuffix(file, ".yaml")+".golden", got, "TestWorkflowGolden")
		})
	}
}

func workflowRead(t *testing.T, name string) (engine.WorkflowSpec, error) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(workflowFixturesDir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	return parse.Workflow(src, name)
}

func workflowProblems(t *testing.T, err error) *engine.Problems {
	t.Helper()
	var p *engine.Problems
	if !errors.As(err, &p) {
		t.Fatalf("error %v (%T) is not *engine.Problems", err, err)
	}
	return p
}

// TestWorkflowGood states what the good fixtures mean, independently of
// the golden files.
func TestWorkflowGood(t *testing.T) {
	spec, err := workflowRead(t, "full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	wantArgs := []engine.WorkflowArg{
		{Name: "feature", Required: true, Line: 6},
		{Name: "audience", Default: "mobile shoppers", HasDefault: true, Line: 7},
		{Name: "tone", Line: 8},
		{Name: "region", Default: "EU", HasDefault: true, Line: 9},
	}
	if spec.Name != "full" || spec.Description != "Every key of the workflow format." || spec.Source != "full.yaml" {
		t.Errorf("header = %q %q %q", spec.Name, spec.Description, spec.Source)
	}
	if !reflect.DeepEqual(spec.Args, wantArgs) {
		t.Errorf("args = %+v\nwant %+v", spec.Args, wantArgs)
	}
	if len(spec.Steps) != 4 {
		t.Fatalf("%d steps, want 4", len(spec.Steps))
	}
	problem, prd, split, next := spec.Steps[0], spec.Steps[1], spec.Steps[2], spec.Steps[3]
	if problem.Line != 11 || problem.Gate != engine.GateAlways || problem.Timeout != 90*time.Second || len(problem.Pre) != 3 {
		t.Errorf("problem = %+v", problem)
	}
	if c := problem.Pre[2]; c.Kind != engine.CondCommand || !slices.Equal(c.Command, []string{"test", "-d", "docs"}) || c.Line != 18 {
		t.Errorf("command precondition = %+v", c)
	}
	wantPost := []engine.Condition{
		{Kind: engine.CondOutputContains, Text: "## Goals", Line: 28},
		{Kind: engine.CondOutputMatches, Pattern: "(?m)^## Success metrics", Line: 29},
		{Kind: engine.CondJSONField, Field: "status.ok", Value: "true", Line: 30},
		{Kind: engine.CondCommand, Command: []string{"test", "-s", "docs/prd.md"}, Line: 31},
	}
	if !reflect.DeepEqual(prd.Post, wantPost) {
		t.Errorf("prd postconditions = %+v\nwant %+v", prd.Post, wantPost)
	}
	if prd.OnError != (engine.ErrorPolicy{Kind: engine.OnErrorRetry, Retries: 2, Backoff: 5 * time.Second}) ||
		prd.Timeout != 20*time.Minute || prd.Fallback != "deliver-user-stories" || prd.Gate != engine.GateOnFailure ||
		!reflect.DeepEqual(prd.Options, map[string]string{"model": "opus", "effort": "3"}) ||
		prd.Prompt != "Write the PRD.\n{{steps.problem.output}}\n" || !slices.Equal(prd.DependsOn, []string{"problem"}) {
		t.Errorf("prd = %+v", prd)
	}
	if split.OnError.Kind != engine.OnErrorGate || !split.Optional || split.Decompose != "deliver-user-stories" || split.Gate != engine.GateNever {
		t.Errorf("split = %+v", split)
	}
	if next.OnError.Kind != engine.OnErrorStop || !next.Route || next.Gate != engine.GateOnEmpty || !slices.Equal(next.DependsOn, []string{"prd", "split"}) {
		t.Errorf("route_next = %+v", next)
	}

	spec, err = workflowRead(t, "minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if spec.Name != "minimal" || len(spec.Steps) != 1 || spec.Steps[0].OnError.Kind != "" {
		t.Errorf("minimal = %+v (the name comes from the file; on_error is left to the engine)", spec)
	}

	spec, err = workflowRead(t, "shorthand.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(spec.Args[1], engine.WorkflowArg{Name: "count", Default: "3", HasDefault: true, Line: 7}) ||
		spec.Args[2].HasDefault {
		t.Errorf("args = %+v", spec.Args)
	}
	b := spec.Steps[1]
	if !slices.Equal(b.DependsOn, []string{"a"}) || !slices.Equal(b.Post[0].Command, []string{"grep", "-q", "Done", "out.md"}) ||
		b.Post[1].Value != "42" || b.Post[1].Field != "tasks.0.name" ||
		b.OnError != (engine.ErrorPolicy{Kind: engine.OnErrorRetry, Retries: 1}) {
		t.Errorf("b-2 = %+v", b)
	}

	spec, err = workflowRead(t, "anchors.yaml")
	if err != nil {
		t.Fatal(err)
	}
	first, second := spec.Steps[0], spec.Steps[1]
	if second.Prompt != "Keep it short.\n" || second.Prompt != first.Prompt || second.Options["model"] != "haiku" ||
		second.OnError != (engine.ErrorPolicy{Kind: engine.OnErrorRetry, Retries: 3, Backoff: time.Minute}) {
		t.Errorf("aliases not followed: %+v", second)
	}
}

// TestWorkflowProblems checks that every mistake in a fixture is reported
// at once, on its line, with the words that let the author fix it.
func TestWorkflowProblems(t *testing.T) {
	tests := []struct {
		file string
		want []string // "line N: substring", each matched by one problem
	}{
		{"syntax-error.yaml", []string{"line 5: invalid YAML: found a tab character"}},
		{"syntax-unclosed.yaml", []string{"line 5: invalid YAML: did not find expected ',' or ']'"}},
		{"unknown-anchor.yaml", []string{`line 5: invalid YAML: unknown anchor 'draft' referenced (a value starting with * is an alias; quote it: "*draft")`}},
		{"not-a-mapping.yaml", []string{"line 1: a workflow must be a mapping with the keys name, description, args, steps, not a list"}},
		{"two-documents.yaml", []string{"line 4: a workflow file holds one YAML document; a second one starts here"}},
		{"no-steps.yaml", []string{"line 1: the workflow has no steps key"}},
		{"empty-steps.yaml", []string{"line 2: workflow: the steps list is empty"}},
		{"crlf-bad-skill.yaml", []string{`line 9: step "b": "skill" "Nope" is not a skill name: skill names are lower case`}},
		{"unknown-keys.yaml", []string{
			`line 2: workflow: unknown key "descripton" (did you mean "description"?); the keys are name, description, args, steps`,
			`line 4: argument "feature": unknown key "defualt" (did you mean "default"?); the keys are required, default`,
			`line 8: step "a": unknown key "depend_on" (did you mean "depends_on"?); the keys are id, skill, prompt, depends_on, gate,`,
			`line 9: step "a": unknown key "prompts" (did you mean "prompt"?)`,
			`line 11: step "a" postconditions: unknown key "file-exists" (did you mean "file_exists"?); the keys are file_exists, file_absent, output_contains, output_matches, json_field, command`,
			`line 12: step "a" json_field: unknown key "value"`,
			`line 12: step "a": json_field needs "equals"`,
			`line 13: step "a" on_error: unknown key "retries"; the keys are retry, backoff`,
			`line 13: step "a": on_error as a mapping needs retry: N`,
			`line 14: step "a" decompose: unknown key "skills" (did you mean "skill"?)`,
			`line 14: step "a": decompose needs skill: NAME`,
			`line 17: step "b": a key must be a plain word, not a merge key (<<)`,
		}},
		{"wrong-types.yaml", []string{
			`line 2: workflow: "description" must be text, not a list`,
			`line 4: workflow: "args" must map argument names to a default or {required: true}, not a list`,
			`line 7: step "a": "skill" must be text, not a list`,
			`line 8: step "a": "prompt" must be text, not a mapping`,
			`line 9: step "a": "depends_on" must be a step id or a list of step ids, not a mapping`,
			`line 10: step "a": "optional" must be true or false, not "yes"`,
			`line 11: step "a": "route" must be true or false, not "1"`,
			`line 12: step "a": "runner" must map option names to values (model: NAME), not a list`,
			`line 13: step "a": "timeout" 30 needs a unit, like 30s or 30m`,
			`line 14: step "a": "preconditions" must be a list of conditions (- file_exists: PATH, ...), not a text value`,
			`line 16: step "a": a condition is a mapping with one key`,
			`line 17: step "a": command must be a list [prog, arg, ...] or a string, not a mapping`,
			`line 18: step "a": on_error must be stop, gate or {retry: N, backoff: DURATION}, not a list`,
			`line 19: step "a": decompose must be a mapping {skill: NAME}`,
			`line 20: step 2: a step must be a mapping with at least id and skill, not a text value`,
		}},
		{"bad-values.yaml", []string{
			`line 1: workflow name "Bad_Values" is not valid`,
			`line 3: step 1: id "Draft" is not valid: ids are lower-case letters`,
			`line 4: step 1: "skill" "Deliver-PRD" is not a skill name: skill names are lower case`,
			`line 5: step 1: gate "sometimes" is not one of always, never, on-failure, on-empty`,
			`line 6: step 1: "timeout" must be more than zero, not -5m`,
			`line 8: step "b": "skill" "../deliver-prd" is not a skill name: a skill name is a plain name, not a path`,
			`line 9: step "b": "fallback" "deliver prd" is not a skill name`,
			`line 10: step "b": depends_on "Draft" is not a step id`,
			`line 10: step "b": depends_on "a b" is not a step id`,
			`line 11: step "b": on_error retry must be a whole number from 1 to 20, not "0"`,
			`line 11: step "b" on_error: "backoff" "soon" is not a duration`,
			`line 12: step "c": the fallback is the step's own skill; to run it again write on_error: {retry: 1}`,
			`line 12: step "c": a step either routes (route: true) or decomposes (decompose: ...), not both`,
			`line 18: step "c": output_contains checks the step's output, which does not exist before the step runs: move it to postconditions`,
			`line 19: step "c": file_exists "/etc/passwd" must be a relative path inside the working directory`,
			`line 20: step "c": file_absent "../outside.md" must be a relative path inside the working directory`,
			`line 22: step "c": output_matches "(unclosed" is not a valid regular expression: missing closing ): ` + "`(unclosed`",
			`line 23: step "c": output_contains needs the text to look for`,
			`line 24: step "c": json_field field "a..b" must be a dotted path of names`,
			`line 24: step "c" json_field: "equals" must be text, not a null`,
			`line 25: step "c": the string form of command is split on spaces and does not understand quotes`,
			`line 26: step "c": command needs a program to run`,
			`line 27: step "c": a condition has exactly one key`,
			`line 31: step "d": on_error retry needs a count: write on_error: {retry: 2, backoff: 5s}`,
			`line 34: step "e": on_error "ignore" is not one of stop, gate or {retry: N, backoff: DURATION}`,
			`line 35: step "e": "timeout" "soon" is not a duration`,
			`line 36: step "e": runner option "Model" is not an option name`,
			`line 36: step "e": runner option "model" must be text, not a mapping`,
		}},
		{"duplicates.yaml", []string{
			`line 2: workflow: key "name" is already given at line 1`,
			`line 5: args: argument "feature" is already declared at line 4`,
			`line 9: step "a": key "skill" is already given at line 8`,
			`line 12: step "b": depends_on lists "a" twice`,
			`line 13: step "b": runner option "model" is already given at line 13`,
			`line 14: step "a": the id is already used by the step at line 7`,
		}},
		{"missing-fields.yaml", []string{
			`line 3: step 1 has no id`,
			`line 3: step 1 has no skill`,
			`line 4: step "named" has no skill`,
			`line 6: step 3 has no id`,
			`line 10: step "c": json_field needs "field"`,
			`line 10: step "c": json_field needs "equals"`,
			`line 11: step "c": decompose needs skill: NAME`,
			`line 12: step "c": on_error as a mapping needs retry: N`,
		}},
		{"args-errors.yaml", []string{
			`line 3: args: "steps" is reserved for {{steps...}} references`,
			`line 4: args: "today" is reserved`,
			`line 5: args: "9lives" is not an argument name`,
			`line 6: argument "both" is required and has a default`,
			`line 7: argument "req": "required" must be true or false, not "yes"`,
			`line 8: argument "listed" must be a default value or a mapping {required: true, default: ...}, not a list`,
			`line 9: argument "dflt": "default" must be text, not a list`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, err := workflowRead(t, tt.file)
			p := workflowProblems(t, err)
			if p.Source != tt.file {
				t.Errorf("Source = %q, want %q", p.Source, tt.file)
			}
			var got []string
			for _, x := range p.List {
				got = append(got, fmt.Sprintf("line %d: %s", x.Line, x.Message))
			}
			used := make([]bool, len(got))
		next:
			for _, w := range tt.want {
				for i, g := range got {
					if !used[i] && strings.Contains(g, w) {
						used[i] = true
						continue next
					}
				}
				t.Errorf("no problem matches %q", w)
			}
			for i, g := range got {
				if !used[i] {
					t.Errorf("unexpected problem %q", g)
				}
			}
			if t.Failed() {
				t.Logf("all problems:\n%s", strings.Join(got, "\n"))
			}
		})
	}
}

func TestWorkflowInvalidInput(t *testing.T) {
	steps := func(n int) []byte {
		var b bytes.Buffer
		b.WriteString("steps:\n")
		for i := range n {
			fmt.Fprintf(&b, "  - {id: s%d, skill: deliver-prd}\n", i)
		}
		return b.Bytes()
	}
	tests := []struct {
		name string
		src  []byte
		line int
		want string
	}{
		{"empty", nil, 1, "the workflow file is empty"},
		{"spaces", []byte(" \n\t\n"), 1, "the workflow file is empty"},
		{"comment only", []byte("# nothing\n"), 1, "the workflow file is empty"},
		{"not UTF-8", []byte("steps:\n  - id: a\n    skill: \xff\n"), 3, "not valid UTF-8 (byte 0xff"},
		{"UTF-16", []byte("\xff\xfes\x00"), 1, "UTF-16"},
		{"too large", bytes.Repeat([]byte("#\n"), parse.WorkflowMaxBytes/2+1), 1, "over the 1 MiB (1048576 bytes) limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse.Workflow(tt.src, "w.yaml")
			var r *engine.Refusal
			if !errors.As(err, &r) {
				t.Fatalf("error %v (%T) is not a refusal", err, err)
			}
			if r.Reason != engine.RefuseInvalidInput || r.Line != tt.line || r.Source != "w.yaml" || !strings.Contains(r.Message, tt.want) {
				t.Errorf("refusal = %+v, want line %d and %q", r, tt.line, tt.want)
			}
		})
	}

	if _, err := parse.Workflow(steps(parse.WorkflowMaxSteps), "w.yaml"); err != nil {
		t.Errorf("%d steps refused: %v", parse.WorkflowMaxSteps, err)
	}
	_, err := parse.Workflow(steps(parse.WorkflowMaxSteps+1), "w.yaml")
	p := workflowProblems(t, err)
	if len(p.List) != 1 || p.List[0].Line != 1 || !strings.Contains(p.List[0].Message, "1001 steps, over the limit of 1000") {
		t.Errorf("problems = %v", p)
	}
}

// TestWorkflowProblemCap keeps a hopeless file from printing thousands of
// lines: the list stops at 200 and says how many more there were.
func TestWorkflowProblemCap(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("steps:\n")
	for i := range 300 {
		fmt.Fprintf(&b, "  - {id: s%d, skill: Bad}\n", i)
	}
	_, err := parse.Workflow(b.Bytes(), "w.yaml")
	p := workflowProblems(t, err)
	if len(p.List) != 201 || p.List[200].Message != "100 more problems not shown (the first on this line)" || p.List[200].Line != 202 {
		t.Errorf("%d problems, last %+v", len(p.List), p.List[len(p.List)-1])
	}
}

// aliasBomb is a workflow whose 1,000 steps each name one 5,000-key value
// through an alias: written out, five million values.
func aliasBomb() []byte {
	var b bytes.Buffer
	b.WriteString("x: &big {")
	for i := range 5000 {
		fmt.Fprintf(&b, "k%d: v, ", i)
	}
	b.WriteString("}\nsteps:\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "  - {id: s%d, skill: deliver-prd, runner: *big}\n", i)
	}
	return b.Bytes()
}

// TestWorkflowAliasBomb checks that aliases naming one big value many
// times cost one problem: the reader counts the values it visits and stops
// at workflowMaxVisits (BenchmarkWorkflowAliasBomb measures what that costs
// against a plain file of the same size).
func TestWorkflowAliasBomb(t *testing.T) {
	_, err := parse.Workflow(aliasBomb(), "w.yaml")
	p := workflowProblems(t, err)
	if n := strings.Count(p.Error(), "expands to more than"); n != 1 {
		t.Errorf("the expansion is named %d times, want once: %v", n, p)
	}
}

// BenchmarkWorkflowAliasBomb reads the alias bomb and, in the same run, a
// plain workflow of about its size; x-bomb-vs-plain is their ratio.
func BenchmarkWorkflowAliasBomb(b *testing.B) {
	bomb := aliasBomb()
	var plain bytes.Buffer
	plain.WriteString("steps:\n")
	for i := 0; plain.Len() < len(bomb); i++ {
		fmt.Fprintf(&plain, "  - {id: s%d, skill: deliver-prd, prompt: write the thing number %d}\n", i, i)
	}
	measure := func(doc []byte) time.Duration {
		start := time.Now()
		_, _ = parse.Workflow(doc, "w.yaml")
		return time.Since(start)
	}
	var tb, tp time.Duration
	for b.Loop() {
		tb += measure(bomb)
		tp += measure(plain.Bytes())
	}
	b.ReportMetric(float64(tb)/float64(max(tp, 1)), "x-bomb-vs-plain")
}

// A workflow without a name key is named by the name it was looked up by,
// else by its file name, which must then be a workflow name.
func TestWorkflowNameFromFile(t *testing.T) {
	src := []byte("steps:\n  - id: a\n    skill: deliver-prd\n")
	spec, err := parse.WorkflowFile(src, filepath.Join("flows", "kickoff.yml"), "kickoff")
	if err != nil || spec.Name != "kickoff" {
		t.Errorf("WorkflowFile without a name key = %q, %v; want kickoff", spec.Name, err)
	}
	spec, err = parse.Workflow(src, filepath.Join("flows", "feature-kickoff.yaml"))
	if err != nil || spec.Name != "feature-kickoff" {
		t.Errorf("Workflow named by its file = %q, %v; want feature-kickoff", spec.Name, err)
	}
	spec, err = parse.Workflow(src, "Feature_Kickoff.yaml")
	var p *engine.Problems
	if !errors.As(err, &p) || len(p.List) != 1 || p.List[0].Line != 1 ||
		!strings.Contains(p.List[0].Message, `the workflow has no name key and its file name "Feature_Kickoff" is not a workflow name`) {
		t.Errorf("Workflow from Feature_Kickoff.yaml = %q, %v; want one problem on line 1 naming the file name", spec.Name, err)
	}
	if spec.Name != "" {
		t.Errorf("a workflow whose file name is not a workflow name is named %q", spec.Name)
	}
}
