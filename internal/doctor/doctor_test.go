package doctor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/parse"
)

func writeFile(t *testing.T, path, body string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
}

func skill(name, description string) string {
	return "---\nname: " + name + "\ndescription: " + description + "\n---\nDo the work.\n"
}

// A skill counts as usable exactly when it can run as a step: a broken
// one and one the policy refuses do not, and each problem is said once.
func TestCheckSkillsCountsOnlyUsableSkills(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "write-prd", "SKILL.md"), skill("write-prd", "Writes a PRD."), 0o644)
	writeFile(t, filepath.Join(dir, "half-open", "SKILL.md"), "---\nname: half-open\ndescription: never closed\n\n# Body\n", 0o644)
	writeFile(t, filepath.Join(dir, "utility-pm-skill-lint", "SKILL.md"), skill("utility-pm-skill-lint", "Lints skills."), 0o644)
	load := func() (*parse.Catalog, error) {
		return parse.LoadCatalog(parse.CatalogOptions{SkillDirs: []string{dir}})
	}

	s := checkSkills(SkillsConfig{Dirs: []string{dir}, Given: "--skills", Load: load})
	if !s.Exists || s.Skills != 1 || s.Broken != 2 || s.Source != "--skills" {
		t.Fatalf("skills %+v, want 1 usable and 2 not, from --skills", s)
	}
	half, lint := 0, 0
	for _, p := range s.Problems {
		if strings.Contains(p, "half-open") {
			half++
		}
		if strings.HasPrefix(p, filepath.Join(dir, "utility-pm-skill-lint")+": refused by the policy") {
			lint++
		}
	}
	if half != 1 || lint != 1 {
		t.Errorf("problems %q: want the broken skill once and the refused one once, by folder", s.Problems)
	}
}

func TestCheckSkillsWithoutAFolder(t *testing.T) {
	missing := fmt.Errorf("no skills folder found: looked for skills: %w", fs.ErrNotExist)
	s := checkSkills(SkillsConfig{Load: func() (*parse.Catalog, error) { return nil, missing }})
	if s.Exists || !slices.Equal(s.Problems, []string{missing.Error()}) || s.Dirs == nil {
		t.Errorf("no folder: %+v", s)
	}
	unreadable := errors.New("skills: permission denied")
	s = checkSkills(SkillsConfig{Dirs: []string{"skills"}, Load: func() (*parse.Catalog, error) { return nil, unreadable }})
	if !s.Exists || !slices.Equal(s.Problems, []string{unreadable.Error()}) || s.Skills != 0 {
		t.Errorf("an unreadable folder: %+v", s)
	}
}

func TestSkillsSource(t *testing.T) {
	for _, c := range []struct {
		given string
		dirs  []string
		want  string
	}{
		{"GONOGO_SKILLS_DIR", []string{"x"}, "GONOGO_SKILLS_DIR"},
		{"--skills", []string{"skills"}, "--skills"},
		{"", []string{"skills"}, "skills in the working directory (no Claude Code skills folder found)"},
		{"", []string{"/home/a/.claude/skills"}, "Claude Code's skills folders (~/.claude/skills, then .claude/skills)"},
		{"", nil, "the default folders: ~/.claude/skills, .claude/skills, then skills in the working directory"},
	} {
		if got := skillsSource(c.given, c.dirs); got != c.want {
			t.Errorf("skillsSource(%q, %q) = %q, want %q", c.given, c.dirs, got, c.want)
		}
	}
}

// The command runner's executable is found but never run (it may take
// any argument as work); a runner gonogo does not know is reported too.
// PATH is the process's: this test cannot run in parallel.
func TestCheckRunners(t *testing.T) {
	bin := t.TempDir()
	t.Setenv("PATH", bin)
	ran := filepath.Join(t.TempDir(), "ran")
	writeFile(t, filepath.Join(bin, "agent"), "#!/bin/sh\ntouch "+ran+"\n", 0o755)

	rs := checkRunners(t.Context(), "command", "agent")
	i := slices.IndexFunc(rs, func(r Runner) bool { return r.Name == "command" })
	if i < 0 || !rs[i].Configured || !rs[i].Found || rs[i].Path != filepath.Join(bin, "agent") || rs[i].Starts != nil || rs[i].Problem != "" {
		t.Fatalf("command: %+v", rs)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("doctor ran the command runner's executable")
	}
	for _, r := range rs {
		if r.Name == "claude" && (r.Found || r.Problem != "not found on PATH") {
			t.Errorf("claude on an empty PATH: %+v", r)
		}
	}

	rs = checkRunners(t.Context(), "nope", "")
	last := rs[len(rs)-1]
	if last.Name != "nope" || !last.Configured || !strings.HasPrefix(last.Problem, "unknown runner (valid: ") {
		t.Errorf("an unknown runner: %+v", last)
	}
}
