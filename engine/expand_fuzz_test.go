package engine

import (
	"strings"
	"testing"
)

// FuzzAgentOutput feeds arbitrary agent output to what route and decompose
// steps read: never a panic; a workflow name read is a valid one; tasks
// read all have names, and no more than MaxTasks; a decompose step's
// expansion is either an error or steps whose dependencies come first.
func FuzzAgentOutput(f *testing.F) {
	for _, s := range []string{
		`{"workflow": "bugfix"}`, "bugfix", "```json\n{\"workflow\": \"x\"}\n```", `{"workflow": 7}`,
		`{"tasks": [{"name": "a"}, {"name": "b", "depends_on": ["a"]}]}`,
		`{"tasks": [{"name": "a", "depends_on": ["a"]}]}`, `{"tasks": [{"name": "Ünïcode {{x}}", "group": "g"}]}`,
		"```\n{\"tasks\": []}\n```", `{"tasks": [{"name": "a",}]}`, "", "{", "```json\n", "\x00\xff",
	} {
		f.Add(s)
	}
	cat := testCatalog(true)
	cat.skills["task"] = Skill{Name: "task"}
	f.Fuzz(func(t *testing.T, out string) {
		if name, err := RouteTarget([]byte(out)); err == nil && !ValidSkillName(name) {
			t.Fatalf("route read %q, not a workflow name", name)
		}
		tasks, err := ReadTasks([]byte(out))
		if err == nil {
			if len(tasks) == 0 || len(tasks) > MaxTasks {
				t.Fatalf("%d tasks read", len(tasks))
			}
			for _, tk := range tasks {
				if strings.TrimSpace(tk.Name) == "" {
					t.Fatal("a task without a name was read")
				}
			}
		}
		r := &Run{ID: "r", Steps: []Step{{StepDef: &StepDef{N: 1, ID: "s", Skill: "split", Rules: StepRules{Decompose: "task"}}, StepState: &StepState{Status: StepRunning}}}}
		added, err := Expander{Catalog: cat, Policy: DefaultPolicy()}.Expand(r, r.Step(1), []byte(out))
		if err != nil {
			return
		}
		seen := map[string]bool{"s": true}
		for _, ps := range added {
			for _, d := range ps.DependsOn {
				if !seen[d] {
					t.Fatalf("step %q depends on %q, which does not come before it", ps.ID, d)
				}
			}
			if strings.Contains(ps.Prompt, "{{") {
				t.Fatalf("agent text became a reference: %q", ps.Prompt)
			}
			seen[ps.ID] = true
		}
		if err := addSteps(r.Clone(), 1, added); err != nil {
			t.Fatalf("the run does not take the steps: %v", err)
		}
	})
}
