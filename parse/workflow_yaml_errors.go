package parse

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

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
		// The YAML parser (not its scanner) counts lines from 0, leaving
		// the number out for line 0, and names the line where the
		// unfinished construct starts; at the end of the file that can be
		// the line after the last.
		last := planLineAt(src, len(src))
		if bytes.HasSuffix(src, []byte("\n")) || bytes.HasSuffix(src, []byte("\r")) {
			last--
		}
		return engine.Problem{Line: max(min(line+1, last), 1), Message: "invalid YAML: " + problem}
	case line > 0 && strings.Contains(problem, "tab character"):
		return engine.Problem{Line: workflowTabLine(src, line), Message: "invalid YAML: " + problem}
	case line > 0:
		return engine.Problem{Line: line, Message: "invalid YAML: " + problem}
	}
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
func workflowIsBadControl(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r' || r == '\ufeff':
		return false
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f && r != 0x85:
		return true
	case r == 0xfffe || r == 0xffff:
		return true
	}
	return false
}
