package parse

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
)

func TestPolicyExampleIsDefault(t *testing.T) {
	got, err := LoadPolicy(filepath.Join("..", "testdata", "policy", "example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if want := engine.DefaultPolicy(); !reflect.DeepEqual(got, want) {
		t.Errorf("example.yaml =\n%+v\nwant the default policy\n%+v", got, want)
	}
}

func TestLoadPolicyEmptyPathIsDefault(t *testing.T) {
	got, err := LoadPolicy("")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, engine.DefaultPolicy()) {
		t.Errorf("LoadPolicy(\"\") = %+v, want the default policy", got)
	}
}

func TestLoadPolicyMissingFile(t *testing.T) {
	_, err := LoadPolicy(filepath.Join(t.TempDir(), "nope.yaml"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("err = %v, want fs.ErrNotExist", err)
	}
}

func TestPolicy(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want engine.Policy
	}{
		{"empty mapping refuses nothing", "{}", engine.Policy{}},
		{"plain strings", "self: [a, b]\nrefused:\n  - \"maint-*\"\n",
			engine.Policy{
				Self:    []engine.PolicyRule{{Pattern: "a"}, {Pattern: "b"}},
				Refused: []engine.PolicyRule{{Pattern: "maint-*"}},
			}},
		{"mixed rule forms", "composite:\n  - wf-one\n  - pattern: \"wf-[0-9]*\"\n    reason: >-\n      a whole\n      workflow\n",
			engine.Policy{Composite: []engine.PolicyRule{{Pattern: "wf-one"}, {Pattern: "wf-[0-9]*", Reason: "a whole workflow"}}}},
		{"null lists are empty", "self:\nrefused: ~\ndispatch:\n", engine.Policy{}},
		{"dispatch only", "dispatch:\n  team-critic: critic\n  team-review: reviewer\n",
			engine.Policy{Dispatch: map[string]string{"team-critic": "critic", "team-review": "reviewer"}}},
		{"reason may be omitted or null", "refused:\n  - pattern: x\n    reason:\n", engine.Policy{Refused: []engine.PolicyRule{{Pattern: "x"}}}},
		{"anchors are followed", "refused:\n  - &r {pattern: x, reason: why}\ncomposite:\n  - *r\n",
			engine.Policy{Refused: []engine.PolicyRule{{Pattern: "x", Reason: "why"}}, Composite: []engine.PolicyRule{{Pattern: "x", Reason: "why"}}}},
		{"numeric name", "self: [42]", engine.Policy{Self: []engine.PolicyRule{{Pattern: "42"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Policy([]byte(tt.src), "team.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Policy =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestPolicyErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		msg  string // the error must contain it; it starts with "file:line:"
	}{
		{"empty file", "", "team.yaml: the policy file is empty"},
		{"comments only", "# nothing\n", "team.yaml: the policy file is empty"},
		{"not a mapping", "- a\n- b\n", "team.yaml:1: a policy must be a mapping"},
		{"scalar root", "refuse everything\n", "team.yaml:1: a policy must be a mapping"},
		{"unknown key", "self: []\nrefuse: [a]\n", `team.yaml:2: unknown key "refuse"`},
		{"repeated key", "self: [a]\nrefused: [b]\nself: [c]\n", `team.yaml:3: key "self" is already given at line 1`},
		{"list is a string", "refused: maint-x\n", `team.yaml:1: "refused" must be a list of rules`},
		{"list is a mapping", "self:\n  pattern: a\n", `team.yaml:2: "self" must be a list of rules`},
		{"rule is a list", "self:\n  - [a, b]\n", "team.yaml:2: a self rule must be a pattern or a mapping"},
		{"rule is null", "self:\n  - ~\n", "team.yaml:2: a self rule must be a pattern or a mapping with pattern and reason, not a null"},
		{"rule unknown key", "refused:\n  - pattern: a\n    why: no\n", `team.yaml:3: unknown key "why" in a refused rule`},
		{"rule without pattern", "refused:\n  - reason: no\n", "team.yaml:2: a refused rule needs a pattern"},
		{"rule repeated key", "refused:\n  - pattern: a\n    pattern: b\n", `team.yaml:3: key "pattern" is already given at line 2`},
		{"pattern is a list", "refused:\n  - pattern: [a]\n", `team.yaml:2: "pattern" of a refused rule must be text, not a list`},
		{"pattern is null", "refused:\n  - pattern:\n", `team.yaml:2: "pattern" of a refused rule must be text, not a null`},
		{"reason is a mapping", "refused:\n  - pattern: a\n    reason: {x: y}\n", `team.yaml:3: "reason" of a refused rule must be text`},
		{"empty pattern", "composite:\n  - \"\"\n", "team.yaml:2: a composite rule has an empty pattern"},
		{"bad glob", "composite:\n  - \"workflow-[\"\n", `team.yaml:2: invalid glob pattern "workflow-["`},
		{"bad glob escape", "refused: [\"x\\\\\"]\n", `team.yaml:1: invalid glob pattern`},
		{"pattern can never match", "self:\n  - Utility-PM\n", `team.yaml:2: pattern "Utility-PM" in self can never match`},
		{"dispatch is a list", "dispatch:\n  - a\n", `team.yaml:2: "dispatch" must map skill names`},
		{"dispatch glob key", "dispatch:\n  \"critic-*\": critic\n", `team.yaml:2: dispatch key "critic-*" is not a skill name`},
		{"dispatch leaf is a list", "dispatch:\n  team-critic: [a]\n", `team.yaml:2: the leaf agent of dispatch skill "team-critic" must be an agent name, not a list`},
		{"dispatch leaf missing", "dispatch:\n  team-critic:\n", "not a null"},
		{"dispatch leaf is a path", "dispatch:\n  team-critic: ../critic\n", `team.yaml:2: leaf agent "../critic"`},
		{"dispatch repeated", "dispatch:\n  a: b\n  a: c\n", `team.yaml:3: dispatch entry "a" is already given at line 2`},
		{"dispatch shadowed", "refused:\n  - \"utility-*\"\ndispatch:\n  utility-critic: critic\n",
			`team.yaml:4: dispatch entry "utility-critic" can never apply: the refused rule "utility-*" at line 2`},
		{"yaml syntax", "self:\n  - a\n - b\n", "team.yaml:2: invalid YAML: did not find expected key"},
		{"bare star alias", "composite:\n  - *-draft\n", `team.yaml:2: invalid YAML: unknown anchor '-draft' referenced (quote glob patterns: "*-draft")`},
		{"tab indentation", "self:\n\t- a\n", "team.yaml:2: invalid YAML"},
		{"second document", "self: [a]\n---\nself: [b]\n", "team.yaml:2: a policy file holds one YAML document"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Policy([]byte(tt.src), "team.yaml")
			if err == nil {
				t.Fatalf("Policy(%q) = %+v, want an error containing %q", tt.src, got, tt.msg)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error = %q, want it to contain %q", err, tt.msg)
			}
		})
	}
}

func TestLoadPolicyNamesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte("self: [a]\nextra: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadPolicy(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+":2: ") {
		t.Errorf("err = %v, want it to start with %q", err, path+":2: ")
	}
}
