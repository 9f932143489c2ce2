package completion

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/parse"
	"github.com/gonogo/gonogo/storage"
)

// TestChainCompletesTheLastName: only the name being typed is completed,
// after what was typed before it, whatever separates the names.
func TestChainCompletesTheLastName(t *testing.T) {
	cat, err := parse.LoadSkills("../../testdata/skills")
	if err != nil {
		t.Fatal(err)
	}
	for typed, want := range map[string][]string{
		"deliver-prd -> deliver-u": {"deliver-prd -> deliver-user-stories"},
		"deliver-prd, measure-":    {"deliver-prd, measure-experiment-design"},
		"define-problem-statement": {"define-problem-statement"},
		"deliver-prd -> nothing-":  nil,
	} {
		if got := Chain(typed, cat, ""); !slices.Equal(got, want) {
			t.Errorf("Chain(%q) = %q, want %q", typed, got, want)
		}
	}
	// A skill that cannot run as a step is offered saying why.
	got := Chain("x -> utility-pm-workflow-o", cat, "")
	if len(got) != 1 || !strings.HasPrefix(got[0], "x -> utility-pm-workflow-orchestrator\tnot usable: refused by the policy: ") {
		t.Errorf("a refused skill: %q", got)
	}
}

// TestRunIDsCreatesNothing: completing a run id where there is no store
// offers nothing and leaves no store behind.
func TestRunIDsCreatesNothing(t *testing.T) {
	data := t.TempDir()
	if got := RunIDs(context.Background(), data, ""); got != nil {
		t.Errorf("no store: offered %q", got)
	}
	if _, err := os.Stat(filepath.Join(data, storage.FileName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("completing created the store: %v", err)
	}
}
