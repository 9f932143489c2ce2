package bot

import (
	"strings"

	"github.com/slack-go/slack"
)

// preview is the first lines of an artifact, rendered by Slack as
// Markdown (a markdown block: headings, lists, emphasis, code), within
// previewBudget characters of the 12,000 a message's markdown blocks may
// hold together. It reads only the lines it shows (and counts the rest),
// however large the artifact. The artifact is the agent's text, so it is
// defanged (defangPreview): it cannot mention anyone, link under a false
// label or form any other Slack markup, while its code, in code spans and
// fenced blocks, stays the agent's code. A code block the cut leaves open
// is closed, so the note on the lines left out does not fall inside it.
func preview(text string) (*slack.MarkdownBlock, bool) {
	lines, more := shownLines(strings.TrimLeft(text, " \t\r\n"))
	if len(lines) == 0 {
		return nil, false
	}
	out := defangPreview(lines)
	if fence := openFence(lines); fence != "" {
		out += "\n" + fence
	}
	if more > 0 {
		out += "\n\n_… " + plural(more, "more line") + " in the attached file_"
	}
	return markdownBlock(out), true
}

// shownLines are the first lines of text a preview shows (the first
// previewLines, within previewBudget, with no blank line last), and how
// many lines it leaves out. It reads no further than the lines it shows.
func shownLines(text string) ([]string, int) {
	var lines []string
	rest := text
	for len(lines) < previewLines && rest != "" {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		lines = append(lines, cutPlain(strings.TrimRight(clean(line), " \t"), 240))
	}
	more := 0
	if strings.TrimSpace(rest) != "" {
		more = strings.Count(strings.TrimRight(rest, " \t\r\n"), "\n") + 1
	}
	lines, cut := fitBudget(lines)
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines, more + cut
}

// fitBudget keeps the lines that fit in previewBudget once defanged, and
// counts those it drops.
func fitBudget(lines []string) ([]string, int) {
	size := 0
	for i, l := range lines {
		// defang(l) is the most a line can grow: in code it grows less.
		if size+textLen(defang(l))+1 > previewBudget {
			return lines[:i], len(lines) - i
		}
		size += textLen(defang(l)) + 1
	}
	return lines, 0
}

// openFence is the fence of a code block lines leave open ("```" or
// "~~~", as long as the one that opened it), or "" when none is open.
func openFence(lines []string) string {
	open := ""
	for _, l := range lines {
		if t := strings.TrimLeft(l, " "); len(l)-len(t) <= 3 {
			open = fenceAfter(open, t)
		}
	}
	return open
}

// fenceAfter is the open fence once line t (its indent trimmed) is read:
// t opens a code block when none is open, or closes the open one.
func fenceAfter(open, t string) string {
	for _, c := range []string{"`", "~"} {
		n := len(t) - len(strings.TrimLeft(t, c))
		switch {
		case n < 3:
		case open == "":
			open = strings.Repeat(c, n)
		case strings.HasPrefix(open, c) && n >= len(open) && strings.TrimSpace(t[n:]) == "":
			open = ""
		}
	}
	return open
}

// defangPreview is the preview's lines defanged except in their code: the
// lines inside a fenced code block opened with backticks, and inline code
// spans. Code copied from a preview is then the agent's code, with no
// word joiner in it. Code is told apart as CommonMark reads it, and only
// where no other reading (of a table, of tilde fences, of a span running
// across lines) could make it text that Slack parses: anything in doubt is
// defanged, which costs only invisible joiners.
func defangPreview(lines []string) string {
	if text := strings.Join(lines, "\n"); strings.Contains(text, "~~~") {
		// Whether Slack reads ~~~ as a fence is not documented, and
		// either reading changes what is code (which lines a backtick
		// fence holds, whether a line, in a list item or not, is a
		// fence's info string).
		return defang(text)
	}
	kinds := fenceKinds(lines)
	spans := codeSpans(lines, kinds)
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		if kinds[i] == lineCode {
			b.WriteString(l)
			continue
		}
		at := 0
		for _, sp := range spans[i] {
			b.WriteString(defang(l[at:sp[0]]))
			b.WriteString(l[sp[0]:sp[1]])
			at = sp[1]
		}
		b.WriteString(defang(l[at:]))
	}
	return b.String()
}

// What a preview line is, as far as fenced code goes.
const (
	lineText  = iota
	lineFence // a fence that opens or closes a code block
	lineCode  // inside a fenced code block
)

// fenceKinds tells the lines inside a fenced code block opened with at
// least three backticks at the start of a line. A fence indented by one
// to three spaces may open a block of its own or sit in a list item (which
// a less indented line ends, and the block with it); as either reading
// changes which lines later fences hold, a preview with one (outside a
// block) has no line of code.
func fenceKinds(lines []string) []int {
	kinds := make([]int, len(lines))
	open := 0 // the open fence's backticks, 0 when none is open
	for i, l := range lines {
		switch {
		case open > 0 && closesFence(l, open):
			kinds[i], open = lineFence, 0
		case open > 0:
			kinds[i] = lineCode
		default:
			n, indented := openingFence(l)
			if indented {
				return make([]int, len(lines))
			}
			if n > 0 {
				kinds[i], open = lineFence, n
			}
		}
	}
	return kinds
}

// openingFence is the backticks of the code block l opens (0 when it
// opens none), and whether its fence is indented by one to three spaces.
func openingFence(l string) (n int, indented bool) {
	t := strings.TrimLeft(l, " ")
	n = backticks(t)
	if n < 3 || len(l)-len(t) > 3 || strings.Contains(t[n:], "`") {
		return 0, false
	}
	return n, len(t) < len(l)
}

// closesFence reports whether l closes a fence of n backticks: up to three
// spaces, at least n backticks, then only white space.
func closesFence(l string, n int) bool {
	t := strings.TrimLeft(l, " ")
	m := backticks(t)
	return len(l)-len(t) <= 3 && m >= n && strings.TrimRight(t[m:], " \t") == ""
}

// backticks counts the backticks s starts with.
func backticks(s string) int { return len(s) - len(strings.TrimLeft(s, "`")) }

// codeSpans finds, for each text line, the byte ranges of its inline code
// spans (backticks included) that are code however the preview is read.
// Lines between blank lines and fences form a unit that holds every
// paragraph its lines are in. A span counts only when every backtick
// string of its unit pairs with one on its own line (a string left
// unpaired could open a span running to the next line and pair the rest
// differently), and only on a line without a pipe (a table row is cut
// into cells before its spans are read).
func codeSpans(lines []string, kinds []int) [][][2]int {
	spans := make([][][2]int, len(lines))
	for start := 0; start < len(lines); {
		start = max(unitSpans(lines, kinds, start, spans), start+1)
	}
	return spans
}

// unitSpans fills in spans for the unit of text lines that starts at
// start (see codeSpans), and returns where the unit ends.
func unitSpans(lines []string, kinds []int, start int, spans [][][2]int) int {
	end := start
	paired := true
	for ; end < len(lines) && kinds[end] == lineText && strings.TrimSpace(lines[end]) != ""; end++ {
		var ok bool
		spans[end], ok = lineSpans(lines[end])
		paired = paired && ok
	}
	for i := start; i < end; i++ {
		if !paired || strings.Contains(lines[i], "|") {
			spans[i] = nil
		}
	}
	return end
}

// lineSpans reads the code spans of one line as CommonMark would were it
// a paragraph of its own: a backtick string opens a span that the next
// backtick string of the same length closes; a backslash escapes the
// punctuation after it outside spans. paired is false when a backtick
// string found no partner.
func lineSpans(l string) (spans [][2]int, paired bool) {
	paired = true
	for i := 0; i < len(l); {
		switch l[i] {
		case '\\':
			if i+1 < len(l) && strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", l[i+1]) >= 0 {
				i += 2
			} else {
				i++
			}
		case '`':
			n := backticks(l[i:])
			j := closingRun(l, i+n, n)
			if j < 0 {
				paired = false
				i += n
				continue
			}
			spans = append(spans, [2]int{i, j + n})
			i = j + n
		default:
			i++
		}
	}
	return spans, paired
}

// closingRun is where the first run of exactly n backticks at or after
// from starts, or -1.
func closingRun(l string, from, n int) int {
	for k := from; k < len(l); {
		if l[k] != '`' {
			k++
			continue
		}
		m := backticks(l[k:])
		if m == n {
			return k
		}
		k += m
	}
	return -1
}
