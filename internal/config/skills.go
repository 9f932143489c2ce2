package config

import (
	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/parse"
)

// LoadSkills reads the installed skills (see parse.LoadInstalled); a
// skills folder that hides its skills one folder down is named with what
// to set instead, the flag or (when it came from there) the variable.
func (c Config) LoadSkills(explicit string) (*parse.Catalog, error) {
	return parse.LoadInstalled(c.Home, explicit, func(inner string) string {
		if explicit == c.SkillsDir {
			return "GONOGO_SKILLS_DIR=" + terminal.ShellWord(inner)
		}
		return "--skills " + terminal.ShellWord(inner)
	})
}

// SetupSkills loads the skills a resumed run goes on with: the folders
// recorded with it in setup (one: as if given with --skills; several:
// Claude Code's folders, found when it started), else as a new run would
// with the --skills folder skills.
func (c Config) SetupSkills(skills string, setup *engine.Setup) (*parse.Catalog, error) {
	switch {
	case setup == nil || len(setup.Skills) == 0:
		return c.LoadSkills(skills)
	case len(setup.Skills) == 1:
		return c.LoadSkills(setup.Skills[0])
	}
	return parse.LoadCatalog(parse.CatalogOptions{SkillDirs: setup.Skills, AgentDirs: c.SkillSources("").Agents})
}
