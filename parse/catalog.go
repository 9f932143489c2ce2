package parse

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/gonogo/gonogo/engine"
)

// Catalog is the set of installed skills, read from one or more skills
// folders in Claude Code's layout, or built in memory. It implements
// engine.Catalog.
//
// Everything about a skill (front matter, instructions, template sections)
// is read when the catalog is loaded: a skills folder holds tens of small
// files, and reading them once makes a broken skill show at start-up rather
// than in the middle of a run, and leaves a Catalog immutable and safe for
// concurrent use. A skill that cannot be read costs only that skill: it
// stays in the catalog with its Problem, Skill answers for it with an error
// wrapping engine.ErrBrokenSkill, and Names leaves it out. Leaf agents are
// read when asked for, since most runs use none.
type Catalog struct {
	dirs      []string // the skills folders, first wins; empty for an in-memory catalog
	agentDirs []string // where leaf agents are looked for, in order
	skills    map[string]engine.Skill
	names     []string          // usable skills, sorted
	all       []string          // every entry, broken ones too, sorted
	agents    map[string]string // in-memory leaf agents
	warnings  []string
}

// CatalogOptions says where a catalog is read from.
type CatalogOptions struct {
	// SkillDirs are skills folders, highest precedence first: a skill in
	// an earlier folder shadows one of the same name in a later folder
	// (with a warning). Each must exist.
	SkillDirs []string
	// AgentDirs are searched in order for a leaf agent <name>.md; missing
	// folders are skipped.
	AgentDirs []string
}

// LoadSkills reads one skills folder, with leaf agents in agents/ beside
// it (<dir>/../agents, taken lexically). See LoadCatalog.
func LoadSkills(dir string) (*Catalog, error) {
	return LoadCatalog(CatalogOptions{SkillDirs: []string{dir}, AgentDirs: []string{filepath.Join(dir, "..", "agents")}})
}

// LoadCatalog reads the skills folders: every <dir>/<name>/SKILL.md (YAML
// front matter between "---" lines, then the instructions) and, when
// present, <dir>/<name>/references/TEMPLATE.md, whose top-level "##"
// headings become the skill's TemplateSections.
//
// The folder name is the skill's name. A skill that cannot be used (no
// SKILL.md, an unreadable file, text that is not UTF-8, front matter that is
// never closed or cannot be read, a front-matter name that differs from the
// folder name, a SKILL.md or a file under references/ that leads through a
// symbolic link outside the skills folder and the skill's own folder, a
// TEMPLATE.md nested deeper than MaxNesting) is kept with its Problem and a
// warning, and costs nothing else. Hidden folders are skipped with a warning; plain files are ignored.
// Only a skills folder that is missing or unreadable is an error; a missing
// one wraps fs.ErrNotExist.
func LoadCatalog(opts CatalogOptions) (*Catalog, error) {
	c := &Catalog{skills: make(map[string]engine.Skill), agentDirs: slices.Clone(opts.AgentDirs)}
	shadows := map[string]bool{} // names whose entry has a SKILL.md: those shadow later folders
	for _, dir := range opts.SkillDirs {
		entries, err := catalogReadDir(dir)
		if err != nil {
			return nil, err
		}
		c.dirs = append(c.dirs, dir)
		for _, e := range entries {
			c.loadEntry(dir, e, shadows)
		}
	}
	c.index()
	return c, nil
}

// index lists the loaded skills by name: all of them, and apart the usable
// ones; each broken one's problem becomes a warning.
func (c *Catalog) index() {
	for name := range c.skills {
		c.all = append(c.all, name)
	}
	slices.Sort(c.all)
	for _, name := range c.all {
		if p := c.skills[name].Problem; p != "" {
			c.warnings = append(c.warnings, p)
			continue
		}
		c.names = append(c.names, name)
	}
}

// catalogReadDir lists a skills folder, with errors that say which.
func catalogReadDir(dir string) ([]fs.DirEntry, error) {
	info, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &catalogMissingDirError{dir: dir, err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("skills directory: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("skills directory %q is not a directory; set GONOGO_SKILLS_DIR or --skills", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading skills directory %s: %w", dir, err)
	}
	return entries, nil
}

// loadEntry reads one entry of a skills folder into the catalog, unless a
// skill of that name came from an earlier folder.
func (c *Catalog) loadEntry(dir string, e fs.DirEntry, shadows map[string]bool) {
	name := e.Name()
	path := filepath.Join(dir, name)
	if !catalogIsDir(e, path) {
		return
	}
	if strings.HasPrefix(name, ".") {
		c.warnf("%s: hidden directory skipped", path)
		return
	}
	skill, notes := catalogLoad(dir, path, name)
	hasFile := catalogExists(skill.Path)
	if c.shadowed(skill, hasFile, shadows) {
		return
	}
	if !engine.ValidSkillName(name) {
		skill.Problem = fmt.Sprintf("%s: %q is not a valid skill name (lower-case letters, digits and dashes)", skill.Dir, name)
	}
	c.warnings = append(c.warnings, notes...)
	if skill.Problem == "" {
		skill.Warnings = notes
	}
	shadows[name] = hasFile
	c.skills[name] = skill
}

// shadowed reports whether a skill of the same name came from an earlier
// folder with a SKILL.md (shadows), warning when this one has a SKILL.md
// (hasFile) too.
func (c *Catalog) shadowed(skill engine.Skill, hasFile bool, shadows map[string]bool) bool {
	prev, ok := c.skills[skill.Name]
	if !ok || !shadows[skill.Name] {
		return false
	}
	if hasFile {
		c.warnf("%s is shadowed by %s, which comes first", skill.Dir, prev.Dir)
	}
	return true
}

// catalogExists reports whether anything is at path (an unreadable
// SKILL.md is still a SKILL.md).
func catalogExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// NewCatalog returns an in-memory catalog of skills, for tests and for
// callers that build the list themselves. A skill with an invalid or
// repeated name is left out with a warning; one with a Problem is kept as
// broken.
func NewCatalog(skills []engine.Skill) *Catalog {
	c := &Catalog{skills: make(map[string]engine.Skill, len(skills))}
	for _, s := range skills {
		if !engine.ValidSkillName(s.Name) {
			c.warnf("skill %q left out: not a valid skill name", s.Name)
			continue
		}
		if _, dup := c.skills[s.Name]; dup {
			c.warnf("skill %q left out: the name is given twice", s.Name)
			continue
		}
		s.TemplateSections, s.Warnings = slices.Clone(s.TemplateSections), slices.Clone(s.Warnings)
		c.skills[s.Name] = s
		c.all = append(c.all, s.Name)
		if s.Problem == "" {
			c.names = append(c.names, s.Name)
		}
	}
	slices.Sort(c.names)
	slices.Sort(c.all)
	return c
}

// WithAgents returns a copy of the catalog whose Agent answers from agents
// (leaf agent name to instructions) before looking at the file system. An
// invalid name is left out with a warning.
func (c *Catalog) WithAgents(agents map[string]string) *Catalog {
	out := *c
	out.warnings = slices.Clone(c.warnings)
	out.agents = make(map[string]string, len(agents))
	for name, body := range agents {
		if !engine.ValidSkillName(name) {
			out.warnf("agent %q left out: not a valid agent name", name)
			continue
		}
		out.agents[name] = body
	}
	return &out
}

// Skill returns the named skill, or an error wrapping engine.ErrNotFound. An
// invalid name is not found without touching the file system. A skill that
// is installed but cannot be used comes back with its Problem and an error
// wrapping engine.ErrBrokenSkill.
func (c *Catalog) Skill(name string) (engine.Skill, error) {
	if !engine.ValidSkillName(name) {
		return engine.Skill{}, fmt.Errorf("skill %q: not a valid skill name: %w", name, engine.ErrNotFound)
	}
	s, ok := c.skills[name]
	if !ok {
		where := "the catalog"
		if len(c.dirs) > 0 {
			where = strings.Join(c.dirs, ", ")
		}
		return engine.Skill{}, fmt.Errorf("skill %q is not installed in %s: %w", name, where, engine.ErrNotFound)
	}
	s.TemplateSections, s.Warnings = slices.Clone(s.TemplateSections), slices.Clone(s.Warnings)
	if s.Problem != "" {
		return s, fmt.Errorf("skill %q: %s: %w", name, s.Problem, engine.ErrBrokenSkill)
	}
	return s, nil
}

// Names lists the name of every usable skill, sorted.
func (c *Catalog) Names() []string {
	return slices.Clone(c.names)
}

// Skills lists every skill found, those that cannot be used too (with
// their Problem), sorted by name. A skill shadowed by one of the same name
// in an earlier folder is not listed; a warning names it.
func (c *Catalog) Skills() []engine.Skill {
	out := make([]engine.Skill, 0, len(c.all))
	for _, name := range c.all {
		s := c.skills[name]
		s.TemplateSections, s.Warnings = slices.Clone(s.TemplateSections), slices.Clone(s.Warnings)
		out = append(out, s)
	}
	return out
}

// Dirs lists the skills folders the catalog was read from, first wins.
func (c *Catalog) Dirs() []string {
	return slices.Clone(c.dirs)
}

// Warnings lists what was skipped, shadowed, read leniently or cannot be
// used while loading, one sentence each, naming the file (and line where
// there is one).
func (c *Catalog) Warnings() []string {
	return slices.Clone(c.warnings)
}

// Agent returns the instructions of a leaf agent: the body of the first
// <agents>/<name>.md found, after its front matter. A missing agent, or an
// invalid name, is an error wrapping engine.ErrNotFound.
func (c *Catalog) Agent(name string) (string, error) {
	if body, ok := c.agents[name]; ok && engine.ValidSkillName(name) {
		return body, nil
	}
	path, err := c.AgentFile(name)
	if err != nil {
		return "", err
	}
	src, err := catalogAgentBounds(filepath.Dir(path)).readFile(path)
	if err != nil {
		return "", fmt.Errorf("agent %q: %w", name, err)
	}
	_, body, _, err := catalogFrontMatter(src, path)
	if err != nil {
		return "", err
	}
	return body, nil
}

// AgentFile returns the file a leaf agent is read from: the first
// <agents>/<name>.md in the agent folders, or "" for one given in memory.
// A missing agent, or an invalid name, is an error wrapping
// engine.ErrNotFound that says where gonogo looked.
func (c *Catalog) AgentFile(name string) (string, error) {
	if !engine.ValidSkillName(name) {
		return "", fmt.Errorf("agent %q: not a valid agent name: %w", name, engine.ErrNotFound)
	}
	if _, ok := c.agents[name]; ok {
		return "", nil
	}
	if len(c.agentDirs) == 0 {
		return "", fmt.Errorf("agent %q is not in the catalog: %w", name, engine.ErrNotFound)
	}
	for _, dir := range c.agentDirs {
		if path, err := catalogAgentIn(dir, name); err != nil || path != "" {
			return path, err
		}
	}
	return "", &catalogNoAgentError{file: name + ".md", dirs: c.agentDirs}
}

// catalogAgentIn returns the file of the leaf agent name in the agent
// folder dir, or "" when it is not there.
func catalogAgentIn(dir, name string) (string, error) {
	path := filepath.Join(dir, name+".md")
	_, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("agent %q: %w", name, err)
	}
	if _, _, err := catalogAgentBounds(dir).resolve(path); err != nil {
		return "", fmt.Errorf("agent %q: %w", name, err)
	}
	return path, nil
}

// catalogAgentBounds: a leaf agent's file may lead, through symbolic
// links, anywhere inside its agents folder, and nowhere else.
func catalogAgentBounds(dir string) catalogBounds {
	return newCatalogBounds("the agents folder "+dir, dir)
}

// catalogNoAgentError is a leaf agent found in none of the agent folders.
type catalogNoAgentError struct {
	file string
	dirs []string
}

func (e *catalogNoAgentError) Error() string {
	return fmt.Sprintf("no %s in %s", e.file, strings.Join(e.dirs, ", "))
}

func (e *catalogNoAgentError) Unwrap() error { return engine.ErrNotFound }

// catalogLoad reads one skill folder, with the warnings about it. A skill
// that cannot be used comes back with its Problem set; its Path is SKILL.md
// all the same.
func catalogLoad(source, dir, name string) (skill engine.Skill, notes []string) {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	path := filepath.Join(dir, "SKILL.md")
	skill = engine.Skill{Name: name, Path: path, Dir: dir, Source: source}
	tpath := filepath.Join(dir, "references", "TEMPLATE.md")
	skill.HasTemplate = catalogIsFile(tpath)
	skill.HasExample = catalogIsFile(filepath.Join(dir, "references", "EXAMPLE.md"))
	bounds := newCatalogBounds(fmt.Sprintf("the skills folder %s and the skill's own folder", source), source, dir)
	src, err := bounds.readFile(path)
	if err != nil {
		skill.Problem = catalogReadProblem(err, dir, path)
		return skill, nil
	}
	if bad := catalogFirstInvalidUTF8Line(src); bad > 0 {
		skill.Problem = fmt.Sprintf("%s:%d: not UTF-8 text; save the file as UTF-8", path, bad)
		return skill, nil
	}
	fm, body, notes, err := catalogFrontMatter(src, path)
	if err != nil {
		skill.Problem = err.Error()
		return skill, nil
	}
	skill.Instructions = body
	if skill.Problem, notes = catalogDescribe(&skill, fm, notes); skill.Problem != "" {
		return skill, notes
	}
	skill.Problem, notes = catalogLoadReferences(&skill, bounds, tpath, notes)
	return skill, notes
}

// catalogReadProblem says why a skill's SKILL.md at path, in the folder
// dir, cannot be read.
func catalogReadProblem(err error, dir, path string) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return dir + ": no SKILL.md in the folder"
	case errors.As(err, new(*catalogEscapeError)):
		return err.Error()
	}
	return fmt.Sprintf("%s: cannot be read: %v", path, catalogBareError(err))
}

// catalogDescribe takes the skill's description from its front matter fm
// (nil for none), checking that a name given there is the folder's, and
// returns the skill's problem, if any, and its notes.
func catalogDescribe(skill *engine.Skill, fm *yaml.Node, notes []string) (string, []string) {
	path := skill.Path
	if fm == nil {
		return "", append(notes, path+": no front matter; the skill has no description")
	}
	fmName, nameLine, desc, err := catalogSkillFields(fm, path)
	if err != nil {
		return err.Error(), notes
	}
	if fmName != "" && fmName != skill.Name {
		return fmt.Sprintf("%s:%d: the front matter names the skill %q, but its folder is %q; rename one so they agree", path, nameLine, fmName, skill.Name), notes
	}
	if desc == "" {
		notes = append(notes, path+": the front matter has no description")
	}
	skill.Description = desc
	return "", notes
}

// catalogLoadReferences checks every file under the skill's references/
// (the agent may read any of them) and reads its TEMPLATE.md, returning
// the skill's problem, if any, and its notes.
func catalogLoadReferences(skill *engine.Skill, bounds catalogBounds, tpath string, notes []string) (string, []string) {
	if err := bounds.checkTree(filepath.Dir(tpath)); err != nil {
		return err.Error(), notes
	}
	if !skill.HasTemplate {
		return "", notes
	}
	tsrc, err := bounds.readFile(tpath)
	switch {
	case errors.As(err, new(*catalogEscapeError)):
		return err.Error(), notes
	case err != nil:
		return fmt.Sprintf("%s: cannot be read: %v", tpath, catalogBareError(err)), notes
	}
	sections, tnotes, problem := catalogTemplateSections(tsrc, tpath)
	if problem != "" {
		return problem, notes
	}
	skill.TemplateSections = sections
	skill.Template = string(tsrc)
	return "", append(notes, tnotes...)
}

// catalogBareError drops the operation and path an *fs.PathError repeats,
// for messages that name the file already.
func catalogBareError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// catalogFirstInvalidUTF8Line returns the 1-based line of the first byte
// that is not UTF-8, or 0 when src is valid UTF-8.
func catalogFirstInvalidUTF8Line(src []byte) int {
	if utf8.Valid(src) {
		return 0
	}
	for i := 0; i < len(src); {
		r, w := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && w == 1 {
			return bytes.Count(src[:i], []byte("\n")) + 1
		}
		i += w
	}
	return 0
}

func catalogIsFile(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular()
}

func (c *Catalog) warnf(format string, args ...any) {
	c.warnings = append(c.warnings, fmt.Sprintf(format, args...))
}

// catalogIsDir reports whether a directory entry is a directory, following
// a symbolic link (installed skills are often links into a checkout).
func catalogIsDir(e fs.DirEntry, path string) bool {
	if e.IsDir() {
		return true
	}
	if e.Type()&fs.ModeSymlink == 0 {
		return false
	}
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

type catalogMissingDirError struct {
	dir string
	err error
}

func (e *catalogMissingDirError) Error() string {
	return fmt.Sprintf("skills directory %q does not exist; set GONOGO_SKILLS_DIR or --skills", e.dir)
}

func (e *catalogMissingDirError) Unwrap() error { return e.err }

// catalogDocRoot is the value a YAML document holds, or the node itself
// when it is no document or an empty one.
func catalogDocRoot(doc *yaml.Node) *yaml.Node {
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		return catalogDeref(doc.Content[0])
	}
	return doc
}

func catalogDeref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func catalogKindName(n *yaml.Node) string {
	if name, ok := catalogKindNames[n.Kind]; ok {
		return name
	}
	return "YAML node"
}

// catalogKindNames are the words messages use for the kinds of YAML value.
var catalogKindNames = map[yaml.Kind]string{
	yaml.MappingNode:  "mapping",
	yaml.SequenceNode: "list",
	yaml.ScalarNode:   "scalar",
}

var _ engine.Catalog = (*Catalog)(nil)
