package intake_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/intake"
	"github.com/gonogo/gonogo/parse"
)

func TestChainWorkflowReadsBackAsTheSameChain(t *testing.T) {
	for _, tc := range []struct {
		expr    string
		ids     []string
		threads bool
	}{
		{"deliver-prd -> deliver-user-stories", []string{"deliver-prd", "deliver-user-stories"}, false},
		{"deliver-prd -> deliver-prd -> utility-pm-critic --thread -- mobile checkout", []string{"deliver-prd", "deliver-prd-2", "utility-pm-critic"}, true},
	} {
		chain, err := parse.Chain(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		src, err := intake.ChainWorkflow("kickoff", chain)
		if err != nil {
			t.Fatal(err)
		}
		w, err := parse.Workflow(src, "kickoff")
		if err != nil {
			t.Fatalf("%s:\n%s\n%v", tc.expr, src, err)
		}
		if w.Name != "kickoff" || len(w.Steps) != len(tc.ids) {
			t.Fatalf("%s: read back as %+v", tc.expr, w)
		}
		for i, s := range w.Steps {
			if s.ID != tc.ids[i] || s.Skill != chain.Names[i] {
				t.Errorf("%s: step %d is %s/%s, want %s/%s", tc.expr, i, s.ID, s.Skill, tc.ids[i], chain.Names[i])
			}
			if i > 0 && (len(s.DependsOn) != 1 || s.DependsOn[0] != tc.ids[i-1]) {
				t.Errorf("%s: step %s depends on %v", tc.expr, s.ID, s.DependsOn)
			}
			if hasRef := strings.Contains(s.Prompt, "{{steps."+tc.ids[max(i-1, 0)]+".output}}"); i > 0 && hasRef != tc.threads {
				t.Errorf("%s: step %s prompt %q (threaded %v)", tc.expr, s.ID, s.Prompt, tc.threads)
			}
		}
		if strings.Contains(string(src), "mobile checkout") {
			t.Errorf("the chain's context was saved into the workflow:\n%s", src)
		}
	}
	// A skill whose name looks like a repeat's id keeps the ids apart.
	chain, _ := parse.Chain("deliver-prd -> deliver-prd-2 -> deliver-prd")
	if src, err := intake.ChainWorkflow("dups", chain); err != nil {
		t.Fatalf("ids collide: %v", err)
	} else if w, _ := parse.Workflow(src, "dups"); len(w.Steps) != 3 || w.Steps[2].ID != "deliver-prd-3" {
		t.Fatalf("ids %+v", w.Steps)
	}
	if _, err := intake.ChainWorkflow("Bad Name", engine.ChainExpr{Names: []string{"a"}}); err == nil || !strings.Contains(err.Error(), `invalid workflow name "Bad Name"`) {
		t.Errorf("bad name: %v", err)
	}
}

func TestDirSaveRefusesToReplace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "flows")
	chain, _ := parse.Chain("deliver-prd -> deliver-user-stories")
	src, err := intake.ChainWorkflow("kickoff", chain)
	if err != nil {
		t.Fatal(err)
	}
	path, err := intake.Dir(dir).Save("kickoff", src, false)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != string(src) {
		t.Fatalf("%s holds %q", path, got)
	}
	if _, err := intake.Dir(dir).Save("kickoff", []byte("other"), false); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("a second save replaced the workflow: %v", err)
	}
	if _, err := intake.Dir(dir).Save("kickoff", src, true); err != nil {
		t.Fatalf("replace: %v", err)
	}
	if _, err := intake.Dir(dir).Workflow("kickoff"); err != nil {
		t.Fatalf("the saved workflow does not load: %v", err)
	}
	// An existing .yml is replaced in place, not shadowed by a .yaml.
	old, err := intake.ChainWorkflow("old", chain)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "old.yml"), old, 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := intake.Dir(dir).Save("old", old, true); err != nil || filepath.Base(p) != "old.yml" {
		t.Fatalf("replace a .yml: %s %v", p, err)
	}
	if _, err := intake.Dir(dir).Workflow("old"); err != nil {
		t.Fatalf("the replaced .yml does not load: %v", err)
	}
	os.Remove(filepath.Join(dir, "old.yml"))
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
	if _, err := intake.Dir(dir).Save("../escape", src, false); err == nil {
		t.Fatal("a name with a path in it was saved")
	}
}

func TestDirSaveTwoSavesOfOneNewName(t *testing.T) {
	dir := t.TempDir()
	chain, _ := parse.Chain("deliver-prd -> deliver-user-stories")
	src, err := intake.ChainWorkflow("race", chain)
	if err != nil {
		t.Fatal(err)
	}
	for range 50 {
		os.Remove(filepath.Join(dir, "race.yaml"))
		errs := make(chan error, 2)
		for range 2 {
			go func() {
				_, err := intake.Dir(dir).Save("race", src, false)
				errs <- err
			}()
		}
		a, b := <-errs, <-errs
		if (a == nil) == (b == nil) {
			t.Fatalf("two saves of one new name: %v and %v; want exactly one to succeed", a, b)
		}
	}
}

// A workflow's --arg flags are NAME=VALUE, each name once.
func TestArgs(t *testing.T) {
	got, err := intake.Args([]string{"env=prod", "note=a=b"})
	if err != nil || len(got) != 2 || got["env"] != "prod" || got["note"] != "a=b" {
		t.Errorf("Args: %v, %v", got, err)
	}
	for in, want := range map[string]string{"novalue": `--arg "novalue": expected NAME=VALUE`, " =x": `--arg " =x": expected NAME=VALUE`} {
		if _, err := intake.Args([]string{in}); err == nil || err.Error() != want {
			t.Errorf("Args(%q): %v, want %q", in, err, want)
		}
	}
	if _, err := intake.Args([]string{"a=1", "a=2"}); err == nil || err.Error() != "--arg a given twice" {
		t.Errorf("twice: %v", err)
	}
}
