package parse

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
	"go.yaml.in/yaml/v3"

	"github.com/gonogo/gonogo/engine"
)

// Catalog is the set of installed skills, read from a skills directory in
// Claude Code's layout, or built in memory. It implements engine.Catalog.
//
// Everything about a skill (front matter, instructions, template sections)
// is read when the catalog is loaded: a skills directory holds tens of small
// files, and reading them once makes a broken skill fail at start-up rather
// than in the middle of a run, and leaves a Catalog immutable and safe for
// concurrent use. Leaf agents are the exception: they are read when asked
// for, since most runs use none.
type Catalog struct {
	dir      string // the skills directory; empty for an in-memory catalog
	skills   map[string]engine.Skill
	names    []string
	agents   map[string]string // in-memory leaf agents
	warnings []string
}

// LoadSkills reads the skills directory dir: every <dir>/<name>/SKILL.md
// (YAML front matter between "---" lines, then the instructions) and, when
// present, <dir>/<name>/references/TEMPLATE.md, whose top-level "##"
// headings become the skill's TemplateSections.
//
// The directory name is the skill's name; a front-matter name that differs
// is ignored with a warning. Hidden directories, directories whose name is
// not a valid skill name and directories without SKILL.md are skipped with a
// warning; plain files are ignored. A SKILL.md whose front matter cannot be
// read is an error naming the file and line. A missing dir is an error
// wrapping fs.ErrNotExist.
func LoadSkills(dir string) (*Catalog, error) {
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
		return nil, fmt.Errorf("reading skills directory: %w", err)
	}
	c := &Catalog{dir: dir, skills: make(map[string]engine.Skill)}
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(dir, name)
		if !catalogIsDir(e, path) {
			continue
		}
		switch {
		case strings.HasPrefix(name, "."):
			c.warnf("%s: hidden directory skipped", path)
			continue
		case !engine.ValidSkillName(name):
			c.warnf("%s: skipped: %q is not a valid skill name (lower-case letters, digits and dashes)", path, name)
			continue
		}
		skill, err := c.load(path, name)
		if errors.Is(err, fs.ErrNotExist) {
			c.warnf("%s: skipped: no SKILL.md", path)
			continue
		}
		if err != nil {
			return nil, err
		}
		c.skills[name] = skill
		c.names = append(c.names, name)
	}
	slices.Sort(c.names)
	return c, nil
}

// NewCatalog returns an in-memory catalog of skills, for tests and for
// callers that build the list themselves. A skill with an invalid or
// repeated name is left out with a warning.
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
		s.TemplateSections = slices.Clone(s.TemplateSections)
		c.skills[s.Name] = s
		c.names = append(c.names, s.Name)
	}
	slices.Sort(c.names)
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
// invalid name is not found without touching the file system.
func (c *Catalog) Skill(name string) (engine.Skill, error) {
	if !engine.ValidSkillName(name) {
		return engine.Skill{}, fmt.Errorf("skill %q: not a valid skill name: %w", name, engine.ErrNotFound)
	}
	s, ok := c.skills[name]
	if !ok {
		where := "the catalog"
		if c.dir != "" {
			where = c.dir
		}
		return engine.Skill{}, fmt.Errorf("skill %q is not installed in %s: %w", name, where, engine.ErrNotFound)
	}
	s.TemplateSections = slices.Clone(s.TemplateSections)
	return s, nil
}

// Names lists every skill name, sorted.
func (c *Catalog) Names() []string {
	return slices.Clone(c.names)
}

// Warnings lists what was skipped or overridden while loading, one sentence
// each, naming the file.
func (c *Catalog) Warnings() []string {
	return slices.Clone(c.warnings)
}

// Agent returns the instructions of a leaf agent: the body of
// <skills>/../agents/<name>.md after its front matter (the parent is taken
// lexically). A missing agent, or an invalid name, is an error wrapping
// engine.ErrNotFound.
func (c *Catalog) Agent(name string) (string, error) {
	if !engine.ValidSkillName(name) {
		return "", fmt.Errorf("agent %q: not a valid agent name: %w", name, engine.ErrNotFound)
	}
	if body, ok := c.agents[name]; ok {
		return body, nil
	}
	if c.dir == "" {
		return "", fmt.Errorf("agent %q is not in the catalog: %w", name, engine.ErrNotFound)
	}
	path := filepath.Join(c.dir, "..", "agents", name+".md")
	src, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("agent %q: %s does not exist: %w", name, path, engine.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("agent %q: %w", name, err)
	}
	_, body, err := catalogFrontMatter(src, path)
	if err != nil {
		return "", err
	}
	return body, nil
}

// load reads one skill directory. An error wrapping fs.ErrNotExist means
// there is no SKILL.md.
func (c *Catalog) load(dir, name string) (engine.Skill, error) {
	path := filepath.Join(dir, "SKILL.md")
	src, err := os.ReadFile(path)
	if err != nil {
		return engine.Skill{}, fmt.Errorf("skill %q: %w", name, err)
	}
	fm, body, err := catalogFrontMatter(src, path)
	if err != nil {
		return engine.Skill{}, err
	}
	skill := engine.Skill{Name: name, Instructions: body, Path: path}
	if fm == nil {
		c.warnf("%s: no front matter; the skill has no description", path)
	} else {
		fmName, desc, err := catalogSkillFields(fm, path)
		if err != nil {
			return engine.Skill{}, err
		}
		if fmName != "" && fmName != name {
			c.warnf("%s: front matter name %q differs from the directory name; using %q", path, fmName, name)
		}
		if desc == "" {
			c.warnf("%s: the front matter has no description", path)
		}
		skill.Description = desc
	}
	tpath := filepath.Join(dir, "references", "TEMPLATE.md")
	tsrc, err := os.ReadFile(tpath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return engine.Skill{}, fmt.Errorf("skill %q: %w", name, err)
	default:
		skill.TemplateSections = catalogTemplateSections(tsrc)
		skill.Template = string(tsrc)
	}
	return skill, nil
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

// catalogFrontMatter splits a Markdown file into its YAML front matter
// (nil when the file does not start with a "---" line) and the body after
// it. Front matter that is never closed, or that is not a YAML mapping, is
// an error naming file and line.
func catalogFrontMatter(src []byte, file string) (*yaml.Node, string, error) {
	s := strings.TrimPrefix(string(src), "\ufeff")
	yamlText, body, ok, err := catalogSplitFrontMatter(s, file)
	if err != nil || !ok {
		return nil, body, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(yamlText), &doc); err != nil {
		return nil, "", catalogYAMLError(file, 1, err)
	}
	if len(doc.Content) == 0 {
		return &yaml.Node{Kind: yaml.MappingNode, Line: 2}, body, nil // "---" right after "---"
	}
	root := catalogDeref(doc.Content[0])
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return &yaml.Node{Kind: yaml.MappingNode, Line: 2}, body, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, "", fmt.Errorf("%s:%d: the front matter must be a YAML mapping of keys to values", file, root.Line+1)
	}
	return root, body, nil
}

// catalogSplitFrontMatter returns the YAML between an opening "---" line
// and the next "---" (or "...") line, and the text after it. ok is false
// when the text does not open with "---"; body is then all of s.
func catalogSplitFrontMatter(s, file string) (yamlText, body string, ok bool, err error) {
	first, rest, _ := strings.Cut(s, "\n")
	if strings.TrimRight(first, " \t\r") != "---" {
		return "", s, false, nil
	}
	off := len(first) + 1
	for line := range strings.Lines(rest) {
		trimmed := strings.TrimRight(line, " \t\r\n")
		if trimmed == "---" || trimmed == "..." {
			return rest[:off-len(first)-1], strings.TrimLeft(s[off+len(line):], "\r\n"), true, nil
		}
		off += len(line)
	}
	return "", "", false, fmt.Errorf("%s:1: the front matter opened with \"---\" is never closed by a \"---\" line", file)
}

// catalogSkillFields reads name and description from SKILL.md front matter;
// other keys are the skill's own business.
func catalogSkillFields(fm *yaml.Node, file string) (name, desc string, err error) {
	for i := 0; i+1 < len(fm.Content); i += 2 {
		k, v := fm.Content[i], catalogDeref(fm.Content[i+1])
		if k.Value != "name" && k.Value != "description" {
			continue
		}
		if v.Kind != yaml.ScalarNode {
			return "", "", fmt.Errorf("%s:%d: front matter %q must be text, not a %s", file, v.Line+1, k.Value, catalogKindName(v))
		}
		val := strings.TrimSpace(v.Value)
		if v.Tag == "!!null" {
			val = ""
		}
		if k.Value == "name" {
			name = val
		} else {
			desc = val
		}
	}
	return name, desc, nil
}

// catalogTemplateSections returns the text of the top-level level-2
// headings of a TEMPLATE.md. Goldmark's AST keeps headings inside fenced
// code, HTML and block quotes out; front matter is cut off first, since
// goldmark would read its closing "---" as a setext heading underline.
func catalogTemplateSections(src []byte) []string {
	s := strings.TrimPrefix(string(src), "\ufeff")
	if _, body, ok, err := catalogSplitFrontMatter(s, ""); ok && err == nil {
		s = body
	}
	source := []byte(s)
	doc := goldmark.New().Parser().Parse(text.NewReader(source))
	var sections []string
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		h, ok := n.(*ast.Heading)
		if !ok || h.Level != 2 {
			continue
		}
		if t := catalogInlineText(h, source); t != "" {
			sections = append(sections, t)
		}
	}
	return sections
}

// catalogInlineText is the plain text of a node's inline content, with
// markup dropped and runs of space folded.
func catalogInlineText(n ast.Node, source []byte) string {
	var b bytes.Buffer
	_ = ast.Walk(n, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Text:
			v := n.Value(source)
			if !n.IsRaw() { // code spans are raw: their backslashes are literal
				v = util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(v)))
			}
			b.Write(v)
			if n.SoftLineBreak() || n.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(n.Value)
		case *ast.AutoLink:
			b.Write(n.Label(source))
		case *ast.RawHTML:
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return strings.Join(strings.Fields(b.String()), " ")
}

func catalogDeref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func catalogKindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar"
	}
	return "YAML node"
}

var catalogYAMLLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// catalogYAMLError restates a YAML syntax error as "file:line: problem",
// the line shifted by offset (the lines before the YAML text in the file).
func catalogYAMLError(file string, offset int, err error) error {
	e := &catalogYAMLErr{file: file, msg: strings.TrimPrefix(err.Error(), "yaml: "), err: err}
	if m := catalogYAMLLineRE.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		e.line, e.msg = line+offset, m[2]
	}
	return e
}

type catalogYAMLErr struct {
	file string
	line int // 0 when the YAML library did not say
	msg  string
	err  error
}

func (e *catalogYAMLErr) Error() string {
	if e.line > 0 {
		return fmt.Sprintf("%s:%d: invalid YAML: %s", e.file, e.line, e.msg)
	}
	return fmt.Sprintf("%s: invalid YAML: %s", e.file, e.msg)
}

func (e *catalogYAMLErr) Unwrap() error { return e.err }

var _ engine.Catalog = (*Catalog)(nil)
