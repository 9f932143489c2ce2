package engine

import (
	"path/filepath"
	"strings"
	"testing"
)

// composeRun is a started run of p, without a store.
func composeRun(t *testing.T, p Plan) *Run {
	t.Helper()
	evs, err := NewRun("run-c", p, StartOptions{}, t0)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Rebuild(evs)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestComposePrompt(t *testing.T) {
	chain := testPlan(InputChain, "deliver-prd", "utility-pm-critic")
	chain.Steps[0].Prompt, chain.Steps[1].Prompt = "", ""
	chain.Steps[1].Category, chain.Steps[1].Execution, chain.Steps[1].Leaf = CategoryDispatch, ExecInlineLeaf, "pm-critic"
	chain.Context = "mobile checkout for returning shoppers"
	chain.Flags.Thread = true
	threaded := composeRun(t, chain)

	plan := testPlan(InputPlan, "deliver-prd")
	plan.Steps[0].Prompt = "Write the PRD for saved carts."
	single := composeRun(t, plan)

	bare := testPlan(InputChain, "deliver-prd")
	bare.Steps[0].Prompt = ""
	bareRun := composeRun(t, bare)

	skill := Skill{Name: "deliver-prd", Instructions: "\n  Write a PRD with every TEMPLATE section.  \n"}
	tests := []struct {
		name   string
		in     PromptInput
		has    []string
		hasNot []string
	}{
		{
			name: "plan step",
			in:   PromptInput{Run: single, Step: single.Step(1), Skill: skill},
			has: []string{"step 1 of 1", "`deliver-prd`", "`ERROR:`",
				"<skill name=\"deliver-prd\">\nWrite a PRD with every TEMPLATE section.\n</skill>",
				"## Task\n\nWrite the PRD for saved carts.\n"},
			hasNot: []string{"<agent", "Shared context", "## Input", "previous attempt", "Reviewer feedback"},
		},
		{
			name: "chain step takes the shared context as its task",
			in:   PromptInput{Run: threaded, Step: threaded.Step(1), Skill: skill},
			has:  []string{"step 1 of 2", "## Task\n\nmobile checkout for returning shoppers\n"},
			// The first step of a threaded chain has nothing handed in.
			hasNot: []string{"## Input", "Shared context:", "<agent"},
		},
		{
			name: "threaded dispatch step",
			in: PromptInput{Run: threaded, Step: threaded.Step(2), Skill: Skill{Name: "utility-pm-critic"},
				Leaf: "You are pm-critic.\nScore the artifact.", Threaded: []byte("\n# PRD: Saved carts\n\nConfirmed body.\n\n")},
			has: []string{"step 2 of 2",
				"<agent name=\"pm-critic\">", "runs the `pm-critic` agent's instructions inline", "do not start a sub-agent",
				"You are pm-critic.\nScore the artifact.\n</agent>",
				"## Input: the confirmed artifact of step 1 (`deliver-prd`)\n\n# PRD: Saved carts\n\nConfirmed body.\n",
				"mobile checkout for returning shoppers"},
			hasNot: []string{"<skill", "Reviewer feedback"},
		},
		{
			name: "redo with feedback and the previous attempt",
			in: PromptInput{Run: single, Step: single.Step(1), Skill: skill,
				Feedback: "  Name an owner for every milestone. ", Previous: []byte("# PRD: first try\n")},
			has: []string{"## Your previous attempt\n\n# PRD: first try\n",
				"## Reviewer feedback on the previous attempt\n\nName an owner for every milestone.\n"},
		},
		{
			name:   "previous attempt without feedback is left out",
			in:     PromptInput{Run: single, Step: single.Step(1), Skill: skill, Previous: []byte("# PRD: first try\n")},
			hasNot: []string{"first try", "previous attempt", "Reviewer feedback"},
		},
		{
			name:   "blank feedback is no feedback",
			in:     PromptInput{Run: single, Step: single.Step(1), Skill: skill, Feedback: " \n ", Previous: []byte("old")},
			hasNot: []string{"Reviewer feedback", "previous attempt"},
		},
		{
			name:   "nothing to go on",
			in:     PromptInput{Run: bareRun, Step: bareRun.Step(1), Skill: Skill{Name: "deliver-prd"}},
			has:    []string{"## Task\n\nProduce the `deliver-prd` artifact.\n"},
			hasNot: []string{"<skill", "<agent"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ComposePrompt(tt.in)
			for _, s := range tt.has {
				if !strings.Contains(got, s) {
					t.Errorf("prompt lacks %q\n--- prompt ---\n%s", s, got)
				}
			}
			for _, s := range tt.hasNot {
				if strings.Contains(got, s) {
					t.Errorf("prompt holds %q\n--- prompt ---\n%s", s, got)
				}
			}
		})
	}
}

// The step's own prompt comes first and a chain's shared context follows it.
func TestComposePromptStepPromptAndContext(t *testing.T) {
	p := testPlan(InputChain, "deliver-prd")
	p.Steps[0].Prompt = "Focus on the post-send fix."
	p.Context = "mobile checkout"
	r := composeRun(t, p)
	got := ComposePrompt(PromptInput{Run: r, Step: r.Step(1)})
	want := "## Task\n\nFocus on the post-send fix.\n\nShared context: mobile checkout\n"
	if !strings.Contains(got, want) {
		t.Fatalf("prompt lacks %q\n--- prompt ---\n%s", want, got)
	}
	// The instructions precede the task, so the task is read with them.
	if i, j := strings.Index(got, "You are carrying out"), strings.Index(got, "## Task"); i < 0 || j < i {
		t.Fatalf("preamble and task out of order:\n%s", got)
	}
}

// The agent runs in another directory, so the prompt names the skill's
// folder and its template by absolute path.
func TestComposePromptNamesSkillFolder(t *testing.T) {
	p := testPlan(InputChain, "deliver-prd")
	r := composeRun(t, p)
	dir := filepath.Join(t.TempDir(), "skills", "deliver-prd")
	sk := Skill{Name: "deliver-prd", Instructions: "Use the template in references/TEMPLATE.md.",
		Template: "## Problem\n[what]\n", TemplateSections: []string{"Problem"}, HasTemplate: true, HasExample: true, Path: filepath.Join(dir, "SKILL.md")}
	got := ComposePrompt(PromptInput{Run: r, Step: r.Step(1), Skill: sk})
	for _, want := range []string{
		"The skill's files are in the folder `" + dir + "`",
		"its template is `" + filepath.Join(dir, "references", "TEMPLATE.md") + "`",
		"an example of a finished artifact is `" + filepath.Join(dir, "references", "EXAMPLE.md") + "`",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("prompt lacks %q\n--- prompt ---\n%s", want, got)
		}
	}
	if i, j := strings.Index(got, "</skill>"), strings.Index(got, "The skill's files"); i < 0 || j < i {
		t.Errorf("the folder should follow the skill's instructions:\n%s", got)
	}

	// A relative path (a catalog read from a relative --skills) is made
	// absolute; a skill without a template names only the folder.
	rel := Skill{Name: "deliver-prd", Path: filepath.Join("skills", "deliver-prd", "SKILL.md")}
	abs, err := filepath.Abs(filepath.Join("skills", "deliver-prd"))
	if err != nil {
		t.Fatal(err)
	}
	if got := SkillDir(rel); got != abs {
		t.Errorf("SkillDir = %q, want %q", got, abs)
	}
	// The catalog's own Dir wins over the folder of Path.
	if got := SkillDir(Skill{Dir: dir, Path: "/elsewhere/SKILL.md"}); got != dir {
		t.Errorf("SkillDir = %q, want the catalog's %q", got, dir)
	}
	got = ComposePrompt(PromptInput{Run: r, Step: r.Step(1), Skill: rel})
	if !strings.Contains(got, "`"+abs+"`") || strings.Contains(got, "its template") {
		t.Errorf("prompt for a skill without a template:\n%s", got)
	}

	// No path, no folder.
	got = ComposePrompt(PromptInput{Run: r, Step: r.Step(1), Skill: Skill{Name: "deliver-prd"}})
	if strings.Contains(got, "The skill's files") {
		t.Errorf("a skill without a path got a folder:\n%s", got)
	}
}
