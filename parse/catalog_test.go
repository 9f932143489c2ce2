package parse

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
)

func catalogFixtureDir() string { return filepath.Join("..", "testdata", "skills") }

func TestLoadSkillsFixture(t *testing.T) {
	c, err := LoadSkills(catalogFixtureDir())
	if err != nil {
		t.Fatal(err)
	}
	wantNames := []string{
		"define-problem-statement", "deliver-prd", "deliver-user-stories", "discover-interview-synthesis",
		"foundation-prioritized-action-plan", "measure-experiment-design", "utility-pm-critic",
		"utility-pm-skill-validate", "utility-pm-workflow-orchestrator", "workflow-feature-kickoff",
	}
	if got := c.Names(); !reflect.DeepEqual(got, wantNames) {
		t.Errorf("Names() = %q\nwant %q", got, wantNames)
	}

	prd, err := c.Skill("deliver-prd")
	if err != nil {
		t.Fatal(err)
	}
	if want := "Writes a short product requirements document for one feature, ready for engineering to estimate."; prd.Description != want {
		t.Errorf("deliver-prd description = %q, want %q", prd.Description, want)
	}
	if !strings.HasPrefix(prd.Instructions, "# Product requirements (fixture)\n") {
		t.Errorf("deliver-prd instructions start %q, want the body after the front matter", catalogFirstLine(prd.Instructions))
	}
	absDir, err := filepath.Abs(filepath.Join(catalogFixtureDir(), "deliver-prd"))
	if err != nil {
		t.Fatal(err)
	}
	if prd.Path != filepath.Join(absDir, "SKILL.md") || prd.Dir != absDir || prd.Source != catalogFixtureDir() {
		t.Errorf("Path, Dir, Source = %q, %q, %q; want %q, %q, %q", prd.Path, prd.Dir, prd.Source, filepath.Join(absDir, "SKILL.md"), absDir, catalogFixtureDir())
	}
	if !prd.HasTemplate || prd.HasExample || prd.Problem != "" {
		t.Errorf("HasTemplate, HasExample, Problem = %v, %v, %q; want true, false, none", prd.HasTemplate, prd.HasExample, prd.Problem)
	}
	wantSections := []string{"Summary", "Problem", "Goals & Success Metrics", "Requirements with code and emphasis", "Open Questions"}
	if !reflect.DeepEqual(prd.TemplateSections, wantSections) {
		t.Errorf("deliver-prd TemplateSections = %q\nwant %q", prd.TemplateSections, wantSections)
	}

	descs := map[string]string{
		"define-problem-statement":     "Frames a problem: who is affected, how badly, why now, and what success would look like.",
		"deliver-user-stories":         "Breaks a feature into user stories with acceptance criteria, sized for one sprint.",
		"discover-interview-synthesis": "Turns interview notes into themes, quotes and recommendations.",
		"measure-experiment-design":    "Designs an A/B test: variants, primary metric, sample size and duration.",
	}
	for name, want := range descs {
		s, err := c.Skill(name)
		if err != nil {
			t.Fatal(err)
		}
		if s.Description != want {
			t.Errorf("%s description = %q, want %q", name, s.Description, want)
		}
	}
	if s, _ := c.Skill("discover-interview-synthesis"); s.TemplateSections != nil {
		t.Errorf("a template without ## headings gave sections %q", s.TemplateSections)
	}
	if s, _ := c.Skill("define-problem-statement"); s.TemplateSections != nil {
		t.Errorf("a skill without TEMPLATE.md gave sections %q", s.TemplateSections)
	}

	warnings := strings.Join(c.Warnings(), "\n")
	for _, want := range []string{
		filepath.Join(catalogFixtureDir(), ".drafts") + ": hidden directory skipped",
		filepath.Join("testdata", "skills", "Scratch_Pad") + `: "Scratch_Pad" is not a valid skill name`,
		filepath.Join("testdata", "skills", "notes-only") + ": no SKILL.md in the folder",
	} {
		if !strings.Contains(warnings, want) {
			t.Errorf("warnings lack %q; got:\n%s", want, warnings)
		}
	}
	if len(c.Warnings()) != 3 {
		t.Errorf("got %d warnings, want 3 (README.md is not a skill and not worth one):\n%s", len(c.Warnings()), warnings)
	}
	if _, err := c.Skill("notes-only"); !errors.Is(err, engine.ErrBrokenSkill) {
		t.Errorf("Skill(notes-only) err = %v, want ErrBrokenSkill", err)
	}
	var all []string
	for _, s := range c.Skills() {
		all = append(all, s.Name)
	}
	wantAll := append([]string{"Scratch_Pad"}, wantNames...)
	wantAll = slices.Insert(wantAll, 7, "notes-only")
	if !slices.Equal(all, wantAll) {
		t.Errorf("Skills() = %q, want the usable ones with notes-only and Scratch_Pad", all)
	}
}

func TestCatalogAgent(t *testing.T) {
	c, err := LoadSkills(catalogFixtureDir())
	if err != nil {
		t.Fatal(err)
	}
	body, err := c.Agent("pm-critic")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(body, "You are pm-critic.") {
		t.Errorf("Agent body starts %q, want the instructions after the front matter", catalogFirstLine(body))
	}
	if body, err := c.WithAgents(map[string]string{"pm-critic": "Overridden."}).Agent("pm-critic"); err != nil || body != "Overridden." {
		t.Errorf("WithAgents on a loaded catalog: Agent = %q, %v; want the given body", body, err)
	}
	for _, name := range []string{"no-such-agent", "../skills/deliver-prd/SKILL", "PM-Critic", ""} {
		if _, err := c.Agent(name); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("Agent(%q) err = %v, want ErrNotFound", name, err)
		}
	}
}

func TestCatalogSkillNotFound(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "skills")
	catalogWriteSkill(t, dir, "real", "---\nname: real\ndescription: d\n---\nbody\n")
	// Files that an unchecked name would reach.
	catalogWriteSkill(t, root, "outside", "---\nname: outside\ndescription: d\n---\nbody\n")
	catalogWriteFile(t, filepath.Join(root, "secret.md"), "do not read")
	c, err := LoadSkills(dir)
	if err != nil {
		t.Fatal(err)
	}
	catalogWriteSkill(t, dir, "late", "---\nname: late\ndescription: d\n---\nbody\n") // after loading

	for _, name := range []string{"missing", "late", "../outside", "Real", "real/", "", "a b"} {
		if _, err := c.Skill(name); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("Skill(%q) err = %v, want ErrNotFound", name, err)
		}
	}
	if _, err := c.Agent("../secret"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("Agent(../secret) err = %v, want ErrNotFound", err)
	}
	if _, err := c.Skill("real"); err != nil {
		t.Errorf("Skill(real): %v", err)
	}
}

func TestLoadSkillsMissingDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nope")
	_, err := LoadSkills(dir)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v, want fs.ErrNotExist", err)
	}
	want := `skills directory "` + dir + `" does not exist; set GONOGO_SKILLS_DIR or --skills`
	if err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}

	file := filepath.Join(t.TempDir(), "file")
	catalogWriteFile(t, file, "x")
	if _, err := LoadSkills(file); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("LoadSkills(file) err = %v, want a not-a-directory error", err)
	}
}

func TestLoadSkillsFrontMatter(t *testing.T) {
	tests := []struct {
		name     string
		src      string
		desc     string
		body     string
		warning  string // a fragment of the one expected warning, or ""
		errorMsg string // a fragment of the skill's Problem, or ""
	}{
		{name: "plain", src: "---\nname: s\ndescription: Does s.\n---\nBody.\n", desc: "Does s.", body: "Body.\n"},
		{name: "crlf", src: "---\r\nname: s\r\ndescription: Does s.\r\n---\r\nBody.\r\n", desc: "Does s.", body: "Body.\r\n"},
		{name: "byte order mark", src: "\ufeff---\nname: s\ndescription: d\n---\nBody.\n", desc: "d", body: "Body.\n"},
		{name: "literal block and nested keys", src: "---\nname: s\ndescription: |\n  Line one.\n  Line two.\nmetadata:\n  tags: [a, b]\n  deep: {x: 1}\nallowed-tools: Read\n---\n\nBody.\n",
			desc: "Line one.\nLine two.", body: "Body.\n"},
		{name: "closing dots", src: "---\ndescription: d\n...\nBody.\n", desc: "d", body: "Body.\n"},
		{name: "empty front matter", src: "---\n---\nBody.\n", body: "Body.\n", warning: "the front matter has no description"},
		{name: "null description", src: "---\nname: s\ndescription:\n---\nBody.\n", body: "Body.\n", warning: "no description"},
		{name: "no front matter", src: "# Just instructions\n", body: "# Just instructions\n", warning: "no front matter"},
		{name: "unclosed", src: "---\nname: s\ndescription: d\n\nBody.\n", errorMsg: "SKILL.md:1: the front matter opened with \"---\" is never closed"},
		{name: "yaml error line", src: "---\nname: s\ndescription: \"unterminated\n---\nBody.\n", errorMsg: "SKILL.md:3: invalid YAML"},
		{name: "bad indentation", src: "---\nname: s\n  description: d\n---\n", errorMsg: "SKILL.md:3: invalid YAML"},
		{name: "description is a list", src: "---\nname: s\ndescription:\n  - a\n---\n", errorMsg: `SKILL.md:4: front matter "description" must be text, not a list`},
		{name: "name is a mapping", src: "---\nname: {a: b}\n---\n", errorMsg: `SKILL.md:2: front matter "name" must be text, not a mapping`},
		{name: "front matter is a list", src: "---\n- a\n---\n", errorMsg: "SKILL.md:2: the front matter must be a YAML mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			catalogWriteSkill(t, dir, "s", tt.src)
			c, err := LoadSkills(dir)
			if err != nil {
				t.Fatal(err)
			}
			if tt.errorMsg != "" {
				s, err := c.Skill("s")
				if !errors.Is(err, engine.ErrBrokenSkill) || !strings.Contains(s.Problem, tt.errorMsg) {
					t.Fatalf("Skill(s) = problem %q, err %v; want ErrBrokenSkill and a problem containing %q", s.Problem, err, tt.errorMsg)
				}
				if !strings.Contains(s.Problem, filepath.Join(dir, "s", "SKILL.md")) {
					t.Errorf("problem %q does not name the file", s.Problem)
				}
				if w := c.Warnings(); len(w) != 1 || w[0] != s.Problem {
					t.Errorf("warnings = %q, want the problem once", w)
				}
				if len(c.Names()) != 0 {
					t.Errorf("Names() = %q, want none usable", c.Names())
				}
				return
			}
			s, err := c.Skill("s")
			if err != nil {
				t.Fatal(err)
			}
			if s.Description != tt.desc || s.Instructions != tt.body {
				t.Errorf("Description, Instructions = %q, %q; want %q, %q", s.Description, s.Instructions, tt.desc, tt.body)
			}
			w := c.Warnings()
			switch {
			case tt.warning == "" && len(w) > 0:
				t.Errorf("unexpected warnings %q", w)
			case tt.warning != "" && (len(w) != 1 || !strings.Contains(w[0], tt.warning)):
				t.Errorf("warnings = %q, want one containing %q", w, tt.warning)
			}
		})
	}
}

func TestLoadSkillsFollowsSymlinks(t *testing.T) {
	root := t.TempDir()
	catalogWriteSkill(t, filepath.Join(root, "checkout"), "linked", "---\ndescription: d\n---\n")
	dir := filepath.Join(root, "skills")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "checkout", "linked"), filepath.Join(dir, "linked")); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	c, err := LoadSkills(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Names(); !reflect.DeepEqual(got, []string{"linked"}) {
		t.Errorf("Names() = %q, want [linked]", got)
	}
}

func TestCatalogTemplateSections(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"atx", "# T\n## A\ntext\n## B\n### c\n#### d\n## C ##\n", []string{"A", "B", "C"}},
		{"fenced backticks", "## A\n```\n## not\n```\n## B\n", []string{"A", "B"}},
		{"fenced four backticks holding three", "````markdown\n```\n## not\n```\n## still not\n````\n## B\n", []string{"B"}},
		{"fenced tildes", "~~~\n## not\n~~~\n## B\n", []string{"B"}},
		{"unclosed fence runs to the end", "## A\n```\n## not\n", []string{"A"}},
		{"indented code", "## A\n\n    ## not\n", []string{"A"}},
		{"html comment", "<!--\n## not\n-->\n## A\n", []string{"A"}},
		{"block quote and list", "> ## not\n\n- ## not\n\n## A\n", []string{"A"}},
		{"setext", "Title\n=====\n\nSection\n-------\n", []string{"Section"}},
		{"inline markup", "## The `code` and *emph* and [link](http://x) <b>html</b>\n", []string{"The code and emph and link html"}},
		{"escapes and entities", "## A \\# b &amp; c &#35; `d\\e`\n", []string{"A # b & c # d\\e"}},
		{"empty heading skipped", "##\n## A\n", []string{"A"}},
		{"front matter cut off", "---\nartifact: x\nstatus: draft\n---\n\n## A\n", []string{"A"}},
		{"no sections", "# Only a title\n\ntext\n", nil},
		{"not a heading without space", "##A\n## B\n", []string{"B"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, notes, problem := catalogTemplateSections([]byte(tt.src), "TEMPLATE.md")
			if !reflect.DeepEqual(got, tt.want) || notes != nil || problem != "" {
				t.Errorf("sections = %q, want %q (notes %q, problem %q)", got, tt.want, notes, problem)
			}
		})
	}
}

func TestNewCatalog(t *testing.T) {
	sections := []string{"Summary"}
	c := NewCatalog([]engine.Skill{
		{Name: "zeta", Description: "z"},
		{Name: "alpha", Description: "a", TemplateSections: sections},
		{Name: "Bad Name"},
		{Name: "zeta", Description: "second"},
	})
	if got := c.Names(); !reflect.DeepEqual(got, []string{"alpha", "zeta"}) {
		t.Errorf("Names() = %q", got)
	}
	if w := c.Warnings(); len(w) != 2 || !strings.Contains(w[0], `"Bad Name"`) || !strings.Contains(w[1], `"zeta"`) {
		t.Errorf("Warnings() = %q, want the invalid and the repeated name", w)
	}
	z, err := c.Skill("zeta")
	if err != nil || z.Description != "z" {
		t.Errorf("Skill(zeta) = %+v, %v; want the first zeta", z, err)
	}
	sections[0] = "changed by the caller"
	a, _ := c.Skill("alpha")
	a.TemplateSections[0] = "changed by a reader"
	if a2, _ := c.Skill("alpha"); a2.TemplateSections[0] != "Summary" {
		t.Errorf("TemplateSections = %q: the catalog shares its slices", a2.TemplateSections)
	}
	if _, err := c.Skill("beta"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("Skill(beta) err = %v, want ErrNotFound", err)
	}
	if _, err := c.Agent("critic"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("Agent(critic) err = %v, want ErrNotFound", err)
	}

	ca := c.WithAgents(map[string]string{"critic": "Review it.", "../x": "no"})
	if body, err := ca.Agent("critic"); err != nil || body != "Review it." {
		t.Errorf("Agent(critic) = %q, %v", body, err)
	}
	if len(ca.Warnings()) != 3 || len(c.Warnings()) != 2 {
		t.Errorf("WithAgents warnings = %q (original %q), want one more for the invalid agent name", ca.Warnings(), c.Warnings())
	}
	if _, err := c.Agent("critic"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("WithAgents changed the original catalog")
	}
}

// The real pm-skills library, read in place when it is present.
func TestLoadSkillsCorpus(t *testing.T) {
	dir := filepath.Join(catalogCorpusDir(t), "skills")
	c, err := LoadSkills(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"define-problem-statement", "deliver-prd", "deliver-user-stories", "discover-interview-synthesis",
		"foundation-prioritized-action-plan", "measure-experiment-design", "utility-pm-workflow-orchestrator",
	}
	if got := c.Names(); !reflect.DeepEqual(got, want) {
		t.Errorf("Names() = %q\nwant %q", got, want)
	}
	if w := c.Warnings(); len(w) > 0 {
		t.Errorf("unexpected warnings: %q", w)
	}
	for _, name := range want {
		s, err := c.Skill(name)
		if err != nil {
			t.Fatal(err)
		}
		if s.Description == "" || s.Instructions == "" {
			t.Errorf("%s: empty description or instructions", name)
		}
		if strings.HasPrefix(s.Instructions, "---") {
			t.Errorf("%s: instructions still carry the front matter", name)
		}
		if len(s.TemplateSections) == 0 {
			t.Errorf("%s: no template sections", name)
		}
	}

	prd, _ := c.Skill("deliver-prd")
	tmpl, err := os.ReadFile(filepath.Join(dir, "deliver-prd", "references", "TEMPLATE.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := catalogNaiveHeadings(string(tmpl)); !reflect.DeepEqual(prd.TemplateSections, want) || len(want) < 10 {
		t.Errorf("deliver-prd sections = %q\nwant %q", prd.TemplateSections, want)
	}
	// The orchestrator's template shows "##" lines inside fenced examples;
	// they are not sections.
	orch, _ := c.Skill("utility-pm-workflow-orchestrator")
	for _, s := range orch.TemplateSections {
		if strings.Contains(s, "{") {
			t.Errorf("orchestrator section %q comes from a fenced example", s)
		}
	}
}

// catalogNaiveHeadings is a deliberately naive reading of "## " lines outside
// fences, to check the AST-based reading against on a real file.
func catalogNaiveHeadings(src string) []string {
	var out []string
	fence := ""
	for line := range strings.Lines(src) {
		line = strings.TrimRight(line, "\r\n")
		if fence != "" {
			if strings.HasPrefix(line, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") {
			fence = line[:len(line)-len(strings.TrimLeft(line, line[:1]))]
			continue
		}
		if h, ok := strings.CutPrefix(line, "## "); ok {
			out = append(out, strings.TrimSpace(h))
		}
	}
	return out
}

func catalogCorpusDir(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			corpus := filepath.Join(filepath.Dir(dir), "shared", "corpus", "pm-skills")
			if _, err := os.Stat(corpus); err != nil {
				t.Skipf("pm-skills corpus not present at %s", corpus)
			}
			return corpus
		}
		if filepath.Dir(dir) == dir {
			t.Skip("module root not found")
		}
	}
}

func catalogWriteSkill(t *testing.T, dir, name, src string) {
	t.Helper()
	catalogWriteFile(t, filepath.Join(dir, name, "SKILL.md"), src)
}

func catalogWriteFile(t *testing.T, path, src string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

func catalogFirstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
