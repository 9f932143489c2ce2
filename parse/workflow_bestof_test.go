package parse_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/parse"
)

func TestWorkflowBestOf(t *testing.T) {
	src := `name: drafts
steps:
  - id: a
    skill: deliver-prd
    best_of: [claude, codex]
  - id: b
    skill: deliver-user-stories
    best_of: claude, claude
    depends_on: a
`
	spec, err := parse.Workflow([]byte(src), "drafts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if a, b := spec.Steps[0].BestOf, spec.Steps[1].BestOf; !slices.Equal(a, []string{"claude", "codex"}) || !slices.Equal(b, []string{"claude", "claude"}) {
		t.Fatalf("best_of read as %q and %q", a, b)
	}
	for _, tt := range []struct{ step, want string }{
		{"    best_of: [claude]\n", `line 5: step "a": best_of names 1 runner; name at least two`},
		{"    best_of: {claude: 1}\n", `line 5: step "a": "best_of" must list runner names`},
		{"    best_of: [Claude!, codex]\n", `line 5: step "a": best_of names "Claude!", which is not a runner name`},
		{"    best_of: [claude, codex]\n    route: true\n", `line 3: step "a": a route or decompose step cannot be best_of`},
	} {
		_, err := parse.Workflow([]byte("name: bad\nsteps:\n  - id: a\n    skill: deliver-prd\n"+tt.step), "bad.yaml")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %q", tt.step, err, tt.want)
		}
	}
}
