package parse

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"

	"github.com/gonogo/gonogo/engine"
)

// finishBlock reads the open Section 7 block into the document: its
// heading, its **Skill:** and **Prompt:** lines and the prompt after them.
func (b *planBuilder) finishBlock() {
	sp := b.block
	b.block = nil
	pb := engine.PlanBlock{Line: sp.line, Heading: sp.heading}
	var problems []string
	var problem string
	pb.PTokens, pb.Effort, problem = planHeading(sp.heading)
	if problem != "" {
		problems = append(problems, problem)
	}
	r := &planBlockReader{b: b, sp: sp, pb: &pb}
	for _, n := range sp.nodes {
		b.eachLine(n, r.line)
	}
	if problem := r.promptProblem(); problem != "" {
		problems = append(problems, problem)
	}
	pb.Err = strings.Join(problems, "; ")
	b.doc.Blocks = append(b.doc.Blocks, pb)
}

// planBlockReader reads the **Skill:** and **Prompt:** lines of one
// Section 7 block into pb; the first line of each counts.
type planBlockReader struct {
	b                     *planBuilder
	sp                    *planSpan
	pb                    *engine.PlanBlock
	skillLine, promptLine int // where each marker was read, or 0
}

func (r *planBlockReader) line(p ast.Node, i, off int, line []byte) {
	if !planMaybeMarker(line) {
		return
	}
	if rest, ok := planMarker(line, "Skill"); ok {
		if at := r.b.lineOf(off); r.first(&r.skillLine, at, "Skill") {
			r.pb.Skill = r.b.skillName(rest, at)
		}
		return
	}
	if rest, ok := planMarker(line, "Prompt"); ok && r.first(&r.promptLine, r.b.lineOf(off), "Prompt") {
		r.pb.Prompt = r.b.promptBody(p, i, rest)
	}
}

// first notes at in *seen when it is the block's first line of the marker
// label and warns that any later one is ignored.
func (r *planBlockReader) first(seen *int, at int, label string) bool {
	if *seen != 0 {
		r.b.warn(at, "a second `**%s:**` line in the block at line %d is ignored", label, r.sp.line)
		return false
	}
	*seen = at
	return true
}

// promptProblem says why the block has no prompt, or is "" when it has one.
func (r *planBlockReader) promptProblem() string {
	switch {
	case r.promptLine == 0:
		return "no prompt body: the block has no `**Prompt:**` line"
	case r.pb.Prompt == "":
		return fmt.Sprintf("no prompt body: `**Prompt:**` (line %d) is followed by neither text nor a `>` quote", r.promptLine)
	}
	return ""
}

// skillName reads the name after **Skill:**: a code span, or a name in
// quotes where a chat client replaced the backticks.
func (b *planBuilder) skillName(rest string, line int) string {
	if name, ok := planQuotedName(rest); ok {
		return name
	}
	if f := strings.Fields(rest); len(f) > 0 {
		if w := strings.TrimRight(f[0], ".,;:"); engine.ValidSkillName(w) && strings.Contains(w, "-") {
			b.warn(line, "`**Skill:** %s` names the skill without backticks, so the block names no skill; write `**Skill:** `%s`` for it to run", rest, w)
		}
	}
	return ""
}

// planQuotedName reads the name in the code span or quotes that open rest.
func planQuotedName(rest string) (string, bool) {
	if strings.HasPrefix(rest, "`") {
		n := len(rest) - len(strings.TrimLeft(rest, "`"))
		if end := strings.Index(rest[n:], rest[:n]); end >= 0 {
			return strings.TrimSpace(rest[n : n+end]), true
		}
		return "", false
	}
	r, n := utf8.DecodeRuneInString(rest)
	if !planIsQuote(r) {
		return "", false
	}
	if end := strings.IndexFunc(rest[n:], planIsQuote); end >= 0 {
		return strings.TrimSpace(rest[n : n+end]), true
	}
	return "", false
}

// promptBody collects the prompt that starts at line i of paragraph p: the
// rest of that line and paragraph, then the quotes right after the
// paragraph (or, for a bare marker, a code block).
func (b *planBuilder) promptBody(p ast.Node, i int, rest string) string {
	inline := b.promptInline(p, i, rest)
	after := b.promptAfter(p.NextSibling(), inline == "")
	switch {
	case inline == "":
		return after
	case after == "":
		return inline
	}
	return inline + "\n\n" + after
}

// promptInline is the prompt's text on the marker's line and in the rest of
// its paragraph p.
func (b *planBuilder) promptInline(p ast.Node, i int, rest string) string {
	lines := []string{strings.TrimSpace(strings.TrimPrefix(rest, ">"))}
	l := p.Lines()
	for j := i + 1; j < l.Len(); j++ {
		seg := l.At(j)
		lines = append(lines, string(planTrimLine(seg.Value(b.md))))
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// promptAfter is the prompt's text in the quotes starting at next, the node
// after the marker's paragraph, or, after a bare marker (bare), in the code
// block there.
func (b *planBuilder) promptAfter(next ast.Node, bare bool) string {
	var quotes []string
	// A blank line without ">" splits a quote in two; pasted prompts often
	// lose those markers, so consecutive quotes are one prompt.
	for ; next != nil && next.Kind() == ast.KindBlockquote; next = next.NextSibling() {
		if q := b.quoteText(next); q != "" {
			quotes = append(quotes, q)
		}
	}
	if bare && len(quotes) == 0 && planIsCode(next) {
		return b.codeText(next)
	}
	return strings.Join(quotes, "\n\n")
}

func planIsCode(n ast.Node) bool {
	return n != nil && (n.Kind() == ast.KindFencedCodeBlock || n.Kind() == ast.KindCodeBlock)
}

// quoteText is the source of a block quote with one ">" marker (and the
// space after it) stripped from each line, so the prompt keeps its
// paragraphs, lists and inline markup as written.
func (b *planBuilder) quoteText(q ast.Node) string {
	start := q.Pos()
	if start < 0 {
		start = planFirstOffset(q)
	}
	if start < 0 {
		return ""
	}
	first := b.lineOf(start)
	last := b.quoteEnd(max(first, b.lineOf(max(planLastOffset(q), start))))
	var sb strings.Builder
	for ln := first; ln <= last; ln++ {
		from := b.lines[ln-1]
		if ln == first {
			from = b.base + start
		}
		line, _ := planNextLine(b.text, from)
		if ln > first {
			sb.WriteByte('\n')
		}
		sb.Write(planTrimLine(planUnquote(line)))
	}
	return strings.Trim(sb.String(), "\n")
}

// quoteEnd extends a quote from its last line with a segment over the lines
// after it that hold none (a closing code fence, a bare ">"); they still
// start with ">".
func (b *planBuilder) quoteEnd(last int) int {
	for last < len(b.lines) {
		next, _ := planNextLine(b.text, b.lines[last])
		if t := bytes.TrimLeft(next, " \t"); len(t) == 0 || t[0] != '>' {
			break
		}
		last++
	}
	return last
}

// planUnquote strips the indent, one ">" and the space after it from a
// quote's line.
func planUnquote(line []byte) []byte {
	line = bytes.TrimLeft(line, " \t")
	if len(line) == 0 || line[0] != '>' {
		return line
	}
	line = line[1:]
	if len(line) > 0 && (line[0] == ' ' || line[0] == '\t') {
		line = line[1:]
	}
	return line
}

func planFirstOffset(n ast.Node) int {
	if n.Type() == ast.TypeBlock {
		if l := n.Lines(); l.Len() > 0 {
			return l.At(0).Start
		}
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if off := planFirstOffset(c); off >= 0 {
			return off
		}
	}
	return -1
}

func planLastOffset(n ast.Node) int {
	last := n.Pos()
	if n.Type() != ast.TypeBlock {
		return last
	}
	if l := n.Lines(); l.Len() > 0 {
		last = max(last, l.At(l.Len()-1).Start)
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		last = max(last, planLastOffset(c))
	}
	return last
}

func (b *planBuilder) codeText(n ast.Node) string {
	var sb strings.Builder
	l := n.Lines()
	for i := 0; i < l.Len(); i++ {
		seg := l.At(i)
		sb.Write(seg.Value(b.md))
	}
	return strings.TrimRight(sb.String(), " \t\n")
}
