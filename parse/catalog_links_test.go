package parse

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
)

const catalogSecret = "SECRET-KEY-MATERIAL"

// catalogLinkHome lays out a home with a skills folder, a shared checkout
// beside it and a file outside both holding a secret. It returns the home.
func catalogLinkHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	catalogWriteFile(t, filepath.Join(home, "private", "credentials"), catalogSecret+"\n")
	catalogWriteFile(t, filepath.Join(home, "private", "SKILL.md"), "---\ndescription: "+catalogSecret+"\n---\n"+catalogSecret+"\n")
	catalogWriteSkill(t, filepath.Join(home, "checkout"), "shared", "---\ndescription: shared\n---\nShared body.\n")
	catalogWriteFile(t, filepath.Join(home, "checkout", "common", "notes.md"), "common notes\n")
	if err := os.MkdirAll(filepath.Join(home, "skills"), 0o755); err != nil {
		t.Fatal(err)
	}
	return home
}

func catalogLink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
}

// TestCatalogSymlinkRule: a skill's files may lead, through symbolic links,
// anywhere inside the skills folder or the skill's own folder (which may
// itself be a link into a shared checkout, as skill installers make them),
// and the skills folder may be a link; a SKILL.md, or any file under
// references/, that leads anywhere else makes the skill unusable, names
// the file, and is never read.
func TestCatalogSymlinkRule(t *testing.T) {
	body := "---\ndescription: d\n---\nBody.\n"
	tests := []struct {
		name   string
		layout func(t *testing.T, home, skills string)
		broken string // a piece of the problem, "" for a usable skill
	}{
		{"plain skill", func(t *testing.T, home, skills string) {
			catalogWriteSkill(t, skills, "s", body)
		}, ""},
		{"skill folder linked into a checkout", func(t *testing.T, home, skills string) {
			catalogLink(t, filepath.Join(home, "checkout", "shared"), filepath.Join(skills, "s"))
		}, ""},
		{"skill folder linked relatively", func(t *testing.T, home, skills string) {
			catalogLink(t, filepath.Join("..", "checkout", "shared"), filepath.Join(skills, "s"))
		}, ""},
		{"SKILL.md linked to another skill's", func(t *testing.T, home, skills string) {
			catalogWriteSkill(t, skills, "other", body)
			catalogLink(t, filepath.Join("..", "other", "SKILL.md"), filepath.Join(skills, "s", "SKILL.md"))
		}, ""},
		{"absolute link that stays inside", func(t *testing.T, home, skills string) {
			catalogWriteFile(t, filepath.Join(skills, "s", "docs", "skill.md"), body)
			catalogLink(t, filepath.Join(skills, "s", "docs", "skill.md"), filepath.Join(skills, "s", "SKILL.md"))
		}, ""},
		{"template linked inside the skill", func(t *testing.T, home, skills string) {
			catalogWriteSkill(t, skills, "s", body)
			catalogWriteFile(t, filepath.Join(skills, "s", "docs", "t.md"), "## Summary\n")
			catalogLink(t, filepath.Join("..", "docs", "t.md"), filepath.Join(skills, "s", "references", "TEMPLATE.md"))
		}, ""},
		{"a references link loop", func(t *testing.T, home, skills string) {
			catalogWriteSkill(t, skills, "s", body)
			catalogLink(t, ".", filepath.Join(skills, "s", "references", "loop"))
		}, ""},
		{"a dangling reference", func(t *testing.T, home, skills string) {
			catalogWriteSkill(t, skills, "s", body)
			catalogLink(t, filepath.Join(home, "gone"), filepath.Join(skills, "s", "references", "gone.md"))
		}, ""},
		{"SKILL.md linked outside", func(t *testing.T, home, skills string) {
			catalogLink(t, filepath.Join(home, "private", "SKILL.md"), filepath.Join(skills, "s", "SKILL.md"))
		}, filepath.Join("s", "SKILL.md") + " leads through a symbolic link to "},
		{"SKILL.md linked outside relatively", func(t *testing.T, home, skills string) {
			catalogLink(t, filepath.Join("..", "..", "private", "SKILL.md"), filepath.Join(skills, "s", "SKILL.md"))
		}, filepath.Join("s", "SKILL.md") + " leads through"},
		{"template linked outside", func(t *testing.T, home, skills string) {
			catalogWriteSkill(t, skills, "s", body)
			catalogLink(t, filepath.Join(home, "private", "credentials"), filepath.Join(skills, "s", "references", "TEMPLATE.md"))
		}, filepath.Join("references", "TEMPLATE.md") + " leads through"},
		{"another reference linked outside", func(t *testing.T, home, skills string) {
			catalogWriteSkill(t, skills, "s", body)
			catalogLink(t, filepath.Join(home, "private", "credentials"), filepath.Join(skills, "s", "references", "deep", "notes.md"))
		}, filepath.Join("references", "deep", "notes.md") + " leads through"},
		{"references folder linked outside", func(t *testing.T, home, skills string) {
			catalogWriteSkill(t, skills, "s", body)
			catalogLink(t, filepath.Join(home, "private"), filepath.Join(skills, "s", "references"))
		}, filepath.Join("s", "references") + " leads through"},
		{"linked folder inside, leading out from there", func(t *testing.T, home, skills string) {
			catalogWriteSkill(t, skills, "s", body)
			catalogLink(t, filepath.Join(home, "private", "credentials"), filepath.Join(skills, "s", "docs", "creds.md"))
			catalogLink(t, filepath.Join("..", "docs"), filepath.Join(skills, "s", "references", "docs"))
		}, filepath.Join("references", "docs", "creds.md") + " leads through"},
		{"linked skill folder whose SKILL.md leaves it", func(t *testing.T, home, skills string) {
			catalogLink(t, filepath.Join("..", "common", "notes.md"), filepath.Join(home, "checkout", "linked", "SKILL.md"))
			catalogLink(t, filepath.Join(home, "checkout", "linked"), filepath.Join(skills, "s"))
		}, "outside the skills folder"},
	}
	for _, tt := range tests {
		for _, viaLink := range []bool{false, true} {
			name := tt.name
			if viaLink {
				name += ", skills folder itself a link"
			}
			t.Run(name, func(t *testing.T) {
				home := catalogLinkHome(t)
				skills := filepath.Join(home, "skills")
				tt.layout(t, home, skills)
				if viaLink {
					skills = filepath.Join(home, "dotfiles-skills")
					catalogLink(t, filepath.Join(home, "skills"), skills)
				}
				c, err := LoadSkills(skills)
				if err != nil {
					t.Fatal(err)
				}
				s, err := c.Skill("s")
				switch {
				case tt.broken == "" && err != nil:
					t.Fatalf("Skill(s) = %v, want a usable skill", err)
				case tt.broken != "" && (!errors.Is(err, engine.ErrBrokenSkill) || !strings.Contains(s.Problem, tt.broken)):
					t.Fatalf("Skill(s) = %v, problem %q; want it broken, saying %q", err, s.Problem, tt.broken)
				}
				for _, sk := range c.Skills() {
					if strings.Contains(sk.Instructions+sk.Description+sk.Template+sk.Problem+strings.Join(sk.Warnings, " "), catalogSecret) {
						t.Errorf("skill %s carries the secret outside the skills folder: %+v", sk.Name, sk)
					}
				}
				if strings.Contains(strings.Join(c.Warnings(), " "), catalogSecret) {
					t.Errorf("warnings carry the secret: %q", c.Warnings())
				}
			})
		}
	}
}

// TestCatalogAgentSymlinkRule: a leaf agent file may lead through links
// anywhere inside its agents folder, never outside it.
func TestCatalogAgentSymlinkRule(t *testing.T) {
	home := catalogLinkHome(t)
	catalogWriteSkill(t, filepath.Join(home, "skills"), "s", "---\ndescription: d\n---\n")
	agents := filepath.Join(home, "agents")
	catalogWriteFile(t, filepath.Join(agents, "store", "inside.md"), "---\nname: inside\n---\nInside agent.\n")
	catalogLink(t, filepath.Join("store", "inside.md"), filepath.Join(agents, "inside.md"))
	catalogLink(t, filepath.Join(home, "private", "SKILL.md"), filepath.Join(agents, "outside.md"))
	c, err := LoadSkills(filepath.Join(home, "skills"))
	if err != nil {
		t.Fatal(err)
	}
	if body, err := c.Agent("inside"); err != nil || body != "Inside agent.\n" {
		t.Errorf("Agent(inside) = %q, %v; want its body", body, err)
	}
	file, err := c.AgentFile("outside")
	body, err2 := c.Agent("outside")
	want := filepath.Join(agents, "outside.md") + " leads through a symbolic link to "
	for _, e := range []error{err, err2} {
		if e == nil || !strings.Contains(e.Error(), want) || strings.Contains(e.Error(), catalogSecret) {
			t.Errorf("error %v, want one saying %q", e, want)
		}
	}
	if file != "" || body != "" {
		t.Errorf("AgentFile = %q, Agent = %q; want neither", file, body)
	}
}
