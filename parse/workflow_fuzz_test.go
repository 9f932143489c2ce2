package parse_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/parse"
)

var workflowFuzzIDRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// FuzzWorkflow checks what must hold for any workflow file: no panic; an
// error is either problems that each name a line, or a refusal; a file that
// is accepted has well-formed, unique step ids, valid skill names and
// conditions the engine can run. Seeds are the workflow fixtures and
// examples plus testdata/fuzz/FuzzWorkflow.
func FuzzWorkflow(f *testing.F) {
	dir := workflowFixturesDir(f)
	for _, pattern := range []string{"*.yaml", "examples/*.yaml"} {
		files, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			src, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(src)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		spec, err := parse.Workflow(src, "fuzz.yaml")
		if err != nil {
			var p *engine.Problems
			var r *engine.Refusal
			switch {
			case errors.As(err, &p):
				if p.Source != "fuzz.yaml" || len(p.List) == 0 {
					t.Fatalf("problems without a source or a problem: %+v", p)
				}
				for _, x := range p.List {
					if x.Line < 1 || x.Message == "" {
						t.Fatalf("problem without a line or message: %+v", x)
					}
				}
			case errors.As(err, &r):
				if r.Source != "fuzz.yaml" || r.Message == "" || r.Reason == "" {
					t.Fatalf("refusal without a source, reason or message: %+v", r)
				}
			default:
				t.Fatalf("error %v (%T) is neither problems nor a refusal", err, err)
			}
			return
		}
		if len(spec.Steps) == 0 || len(spec.Steps) > parse.WorkflowMaxSteps || !engine.ValidSkillName(spec.Name) {
			t.Fatalf("accepted %d steps named %q", len(spec.Steps), spec.Name)
		}
		ids := map[string]bool{}
		for _, s := range spec.Steps {
			if !workflowFuzzIDRE.MatchString(s.ID) || ids[s.ID] || !engine.ValidSkillName(s.Skill) || s.Line < 1 {
				t.Fatalf("accepted step %+v", s)
			}
			ids[s.ID] = true
			for _, c := range append(s.Pre, s.Post...) {
				if c.Kind == "" || c.Line < 1 {
					t.Fatalf("accepted condition %+v", c)
				}
				if c.Kind == engine.CondOutputMatches {
					if _, err := regexp.Compile(c.Pattern); err != nil {
						t.Fatalf("accepted pattern %q: %v", c.Pattern, err)
					}
				}
				if c.Kind == engine.CondCommand && (len(c.Command) == 0 || c.Command[0] == "") {
					t.Fatalf("accepted empty command %+v", c)
				}
			}
			if s.OnError.Kind == engine.OnErrorRetry && s.OnError.Retries < 1 {
				t.Fatalf("accepted retry %+v", s.OnError)
			}
		}
	})
}
