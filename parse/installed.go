package parse

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// SkillSources says where skills and leaf agents are read from.
type SkillSources struct {
	Dirs   []string // skills folders, first wins a name
	Agents []string // leaf agent folders, first wins a name
	Looked []string // every skills folder considered, for a message when none exists
}

// FindSkills finds the skills folders. A folder given with --skills or
// GONOGO_SKILLS_DIR (explicit) is the only one. Otherwise gonogo reads
// Claude Code's folders, both when both exist: ~/.claude/skills (personal)
// and .claude/skills in the working directory (project). On a name in
// both, the personal skill wins, as in Claude Code (enterprise, then
// personal, then project), and the catalog warns about the project one.
// When neither exists, the skills folder in the working directory is read,
// as before Claude Code's layout was looked for; when that is missing too,
// dirs is empty.
//
// Leaf agents are looked for in agents/ beside an explicit or fallback
// skills folder first, then in .claude/agents (project) and
// ~/.claude/agents (personal): for agents Claude Code lets the project win.
func FindSkills(home, explicit string) SkillSources {
	project := filepath.Join(".claude", "skills")
	var personal string
	if home != "" {
		personal = filepath.Join(home, ".claude", "skills")
	}
	var src SkillSources
	switch {
	case explicit != "":
		src.Dirs, src.Looked = []string{explicit}, []string{explicit}
		src.Agents = append(src.Agents, filepath.Join(explicit, "..", "agents"))
	default:
		src.lookAround(personal, project)
	}
	src.Agents = append(src.Agents, filepath.Join(".claude", "agents"))
	if home != "" {
		src.Agents = append(src.Agents, filepath.Join(home, ".claude", "agents"))
	}
	src.Agents = slices.Compact(src.Agents)
	return src
}

// lookAround finds the skills folders when none is given: Claude Code's
// personal and project ones, else the one in the working directory.
func (src *SkillSources) lookAround(personal, project string) {
	for _, dir := range []string{personal, project} {
		if dir == "" {
			continue
		}
		src.Looked = append(src.Looked, dir)
		if isDir(dir) {
			src.Dirs = append(src.Dirs, dir)
		}
	}
	src.Looked = append(src.Looked, "skills")
	if len(src.Dirs) == 0 && isDir("skills") {
		src.Dirs = []string{"skills"}
		src.Agents = append(src.Agents, "agents")
	}
}

// LoadInstalled reads the installed skills (see FindSkills). One skill
// that cannot be read costs only that skill; no skills folder at all is an
// error wrapping fs.ErrNotExist that says where gonogo looked. An explicit
// folder that holds no usable skill while its skills subfolder does is an
// error naming what to give instead: instead(subfolder), the flag or the
// variable as the caller words it.
func LoadInstalled(home, explicit string, instead func(inner string) string) (*Catalog, error) {
	src := FindSkills(home, explicit)
	if len(src.Dirs) == 0 {
		return nil, &noSkillsError{looked: src.Looked}
	}
	cat, err := LoadCatalog(CatalogOptions{SkillDirs: src.Dirs, AgentDirs: src.Agents})
	if err != nil || explicit == "" || len(cat.Names()) > 0 {
		return cat, err
	}
	if hint := nestedSkills(explicit, instead); hint != nil {
		return nil, hint
	}
	return cat, nil
}

// nestedSkills is the mix-up of a skills folder named by the repository
// or folder that holds it (--skills repo for repo/skills): explicit holds
// no usable skill, but its skills subfolder does. It returns nil when
// that is not the case.
func nestedSkills(explicit string, instead func(string) string) *nestedSkillsError {
	inner := filepath.Join(explicit, "skills")
	if !isDir(inner) {
		return nil
	}
	cat, err := LoadCatalog(CatalogOptions{SkillDirs: []string{inner}})
	if err != nil || len(cat.Names()) == 0 {
		return nil
	}
	return &nestedSkillsError{given: explicit, inner: inner, usable: len(cat.Names()), set: instead(inner)}
}

type nestedSkillsError struct {
	given, inner string
	usable       int
	set          string // what to give instead: --skills DIR or GONOGO_SKILLS_DIR=DIR
}

func (e *nestedSkillsError) Error() string {
	return fmt.Sprintf("the skills folder %s holds no usable skill, but %s holds %d: did you mean %s?", e.given, e.inner, e.usable, e.set)
}

type noSkillsError struct{ looked []string }

func (e *noSkillsError) Error() string {
	return fmt.Sprintf("no skills folder found: looked for %s; set GONOGO_SKILLS_DIR or --skills", strings.Join(e.looked, ", "))
}

func (e *noSkillsError) Unwrap() error { return fs.ErrNotExist }

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
