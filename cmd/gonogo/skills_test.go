package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/internal/fakeslack"
	"github.com/gonogo/gonogo/internal/terminal"
)

// shapesDir is testdata/skills-shapes/skills: every shape of SKILL.md.
func shapesDir(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "skills-shapes", "skills")
}

func shapesVars(t *testing.T) map[string]string {
	return map[string]string{"GONOGO_DATA_DIR": t.TempDir(), "GONOGO_SKILLS_DIR": shapesDir(t)}
}

// skillsJSON runs gonogo skills --json and reads its list by name.
func skillsJSON(t *testing.T, vars map[string]string) (map[string]map[string]any, result) {
	t.Helper()
	res := gonogo(t, vars, "", "skills", "--json")
	if res.code != terminal.ExitOK {
		t.Fatalf("skills --json exit %d:\n%s", res.code, res.stderr)
	}
	var list []map[string]any
	if err := json.Unmarshal([]byte(res.stdout), &list); err != nil {
		t.Fatalf("skills --json is not a JSON list: %v\n%s", err, res.stdout)
	}
	byName := map[string]map[string]any{}
	for _, s := range list {
		byName[s["name"].(string)] = s
	}
	return byName, res
}

func TestSkillsJSONShapes(t *testing.T) {
	skills, res := skillsJSON(t, shapesVars(t))
	keys := []string{"category", "description", "dir", "has_example", "has_template", "leaf_agent", "leaf_agent_file",
		"leaf_agent_found", "name", "problem", "source", "usable"}
	for name, s := range skills {
		var got []string
		for k := range s {
			got = append(got, k)
		}
		slices.Sort(got)
		if !slices.Equal(got, keys) {
			t.Fatalf("%s: keys %q, want %q", name, got, keys)
		}
	}
	if len(skills) != 23 {
		t.Errorf("%d skills listed, want the 23 folders of skills-shapes", len(skills))
	}
	tests := []struct {
		name, category string
		usable         bool
		problem        string // a fragment, or "" for none
	}{
		{"colon-in-description", "content", true, ""},
		{"crlf-line-endings", "content", true, ""},
		{"utility-pm-critic", "dispatch", false, "its leaf agent pm-critic is not installed (no pm-critic.md in "},
		{"workflow-kickoff", "workflow", false, "refused by the policy: a whole workflow: run it separately"},
		{"utility-pm-skill-lint", "refused", false, "refused by the policy: library-maintenance machinery, not a work product"},
		{"name-mismatch", "content", false, filepath.Join("name-mismatch", "SKILL.md") + `:2: the front matter names the skill "some-other-name"`},
		{"not-utf8", "content", false, filepath.Join("not-utf8", "SKILL.md") + ":3: not UTF-8 text"},
		{"unclosed-front-matter", "content", false, filepath.Join("unclosed-front-matter", "SKILL.md") + ":1: the front matter opened"},
		{"no-skill-file", "content", false, "no-skill-file: no SKILL.md in the folder"},
		{"Bad_Name", "content", false, `"Bad_Name" is not a valid skill name`},
	}
	for _, tt := range tests {
		s := skills[tt.name]
		if s == nil {
			t.Errorf("%s not listed", tt.name)
			continue
		}
		problem, _ := s["problem"].(string)
		if s["category"] != tt.category || s["usable"] != tt.usable || (tt.problem == "") != (problem == "") || !strings.Contains(problem, tt.problem) {
			t.Errorf("%s: category %v, usable %v, problem %q; want %s, %v, %q", tt.name, s["category"], s["usable"], problem, tt.category, tt.usable, tt.problem)
		}
		if s["source"] != shapesDir(t) || !filepath.IsAbs(s["dir"].(string)) {
			t.Errorf("%s: source %v, dir %v; want the skills folder and an absolute skill folder", tt.name, s["source"], s["dir"])
		}
	}
	if c := skills["utility-pm-critic"]; c["leaf_agent"] != "pm-critic" || c["leaf_agent_found"] != false || c["leaf_agent_file"] != nil {
		t.Errorf("utility-pm-critic: leaf %v found %v file %v", c["leaf_agent"], c["leaf_agent_found"], c["leaf_agent_file"])
	}
	if c := skills["deliver-prd"]; c != nil {
		t.Errorf("deliver-prd is not in skills-shapes")
	}
	if c := skills["colon-in-description"]; c["leaf_agent"] != nil || c["leaf_agent_found"] != nil || c["description"] != "Reviews a pull request. Use when: the user asks for a review" {
		t.Errorf("colon-in-description: %v", c)
	}
	if c := skills["with-template-and-example"]; c["has_template"] != true || c["has_example"] != true {
		t.Errorf("with-template-and-example: has_template %v has_example %v", c["has_template"], c["has_example"])
	}
	// The lenient reading is a warning on stderr naming file and line; the
	// problems are in the list, not repeated there.
	if want := filepath.Join("colon-in-description", "SKILL.md") + `:3: the value of "description" holds ": "`; !strings.Contains(res.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
	}
	if strings.Contains(res.stderr, "never closed") {
		t.Errorf("a problem is repeated on stderr:\n%s", res.stderr)
	}
}

func TestSkillsTable(t *testing.T) {
	res := gonogo(t, shapesVars(t), "", "skills")
	if res.code != terminal.ExitOK {
		t.Fatalf("exit %d:\n%s", res.code, res.stderr)
	}
	lines := strings.Split(res.stdout, "\n")
	if !strings.HasPrefix(lines[0], "23 skills (13 usable) from "+shapesDir(t)) {
		t.Errorf("first line %q", lines[0])
	}
	header := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "SKILL ") })
	if header < 0 || strings.Join(strings.Fields(lines[header]), " ") != "SKILL CATEGORY LEAF AGENT TEMPLATE EXAMPLE FROM" {
		t.Fatalf("no table header:\n%s", res.stdout)
	}
	col := strings.Index(lines[header], "CATEGORY")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "utility-pm-critic ") })
	if i < 0 || strings.Index(lines[i], "dispatch") != col || !strings.Contains(lines[i], "pm-critic (missing)") {
		t.Fatalf("utility-pm-critic row not aligned or without its missing leaf:\n%s", res.stdout)
	}
	if !strings.HasPrefix(lines[i+1], "  ! cannot be used: its leaf agent pm-critic is not installed") {
		t.Errorf("the problem is not under its row: %q", lines[i+1])
	}
	// A skill the policy refuses is listed as one that cannot be used,
	// with the policy's reason, as check and run refuse it.
	k := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "utility-pm-skill-lint ") })
	if k < 0 || lines[k+1] != "  ! cannot be used: refused by the policy: library-maintenance machinery, not a work product" {
		t.Errorf("the refused skill is not shown as unusable with its reason:\n%s", res.stdout)
	}
	if chk := gonogo(t, shapesVars(t), "", "check", "--chain", "utility-pm-skill-lint"); chk.code != terminal.ExitRefused {
		t.Errorf("check accepts the skill skills calls refused: exit %d", chk.code)
	}
	j := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "with-template-and-example ") })
	if j < 0 || strings.Join(strings.Fields(lines[j])[1:5], " ") != "content - yes yes" {
		t.Errorf("with-template-and-example row %q", lines[j])
	}
}

// No skills folder anywhere: exit 2, saying where gonogo looked.
func TestSkillsNoFolder(t *testing.T) {
	t.Chdir(t.TempDir())
	home := t.TempDir()
	res := gonogo(t, map[string]string{"HOME": home}, "", "skills")
	want := "no skills folder found: looked for " + filepath.Join(home, ".claude", "skills") + ", .claude/skills, skills; set GONOGO_SKILLS_DIR or --skills"
	if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, want) {
		t.Errorf("exit %d, stderr %q; want 2 and %q", res.code, res.stderr, want)
	}
	res = gonogo(t, map[string]string{"GONOGO_SKILLS_DIR": "nope"}, "", "skills", "--json")
	if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, `skills directory "nope" does not exist`) || res.stdout != "" {
		t.Errorf("an explicit missing folder: exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Claude Code's layout: the personal and the project folders together, the
// personal skill winning a name with a warning; leaf agents in
// ~/.claude/agents; ./skills only when neither exists; --skills alone.
func TestSkillsClaudeCodeLayout(t *testing.T) {
	proj, home := t.TempDir(), t.TempDir()
	t.Chdir(proj)
	skill := func(dir, name, desc string) {
		writeFile(t, filepath.Join(dir, name, "SKILL.md"), "---\nname: "+name+"\ndescription: "+desc+"\n---\nDo it.\n")
	}
	skill(filepath.Join(proj, ".claude", "skills"), "shared", "project")
	skill(filepath.Join(proj, ".claude", "skills"), "only-project", "p")
	skill(filepath.Join(proj, ".claude", "skills"), "utility-pm-critic", "critic")
	skill(filepath.Join(home, ".claude", "skills"), "shared", "personal")
	skill(filepath.Join(home, ".claude", "skills"), "only-personal", "h")
	skill(filepath.Join(proj, "skills"), "old-default", "o")
	writeFile(t, filepath.Join(home, ".claude", "agents", "pm-critic.md"), "You are pm-critic.\n")
	vars := map[string]string{"HOME": home, "GONOGO_DATA_DIR": t.TempDir()}

	skills, res := skillsJSON(t, vars)
	personal, project := filepath.Join(home, ".claude", "skills"), filepath.Join(".claude", "skills")
	for name, source := range map[string]string{"shared": personal, "only-personal": personal, "only-project": project, "utility-pm-critic": project} {
		if s := skills[name]; s == nil || s["source"] != source {
			t.Errorf("%s: %v, want it from %s", name, s, source)
		}
	}
	if skills["shared"]["description"] != "personal" || skills["old-default"] != nil {
		t.Errorf("shared = %v, old-default = %v; want the personal one and no ./skills", skills["shared"], skills["old-default"])
	}
	if want := filepath.Join(proj, ".claude", "skills", "shared") + " is shadowed by " + filepath.Join(personal, "shared"); !strings.Contains(res.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
	}
	if c := skills["utility-pm-critic"]; c["leaf_agent_found"] != true || c["leaf_agent_file"] != filepath.Join(home, ".claude", "agents", "pm-critic.md") || c["usable"] != true {
		t.Errorf("utility-pm-critic: %v; want its leaf found in ~/.claude/agents", c)
	}
	// check sees the same catalog: the chain through the dispatch skill runs.
	if res := gonogo(t, vars, "", "check", "--chain", "only-personal -> utility-pm-critic -> only-project -- x"); res.code != terminal.ExitOK {
		t.Errorf("check exit %d:\n%s%s", res.code, res.stdout, res.stderr)
	}

	// --skills (or GONOGO_SKILLS_DIR) is that folder only.
	if skills, _ := skillsJSON(t, map[string]string{"HOME": home, "GONOGO_SKILLS_DIR": "skills"}); len(skills) != 1 || skills["old-default"] == nil {
		t.Errorf("GONOGO_SKILLS_DIR=skills lists %v, want old-default only", skills)
	}
	// Neither Claude Code folder: ./skills.
	if err := os.RemoveAll(filepath.Join(proj, ".claude")); err != nil {
		t.Fatal(err)
	}
	if skills, _ := skillsJSON(t, map[string]string{"GONOGO_DATA_DIR": t.TempDir()}); len(skills) != 1 || skills["old-default"] == nil {
		t.Errorf("without .claude folders: %v, want ./skills", skills)
	}
}

// A chain naming a skill that cannot run is refused whole, naming the file
// and the problem; a chain whose context starts with a skill name warns.
func TestCheckChainBrokenSkillsAndForgottenArrow(t *testing.T) {
	vars := shapesVars(t)
	refusals := []struct{ chain, reason, msg string }{
		{"colon-in-description -> name-mismatch", "broken-skill", filepath.Join(shapesDir(t), "name-mismatch", "SKILL.md") + `:2: the front matter names the skill "some-other-name"`},
		{"colon-in-description -> utility-pm-critic", "broken-skill", "`utility-pm-critic` runs its leaf agent `pm-critic`, which is not installed"},
		{"no-skill-file", "broken-skill", "no SKILL.md in the folder"},
		{"colon-in-description, workflow-kickoff", "refused-skill", "`workflow-kickoff` is a whole workflow"},
	}
	for _, tt := range refusals {
		res := gonogo(t, vars, "", "check", "--json", "--chain", tt.chain+" -- ctx")
		var out struct {
			Accepted bool
			Refusal  struct{ Reason, Message string }
			Steps    []any
		}
		if err := json.Unmarshal([]byte(res.stdout), &out); err != nil {
			t.Fatalf("%s: %v\n%s", tt.chain, err, res.stdout)
		}
		if res.code != terminal.ExitRefused || out.Accepted || out.Refusal.Reason != tt.reason || !strings.Contains(out.Refusal.Message, tt.msg) {
			t.Errorf("%s: exit %d, refusal %+v; want %s saying %q", tt.chain, res.code, out.Refusal, tt.reason, tt.msg)
		}
	}

	const expr = "colon-in-description single-quoted -- about checkout"
	want := "did you mean `colon-in-description -> single-quoted`?"
	res := gonogo(t, vars, "", "check", "--json", "--chain", expr)
	var out struct {
		Accepted bool
		Context  string
		Steps    []struct{ Skill string }
		Warnings []string
	}
	if err := json.Unmarshal([]byte(res.stdout), &out); err != nil {
		t.Fatal(err)
	}
	if res.code != terminal.ExitOK || len(out.Steps) != 1 || out.Context != "single-quoted -- about checkout" ||
		!slices.ContainsFunc(out.Warnings, func(w string) bool { return strings.Contains(w, want) }) {
		t.Errorf("check --json: exit %d, %+v; want one step, the rest as context, and a warning %q", res.code, out, want)
	}
	lenient := filepath.Join("colon-in-description", "SKILL.md") + `:3: the value of "description" holds ": "`
	if !slices.ContainsFunc(out.Warnings, func(w string) bool { return strings.Contains(w, lenient) }) {
		t.Errorf("check --json warnings %q lack the step's lenient front matter %q", out.Warnings, lenient)
	}
	if res := gonogo(t, vars, "", "check", "--chain", expr); !strings.Contains(res.stdout, want) {
		t.Errorf("check text lacks the warning:\n%s", res.stdout)
	}
	res = gonogo(t, vars, "approve\n", "run", "--dry-run", "--chain", expr)
	if res.code != terminal.ExitOK || !strings.Contains(res.stdout+res.stderr, want) {
		t.Errorf("run exit %d, lacks the warning:\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// A plan block naming a skill that cannot be used is manual, with the file
// and the problem as its reason; the rest of the plan runs.
func TestCheckPlanBrokenSkillIsManual(t *testing.T) {
	skills := filepath.Join(t.TempDir(), "skills")
	if err := os.CopyFS(skills, os.DirFS(filepath.Join(exampleDir(t), "skills"))); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(skills, "deliver-prd", "SKILL.md")
	if err := os.Chmod(broken, 0o644); err != nil {
		t.Fatal(err)
	}
	writeFile(t, broken, "---\nname: deliver-prd\ndescription: never closed\n")
	vars := map[string]string{"GONOGO_DATA_DIR": t.TempDir(), "GONOGO_SKILLS_DIR": skills}
	res := gonogo(t, vars, "", "check", "--json", filepath.Join(exampleDir(t), "plan.md"))
	var out struct {
		Steps  []struct{ Skill string }
		Manual []struct {
			Skill  *string
			Reason string
		}
	}
	if err := json.Unmarshal([]byte(res.stdout), &out); err != nil {
		t.Fatalf("%v\n%s%s", err, res.stdout, res.stderr)
	}
	found := false
	for _, m := range out.Manual {
		if m.Skill != nil && *m.Skill == "deliver-prd" {
			found = strings.Contains(m.Reason, broken+`:1: the front matter opened with "---" is never closed`)
		}
	}
	if res.code != terminal.ExitOK || !found || len(out.Steps) == 0 {
		t.Errorf("exit %d, steps %+v, manual %+v; want deliver-prd manual with its file and problem", res.code, out.Steps, out.Manual)
	}
}

// serve starts with broken skills, logs each problem once, refuses a chain
// naming one in the thread, and posts the forgotten-arrow warning.
func TestServeGoesOnWithBrokenSkills(t *testing.T) {
	srv := fakeslack.New()
	defer srv.Close()
	vars := serveVars(t, srv)
	vars["GONOGO_SKILLS_DIR"] = shapesDir(t)
	s := startServe(vars)
	defer s.cancel()
	ctx := s.connected(t, srv)
	const ch = "C0SKILLS"
	env := srv.SendSlashCommand(slack.SlashCommand{UserID: "U0S", ChannelID: ch, Text: "chain colon-in-description -> unclosed-front-matter -- x"})
	if _, err := srv.WaitAck(ctx, env); err != nil {
		t.Fatal(err)
	}
	// A refusal is said to the one who asked, not posted to the channel.
	if err := srv.WaitFor(ctx, func(st *fakeslack.State) bool {
		return slices.ContainsFunc(st.Ephemerals("U0S"), func(e fakeslack.Ephemeral) bool {
			return strings.Contains(e.Rendered, filepath.Join("unclosed-front-matter", "SKILL.md")) && strings.Contains(e.Rendered, "never closed")
		})
	}); err != nil {
		t.Errorf("no refusal naming the file and the problem: %v", err)
	}
	env = srv.SendSlashCommand(slack.SlashCommand{UserID: "U0S", ChannelID: ch, Text: "chain colon-in-description single-quoted -- x"})
	if _, err := srv.WaitAck(ctx, env); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.WaitMessage(ctx, ch, func(m fakeslack.Message) bool {
		return strings.Contains(m.Rendered, "did you mean") && strings.Contains(m.Rendered, "single-quoted")
	}); err != nil {
		t.Errorf("no forgotten-arrow warning in the thread: %v", err)
	}
	if code := s.stop(t); code != terminal.ExitOK {
		t.Errorf("serve exited %d:\n%s", code, s.stderr.String())
	}
	logs := s.stderr.String()
	if n := strings.Count(logs, "the front matter opened with"); n != 1 {
		t.Errorf("the unclosed front matter is logged %d times, want once:\n%s", n, logs)
	}
}

// One skill is one skill, not one skills.
func TestSkillsCountsOneSkill(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "skills")
	if err := os.MkdirAll(filepath.Join(dir, "only-one"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "only-one", "SKILL.md"), []byte("---\nname: only-one\ndescription: d\n---\nbody\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	vars := baseVars(t)
	vars["GONOGO_SKILLS_DIR"] = dir
	res := gonogo(t, vars, "", "skills")
	if !strings.HasPrefix(res.stdout, "1 skill (1 usable) from ") {
		t.Errorf("skills: %q", strings.SplitN(res.stdout, "\n", 2)[0])
	}
	res = gonogo(t, vars, "", "doctor", "--dry-run")
	if !strings.Contains(res.stdout, "(GONOGO_SKILLS_DIR): 1 skill\n") {
		t.Errorf("doctor:\n%s", res.stdout)
	}
}
