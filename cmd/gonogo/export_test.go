package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/internal/terminal"
)

// TestExport runs a chain in the terminal with an edit, a redo with
// feedback and an approval, then exports its audit trail as JSON, as
// Markdown and to a file.
func TestExport(t *testing.T) {
	data := t.TempDir()
	agent := writeAgent(t, `cat >/dev/null
printf '# %s\n\nline one\nline two\n' "$GONOGO_SKILL"`)
	edit := filepath.Join(t.TempDir(), "edit.md")
	if err := os.WriteFile(edit, []byte("# define-problem-statement\n\nline one, by a person\nline two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"GONOGO_DATA_DIR": data, "GONOGO_SKILLS_DIR": filepath.Join(exampleDir(t), "skills")}
	run := gonogo(t, vars, "edit "+edit+"\nredo add a table\napprove\n",
		"run", "--runner", "command", "--runner-cmd", agent, "--chain", "define-problem-statement -> deliver-prd -- saved searches")
	if run.code != terminal.ExitOK {
		t.Fatalf("run: exit %d\n%s%s", run.code, run.stdout, run.stderr)
	}
	id := regexp.MustCompile(`gonogo run (\S+)`).FindStringSubmatch(run.stdout)[1]

	res := gonogo(t, vars, "", "export", id)
	var trail struct {
		Version int `json:"gonogo_audit"`
		Run     struct{ ID, State string }
		Steps   []struct {
			Decision *string
			Attempts []struct {
				Feedback  string
				Artifact  *struct{ SHA256 string }
				Edits     []struct{ Actor, Diff string }
				Decisions []struct{ Kind, Actor string }
			}
		}
		Journal []struct{ Seq uint64 }
	}
	if err := json.Unmarshal([]byte(res.stdout), &trail); res.code != terminal.ExitOK || err != nil {
		t.Fatalf("export: exit %d, %v\n%s%s", res.code, err, res.stdout, res.stderr)
	}
	if trail.Version != 1 || trail.Run.ID != id || trail.Run.State != "completed" || len(trail.Steps) != 2 {
		t.Fatalf("trail = %+v", trail)
	}
	a1 := trail.Steps[0].Attempts[0]
	if len(a1.Edits) != 1 || a1.Edits[0].Actor != "tester" || !strings.Contains(a1.Edits[0].Diff, "-line one\n+line one, by a person\n") {
		t.Errorf("step 1 edits = %+v", a1.Edits)
	}
	s2 := trail.Steps[1]
	if len(s2.Attempts) != 2 || s2.Attempts[1].Feedback != "add a table" || s2.Attempts[0].Decisions[0].Kind != "redo" {
		t.Errorf("step 2 = %+v", s2)
	}
	for i, ev := range trail.Journal {
		if ev.Seq != uint64(i+1) {
			t.Fatalf("journal seq %d at %d", ev.Seq, i)
		}
	}

	md := gonogo(t, vars, "", "export", id, "--format", "md")
	if md.code != terminal.ExitOK || !strings.Contains(md.stdout, "# Audit trail of run "+id) || !strings.Contains(md.stdout, "```diff\n") ||
		!strings.Contains(md.stdout, "Redo feedback: “add a table”") {
		t.Errorf("export --format md: exit %d\n%s%s", md.code, md.stdout, md.stderr)
	}

	out := filepath.Join(t.TempDir(), "trail.md")
	if res := gonogo(t, vars, "", "export", id, "--format", "md", "-o", out); res.code != terminal.ExitOK || res.stdout != "" {
		t.Fatalf("export -o: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	// The same trail as printed, but for the moment it was written.
	stamp := regexp.MustCompile(`\| Written \| [^|]+ \|`)
	if b, err := os.ReadFile(out); err != nil || stamp.ReplaceAllString(string(b), "") != stamp.ReplaceAllString(md.stdout, "") {
		t.Fatalf("the file: %v\n%s", err, b)
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".*"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

// TestExportRefusals: a run that is not there, a format gonogo does not
// write, and a missing run id are usage errors (exit 2) that say what is
// wrong.
func TestExportRefusals(t *testing.T) {
	vars := map[string]string{"GONOGO_DATA_DIR": t.TempDir()}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"export", "20260101-000000-000000000000"}, "no run 20260101-000000-000000000000"},
		{[]string{"export", "x", "--format", "pdf"}, `--format "pdf": json or md`},
		{[]string{"export"}, "expected one run id"},
		{[]string{"export", "x", "-o", "/nonexistent-gonogo/dir/trail.md"}, "no run x"},
	} {
		res := gonogo(t, vars, "", tc.args...)
		if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, tc.want) || res.stdout != "" {
			t.Errorf("gonogo %s: exit %d, stderr %q; want exit 2 saying %q", strings.Join(tc.args, " "), res.code, res.stderr, tc.want)
		}
	}
}
