package parse

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/gonogo/gonogo/engine"
)

var (
	workflowYAMLLineRE   = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
	workflowYAMLAnchorRE = regexp.MustCompile(`^yaml: unknown anchor '(.*)' referenced$`)
)

// workflowYAMLProblem turns a YAML syntax error into a problem with a line.
// The YAML library leaves the line out for a few errors: an alias naming no
// anchor and a control character (both found here in the text), and errors
// on the first line.
func workflowYAMLProblem(src []byte, err error) engine.Problem {
	msg := err.Error()
	line, problem := 0, strings.TrimPrefix(msg, "yaml: ")
	if m := workflowYAMLLineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		problem = m[2]
	}
	switch {
	case slices.Contains(workflowYAMLParserProblems, problem):
		return engine.Problem{Line: workflowParserLine(src, line), Message: "invalid YAML: " + problem}
	case line > 0 && strings.Contains(problem, "tab character"):
		return engine.Problem{Line: workflowTabLine(src, line), Message: "invalid YAML: " + problem}
	case line > 0:
		return engine.Problem{Line: line, Message: "invalid YAML: " + problem}
	}
	return workflowUnlinedProblem(src, msg, problem)
}

// workflowParserLine is the file line of an error of the YAML parser (not
// its scanner), which counts lines from 0, leaving the number out for line
// 0, and names the line where the unfinished construct starts; at the end
// of the file that can be the line after the last.
func workflowParserLine(src []byte, line int) int {
	last := planLineAt(src, len(src))
	if bytes.HasSuffix(src, []byte("\n")) || bytes.HasSuffix(src, []byte("\r")) {
		last--
	}
	return max(min(line+1, last), 1)
}

// workflowUnlinedProblem places an error the YAML library gave no line by
// finding what it names in the text: the alias of an unknown anchor, or
// the first control character. Anything else is put on line 1.
func workflowUnlinedProblem(src []byte, msg, problem string) engine.Problem {
	p := engine.Problem{Line: 1, Message: "invalid YAML: " + problem}
	switch m := workflowYAMLAnchorRE.FindStringSubmatch(msg); {
	case m != nil:
		p.Message = fmt.Sprintf("invalid YAML: unknown anchor '%s' referenced (a value starting with * is an alias; quote it: \"*%s\")", m[1], m[1])
		if i := bytes.Index(src, []byte("*"+m[1])); i >= 0 {
			p.Line = planLineAt(src, i)
		}
	case strings.Contains(msg, "control characters"):
		if i := bytes.IndexFunc(src, workflowIsBadControl); i >= 0 {
			p.Line = planLineAt(src, i)
		}
	}
	return p
}

// workflowYAMLParserProblems are the errors of the YAML library's parser
// stage, whose line numbers count from 0.
var workflowYAMLParserProblems = []string{
	"did not find expected <stream-start>",
	"did not find expected <document start>",
	"found undefined tag handle",
	"did not find expected node content",
	"did not find expected '-' indicator",
	"did not find expected key",
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found duplicate %TAG directive",
}

// workflowTabLine is the first line, from the one the YAML library named
// on, indented with a tab: the library names the line before it.
func workflowTabLine(src []byte, from int) int {
	n := 0
	for line := range strings.Lines(string(src)) {
		n++
		indent := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
		if n >= from && strings.Contains(indent, "\t") {
			return n
		}
	}
	return from
}

// workflowIsBadControl reports the characters YAML refuses in a file.
// They are the C0 and C1 control characters other than tab, the line ends
// and NEL, and the noncharacters U+FFFE and U+FFFF.
func workflowIsBadControl(r rune) bool {
	if unicode.IsControl(r) {
		return !strings.ContainsRune("\t\n\r\u0085", r)
	}
	return r == 0xfffe || r == 0xffff
}
