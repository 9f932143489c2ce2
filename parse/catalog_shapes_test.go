package parse

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
)

func shapesDir() string { return filepath.Join("..", "testdata", "skills-shapes", "skills") }

// Every shape of SKILL.md that Claude Code loads is loaded, and every
// shape that cannot be read costs only its own skill, with a reason that
// names the file and, where there is one, the line.
func TestLoadSkillsShapes(t *testing.T) {
	c, err := LoadSkills(shapesDir())
	if err != nil {
		t.Fatal(err)
	}
	file := func(name string) string {
		abs, err := filepath.Abs(filepath.Join(shapesDir(), name, "SKILL.md"))
		if err != nil {
			t.Fatal(err)
		}
		return abs
	}
	loads := []struct {
		name    string
		desc    string
		warning string // the one warning naming this skill's file, after "file:", or ""
	}{
		{"colon-in-description", "Reviews a pull request. Use when: the user asks for a review",
			`3: the value of "description" holds ": ", which strict YAML refuses; read as text, as Claude Code does`},
		{"colon-then-hash", "Triage: sort issue #42 first, then the rest",
			`3: the value of "description" holds ": "`},
		{"hash-cuts-value", "Sorts the backlog",
			`3: the value of "description" is cut at " #": YAML reads the rest of the line as a comment`},
		{"colon-continued", "Writes release notes. Use when: a tag is cut or the user asks for a changelog",
			`3: the value of "description" holds ": "`},
		{"folded-description", "Designs an experiment: variants, metric and sample size.", ""},
		{"literal-description", "Line one: with a colon.\nLine two # not a comment.", ""},
		{"double-quoted", "Summarises notes: themes, quotes # and all", ""},
		{"single-quoted", "It's for notes: themes and quotes", ""},
		{"crlf-line-endings", "Written on Windows: CRLF line endings", `3: the value of "description" holds ": "`},
		{"byte-order-mark", "Saved with a UTF-8 byte order mark", ""},
		{"extra-keys", "Has the keys Claude Code reads besides name and description", ""},
		{"no-front-matter", "", " no front matter; the skill has no description"},
		{"with-template-and-example", "Has a template and an example", ""},
		{"utility-pm-critic", "Critiques an artifact by running the pm-critic agent", ""},
		{"workflow-kickoff", "A whole workflow, surfaced as manual", ""},
		{"utility-pm-skill-lint", "Library maintenance, refused", ""},
	}
	warnings := c.Warnings()
	for _, tt := range loads {
		shapeLoads(t, c, file(tt.name), tt.name, tt.desc, tt.warning)
	}
	if s, _ := c.Skill("with-template-and-example"); !s.HasTemplate || !s.HasExample || !slices.Equal(s.TemplateSections, []string{"Summary", "Details"}) {
		t.Errorf("with-template-and-example: HasTemplate %v, HasExample %v, sections %q", s.HasTemplate, s.HasExample, s.TemplateSections)
	}
	if s, _ := c.Skill("crlf-line-endings"); s.Instructions != "# Instructions\r\n\r\nDo the work.\r\n" {
		t.Errorf("crlf-line-endings: instructions %q", s.Instructions)
	}

	broken := []struct{ name, problem string }{
		{"unclosed-front-matter", file("unclosed-front-matter") + `:1: the front matter opened with "---" is never closed`},
		{"name-mismatch", file("name-mismatch") + `:2: the front matter names the skill "some-other-name", but its folder is "name-mismatch"`},
		{"not-utf8", file("not-utf8") + ":3: not UTF-8 text"},
		{"yaml-unreadable", file("yaml-unreadable") + ":3: invalid YAML"},
		{"description-is-a-list", file("description-is-a-list") + `:4: front matter "description" must be text, not a list`},
		{"no-skill-file", filepath.Dir(file("no-skill-file")) + ": no SKILL.md in the folder"},
	}
	for _, tt := range broken {
		s, err := c.Skill(tt.name)
		if !errors.Is(err, engine.ErrBrokenSkill) {
			t.Errorf("Skill(%s) err = %v, want ErrBrokenSkill", tt.name, err)
		}
		if !strings.HasPrefix(s.Problem, tt.problem) {
			t.Errorf("%s: problem %q, want it to start %q", tt.name, s.Problem, tt.problem)
		}
		if !slices.Contains(warnings, s.Problem) {
			t.Errorf("%s: the problem is not among the warnings", tt.name)
		}
		if slices.Contains(c.Names(), tt.name) {
			t.Errorf("%s: listed by Names() though it cannot be used", tt.name)
		}
	}

	var listed []string
	for _, s := range c.Skills() {
		listed = append(listed, s.Name)
	}
	if want := len(loads) + len(broken) + 1; len(listed) != want || !slices.Contains(listed, "Bad_Name") {
		t.Errorf("Skills() lists %d (%q), want %d with Bad_Name", len(listed), listed, want)
	}
	if len(c.Names()) != len(loads) {
		t.Errorf("Names() = %q, want the %d usable skills", c.Names(), len(loads))
	}
	if _, err := c.Agent("pm-critic"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("Agent(pm-critic) err = %v, want ErrNotFound: the shapes have no agents folder", err)
	}
}

// An unreadable SKILL.md costs only its skill: one that is a folder (which
// even root cannot read as a file) and, when not running as root, one
// whose mode forbids reading.
func TestLoadSkillsUnreadable(t *testing.T) {
	dir := t.TempDir()
	catalogWriteSkill(t, dir, "fine", "---\ndescription: d\n---\nbody\n")
	if err := os.MkdirAll(filepath.Join(dir, "folder", "SKILL.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	locked := filepath.Join(dir, "locked", "SKILL.md")
	if os.Geteuid() != 0 {
		catalogWriteSkill(t, dir, "locked", "---\ndescription: d\n---\nbody\n")
		if err := os.Chmod(locked, 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(locked, 0o644) })
	}
	c, err := LoadSkills(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Skill("folder")
	if want := filepath.Join(dir, "folder", "SKILL.md") + ": cannot be read: is a directory"; !errors.Is(err, engine.ErrBrokenSkill) || s.Problem != want {
		t.Errorf("Skill(folder) = problem %q, err %v; want %q", s.Problem, err, want)
	}
	if os.Geteuid() != 0 {
		s, err := c.Skill("locked")
		if !errors.Is(err, engine.ErrBrokenSkill) || s.Problem != locked+": cannot be read: permission denied" {
			t.Errorf("Skill(locked) = problem %q, err %v; want the file named and permission denied", s.Problem, err)
		}
	}
	if !slices.Equal(c.Names(), []string{"fine"}) {
		t.Errorf("Names() = %q, want [fine]", c.Names())
	}
}

// Several skills folders: the first wins a name, with a warning naming the
// one it shadows; a folder without SKILL.md shadows nothing; agents are
// looked for in every agent folder, in order.
func TestLoadCatalogFolders(t *testing.T) {
	root := t.TempDir()
	personal, project := filepath.Join(root, "home", "skills"), filepath.Join(root, "proj", "skills")
	catalogWriteSkill(t, personal, "shared", "---\ndescription: personal\n---\n")
	catalogWriteSkill(t, project, "shared", "---\ndescription: project\n---\n")
	catalogWriteSkill(t, project, "only-project", "---\ndescription: p\n---\n")
	catalogWriteFile(t, filepath.Join(personal, "empty", "notes.txt"), "x")
	catalogWriteSkill(t, project, "empty", "---\ndescription: from the project\n---\n")
	catalogWriteFile(t, filepath.Join(root, "proj", "agents", "critic.md"), "---\nname: critic\n---\nProject critic.\n")
	catalogWriteFile(t, filepath.Join(root, "home", "agents", "critic.md"), "Personal critic.\n")
	catalogWriteFile(t, filepath.Join(root, "home", "agents", "other.md"), "Other.\n")

	c, err := LoadCatalog(CatalogOptions{
		SkillDirs: []string{personal, project},
		AgentDirs: []string{filepath.Join(root, "proj", "agents"), filepath.Join(root, "nope"), filepath.Join(root, "home", "agents")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"empty", "only-project", "shared"}; !slices.Equal(c.Names(), want) {
		t.Errorf("Names() = %q, want %q", c.Names(), want)
	}
	if s, _ := c.Skill("shared"); s.Description != "personal" || s.Source != personal {
		t.Errorf("shared = %q from %s, want the personal one", s.Description, s.Source)
	}
	if s, _ := c.Skill("empty"); s.Description != "from the project" || s.Source != project {
		t.Errorf("empty = %q from %s, want the project one: a folder without SKILL.md shadows nothing", s.Description, s.Source)
	}
	want := filepath.Join(project, "shared") + " is shadowed by " + filepath.Join(personal, "shared")
	if w := c.Warnings(); len(w) != 1 || !strings.HasPrefix(w[0], want) {
		t.Errorf("warnings = %q, want one starting %q", w, want)
	}
	if body, err := c.Agent("critic"); err != nil || body != "Project critic.\n" {
		t.Errorf("Agent(critic) = %q, %v; want the first agent folder's", body, err)
	}
	if body, err := c.Agent("other"); err != nil || body != "Other.\n" {
		t.Errorf("Agent(other) = %q, %v", body, err)
	}
	_, err = c.Agent("missing")
	if !errors.Is(err, engine.ErrNotFound) || err.Error() != "no missing.md in "+filepath.Join(root, "proj", "agents")+", "+filepath.Join(root, "nope")+", "+filepath.Join(root, "home", "agents") {
		t.Errorf("Agent(missing) err = %v, want ErrNotFound naming where gonogo looked", err)
	}
	if !slices.Equal(c.Dirs(), []string{personal, project}) {
		t.Errorf("Dirs() = %q", c.Dirs())
	}

	_, err = LoadCatalog(CatalogOptions{SkillDirs: []string{personal, filepath.Join(root, "gone")}})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing folder: err = %v, want fs.ErrNotExist", err)
	}
}

// The front matter reader never panics, and reads leniently only with a
// warning per line it read so.
func FuzzCatalogFrontMatter(f *testing.F) {
	entries, _ := os.ReadDir(shapesDir())
	for _, e := range entries {
		if src, err := os.ReadFile(filepath.Join(shapesDir(), e.Name(), "SKILL.md")); err == nil {
			f.Add(src)
		}
	}
	f.Add([]byte("---\ndescription: a: b\n  c: d\n---\n"))
	f.Add([]byte("---\nk: - x\nj: @y\n---\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		fm, _, notes, err := catalogFrontMatter(src, "SKILL.md")
		if err != nil && (fm != nil || notes != nil) {
			t.Fatalf("an error with a result: %v", err)
		}
		for _, n := range notes {
			if !strings.HasPrefix(n, "SKILL.md:") {
				t.Fatalf("note %q does not name file and line", n)
			}
		}
	})
}

// shapeLoads checks one skill that loads: its description, its body and
// the one warning (after "file:") naming its file, or none.
func shapeLoads(t *testing.T, c *Catalog, file, name, desc, warning string) {
	t.Helper()
	s, err := c.Skill(name)
	if err != nil {
		t.Errorf("Skill(%s): %v", name, err)
		return
	}
	if s.Description != desc {
		t.Errorf("%s: description %q, want %q", name, s.Description, desc)
	}
	if !strings.Contains(s.Instructions, "# Instructions") {
		t.Errorf("%s: instructions %q lack the body", name, s.Instructions)
	}
	var mine []string
	for _, w := range c.Warnings() {
		if rest, ok := strings.CutPrefix(w, file+":"); ok {
			mine = append(mine, rest)
		}
	}
	if len(s.Warnings) != len(mine) {
		t.Errorf("%s: Skill.Warnings %q, want the catalog's warnings about its file", name, s.Warnings)
	}
	switch {
	case warning == "" && len(mine) > 0:
		t.Errorf("%s: unexpected warnings %q", name, mine)
	case warning != "" && (len(mine) != 1 || !strings.HasPrefix(mine[0], warning)):
		t.Errorf("%s: warnings %q, want one starting %q", name, mine, warning)
	}
}
