package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/storage"
)

// complete asks gonogo for completions as a shell does (cobra's hidden
// __complete command) and returns the offered values, descriptions cut.
func complete(t *testing.T, vars map[string]string, args ...string) []string {
	t.Helper()
	res := gonogo(t, vars, "", append([]string{"__complete"}, args...)...)
	if res.code != terminal.ExitOK {
		t.Fatalf("__complete %q: exit %d\n%s", args, res.code, res.stderr)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(res.stdout), "\n") {
		if l == "" || strings.HasPrefix(l, ":") {
			continue
		}
		v, _, _ := strings.Cut(l, "\t")
		out = append(out, v)
	}
	return out
}

func hasAll(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("%s: %q not offered; got %q", what, w, got)
		}
	}
}

func TestCompleteCommandsAndFlags(t *testing.T) {
	vars := baseVars(t)
	hasAll(t, "commands", complete(t, vars, ""), "run", "check", "show", "resume", "serve", "workflow", "completion", "help", "stats")
	hasAll(t, "stats flags", complete(t, vars, "stats", "--"), "--since", "--skill", "--json", "--data")
	hasAll(t, "stats periods", complete(t, vars, "stats", "--since", ""), "7d", "30d", "all")
	hasAll(t, "run flags", complete(t, vars, "run", "--"), "--chain", "--workflow", "--runner", "--thread", "--dry-run")
	hasAll(t, "workflow subcommands", complete(t, vars, "workflow", ""), "save", "list")
	hasAll(t, "runners", complete(t, vars, "run", "--runner", ""), "claude", "command", "dry-run")
}

func TestCompleteSkillsInChain(t *testing.T) {
	skills, _ := filepath.Abs("../../testdata/skills")
	vars := map[string]string{"GONOGO_SKILLS_DIR": skills}
	hasAll(t, "chain", complete(t, vars, "run", "--chain", ""), "deliver-prd", "measure-experiment-design", "define-problem-statement")
	got := complete(t, vars, "check", "--chain", "deliver-prd -> de")
	hasAll(t, "chain tail", got, "deliver-prd -> deliver-prd", "deliver-prd -> define-problem-statement")
	if slices.Contains(got, "deliver-prd -> measure-experiment-design") {
		t.Errorf("offers a name that does not continue what was typed: %q", got)
	}
	// --skills on the line wins over the environment.
	hasAll(t, "chain with --skills", complete(t, baseVars(t), "run", "--skills", skills, "--chain", "deliver-"), "deliver-user-stories")
	// An unreadable skills directory completes nothing, without an error.
	if got := complete(t, map[string]string{"GONOGO_SKILLS_DIR": t.TempDir() + "/none"}, "run", "--chain", ""); len(got) != 0 {
		t.Errorf("missing skills directory offered %q", got)
	}
}

// A skill that cannot run as a step is offered saying so, and why; a
// usable one is offered as it is.
func TestCompleteSaysWhichSkillsAreNotUsable(t *testing.T) {
	vars := shapesVars(t)
	res := gonogo(t, vars, "", "__complete", "check", "--chain", "colon-in-description -> ")
	lines := map[string]string{}
	for _, l := range strings.Split(res.stdout, "\n") {
		v, desc, _ := strings.Cut(l, "\t")
		lines[v] = desc
	}
	for name, want := range map[string]string{
		"utility-pm-skill-lint": "not usable: refused by the policy: library-maintenance machinery, not a work product",
		"workflow-kickoff":      "not usable: refused by the policy: a whole workflow",
		"utility-pm-critic":     "not usable: its leaf agent pm-critic is not installed",
		"colon-in-description":  "",
	} {
		desc, ok := lines["colon-in-description -> "+name]
		if !ok || !strings.HasPrefix(desc, want) || (want == "") != (desc == "") {
			t.Errorf("%s offered %v with %q, want %q", name, ok, desc, want)
		}
	}
}

func TestCompleteWorkflows(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"kickoff.yaml", "discovery.yaml", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("steps: []\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := complete(t, map[string]string{"GONOGO_WORKFLOWS_DIR": dir}, "run", "--workflow", "")
	hasAll(t, "workflows", got, "kickoff", "discovery")
	if slices.Contains(got, "notes") {
		t.Errorf("offers a file that is not a workflow: %q", got)
	}
}

func TestCompleteRunIDs(t *testing.T) {
	vars := baseVars(t)
	res := gonogo(t, vars, "", "run", "--dry-run", "--chain", "deliver-prd, measure-experiment-design")
	if res.code != terminal.ExitWaiting {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	id := runID(t, res.stdout)
	hasAll(t, "show", complete(t, vars, "show", ""), id)
	hasAll(t, "resume", complete(t, vars, "resume", ""), id)
	hasAll(t, "show --data", complete(t, map[string]string{}, "show", "--data", vars["GONOGO_DATA_DIR"], id[:4]), id)
	if got := complete(t, vars, "show", id, ""); slices.Contains(got, id) {
		t.Errorf("show takes one run, yet a second is offered: %q", got)
	}

	// A store another gonogo holds completes nothing: completion waits for
	// the lock no longer than completeLockWait, then offers no run.
	db, err := storage.Open(vars["GONOGO_DATA_DIR"], storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := complete(t, vars, "show", ""); slices.Contains(got, id) {
		t.Errorf("locked store: offered %q", got)
	}
}

func TestCompleteCreatesNoStore(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	if got := complete(t, map[string]string{"GONOGO_DATA_DIR": data}, "show", ""); len(got) != 0 {
		t.Errorf("offered %q with no store", got)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("completion created %s: %v", data, err)
	}
}

func TestCompletionScripts(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish"} {
		res := gonogo(t, nil, "", "completion", sh)
		if res.code != terminal.ExitOK || !strings.Contains(res.stdout, "__complete") || res.stderr != "" {
			t.Errorf("completion %s: exit %d, stderr %q, %d bytes", sh, res.code, res.stderr, len(res.stdout))
		}
	}
	for _, args := range [][]string{{"completion", "tcsh"}, {"completion"}} {
		if res := gonogo(t, nil, "", args...); res.code != terminal.ExitUsage || !strings.Contains(res.stderr, "bash, zsh, fish") {
			t.Errorf("%q: exit %d, stderr %q", args, res.code, res.stderr)
		}
	}
}
