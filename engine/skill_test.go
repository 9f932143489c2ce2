package engine

import (
	"slices"
	"strings"
	"testing"
)

// TestLeafMissingNamesDispatchSkillsWithoutTheirAgent: only a dispatch
// skill that reads well and whose leaf agent is not installed is named,
// with its folder and why.
func TestLeafMissingNamesDispatchSkillsWithoutTheirAgent(t *testing.T) {
	skills := func(c *memCatalog) []Skill {
		var out []Skill
		for _, n := range installed {
			s := c.skills[n]
			s.Dir = "/skills/" + n
			out = append(out, s)
		}
		return out
	}
	with := testCatalog(true)
	if got := LeafMissing(skills(with), with, DefaultPolicy()); len(got) != 0 {
		t.Errorf("leaf installed: %q, want none", got)
	}
	without := testCatalog(false)
	got := LeafMissing(skills(without), without, DefaultPolicy())
	if len(got) != 1 || !strings.HasPrefix(got[0], "/skills/utility-pm-critic: its leaf agent ") || !strings.Contains(got[0], "is not installed") {
		t.Errorf("leaf missing: %q, want utility-pm-critic's folder and why", got)
	}
	broken := testCatalog(false)
	s := broken.skills["utility-pm-critic"]
	s.Problem = "SKILL.md: no front matter"
	broken.skills["utility-pm-critic"] = s
	if got := LeafMissing(skills(broken), broken, DefaultPolicy()); slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, "utility-pm-critic") }) {
		t.Errorf("a broken dispatch skill is named for its leaf: %q (its own problem says why)", got)
	}
}
