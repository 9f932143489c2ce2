package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/internal/terminal"
)

// Doctor exits 1 when no run could work, naming each reason, and a run
// in the same set-up does fail. Tests run as root, which may write
// anywhere a mode bit forbids: the unwritable data directory is one whose
// path runs through a regular file, which nobody can create, root
// included (a GONOGO_DATA_DIR naming a file where a folder was meant).
func TestDoctorSaysNoRunCouldWork(t *testing.T) {
	onPath(t, map[string]string{"claude": `case "$1 $2" in
"auth status") echo '{"loggedIn": false, "authMethod": "none"}'; exit 1 ;;
*) echo "2.1.7 (Claude Code)" ;;
esac`})
	file := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(file, []byte("not a folder\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	refusedOnly := t.TempDir()
	writeSkill(t, refusedOnly, "utility-pm-skill-lint", "Lints skills.")
	if err := os.MkdirAll(filepath.Join(refusedOnly, "half-made"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		set     map[string]string
		args    []string // besides doctor
		problem string
		run     []string // a run in the same set-up, which fails
	}{
		{"no skills folder", map[string]string{"GONOGO_SKILLS_DIR": filepath.Join(t.TempDir(), "none")}, []string{"--dry-run"},
			"no skills folder: ", []string{"run", "--dry-run", "--chain", "deliver-prd"}},
		{"no usable skill", map[string]string{"GONOGO_SKILLS_DIR": refusedOnly}, []string{"--dry-run"},
			"no usable skill in " + refusedOnly + ": 2 skills found, none can be used (see gonogo skills)",
			[]string{"run", "--dry-run", "--chain", "utility-pm-skill-lint"}},
		{"an empty skills folder", map[string]string{"GONOGO_SKILLS_DIR": t.TempDir()}, []string{"--dry-run"},
			"no usable skill: ", []string{"run", "--dry-run", "--chain", "deliver-prd"}},
		{"a data directory through a file", map[string]string{"GONOGO_DATA_DIR": filepath.Join(file, "data")}, []string{"--dry-run"},
			"gonogo cannot write the data directory " + filepath.Join(file, "data") + ": it cannot be created: " + file + " is a file, not a directory",
			[]string{"run", "--dry-run", "--chain", "deliver-prd"}},
		{"a data directory that is a file", map[string]string{"GONOGO_DATA_DIR": file}, []string{"--dry-run"},
			"gonogo cannot write the data directory " + file + ": it is a file, not a directory",
			[]string{"run", "--dry-run", "--chain", "deliver-prd"}},
		{"the agent not logged in", nil, nil,
			"the claude runner's agent is not logged in (claude auth status says so): log in with claude auth login, or set ANTHROPIC_API_KEY", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vars := baseVars(t)
			for k, v := range c.set {
				vars[k] = v
			}
			r := gonogo(t, vars, "", append([]string{"doctor"}, c.args...)...)
			if r.code != terminal.ExitRefused || !strings.Contains(r.stdout, "NOT OK: no run could work:\n") || !strings.Contains(r.stdout, "  - "+c.problem) || strings.Contains(r.stdout, "\nOK") {
				t.Fatalf("doctor exited %d, want 1 saying %q:\n%s%s", r.code, c.problem, r.stdout, r.stderr)
			}
			rep := doctorJSON(t, gonogo(t, vars, "", append([]string{"doctor", "--json"}, c.args...)...))
			if rep.OK || len(rep.Problems) != 1 || !strings.HasPrefix(rep.Problems[0], c.problem) {
				t.Errorf("doctor --json: ok %v, problems %q; want only %q", rep.OK, rep.Problems, c.problem)
			}
			if c.run != nil {
				if run := gonogo(t, vars, "approve\n", c.run...); run.code == terminal.ExitOK || run.code == terminal.ExitWaiting {
					t.Errorf("doctor says no run could work, yet %v exited %d:\n%s", c.run, run.code, run.stdout)
				}
			}
		})
	}
}

// writeSkill installs a skill folder with a SKILL.md.
func writeSkill(t *testing.T, dir, name, description string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	body := "---\nname: " + name + "\ndescription: " + description + "\n---\nDo the work.\n"
	if err := os.WriteFile(filepath.Join(dir, name, "SKILL.md"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// What an OK line says is true: the run it promises starts and works,
// in a data directory doctor said could be created.
func TestDoctorOKIsTrue(t *testing.T) {
	bin := onPath(t, map[string]string{
		"agent":  `cat >/dev/null; printf '# %s\n\nthe work\n' "$GONOGO_SKILL"`,
		"gemini": `echo "0.61.0"`,
	})
	vars := baseVars(t)
	vars["GONOGO_DATA_DIR"] = filepath.Join(t.TempDir(), "new", "data")
	r := gonogo(t, vars, "", "doctor", "--runner", "command", "--runner-cmd", "agent")
	want := "OK: a run can start: the command runner's agent " + filepath.Join(bin, "agent") +
		" is there (not run: it may take any argument as work); 3 usable skills; the data directory can be created.\n"
	if r.code != terminal.ExitOK || !strings.HasSuffix(r.stdout, want) {
		t.Fatalf("doctor exited %d, want 0 ending %q:\n%s", r.code, want, r.stdout)
	}
	run := gonogo(t, vars, "approve\n", "run", "--runner", "command", "--runner-cmd", "agent", "--chain", "deliver-prd -- x")
	if run.code != terminal.ExitOK || !strings.Contains(run.stdout, "Run complete") {
		t.Fatalf("the run doctor said could start exited %d:\n%s%s", run.code, run.stdout, run.stderr)
	}
	// An agent that cannot say whether it is logged in: doctor says it
	// did not check, and claims no login.
	r = gonogo(t, vars, "", "doctor", "--runner", "gemini")
	if r.code != terminal.ExitOK || !strings.Contains(r.stdout, "OK: a run can start: the gemini runner's agent answers --version; its login was not checked: the gemini runner's agent has no way to say without a call to its service; 3 usable skills; the data directory is writable.\n") ||
		strings.Contains(r.stdout, "logged in") {
		t.Errorf("doctor --runner gemini exited %d:\n%s", r.code, r.stdout)
	}
}

// Doctor says when an agent CLI installed with npm runs on a Node older
// than its package declares (Claude Code 2.1.330 declares node >=22).
func TestDoctorSaysTheAgentsNodeIsOlderThanItDeclares(t *testing.T) {
	prefix := t.TempDir()
	pkg := filepath.Join(prefix, "node_modules", "@anthropic-ai", "claude-code")
	if err := os.MkdirAll(filepath.Join(pkg, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := `{"name": "@anthropic-ai/claude-code", "version": "2.1.330", "bin": {"claude": "bin/claude.exe"}, "engines": {"node": ">=22.0.0"}}`
	if err := os.WriteFile(filepath.Join(pkg, "package.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "bin", "claude.exe"), []byte("#!/bin/sh\n"+loggedInClaude), 0o755); err != nil {
		t.Fatal(err)
	}
	dotBin := filepath.Join(prefix, "node_modules", ".bin")
	if err := os.MkdirAll(dotBin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../@anthropic-ai/claude-code/bin/claude.exe", filepath.Join(dotBin, "claude")); err != nil {
		t.Fatal(err)
	}
	nodeDir := onPath(t, map[string]string{"node": `echo v20.20.2`})
	t.Setenv("PATH", dotBin+string(os.PathListSeparator)+nodeDir)
	vars := baseVars(t)
	r := gonogo(t, vars, "", "doctor")
	want := "node:  @anthropic-ai/claude-code declares node >=22.0.0, but " + filepath.Join(nodeDir, "node") + " is v20.20.2: OLDER than it supports; install a newer Node\n"
	if !strings.Contains(r.stdout, want) {
		t.Errorf("doctor lacks %q:\n%s", want, r.stdout)
	}
	n := runnerIn(t, doctorJSON(t, gonogo(t, vars, "", "doctor", "--json")), "claude").Node
	if n == nil || !n.Older || n.Declares != ">=22.0.0" || n.Node != "v20.20.2" {
		t.Errorf("doctor --json node: %+v, want older: v20.20.2 against >=22.0.0", n)
	}
	onPath(t, map[string]string{"node": `echo v24.11.1`})
	t.Setenv("PATH", dotBin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if r := gonogo(t, vars, "", "doctor"); strings.Contains(r.stdout, "OLDER") || !strings.Contains(r.stdout, "is v24.11.1\n") {
		t.Errorf("doctor with node v24.11.1:\n%s", r.stdout)
	}
}
