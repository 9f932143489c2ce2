package engine

import (
	"bytes"
	"errors"
	"fmt"
	"iter"
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
	if res, reason, ok := runVerdict(out); ok {
		return res, reason
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

// runVerdict is the verdict how the agent ran gives before its artifact
// is read: not run, failed to run or reported a failure, or output that
// is not text; false when the artifact decides.
func runVerdict(out Outcome) (Result, string, bool) {
	switch {
	case out.NotRun:
		return ResultNotExecuted, DryRunReason, true
	case out.Err != nil:
		return ResultFailed, withStderr(out.Err.Error(), out.Stderr), true
	case out.AgentError != "":
		// The agent's own words say more than its exit code, which for a
		// reported error is usually 1.
		return ResultFailed, "the agent reported an error: " + oneLine(out.AgentError, 300), true
	case out.ExitCode != 0:
		return ResultFailed, withStderr(fmt.Sprintf("the agent exited with code %d", out.ExitCode), out.Stderr), true
	case !utf8.Valid(out.Artifact):
		return ResultFailed, "the agent's output is not UTF-8 text", true
	}
	return "", "", false
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

// refusalLine returns the first non-blank line of b when it opens with a
// refusal prefix. Only that line is copied, and only when it is one.
func refusalLine(b []byte) (string, bool) {
	for _, line := range lines(b) {
		t := bytes.TrimSpace(bytes.Trim(bytes.TrimSpace(line), "*_#> "))
		if len(t) == 0 {
			continue
		}
		if opensWithRefusal(t) {
			return string(t), true
		}
		return "", false
	}
	return "", false
}

// opensWithRefusal reports whether line t opens with a refusal prefix,
// in any case.
func opensWithRefusal(t []byte) bool {
	up := strings.ToUpper(string(refusalHead(t)))
	for _, p := range refusalPrefixes {
		if strings.HasPrefix(up, p) {
			return true
		}
	}
	return false
}

// refusalHead is the start of t that decides whether it opens with a
// refusal prefix: upper case maps a character to one character, so the
// first characters of t, as many as the longest prefix has bytes, decide.
// Only those are upper-cased, however long the line.
func refusalHead(t []byte) []byte {
	for n, i := 0, 0; i < len(t); n++ {
		if n == maxRefusalPrefix {
			return t[:i]
		}
		_, size := utf8.DecodeRune(t[i:])
		i += size
	}
	return t
}

// maxRefusalPrefix is the length of the longest of refusalPrefixes.
const maxRefusalPrefix = len("REFUSED:")

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
	if len(sk.TemplateSections) == 0 || !carriesSection(b, sk.TemplateSections) {
		return false
	}
	return mostlyTemplate(b, sk.Template)
}

// carriesSection reports whether b has a "##" heading naming one of
// sections, compared as normHeading folds them.
func carriesSection(b []byte, sections []string) bool {
	want := map[string]bool{}
	for _, s := range sections {
		want[normHeading(s)] = true
	}
	for _, l := range lines(b) {
		t := bytes.TrimSpace(l)
		if bytes.HasPrefix(t, []byte("## ")) && want[normHeading(string(t[3:]))] {
			return true
		}
	}
	return false
}

// mostlyTemplate reports whether nine in ten of b's lines of content (or
// all of none) are lines of template or mostly [bracketed guidance].
func mostlyTemplate(b []byte, template string) bool {
	tmpl := map[string]bool{}
	eachContentLine([]byte(template), func(l []byte) { tmpl[string(l)] = true })
	content, stub := 0, 0
	eachContentLine(b, func(l []byte) {
		content++
		if tmpl[string(l)] || mostlyBracketed(l) {
			stub++
		}
	})
	return content == 0 || stub*10 >= content*9
}

func normHeading(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(strings.Trim(s, "# ")), " "))
}

// eachContentLine calls fn with each line of b that carries content: no
// headings, blank lines, front matter, HTML comments, fences, rules or
// table separators; white space folded. fn must not keep the line, whose
// bytes are reused: lines are read in place, so the check of an artifact
// costs no copy of it.
func eachContentLine(b []byte, fn func(line []byte)) {
	inComment, end := false, frontMatterEnd(b)
	var t []byte
	for i, l := range lines(b) {
		if i <= end {
			continue
		}
		t = foldSpace(t[:0], l)
		var comment bool
		if comment, inComment = htmlComment(t, inComment); comment {
			continue
		}
		if !noContent(t) {
			fn(t)
		}
	}
}

// htmlComment reports whether folded line t is (part of) an HTML
// comment, given whether one was open before it (open), and whether one is
// still open after it.
func htmlComment(t []byte, open bool) (comment, openAfter bool) {
	if open || bytes.HasPrefix(t, []byte("<!--")) {
		return true, !bytes.Contains(t, []byte("-->"))
	}
	return false, false
}

// noContent reports whether folded line t is one whose text is no
// content: blank, a heading, a fence, a rule or a table separator.
func noContent(t []byte) bool {
	switch {
	case len(t) == 0, t[0] == '#', bytes.HasPrefix(t, []byte("```")), bytes.HasPrefix(t, []byte("~~~")):
		return true
	}
	return len(bytes.Trim(t, "-|: =*_")) == 0
}

// foldSpace appends s to dst with its runs of white space made one space
// and none at either end, as strings.Join(strings.Fields(s), " ") does.
func foldSpace(dst, s []byte) []byte {
	start := len(dst)
	space := false
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRune(s[i:])
		if unicode.IsSpace(r) {
			space = true
		} else {
			if space && len(dst) > start {
				dst = append(dst, ' ')
			}
			space = false
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return dst
}

// mostlyBracketed reports whether a line's letters sit mostly inside
// [brackets] or <angle brackets>: template guidance, not content.
func mostlyBracketed(l []byte) bool {
	in, out, depth := 0, 0, 0
	for len(l) > 0 {
		r, n := utf8.DecodeRune(l)
		l = l[n:]
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
	end := frontMatterEnd(b)
	for i, line := range lines(b) {
		if i <= end {
			continue
		}
		if l := summaryText(line); l != "" {
			return oneLine(firstSentence(l), 120)
		}
	}
	return ""
}

// summaryText is line's text as a summary may show it, its Markdown marks
// trimmed; "" for a line that says nothing (blank, a comment, a fence, or
// marks alone).
func summaryText(line []byte) string {
	t := bytes.TrimSpace(line)
	if len(t) == 0 || bytes.HasPrefix(t, []byte("<!--")) || bytes.HasPrefix(t, []byte("```")) {
		return ""
	}
	l := strings.TrimSpace(strings.TrimLeft(string(t), "#>*-_ "))
	l = strings.Trim(l, "*_ ")
	if !hasContent([]byte(l)) {
		return ""
	}
	return l
}

// firstSentence is l up to the end of its first sentence, when that ends
// early enough to make a summary.
func firstSentence(l string) string {
	if i := strings.Index(l, ". "); i > 0 && i < 160 {
		return l[:i+1]
	}
	return l
}

// lines yields the lines of b, split at '\n' as strings.Split splits them
// (a final newline leaves an empty last line), with their index. They are
// b's own bytes: a reader that stops early has copied nothing.
func lines(b []byte) iter.Seq2[int, []byte] {
	return func(yield func(int, []byte) bool) {
		for i := 0; ; i++ {
			j := bytes.IndexByte(b, '\n')
			if j < 0 {
				yield(i, b)
				return
			}
			if !yield(i, b[:j]) {
				return
			}
			b = b[j+1:]
		}
	}
}

// frontMatterEnd returns the index of the line closing a YAML front matter
// block at the top of b, or -1 when there is none. A leading "---" that
// is never closed, or that encloses lines which are not YAML keys, is a
// thematic break and the text under it is content.
func frontMatterEnd(b []byte) int {
	for i, l := range lines(b) {
		t := bytes.TrimSpace(l)
		switch {
		case i == 0:
			if string(t) != "---" {
				return -1
			}
		case string(t) == "---" || string(t) == "...":
			return i
		case len(t) == 0, l[0] == ' ', bytes.HasPrefix(t, []byte("- ")):
		case yamlKeyRE.Match(t):
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
