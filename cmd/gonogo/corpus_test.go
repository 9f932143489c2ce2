package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/parse"
)

// corpusDir is the shared corpus of real pm-skills material beside the
// repository, or "" when it is absent (the tests that need it skip).
func corpusDir(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "corpus", "pm-skills")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("the shared corpus is not beside the repository")
	}
	return dir
}

type corpusWant struct {
	file     string
	steps    []string // skill (p-tokens)
	manual   []string
	domain   string
	conf     string
	refusal  string
	ambigous bool
}

var corpusPlans = []corpusWant{
	{file: "library/skill-output-samples/foundation-prioritized-action-plan/sample_foundation-prioritized-action-plan_storevine_campaigns.md",
		steps: []string{"deliver-prd (P2)"}, manual: []string{"measure-experiment-results (P1)"}, domain: "Complicated", conf: "Medium-High"},
	{file: "library/skill-output-samples/foundation-prioritized-action-plan/sample_foundation-prioritized-action-plan_brainshelf_resurface.md",
		steps: []string{"measure-experiment-design (P2+P3)", "discover-interview-synthesis (P1)"}, domain: "Complex", conf: "Low-Medium"},
	{file: "library/skill-output-samples/foundation-prioritized-action-plan/sample_foundation-prioritized-action-plan_workbench_blueprints.md",
		steps: []string{"deliver-prd (P2)"}, manual: []string{"measure-instrumentation-spec (P1)"}, domain: "Complicated", conf: "Medium-High"},
	{file: "skills/foundation-prioritized-action-plan/references/EXAMPLE.md",
		steps: []string{"define-problem-statement (P1)", "deliver-prd (P3)"}, domain: "Complicated", conf: "Medium-High"},
	{file: "skills/foundation-prioritized-action-plan/examples/02-interview-transcript.md",
		steps: []string{"discover-interview-synthesis (P3)", "measure-experiment-design (P1+P2)"}, domain: "Complex", conf: "Low-Medium"},
	{file: "skills/foundation-prioritized-action-plan/examples/03-executive-ask.md",
		steps: []string{"define-problem-statement (P1)"}, manual: []string{"discover-competitive-analysis (P1)"}, domain: "Complex", conf: "Low"},
	{file: "skills/foundation-prioritized-action-plan/references/TEMPLATE.md", refusal: "no-runnable-steps", ambigous: true},
}

// TestCheckCorpusPlans runs gonogo check --json on every real plan in the
// corpus, against the corpus's installed skills.
func TestCheckCorpusPlans(t *testing.T) {
	dir := corpusDir(t)
	vars := map[string]string{"GONOGO_DATA_DIR": t.TempDir(), "GONOGO_SKILLS_DIR": filepath.Join(dir, "skills")}
	for _, c := range corpusPlans {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			res := gonogo(t, vars, "", "check", "--json", filepath.Join(dir, c.file))
			var got jsonCheck
			if err := json.Unmarshal([]byte(res.stdout), &got); err != nil {
				t.Fatalf("exit %d: %v\n%s\n%s", res.code, err, res.stdout, res.stderr)
			}
			if c.refusal != "" {
				if res.code != terminal.ExitRefused || got.Refusal == nil || got.Refusal.Reason != c.refusal {
					t.Fatalf("exit %d refusal %+v, want %s", res.code, got.Refusal, c.refusal)
				}
				if got.DomainAmbiguous != c.ambigous {
					t.Errorf("domain_ambiguous = %v", got.DomainAmbiguous)
				}
				return
			}
			if res.code != terminal.ExitOK {
				t.Fatalf("exit %d: %+v", res.code, got.Refusal)
			}
			var steps, manual []string
			for _, s := range got.Steps {
				steps = append(steps, s.Skill+" ("+strings.Join(s.PTokens, "+")+")")
				if s.Prompt == "" || strings.Contains(s.Prompt, "\n>") || strings.HasPrefix(s.Prompt, ">") {
					t.Errorf("step %d prompt not clean: %q", s.N, s.Prompt)
				}
			}
			for _, m := range got.Manual {
				name := ""
				if m.Skill != nil {
					name = *m.Skill
				}
				manual = append(manual, name+" ("+strings.Join(m.PTokens, "+")+")")
			}
			if strings.Join(steps, ", ") != strings.Join(c.steps, ", ") {
				t.Errorf("steps = %v, want %v", steps, c.steps)
			}
			if strings.Join(manual, ", ") != strings.Join(c.manual, ", ") {
				t.Errorf("manual = %v, want %v", manual, c.manual)
			}
			if got.Domain == nil || *got.Domain != c.domain || got.Confidence == nil || *got.Confidence != c.conf {
				t.Errorf("domain %v confidence %v, want %s %s", got.Domain, got.Confidence, c.domain, c.conf)
			}
			if len(got.Deferred) != 0 {
				t.Errorf("deferred = %+v", got.Deferred)
			}
		})
	}
}

// TestCorpusPlansWithFullCatalog resolves the plans against every skill
// pm-skills ships (its manifest), as a team with the whole library
// installed would: no block is manual for want of its skill.
func TestCorpusPlansWithFullCatalog(t *testing.T) {
	dir := corpusDir(t)
	b, err := os.ReadFile(filepath.Join(dir, "skill-manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		Entries []struct{ Name string } `json:"entries"`
	}
	if err := json.Unmarshal(b, &manifest); err != nil {
		t.Fatal(err)
	}
	var skills []engine.Skill
	for _, e := range manifest.Entries {
		skills = append(skills, engine.Skill{Name: e.Name})
	}
	cat := parse.NewCatalog(skills)
	want := map[string]int{"storevine": 2, "brainshelf": 2, "workbench": 2, "EXAMPLE": 2, "02-interview": 2, "03-executive": 2}
	for _, c := range corpusPlans[:6] {
		src, err := os.ReadFile(filepath.Join(dir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := parse.Plan(src, c.file, parse.PlanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p, err := engine.PreflightPlan(doc, cat, engine.DefaultPolicy(), engine.Flags{})
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		for key, n := range want {
			if strings.Contains(c.file, key) && (len(p.Steps) != n || len(p.Manual) != 0) {
				t.Errorf("%s: %d steps %d manual, want %d runnable and none manual", c.file, len(p.Steps), len(p.Manual), n)
			}
		}
	}
}
