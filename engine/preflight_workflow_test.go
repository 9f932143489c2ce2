package engine

import (
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// wstep is a workflow step running deliver-prd, written at line.
func wstep(line int, id string, deps ...string) WorkflowStep {
	return WorkflowStep{ID: id, Skill: "deliver-prd", DependsOn: deps, Line: line}
}

func wflow(steps ...WorkflowStep) WorkflowSpec {
	return WorkflowSpec{Name: "wf", Source: "workflows/wf.yaml", Steps: steps}
}

func wfPreflight(w WorkflowSpec, args map[string]string) (Plan, error) {
	return PreflightWorkflow(w, args, "", Flags{}, testCatalog(true), DefaultPolicy())
}

func wfIDs(p Plan) []string {
	var ids []string
	for _, s := range p.Steps {
		ids = append(ids, s.ID)
	}
	return ids
}

// wfProblems returns the problem texts ("line N: message") of err, which
// must be *Problems.
func wfProblems(t *testing.T, err error) []string {
	t.Helper()
	var p *Problems
	if !errors.As(err, &p) {
		t.Fatalf("error %v (%T) is not *Problems", err, err)
	}
	var out []string
	for _, x := range p.List {
		out = append(out, problemText(x))
	}
	return out
}

func TestPreflightWorkflowOrderAndLevels(t *testing.T) {
	tests := []struct {
		name   string
		steps  []WorkflowStep
		order  []string
		levels [][]string
	}{
		{"one step", []WorkflowStep{wstep(2, "a")}, []string{"a"}, [][]string{{"a"}}},
		{"line", []WorkflowStep{wstep(2, "a"), wstep(4, "b", "a"), wstep(6, "c", "b")},
			[]string{"a", "b", "c"}, [][]string{{"a"}, {"b"}, {"c"}}},
		{"diamond", []WorkflowStep{wstep(2, "a"), wstep(4, "b", "a"), wstep(6, "c", "a"), wstep(8, "d", "b", "c")},
			[]string{"a", "b", "c", "d"}, [][]string{{"a"}, {"b", "c"}, {"d"}}},
		{"independent steps are one level", []WorkflowStep{wstep(2, "x"), wstep(3, "y"), wstep(4, "z")},
			[]string{"x", "y", "z"}, [][]string{{"x", "y", "z"}}},
		// A step written before its dependency moves after it, and no
		// further: the earliest ready step in the file always goes next.
		{"dependency written later", []WorkflowStep{wstep(2, "x", "y"), wstep(4, "y"), wstep(6, "z")},
			[]string{"y", "x", "z"}, [][]string{{"y", "z"}, {"x"}}},
		{"uneven branches", []WorkflowStep{wstep(2, "a"), wstep(3, "b", "a"), wstep(4, "c", "b"), wstep(5, "d"), wstep(6, "e", "c", "d")},
			[]string{"a", "b", "c", "d", "e"}, [][]string{{"a", "d"}, {"b"}, {"c"}, {"e"}}},
		{"reversed file", []WorkflowStep{wstep(2, "c", "b"), wstep(3, "b", "a"), wstep(4, "a")},
			[]string{"a", "b", "c"}, [][]string{{"a"}, {"b"}, {"c"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := wfPreflight(wflow(tt.steps...), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := wfIDs(p); !slices.Equal(got, tt.order) {
				t.Errorf("order = %q, want %q", got, tt.order)
			}
			if got := WorkflowLevels(p); !reflect.DeepEqual(got, tt.levels) {
				t.Errorf("levels = %q, want %q", got, tt.levels)
			}
		})
	}
}

func TestPreflightWorkflowPlan(t *testing.T) {
	w := WorkflowSpec{Name: "kickoff", Source: "workflows/kickoff.yaml",
		Args: []WorkflowArg{{Name: "feature", Required: true, Line: 3}, {Name: "audience", Default: "shoppers", HasDefault: true, Line: 4}, {Name: "tone", Line: 5}},
		Steps: []WorkflowStep{
			{ID: "problem", Skill: "define-problem-statement", Line: 7, Gate: GateAlways,
				Prompt: "Frame {{feature}} for {{ audience }}{{tone}}. Run {{run.id}} on {{today}}."},
			{ID: "critique", Skill: "utility-pm-critic", DependsOn: []string{"problem"}, Line: 10,
				Prompt: "Critique:\n{{steps.problem.output}}"},
		}}
	flags := Flags{DryRun: true}
	p, err := PreflightWorkflow(w, map[string]string{"feature": "saved {search}"}, "mobile first", flags, testCatalog(true), DefaultPolicy())
	if err != nil {
		t.Fatal(err)
	}
	if p.Input != InputWorkflow || p.Source != "kickoff" || p.Context != "mobile first" || p.Flags != flags || len(p.Warnings) != 0 {
		t.Errorf("plan header = %+v", p)
	}
	want := []PlanStep{
		{ID: "problem", Skill: "define-problem-statement", Effort: "problem", Line: 7, Gate: GateAlways,
			Category: CategoryContent, Execution: ExecDelegate,
			Prompt: "Frame saved {search} for shoppers. Run {{run.id}} on {{today}}."},
		{ID: "critique", Skill: "utility-pm-critic", Effort: "critique", Line: 10, DependsOn: []string{"problem"},
			Category: CategoryDispatch, Execution: ExecInlineLeaf, Leaf: "pm-critic",
			Prompt: "Critique:\n{{steps.problem.output}}"},
	}
	if !reflect.DeepEqual(p.Steps, want) {
		t.Errorf("steps =\n%+v\nwant\n%+v", p.Steps, want)
	}
}

func TestPreflightWorkflowCycles(t *testing.T) {
	tests := []struct {
		name  string
		steps []WorkflowStep
		want  []string
	}{
		{"three", []WorkflowStep{wstep(2, "a", "c"), wstep(4, "b", "a"), wstep(6, "c", "b")},
			[]string{"line 2: dependency cycle: a -> b -> c -> a (each step depends on the one before it)"}},
		{"two, written in either order", []WorkflowStep{wstep(2, "x", "y"), wstep(4, "y", "x")},
			[]string{"line 2: dependency cycle: x -> y -> x (each step depends on the one before it)"}},
		{"itself", []WorkflowStep{wstep(2, "a"), wstep(4, "b", "a", "b")},
			[]string{`line 4: step "b" depends on itself`}},
		// Downstream steps are not part of the cycle and are not reported.
		{"two cycles and a bystander", []WorkflowStep{
			wstep(2, "start"), wstep(3, "p", "start", "q"), wstep(4, "q", "p"),
			wstep(5, "r", "t"), wstep(6, "s", "r"), wstep(7, "t", "s"), wstep(8, "after", "q", "t")},
			[]string{
				"line 3: dependency cycle: p -> q -> p (each step depends on the one before it)",
				"line 5: dependency cycle: r -> s -> t -> r (each step depends on the one before it)",
			}},
		// The shortest cycle through the first step is the one printed.
		{"shortest", []WorkflowStep{wstep(2, "a", "d", "b"), wstep(3, "b", "a"), wstep(4, "c", "a"), wstep(5, "d", "c")},
			[]string{"line 2: dependency cycle: a -> b -> a (each step depends on the one before it)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := wfPreflight(wflow(tt.steps...), nil)
			if got := wfProblems(t, err); !slices.Equal(got, tt.want) {
				t.Errorf("problems =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestPreflightWorkflowReferences(t *testing.T) {
	args := []WorkflowArg{{Name: "feature", Line: 3}, {Name: "audience", Line: 4}}
	steps := func(prompt string) []WorkflowStep {
		// a -> b -> c, and d on its own.
		c := wstep(6, "c", "b")
		c.Prompt = prompt
		return []WorkflowStep{wstep(2, "a"), wstep(4, "b", "a"), c, wstep(8, "d")}
	}
	tests := []struct {
		name   string
		prompt string
		want   string // "" when accepted
	}{
		{"direct dependency", "{{steps.b.output}}", ""},
		{"upstream through another step", "{{steps.a.output}} and {{ steps.a.output }}", ""},
		{"arguments and run values", "{{feature}} {{audience}} {{run.id}} {{today}}", ""},
		{"lone braces are text", "a { b } c }} d", ""},
		{"not upstream", "{{steps.d.output}}",
			`line 6: step "c" prompt: {{steps.d.output}} reads step "d", which is not upstream of "c": add "d" to its depends_on (directly or through a step it depends on)`},
		{"downstream is not upstream", "{{steps.c.output}}",
			`line 6: step "c" prompt: {{steps.c.output}} is the step's own output, which does not exist while it runs`},
		{"unknown step", "{{steps.bb.output}}",
			"line 6: step \"c\" prompt: {{steps.bb.output}} names no step of this workflow (did you mean `b`?)"},
		{"not an output", "{{steps.b}}",
			`line 6: step "c" prompt: {{steps.b}} is not a reference gonogo knows: a step's output is {{steps.ID.output}}`},
		{"other run value", "{{run.name}}",
			`line 6: step "c" prompt: {{run.name}} is not a reference gonogo knows: the run's own values are {{run.id}} and {{today}}`},
		{"unknown argument", "{{featur}}",
			"line 6: step \"c\" prompt: {{featur}} is not a declared argument (did you mean `feature`?); the arguments are feature, audience"},
		{"unclosed", "see {{feature",
			`line 6: step "c" prompt: "{{feature" is never closed with "}}"`},
		{"malformed", "{{ two words }}",
			`line 6: step "c" prompt: "{{ two words }}" is not a reference: write {{ARG}}, {{steps.ID.output}}, {{run.id}} or {{today}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := wflow(steps(tt.prompt)...)
			w.Args = args
			_, err := wfPreflight(w, nil)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if got := wfProblems(t, err); !slices.Equal(got, []string{tt.want}) {
				t.Errorf("problems =\n%s\nwant\n%s", strings.Join(got, "\n"), tt.want)
			}
		})
	}

	// A reference inside a cycle is not blamed for the cycle.
	w := wflow(wstep(2, "a", "b"), wstep(4, "b", "a"))
	w.Steps[0].Prompt = "{{steps.b.output}}"
	if got := wfProblems(t, func() error { _, err := wfPreflight(w, nil); return err }()); len(got) != 1 || !strings.Contains(got[0], "cycle") {
		t.Errorf("problems = %q", got)
	}
}

func TestPreflightWorkflowArgs(t *testing.T) {
	declared := []WorkflowArg{
		{Name: "feature", Required: true, Line: 3},
		{Name: "audience", Default: "everyone", HasDefault: true, Line: 4},
		{Name: "tone", Line: 5},
	}
	tests := []struct {
		name   string
		args   []WorkflowArg
		given  map[string]string
		prompt string   // the step's prompt when accepted
		want   []string // problems
	}{
		{"defaults", declared, map[string]string{"feature": "checkout"}, "checkout/everyone/", nil},
		{"all given", declared, map[string]string{"feature": "f", "audience": "a", "tone": "t"}, "f/a/t", nil},
		{"missing required", declared, nil, "", []string{"line 3: missing required argument \"feature\": give it with --arg feature=VALUE"}},
		{"required given blank", declared, map[string]string{"feature": "  "}, "", []string{`line 3: argument "feature" is required and was given empty`}},
		{"unknown given", declared, map[string]string{"feature": "f", "audiense": "x", "zzz": "y"}, "", []string{
			"argument \"audiense\" was given, but the workflow does not declare it (did you mean `audience`?); its arguments are feature, audience, tone",
			`argument "zzz" was given, but the workflow does not declare it; its arguments are feature, audience, tone`,
		}},
		{"none declared", nil, map[string]string{"feature": "f"}, "", []string{`argument "feature" was given, but the workflow takes no arguments`}},
		{"value holding a reference", declared, map[string]string{"feature": "{{steps.x.output}}"}, "", []string{
			`line 3: the value of argument "feature" contains "{{", which prompts read as a reference; leave it out`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := wstep(7, "a")
			if tt.args != nil {
				s.Prompt = "{{feature}}/{{audience}}/{{tone}}"
			}
			w := wflow(s)
			w.Args = tt.args
			p, err := wfPreflight(w, tt.given)
			if tt.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				if p.Steps[0].Prompt != tt.prompt {
					t.Errorf("prompt = %q, want %q", p.Steps[0].Prompt, tt.prompt)
				}
				return
			}
			if got := wfProblems(t, err); !slices.Equal(got, tt.want) {
				t.Errorf("problems =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestPreflightWorkflowSkills(t *testing.T) {
	tests := []struct {
		name     string
		step     WorkflowStep
		withLeaf bool
		want     string
	}{
		{"unknown, with offers", WorkflowStep{Skill: "deliver-prdd"}, true,
			"line 2: step \"a\": `deliver-prdd` is not an installed skill (did you mean `deliver-prd`, `deliver-user-stories`?)"},
		{"unknown, nothing close", WorkflowStep{Skill: "zzz"}, true,
			"line 2: step \"a\": `zzz` is not an installed skill"},
		{"invalid name", WorkflowStep{Skill: "Deliver-PRD"}, true,
			`line 2: step "a": "Deliver-PRD" is not a valid skill name (lower-case letters, digits and dashes)`},
		{"refused", WorkflowStep{Skill: "utility-pm-skill-builder"}, true,
			"line 2: step \"a\" names `utility-pm-skill-builder`: library-maintenance machinery, not a work product"},
		{"orchestrator", WorkflowStep{Skill: "utility-pm-workflow-orchestrator"}, true,
			"line 2: step \"a\" names `utility-pm-workflow-orchestrator`: the orchestrator does not run itself as a step"},
		{"whole workflow", WorkflowStep{Skill: "workflow-feature-kickoff"}, true,
			"line 2: step \"a\": `workflow-feature-kickoff` is a whole workflow: run it separately, it is not nested inside a run"},
		{"dispatch without its leaf", WorkflowStep{Skill: "utility-pm-critic"}, false,
			"line 2: step \"a\": `utility-pm-critic` runs its leaf agent `pm-critic`, which is not installed (agent \"pm-critic\": not found)"},
		{"broken skill", WorkflowStep{Skill: "broken-skill"}, true,
			"line 2: step \"a\": `broken-skill` cannot be used: skills/broken-skill/SKILL.md:1: the front matter opened with \"---\" is never closed by a \"---\" line"},
		{"unknown fallback", WorkflowStep{Skill: "deliver-prd", Fallback: "deliver-storys"}, true,
			"line 2: step \"a\" fallback: `deliver-storys` is not an installed skill (did you mean `deliver-prd`, `deliver-user-stories`?)"},
		{"refused fallback", WorkflowStep{Skill: "deliver-prd", Fallback: "foundation-prioritized-action-plan"}, true,
			"line 2: step \"a\" fallback names `foundation-prioritized-action-plan`: the plan producer hands plans in; it is not a step a run executes"},
		{"unknown decompose", WorkflowStep{Skill: "deliver-prd", Decompose: "deliver-task"}, true,
			"line 2: step \"a\" decompose: `deliver-task` is not an installed skill (did you mean `deliver-prd`, `deliver-user-stories`?)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.step
			s.ID, s.Line = "a", 2
			_, err := PreflightWorkflow(wflow(s), nil, "", Flags{}, testCatalog(tt.withLeaf), DefaultPolicy())
			if got := wfProblems(t, err); !slices.Equal(got, []string{tt.want}) {
				t.Errorf("problems =\n%s\nwant\n%s", strings.Join(got, "\n"), tt.want)
			}
		})
	}
}

// TestPreflightWorkflowAllAtOnce checks that one pass reports every
// problem, in line order, under the workflow's file name.
// A workflow naming a broken skill is refused as broken-skill, naming the
// file and the problem.
func TestPreflightWorkflowBrokenSkillReason(t *testing.T) {
	_, err := PreflightWorkflow(wflow(WorkflowStep{ID: "a", Skill: "broken-skill", Line: 4}), nil, "", Flags{}, testCatalog(true), DefaultPolicy())
	var ps *Problems
	if !errors.As(err, &ps) || len(ps.List) != 1 || ps.List[0].Reason != RefuseBrokenSkill || !strings.Contains(ps.List[0].Message, "skills/broken-skill/SKILL.md:1:") {
		t.Fatalf("err = %v, want one broken-skill problem naming the file", err)
	}
}

func TestPreflightWorkflowAllAtOnce(t *testing.T) {
	w := WorkflowSpec{Name: "wf", Source: "workflows/wf.yaml",
		Args: []WorkflowArg{{Name: "feature", Required: true, Line: 3}},
		Steps: []WorkflowStep{
			{ID: "a", Skill: "deliver-prdd", Line: 5, Prompt: "{{steps.b.output}}"},
			{ID: "b", Skill: "deliver-prd", Line: 8, DependsOn: []string{"nope", "c"}},
			{ID: "c", Skill: "deliver-prd", Line: 11, DependsOn: []string{"b"}},
			{ID: "a", Skill: "deliver-prd", Line: 14, Post: []Condition{{Kind: CondOutputMatches, Pattern: "(", Line: 16}}},
			{ID: "late", Skill: "deliver-prd", Line: 18, Gate: "sometimes", OnError: ErrorPolicy{Kind: OnErrorRetry}},
		}}
	_, err := PreflightWorkflow(w, map[string]string{"extra": "x"}, "", Flags{}, testCatalog(true), DefaultPolicy())
	var p *Problems
	if !errors.As(err, &p) || p.Source != "workflows/wf.yaml" {
		t.Fatalf("error = %v", err)
	}
	want := []string{
		`argument "extra" was given, but the workflow does not declare it; its arguments are feature`,
		`line 3: missing required argument "feature": give it with --arg feature=VALUE`,
		"line 5: step \"a\": `deliver-prdd` is not an installed skill (did you mean `deliver-prd`, `deliver-user-stories`?)",
		`line 5: step "a" prompt: {{steps.b.output}} reads step "b", which is not upstream of "a": add "b" to its depends_on (directly or through a step it depends on)`,
		`line 8: step "b" depends on "nope", which is not a step of this workflow`,
		"line 8: dependency cycle: b -> c -> b (each step depends on the one before it)",
		`line 14: step "a": the id is already used by the step at line 5`,
		"line 16: step \"a\": output_matches \"(\" is not a valid regular expression: error parsing regexp: missing closing ): `(`",
		`line 18: step "late": gate "sometimes" is not one of always, never, on-failure, on-empty`,
		`line 18: step "late": on_error retry with 0 retries and backoff 0s cannot be carried out`,
	}
	if got := wfProblems(t, err); !slices.Equal(got, want) {
		t.Errorf("problems =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.HasPrefix(err.Error(), "workflows/wf.yaml: 10 problems:\n  argument") {
		t.Errorf("Error() = %q", err.Error())
	}

	_, err = wfPreflight(WorkflowSpec{Name: "empty"}, nil)
	if got := wfProblems(t, err); !slices.Equal(got, []string{"the workflow has no steps"}) {
		t.Errorf("empty workflow: %q", got)
	}
}

func TestPreflightWorkflowWarnings(t *testing.T) {
	line := wflow(wstep(2, "a"), wstep(3, "b", "a"))
	diamond := wflow(wstep(2, "a"), wstep(3, "b", "a"), wstep(4, "c", "a"))
	cat, pol := testCatalog(true), DefaultPolicy()
	p, err := PreflightWorkflow(line, nil, "", Flags{Thread: true, Auto: true}, cat, pol)
	if err != nil || len(p.Warnings) != 0 {
		t.Errorf("a straight line with --thread --auto: %v %q", err, p.Warnings)
	}
	if m, _ := ResolveMode(p); m != ModeGuardedAuto {
		t.Errorf("--auto on a workflow gives %s", m)
	}
	p, err = PreflightWorkflow(diamond, nil, "", Flags{Thread: true}, cat, pol)
	if err != nil || len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "{{steps.ID.output}}") {
		t.Errorf("a branching workflow with --thread: %v %q", err, p.Warnings)
	}
}

func TestWorkflowLevelsChain(t *testing.T) {
	p := Plan{Input: InputChain, Steps: []PlanStep{{Skill: "a"}, {Skill: "b"}, {Skill: "a"}}}
	if got, want := WorkflowLevels(p), [][]string{{"a"}, {"b"}, {"a"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("levels = %q, want %q", got, want)
	}
	if got := WorkflowLevels(Plan{Input: InputWorkflow}); got != nil {
		t.Errorf("no steps: %q", got)
	}
}

func TestExpandPromptRefs(t *testing.T) {
	values := map[string]string{"a": "{{b}}", "b": "B", "steps.x.output": "X"}
	fill := func(name string) (string, bool) { v, ok := values[name]; return v, ok }
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"{{a}} {{b}}", "{{b}} B"}, // text put in is not read again
		{"{{ b }}{{b}}", "BB"},
		{"{{unknown}} {{b}}", "{{unknown}} B"},
		{"{{steps.x.output}}", "X"},
		{"{{bad ref}} {{b}}", "{{bad ref}} B"},
		{"{{b", "{{b"},
		{"{{{b}}}", "{{{b}}}"},
	}
	for _, tt := range tests {
		if got := expandPromptRefs(tt.in, fill); got != tt.want {
			t.Errorf("expandPromptRefs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// wfWide is a workflow of n steps, 20 wide: each step past the first 20
// depends on two steps of the level before and reads the output of a
// first-level step.
func wfWide(n int) WorkflowSpec {
	w := WorkflowSpec{Name: "wide"}
	for i := range n {
		s := wstep(i+1, "s"+strconv.Itoa(i))
		if i >= 20 {
			s.DependsOn = []string{"s" + strconv.Itoa(i-20), "s" + strconv.Itoa(i-20+i%7)}
			s.Prompt = "{{steps.s" + strconv.Itoa(i%20) + ".output}}"
		}
		w.Steps = append(w.Steps, s)
	}
	return w
}

// BenchmarkPreflightWorkflow measures pre-flight of the largest workflow a
// file may hold (1,000 steps) and reports its cost per step as a ratio to
// a 20-step workflow's, measured in the same run: near 1 means pre-flight
// grows linearly with the workflow.
func BenchmarkPreflightWorkflow(b *testing.B) {
	cat, pol := testCatalog(true), DefaultPolicy()
	perStep := func(w WorkflowSpec, rounds int) float64 {
		start := time.Now()
		for range rounds {
			if _, err := PreflightWorkflow(w, nil, "", Flags{}, cat, pol); err != nil {
				b.Fatal(err)
			}
		}
		return float64(time.Since(start).Nanoseconds()) / float64(rounds*len(w.Steps))
	}
	small, big := wfWide(20), wfWide(1000)
	var base float64
	b.ResetTimer()
	for b.Loop() {
		base += perStep(small, 50)
		if _, err := PreflightWorkflow(big, nil, "", Flags{}, cat, pol); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	base /= float64(b.N)
	large := perStep(big, 5)
	b.ReportMetric(large, "ns/step")
	b.ReportMetric(large/base, "x-per-step-vs-20-steps")
}
