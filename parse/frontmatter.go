package parse

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// catalogFrontMatter splits a Markdown file into its YAML front matter
// (nil when the file does not start with a "---" line) and the body after
// it. Front matter that is never closed, or that is not a YAML mapping, is
// an error naming file and line.
//
// The front matter is read as YAML. Published SKILL.md files often hold a
// top-level line such as "description: Use when: the user asks", which
// strict YAML refuses (": " inside a plain value) but Claude Code loads.
// When strict YAML fails, every top-level "key: value" line whose plain
// value holds ": " (or " #", or starts with a character YAML reserves) is
// taken as text, the whole rest of the line, with any more-indented lines
// under it folded in as YAML folds a plain value; if the front matter then
// reads, it is used and each such line is named in notes (file and line).
// Otherwise the strict error stands. A plain value that strict YAML reads
// but cuts at " #" (the rest is a comment) is named in notes too.
func catalogFrontMatter(src []byte, file string) (fm *yaml.Node, body string, notes []string, err error) {
	s := strings.TrimPrefix(string(src), "\ufeff")
	yamlText, body, ok, err := catalogSplitFrontMatter(s, file)
	if err != nil || !ok {
		return nil, body, nil, err
	}
	doc, notes, err := catalogFrontMatterYAML(yamlText, file)
	if err != nil {
		return nil, "", nil, err
	}
	root, err := catalogFrontMatterRoot(doc, file)
	if err != nil {
		return nil, "", nil, err
	}
	return root, body, notes, nil
}

// catalogFrontMatterRoot is the mapping the front matter holds; front
// matter with nothing in it holds an empty one.
func catalogFrontMatterRoot(doc yaml.Node, file string) (*yaml.Node, error) {
	if len(doc.Content) == 0 {
		return &yaml.Node{Kind: yaml.MappingNode, Line: 2}, nil // "---" right after "---"
	}
	root := catalogDeref(doc.Content[0])
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return &yaml.Node{Kind: yaml.MappingNode, Line: 2}, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: the front matter must be a YAML mapping of keys to values", file, root.Line+1)
	}
	return root, nil
}

// catalogFrontMatterYAML reads the front matter's YAML, strictly or else
// leniently, with the notes each way gives.
func catalogFrontMatterYAML(yamlText, file string) (yaml.Node, []string, error) {
	var doc yaml.Node
	strictErr := yaml.Unmarshal([]byte(yamlText), &doc)
	if strictErr == nil {
		return doc, catalogCommentCuts(yamlText, file), nil
	}
	fixed, fixes := catalogLenient(yamlText, file)
	doc = yaml.Node{}
	if len(fixes) == 0 || yaml.Unmarshal([]byte(fixed), &doc) != nil {
		return doc, nil, catalogYAMLError(file, 1, strictErr)
	}
	return doc, fixes, nil
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

// catalogTopLineRE is a top-level "key: value" line with a value on it.
var catalogTopLineRE = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_.-]*):[ \t]+(.*\S)[ \t]*$`)

// catalogPlainTrouble says what in a plain (unquoted) value strict YAML
// refuses or misreads, or "" when the value is not plain or is fine.
func catalogPlainTrouble(v string) string {
	switch v[0] {
	case '"', '\'', '|', '>', '[', '{', '&', '*', '!', '#':
		return "" // quoted, a block scalar, a flow collection, a tag, an anchor or a comment
	case '@', '`', '%':
		return fmt.Sprintf("%q at its start", v[:1])
	}
	switch {
	case strings.HasPrefix(v, "- "):
		return `"- " at its start`
	case strings.Contains(v, ": ") || strings.Contains(v, ":\t") || strings.HasSuffix(v, ":"):
		return `": "`
	case strings.Contains(v, " #") || strings.Contains(v, "\t#"):
		return `" #"`
	}
	return ""
}

// catalogLenient rewrites every top-level line whose plain value strict
// YAML refuses as a double-quoted string holding the rest of the line,
// folding in the more-indented lines under it. Lines keep their numbers:
// a folded line is left blank. fixes names each rewritten line.
func catalogLenient(yamlText, file string) (fixed string, fixes []string) {
	lines := strings.SplitAfter(yamlText, "\n")
	for i := 0; i < len(lines); i++ {
		line, eol := catalogCutEOL(lines[i])
		m := catalogTopLineRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		what := catalogPlainTrouble(m[2])
		if what == "" {
			continue
		}
		parts, j := catalogFold(lines, i+1, m[2])
		lines[i] = m[1] + ": " + strconv.Quote(strings.Join(parts, " ")) + eol
		fixes = append(fixes, fmt.Sprintf("%s:%d: the value of %q holds %s, which strict YAML refuses; read as text, as Claude Code does (quote the value to silence this warning)",
			file, i+2, m[1], what))
		i = j - 1
	}
	return strings.Join(lines, ""), fixes
}

// catalogFold gathers value and the more-indented lines from lines[j] on
// into parts, as YAML folds a plain value, blanking each line taken, and
// returns the index of the first line not taken.
func catalogFold(lines []string, j int, value string) (parts []string, next int) {
	parts = []string{value}
	for ; j < len(lines); j++ {
		text, eol := catalogCutEOL(lines[j])
		if strings.TrimSpace(text) == "" || (text[0] != ' ' && text[0] != '\t') {
			break
		}
		parts = append(parts, strings.TrimSpace(text))
		lines[j] = eol
	}
	return parts, j
}

// catalogCommentCuts names the top-level plain values that YAML cuts at
// " #", reading the rest of the line as a comment.
func catalogCommentCuts(yamlText, file string) []string {
	var notes []string
	n := 1
	for line := range strings.Lines(yamlText) {
		n++
		line, _ = catalogCutEOL(line)
		m := catalogTopLineRE.FindStringSubmatch(line)
		if m == nil || catalogPlainTrouble(m[2]) != `" #"` {
			continue
		}
		notes = append(notes, fmt.Sprintf("%s:%d: the value of %q is cut at \" #\": YAML reads the rest of the line as a comment (quote the value to keep it)", file, n, m[1]))
	}
	return notes
}

// catalogCutEOL splits a line from its "\n" or "\r\n".
func catalogCutEOL(line string) (text, eol string) {
	text = strings.TrimRight(line, "\r\n")
	return text, line[len(text):]
}

// catalogSkillFields reads name and description from SKILL.md front matter,
// with the line of the name; other keys are the skill's own business.
func catalogSkillFields(fm *yaml.Node, file string) (name string, nameLine int, desc string, err error) {
	for i := 0; i+1 < len(fm.Content); i += 2 {
		k, v := fm.Content[i], catalogDeref(fm.Content[i+1])
		if k.Value != "name" && k.Value != "description" {
			continue
		}
		val, err := catalogFieldText(k, v, file)
		if err != nil {
			return "", 0, "", err
		}
		if k.Value == "name" {
			name, nameLine = val, k.Line+1
		} else {
			desc = val
		}
	}
	return name, nameLine, desc, nil
}

// catalogFieldText is the trimmed text of the front-matter value v of key
// k; a null is empty, a list or a mapping an error.
func catalogFieldText(k, v *yaml.Node, file string) (string, error) {
	if v.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("%s:%d: front matter %q must be text, not a %s", file, v.Line+1, k.Value, catalogKindName(v))
	}
	if v.Tag == "!!null" {
		return "", nil
	}
	return strings.TrimSpace(v.Value), nil
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
