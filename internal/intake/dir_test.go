package intake_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/intake"
	"github.com/gonogo/gonogo/parse"
)

func workflowWrite(t *testing.T, dir, name, src string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

const workflowTiny = "steps:\n  - id: a\n    skill: deliver-prd\n"

func TestDirWorkflow(t *testing.T) {
	dir := t.TempDir()
	workflowWrite(t, dir, "feature-kickoff.yaml", workflowTiny)
	workflowWrite(t, dir, "discovery.yml", workflowTiny)
	workflowWrite(t, dir, "both.yaml", workflowTiny)
	workflowWrite(t, dir, "both.yml", workflowTiny)
	workflowWrite(t, dir, "named.yaml", "name: other\n"+workflowTiny)
	workflowWrite(t, dir, "broken.yaml", "steps: [\n")
	workflowWrite(t, dir, "notes.txt", "not a workflow")
	if err := os.Mkdir(filepath.Join(dir, "folder.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}

	for _, name := range []string{"feature-kickoff", "discovery"} {
		spec, err := intake.Dir(dir).Workflow(name)
		if err != nil {
			t.Fatalf("Dir.Workflow(%s): %v", name, err)
		}
		if spec.Name != name || len(spec.Steps) != 1 || !strings.HasPrefix(spec.Source, dir) {
			t.Errorf("Dir.Workflow(%s) = %+v", name, spec)
		}
	}

	refusal := func(name string) *engine.Refusal {
		t.Helper()
		_, err := intake.Dir(dir).Workflow(name)
		var r *engine.Refusal
		if !errors.As(err, &r) {
			t.Fatalf("Dir.Workflow(%s): error %v (%T) is not a refusal", name, err, err)
		}
		return r
	}
	r := refusal("feature-kickof")
	if r.Reason != "unknown-workflow" || !slices.Equal(r.Suggestions["feature-kickof"], []string{"feature-kickoff"}) ||
		!strings.Contains(r.Message, "(did you mean `feature-kickoff`?); the workflows there: both, broken, discovery, feature-kickoff, named") {
		t.Errorf("unknown name: %+v", r)
	}
	if r := refusal("both"); r.Reason != engine.RefuseInvalidWorkflow || !strings.Contains(r.Message, "keep one") {
		t.Errorf("both extensions: %+v", r)
	}
	if r := refusal("folder"); r.Reason != "unknown-workflow" {
		t.Errorf("a directory is not a workflow: %+v", r)
	}
	for _, bad := range []string{"../etc/passwd", "Feature", "a/b", "", "x.yaml"} {
		// A missing directory proves the name is refused before any file is looked at.
		_, err := intake.Dir(filepath.Join(dir, "missing")).Workflow(bad)
		var r *engine.Refusal
		if !errors.As(err, &r) || r.Reason != engine.RefuseInvalidInput || !strings.Contains(r.Message, "invalid workflow name") {
			t.Errorf("Dir.Workflow(%q) = %v, want an invalid-name refusal", bad, err)
		}
	}

	_, err := intake.Dir(dir).Workflow("named")
	p := workflowProblems(t, err)
	if len(p.List) != 1 || p.List[0].Line != 1 || !strings.Contains(p.List[0].Message, `the workflow is named "other" but its file is named.yaml`) ||
		p.Source != filepath.Join(dir, "named.yaml") {
		t.Errorf("name mismatch: %v", p)
	}
	_, err = intake.Dir(dir).Workflow("broken")
	if p := workflowProblems(t, err); !strings.HasPrefix(p.Error(), filepath.Join(dir, "broken.yaml")+": line ") {
		t.Errorf("broken: %v", p)
	}

	_, err = intake.Dir(filepath.Join(dir, "missing")).Workflow("feature-kickoff")
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "GONOGO_WORKFLOWS_DIR") {
		t.Errorf("missing dir: %v", err)
	}

	empty := t.TempDir()
	if r := func() *engine.Refusal {
		_, err := intake.Dir(empty).Workflow("x")
		var r *engine.Refusal
		errors.As(err, &r)
		return r
	}(); r == nil || !strings.Contains(r.Message, "holds no workflow") {
		t.Errorf("empty dir: %+v", r)
	}
}

func TestDirList(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"b.yaml", "a.yml", "a.yaml", "Upper.yaml", ".hidden.yaml", "c.txt", "d.yaml.bak"} {
		workflowWrite(t, dir, f, workflowTiny)
	}
	if err := os.Mkdir(filepath.Join(dir, "e.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "b.yaml"), filepath.Join(dir, "linked.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "gone.yaml"), filepath.Join(dir, "dangling.yaml")); err != nil {
		t.Fatal(err)
	}
	got, err := intake.Dir(dir).List()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "linked"}; !slices.Equal(got, want) {
		t.Errorf("List = %q, want %q", got, want)
	}
	if _, err := intake.Dir(filepath.Join(dir, "missing")).List(); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing dir: %v", err)
	}
}

// TestWorkflowExamples runs pre-flight on the example workflows a newcomer
// starts from, against the fixture skills, and checks the graphs their
// comments promise.
func TestWorkflowExamples(t *testing.T) {
	cat, err := parse.LoadSkills(filepath.Join("..", "..", "testdata", "skills"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("..", "..", "testdata", "workflows", "examples")
	names, err := intake.Dir(dir).List()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"design-review", "discovery-sprint", "feature-kickoff"}; !slices.Equal(names, want) {
		t.Fatalf("examples = %q, want %q", names, want)
	}
	tests := []struct {
		name   string
		args   map[string]string
		levels [][]string
		prompt string // in the first step's prompt, arguments filled in
	}{
		{"feature-kickoff", map[string]string{"feature": "saved searches"},
			[][]string{{"problem"}, {"prd"}, {"stories", "experiment"}}, `"saved searches" for mobile shoppers`},
		{"discovery-sprint", map[string]string{"topic": "onboarding", "segment": "new teams"},
			[][]string{{"synthesis"}, {"problem"}, {"experiment"}, {"critique"}}, "about onboarding\n(new teams). Date the synthesis {{today}} and mention run {{run.id}}"},
		{"design-review", map[string]string{"feature": "checkout"},
			[][]string{{"critique", "stories", "metrics"}, {"revised"}}, "design of checkout in the shared context. Focus on\nrisks and unstated assumptions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, err := intake.Dir(dir).Workflow(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if spec.Description == "" {
				t.Error("an example without a description")
			}
			plan, err := engine.PreflightWorkflow(spec, tt.args, "", engine.Flags{DryRun: true}, cat, engine.DefaultPolicy())
			if err != nil {
				t.Fatal(err)
			}
			if got := engine.WorkflowLevels(plan); !reflect.DeepEqual(got, tt.levels) {
				t.Errorf("levels = %q, want %q", got, tt.levels)
			}
			if !strings.Contains(plan.Steps[0].Prompt, tt.prompt) {
				t.Errorf("first prompt = %q, want it to hold %q", plan.Steps[0].Prompt, tt.prompt)
			}
			for _, s := range plan.Steps {
				if strings.Contains(s.Prompt, "{{") && !strings.Contains(s.Prompt, "{{steps.") && !strings.Contains(s.Prompt, "{{today}}") {
					t.Errorf("step %s keeps an unfilled reference: %q", s.ID, s.Prompt)
				}
			}
			if _, err := engine.PreflightWorkflow(spec, nil, "", engine.Flags{}, cat, engine.DefaultPolicy()); err == nil {
				t.Error("accepted without its required argument")
			}
		})
	}
}

func workflowProblems(t *testing.T, err error) *engine.Problems {
	t.Helper()
	var p *engine.Problems
	if !errors.As(err, &p) {
		t.Fatalf("error %v (%T) is not *engine.Problems", err, err)
	}
	return p
}
