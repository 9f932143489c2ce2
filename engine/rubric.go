package engine

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Judge applies the step-status rubric to what a runner brought back:
//
//   - FAILED: the runner could not run the agent, it timed out, was
//     cancelled, reported an error itself, exited non-zero, or its artifact
//     opens with an explicit error or refusal line ("ERROR:", "FAILED:",
//     "REFUSED:").
//   - EMPTY: no artifact, an artifact with no letters or digits, or a bare
//     stub: the skill's TEMPLATE "##" sections with their [bracketed
//     guidance] left unfilled.
//   - PRODUCED: anything else. A real artifact that keeps some brackets,
//     links or checkboxes is PRODUCED.
//
// A dry run's outcome is NOT-EXECUTED.
func Judge(out Outcome, sk Skill) (Result, string) {
	switch {
	case out.NotRun:
		return ResultNotExecuted, DryRunReason
	case out.Err != nil:
		return ResultFailed, withStderr(out.Err.Error(), out.Stderr)
	case out.AgentError != "":
		// The agent's own words say more than its exit code, which for a
		// reported error is usually 1.
		return ResultFailed, "the agent reported an error: " + oneLine(out.AgentError, 300)
	case out.ExitCode != 0:
		return ResultFailed, withStderr(fmt.Sprintf("the agent exited with code %d", out.ExitCode), out.Stderr)
	case !utf8.Valid(out.Artifact):
		return ResultFailed, "the agent's output is not UTF-8 text"
	}
	if line, ok := refusalLine(out.Artifact); ok {
		return ResultFailed, "the agent refused or failed: " + oneLine(line, 300)
	}
	if !hasContent(out.Artifact) {
		return ResultEmpty, "the agent produced no artifact"
	}
	if isStub(out.Artifact, sk) {
		return ResultEmpty, fmt.Sprintf("the artifact is %s's template with its [bracketed guidance] unfilled", sk.Name)
	}
	return ResultProduced, ""
}

// FailureReason is a short reason for a runner error, for callers that
// build one without an Outcome.
func FailureReason(err error) string {
	if err == nil {
		return ""
	}
	var r *Refusal
	if errors.As(err, &r) {
		return r.Message
	}
	return err.Error()
}

func withStderr(msg, stderr string) string {
	stderr = strings.TrimSpace(stderr)
	if stderr == "" {
		return msg
	}
	// The end of stderr says most about why an agent died.
	lines := strings.Split(stderr, "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	tail := strings.Join(lines, " | ")
	if len(tail) > 600 {
		tail = "..." + tail[len(tail)-600:]
	}
	return msg + ": " + tail
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

// refusalPrefixes open an agent's explicit error or refusal line. Only the
// colon forms count: "Error - checkout timeout postmortem" is a title.
var refusalPrefixes = []string{"ERROR:", "FAILED:", "REFUSED:"}

func refusalLine(b []byte) (string, bool) {
	for _, line := range strings.Split(string(b), "\n") {
		t := strings.TrimSpace(strings.Trim(strings.TrimSpace(line), "*_#> "))
		if t == "" {
			continue
		}
		for _, p := range refusalPrefixes {
			if strings.HasPrefix(strings.ToUpper(t), p) {
				return t, true
			}
		}
		return "", false
	}
	return "", false
}

// HasContent reports whether b holds any text (a letter or a digit): an
// artifact without is EMPTY, and an edit without is refused. Exported for
// backends that refuse an empty edit before it reaches Decide, so that
// they refuse exactly what Service does.
func HasContent(b []byte) bool { return hasContent(b) }

func hasContent(b []byte) bool {
	return bytes.IndexFunc(b, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}

// isStub reports whether an artifact is the skill's template left unfilled:
// it carries at least one of the template's "##" sections, and nearly every
// line of content under them is either a line of the template itself or
// mostly [bracketed guidance].
func isStub(b []byte, sk Skill) bool {
	if len(sk.TemplateSections) == 0 {
		return false
	}
	want := map[string]bool{}
	for _, s := range sk.TemplateSections {
		want[normHeading(s)] = true
	}
	tmpl := map[string]bool{}
	for _, l := range contentLines(sk.Template) {
		tmpl[l] = true
	}
	matched, content, stub := 0, 0, 0
	for _, l := range strings.Split(string(b), "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "## ") && want[normHeading(t[3:])] {
			matched++
		}
	}
	if matched == 0 {
		return false
	}
	for _, l := range contentLines(string(b)) {
		content++
		if tmpl[l] || mostlyBracketed(l) {
			stub++
		}
	}
	return content == 0 || stub*10 >= content*9
}

func normHeading(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(strings.Trim(s, "# ")), " "))
}

// contentLines returns the lines that carry content: no headings, blank
// lines, front matter, HTML comments, fences, rules or table separators;
// white space folded.
func contentLines(s string) []string {
	var out []string
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	inComment, end := false, frontMatterEnd(lines)
	for i, l := range lines {
		t := strings.Join(strings.Fields(l), " ")
		if i <= end {
			continue
		}
		if inComment {
			if strings.Contains(t, "-->") {
				inComment = false
			}
			continue
		}
		if strings.HasPrefix(t, "<!--") {
			inComment = !strings.Contains(t, "-->")
			continue
		}
		switch {
		case t == "", strings.HasPrefix(t, "#"), strings.HasPrefix(t, "```"), strings.HasPrefix(t, "~~~"):
			continue
		case strings.Trim(t, "-|: =*_") == "":
			continue
		}
		out = append(out, t)
	}
	return out
}

// mostlyBracketed reports whether a line's letters sit mostly inside
// [brackets] or <angle brackets>: template guidance, not content.
func mostlyBracketed(l string) bool {
	in, out, depth := 0, 0, 0
	for _, r := range l {
		switch r {
		case '[', '<':
			depth++
		case ']', '>':
			if depth > 0 {
				depth--
			}
		default:
			if unicode.IsLetter(r) {
				if depth > 0 {
					in++
				} else {
					out++
				}
			}
		}
	}
	return in > 0 && in >= out
}

// Summarize returns one line describing an artifact: its first heading or
// its first sentence, at most about 120 characters.
func Summarize(b []byte) string {
	for _, l := range contentOrHeadings(string(b)) {
		l = strings.TrimSpace(strings.TrimLeft(l, "#>*-_ "))
		l = strings.Trim(l, "*_ ")
		if l == "" || !hasContent([]byte(l)) {
			continue
		}
		if i := strings.Index(l, ". "); i > 0 && i < 160 {
			l = l[:i+1]
		}
		return oneLine(l, 120)
	}
	return ""
}

func contentOrHeadings(s string) []string {
	var out []string
	lines := strings.Split(s, "\n")
	end := frontMatterEnd(lines)
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if i <= end {
			continue
		}
		if t == "" || strings.HasPrefix(t, "<!--") || strings.HasPrefix(t, "```") {
			continue
		}
		out = append(out, t)
	}
	return out
}

// frontMatterEnd returns the index of the line closing a YAML front matter
// block at the top of lines, or -1 when there is none. A leading "---" that
// is never closed, or that encloses lines which are not YAML keys, is a
// thematic break and the text under it is content.
func frontMatterEnd(lines []string) int {
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "---" {
		return -1
	}
	for i := 1; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		switch {
		case t == "---" || t == "...":
			return i
		case t == "", strings.HasPrefix(lines[i], " "), strings.HasPrefix(t, "- "):
		case yamlKeyRE.MatchString(t):
		default:
			return -1
		}
	}
	return -1
}

var yamlKeyRE = regexp.MustCompile(`^[A-Za-z0-9_-]+:( |$)`)

// DryRunReason is the reason of a dry run's NOT-EXECUTED attempt, the
// words every front end shows for it (the design's contract).
const DryRunReason = "NOT EXECUTED - dry run"

// ResultText is an attempt's result and its reason on one line, as every
// front end shows it: "FAILED - the agent exited with code 1". A dry
// run's reason names its result in words already, so it stands alone:
// "NOT EXECUTED - dry run".
func ResultText(res Result, reason string) string {
	reason = strings.TrimSpace(reason)
	switch {
	case res == ResultNotExecuted && strings.HasPrefix(reason, "NOT EXECUTED"):
		return reason
	case reason == "":
		return string(res)
	}
	return string(res) + " - " + reason
}
