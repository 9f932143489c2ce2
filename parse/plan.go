package parse

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"

	"github.com/gonogo/gonogo/engine"
)

// DefaultMaxPlanBytes is the largest plan Plan reads unless told otherwise.
// Real plans are tens of kilobytes; the cap keeps a stray upload (a log, an
// export) from being parsed at all.
const DefaultMaxPlanBytes = 1 << 20

// PlanOptions tunes Plan.
type PlanOptions struct {
	// MaxBytes is the largest plan accepted; 0 (or less) means
	// DefaultMaxPlanBytes. Front ends set it from --max-plan-bytes or
	// GONOGO_MAX_PLAN_BYTES.
	MaxBytes int
}

// Plan reads a prioritized-action-plan Markdown document: the Section 7
// "To execute" blocks, the Cynefin domain and the overall plan confidence.
// name is used in messages only.
//
// The only error is an *engine.Refusal (reason engine.RefuseInvalidInput,
// Source name, Line >= 1) for input that cannot be read as text at all:
// empty or whitespace only, larger than the limit, UTF-16, not UTF-8, or
// binary (a NUL byte, or control characters making up more than a tenth of
// the characters), or block quotes and lists nested more than MaxNesting
// deep (Line is where the limit is passed). Should the Markdown parser
// itself fail, the refusal is engine.RefuseParseError at line 1 instead of
// a crash. Reading costs time linear in the size of the plan whatever its
// shape (see MaxNesting and MaxRefParagraphLines for the two limits that
// hold goldmark to it). Anything a plan can get wrong is reported in the document
// instead: HasSection7 false, a block with Err set (pre-flight refuses naming
// its line), DomainAmbiguous, or a line in Warnings. Skill names are kept as
// written; the engine resolves and classifies them.
//
// Pasted text is tolerated: CRLF and CR line ends, a UTF-8 byte order mark,
// non-breaking spaces (U+00A0, U+202F), trailing spaces, YAML front matter
// (skipped; line numbers stay those of the file), single or double emphasis
// around markers (**Skill:**, *Skill:*, __Skill__:), quotes around a marker
// (“**Skill:**”) and quotes in place of backticks around a skill name
// (‘deliver-prd’, “deliver-prd”, 'deliver-prd').
//
// Structure comes from the goldmark block tree, so headings in fenced code,
// HTML blocks or quotes never count:
//
//   - Sections are top-level headings of level 2 or 3 whose text begins
//     "Section <n>" (leading emphasis allowed). A section ends at the next
//     heading of its level or above, or at the next "Section <m>" heading.
//     The first Section 0, 2 and 7 are read; a repeat is ignored with a
//     warning.
//   - A block is a level-4 heading in Section 7 whose text begins
//     "To execute" and runs to the next heading of level 4 or above, or to
//     the end of Section 7. Other headings of level 4 or above inside
//     Section 7 end the block and are ignored with a warning, as are
//     "To execute" headings at another level or outside Section 7.
//   - A block heading is "To execute <P-tokens>: <effort>". The P-token set
//     is one or more P<n> joined by "and", "," (optionally ", and") or "&",
//     case-insensitive, returned as "P<n>" in the order written, repeats and
//     gaps kept. A heading without P-tokens, without the colon or without an
//     effort title sets Err.
//   - **Skill:** is read from a paragraph line of the block (lists
//     included, quotes and code not): the code span or quoted name after the
//     marker, kept as written (a placeholder such as `[exact-skill-name]`
//     stays). A bare name is not taken (a warning says how to fix it when it
//     looks like a skill name), and neither is a missing line: Skill "".
//   - **Prompt:** starts the prompt: the text after the marker on its line
//     and the rest of its paragraph, then the block quote directly after
//     that paragraph (every line, one ">" stripped, inline markup kept as
//     written). A fenced or indented code block directly after a bare marker
//     is taken verbatim instead. No marker, or a marker followed by nothing,
//     sets Err ("no prompt body ...").
//   - The domain comes from the first **Domain:** line of Section 2 or, only
//     when Section 2 has no such line, the first **Situation
//     classification:** line of Section 0. The text after the marker, up to
//     an inline **Source:** clause, is searched for the whole words Clear,
//     Complicated, Complex and Chaotic, case-insensitive. Exactly one
//     distinct domain (repeats allowed) sets Domain; none or several sets
//     DomainAmbiguous and leaves Domain empty. A Section 2 line that exists
//     but is ambiguous is not overridden by Section 0: a contradiction in the
//     primary statement is reported, never resolved by a guess, and the
//     ambiguous domain keeps the run checkpointed.
//   - The confidence comes from the first **Overall plan confidence:** line
//     in Section 0, else the first one anywhere outside Section 7. Its value
//     is High, Medium or Low, or two of them joined by a hyphen, slash or
//     dash with no spaces (Medium-High), case-insensitive, returned
//     capitalised; the reason is what follows after an optional separator
//     (" - ", ".", ":", ",", ";", en or em dash). A bracketed template value
//     or anything else leaves Confidence empty with a warning. Other
//     confidence labels (an effort's **Confidence:**, "Confidence: High" in
//     prose, "Inferred (Low confidence)") are never read.
func Plan(src []byte, name string, opt PlanOptions) (engine.PlanDocument, error) {
	limit := opt.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxPlanBytes
	}
	if r := planCheckInput(src, name, limit); r != nil {
		return engine.PlanDocument{}, r
	}
	norm := planNormalize(src)
	base := planFrontMatter(norm)
	root, deep, err := markdownParse(planMarkdown, norm[base:], parser.NewContext())
	if err != nil {
		return engine.PlanDocument{}, &engine.Refusal{
			Reason: engine.RefuseParseError, Source: name, Line: 1,
			Message: fmt.Sprintf("cannot read the plan as Markdown: %v", err),
		}
	}
	if deep >= 0 {
		return engine.PlanDocument{}, &engine.Refusal{
			Reason: engine.RefuseInvalidInput, Source: name, Line: planLineAt(norm, base+deep),
			Message: fmt.Sprintf("block quotes and lists nest more than %d deep here; gonogo reads plans nested at most %d deep (a quote or a list is one level)", MaxNesting, MaxNesting),
		}
	}
	b := &planBuilder{
		text:  norm,
		md:    norm[base:],
		base:  base,
		lines: planLineStarts(norm),
		doc:   engine.PlanDocument{Source: name},
		sec:   -1,
		seen:  map[int]int{},
	}
	b.walk(root)
	return b.doc, nil
}

// planMarkdown parses block structure only, nested at most MaxNesting
// deep. Every marker of the plan format is read from the source text of
// one paragraph line and prompts are returned as written, so inline parsing
// (emphasis, links, code spans) would build trees nobody reads; CommonMark
// settles blocks before inlines, so the block tree is the same either way,
// and emphasis or bracket runs cost no more than plain text.
var planMarkdown = parser.NewParser(
	parser.WithBlockParsers(markdownBlockParsers(MaxNesting)...),
	parser.WithParagraphTransformers(markdownParagraphTransformers()...),
)

// planBuilder walks the top level of the block tree once, tracking the open
// section and block.
type planBuilder struct {
	text  []byte // the normalized plan
	md    []byte // text after any front matter: what goldmark parsed
	base  int    // offset of md in text
	lines []int  // offsets in text where each line starts
	doc   engine.PlanDocument

	sec      int         // number of the open Section 0, 2 or 7, or -1
	secLevel int         // its heading level
	seen     map[int]int // section number -> line of the heading that was read
	block    *planSpan   // the open Section 7 block

	domain2, domain0 *planMarked // Section 2 **Domain:**, Section 0 **Situation classification:**
	conf0, conf      *planMarked // **Overall plan confidence:** in Section 0, anywhere
	warnings         []planWarning
}

// planSpan is a Section 7 block being collected.
type planSpan struct {
	line    int
	heading string
	nodes   []ast.Node
}

// planMarked is a marker line found in the plan: where, and what follows
// the marker.
type planMarked struct {
	line int
	rest string
}

// lineOf is the 1-based file line of offset off in md.
func (b *planBuilder) lineOf(off int) int {
	return sort.SearchInts(b.lines, b.base+off+1)
}

func (b *planBuilder) nodeLine(n ast.Node) int {
	off := n.Pos()
	if off < 0 {
		if l := n.Lines(); l.Len() > 0 {
			off = l.At(0).Start
		} else {
			off = 0
		}
	}
	return b.lineOf(off)
}

func (b *planBuilder) warn(line int, format string, args ...any) {
	b.warnings = append(b.warnings, planWarning{line, fmt.Sprintf(format, args...)})
}

type planWarning struct {
	line int
	msg  string
}

func (b *planBuilder) walk(root ast.Node) {
	for n := root.FirstChild(); n != nil; n = n.NextSibling() {
		if h, ok := n.(*ast.Heading); ok {
			b.heading(h)
			continue
		}
		switch {
		case b.block != nil:
			b.block.nodes = append(b.block.nodes, n)
		case b.sec != 7 && b.wantMarkers():
			b.eachLine(n, b.sectionMarker)
		}
	}
	if b.block != nil {
		b.finishBlock()
	}
	b.finishDomain()
	b.finishConfidence()
	// Warnings are found section by section; the user reads them top down.
	sort.SliceStable(b.warnings, func(i, j int) bool { return b.warnings[i].line < b.warnings[j].line })
	for _, w := range b.warnings {
		b.doc.Warnings = append(b.doc.Warnings, fmt.Sprintf("line %d: %s", w.line, w.msg))
	}
}

func (b *planBuilder) heading(h *ast.Heading) {
	txt := b.headingText(h)
	line := b.nodeLine(h)
	endsBlock := b.block != nil && h.Level <= 4
	if endsBlock {
		b.finishBlock()
	}
	num, isSection := -1, false
	if h.Level == 2 || h.Level == 3 {
		num, isSection = planSectionNumber(txt)
	}
	if b.sec >= 0 && (h.Level <= b.secLevel || isSection) {
		b.sec = -1
	}
	if isSection {
		b.openSection(num, h.Level, line)
		return
	}
	_, exec := planCutExecute(txt)
	switch {
	case b.sec == 7 && exec && h.Level == 4:
		b.block = &planSpan{line: line, heading: txt}
	case b.sec == 7 && exec:
		b.warn(line, "%q is a level-%d heading; Section 7 blocks are level-4 headings (`#### To execute ...`), so it is ignored", txt, h.Level)
	case exec:
		b.warn(line, "%q is outside Section 7 and is ignored", txt)
	case b.sec == 7 && h.Level <= 4 && endsBlock:
		b.warn(line, "heading %q inside Section 7 is not a `To execute` block; it ends the block above it and is otherwise ignored", txt)
	case b.sec == 7 && h.Level <= 4:
		b.warn(line, "heading %q inside Section 7 is not a `To execute` block and is ignored", txt)
	}
}

func (b *planBuilder) openSection(num, level, line int) {
	if num != 0 && num != 2 && num != 7 {
		return
	}
	if first, ok := b.seen[num]; ok {
		b.warn(line, "a second Section %d heading; only the first (line %d) is read", num, first)
		return
	}
	b.seen[num] = line
	b.sec, b.secLevel = num, level
	if num == 7 {
		b.doc.HasSection7 = true
		b.doc.Section7Line = line
	}
}

func (b *planBuilder) headingText(h *ast.Heading) string {
	l := h.Lines()
	if l.Len() == 1 {
		seg := l.At(0)
		return string(planTrimLine(seg.Value(b.md)))
	}
	parts := make([]string, 0, l.Len())
	for i := 0; i < l.Len(); i++ {
		seg := l.At(i)
		parts = append(parts, strings.TrimSpace(string(seg.Value(b.md))))
	}
	return strings.Join(parts, " ")
}

// planSectionNumber reads "Section <n>" at the start of a heading; "Section
// 7.1" is a subsection, not Section 7.
func planSectionNumber(txt string) (int, bool) {
	s := strings.TrimLeft(txt, "*_ ")
	const word = "section"
	if len(s) <= len(word) || !strings.EqualFold(s[:len(word)], word) {
		return 0, false
	}
	t := strings.TrimLeft(s[len(word):], " \t")
	if len(t) == len(s)-len(word) {
		return 0, false
	}
	j := 0
	for j < len(t) && j < 4 && t[j] >= '0' && t[j] <= '9' {
		j++
	}
	if j == 0 || (j < len(t) && t[j] >= '0' && t[j] <= '9') {
		return 0, false
	}
	if rest := t[j:]; len(rest) > 1 && rest[0] == '.' && rest[1] >= '0' && rest[1] <= '9' {
		return 0, false
	}
	n, err := strconv.Atoi(t[:j])
	return n, err == nil
}

// eachLine calls fn for every line of every paragraph in n, descending into
// lists but not into quotes or code: markers are plan structure, while a
// quote or a code block is content (a prompt, an example).
func (b *planBuilder) eachLine(n ast.Node, fn func(p ast.Node, i, off int, line []byte)) {
	switch n.Kind() {
	case ast.KindParagraph, ast.KindTextBlock:
		l := n.Lines()
		for i := 0; i < l.Len(); i++ {
			seg := l.At(i)
			fn(n, i, seg.Start, planTrimLine(seg.Value(b.md)))
		}
	case ast.KindList, ast.KindListItem:
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			b.eachLine(c, fn)
		}
	}
}

func planTrimLine(s []byte) []byte {
	return bytes.TrimRight(s, " \t\r\n")
}

// planMaybeMarker is a cheap filter before planMarker: a marker line starts
// with emphasis or a quote.
func planMaybeMarker(line []byte) bool {
	for _, c := range line {
		switch c {
		case ' ', '\t':
			continue
		case '*', '_', '"', '\'', '`', 0xe2, 0xc2:
			return true
		}
		return false
	}
	return false
}

func planIsQuote(r rune) bool {
	switch r {
	case '\'', '"', '`', '\u2018', '\u2019', '\u201c', '\u201d', '\u00b4':
		return true
	}
	return false
}

// planMarker reports whether line starts with the bold label (such as
// "Skill" for **Skill:**) and returns the trimmed text after it. It accepts
// * or _ emphasis, single or double, the colon inside or just after it, and
// a quote around the whole marker.
func planMarker(line []byte, label string) (string, bool) {
	s := bytes.TrimLeft(line, " \t")
	quoted := false
	if r, n := utf8.DecodeRune(s); planIsQuote(r) {
		quoted, s = true, s[n:]
	}
	d := 0
	for d < len(s) && d < 2 && (s[d] == '*' || s[d] == '_') {
		d++
	}
	if d == 0 {
		return "", false
	}
	delim := s[:d]
	s = bytes.TrimLeft(s[d:], " ")
	if len(s) < len(label) || !bytes.EqualFold(s[:len(label)], []byte(label)) {
		return "", false
	}
	s = bytes.TrimLeft(s[len(label):], " ")
	switch {
	case bytes.HasPrefix(s, []byte(":")):
		s = bytes.TrimLeft(s[1:], " ")
		if !bytes.HasPrefix(s, delim) {
			return "", false
		}
		s = s[len(delim):]
	case bytes.HasPrefix(s, delim):
		s = bytes.TrimLeft(s[len(delim):], " ")
		if !bytes.HasPrefix(s, []byte(":")) {
			return "", false
		}
		s = s[1:]
	default:
		return "", false
	}
	if quoted {
		if r, n := utf8.DecodeRune(s); planIsQuote(r) {
			s = s[n:]
		}
	}
	return string(bytes.TrimSpace(s)), true
}

// sectionMarker records the Section 0 and Section 2 markers and the overall
// confidence, first occurrence of each.
func (b *planBuilder) sectionMarker(_ ast.Node, _, off int, line []byte) {
	if !planMaybeMarker(line) {
		return
	}
	if b.sec == 2 && b.domain2 == nil {
		if rest, ok := planMarker(line, "Domain"); ok {
			b.domain2 = &planMarked{line: b.lineOf(off), rest: rest}
			return
		}
	}
	if b.sec == 0 && b.domain0 == nil {
		if rest, ok := planMarker(line, "Situation classification"); ok {
			b.domain0 = &planMarked{line: b.lineOf(off), rest: rest}
			return
		}
	}
	if b.wantConfidence() {
		if rest, ok := planMarker(line, "Overall plan confidence"); ok {
			m := &planMarked{line: b.lineOf(off), rest: rest}
			if b.sec == 0 {
				b.conf0 = m
			}
			if b.conf == nil {
				b.conf = m
			}
		}
	}
}

// wantMarkers reports whether the open section can still hold a marker
// not yet found, so the bulk of a plan is not scanned line by line.
func (b *planBuilder) wantMarkers() bool {
	return b.sec == 2 && b.domain2 == nil || b.sec == 0 && b.domain0 == nil || b.wantConfidence()
}

// wantConfidence: Section 0's marker wins over an earlier one elsewhere.
func (b *planBuilder) wantConfidence() bool {
	return b.conf0 == nil && (b.sec == 0 || b.conf == nil)
}

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
	skillLine, promptLine := 0, 0
	for _, n := range sp.nodes {
		b.eachLine(n, func(p ast.Node, i, off int, line []byte) {
			if !planMaybeMarker(line) {
				return
			}
			if rest, ok := planMarker(line, "Skill"); ok {
				at := b.lineOf(off)
				if skillLine != 0 {
					b.warn(at, "a second `**Skill:**` line in the block at line %d is ignored", sp.line)
					return
				}
				skillLine = at
				pb.Skill = b.skillName(rest, at)
				return
			}
			if rest, ok := planMarker(line, "Prompt"); ok {
				at := b.lineOf(off)
				if promptLine != 0 {
					b.warn(at, "a second `**Prompt:**` line in the block at line %d is ignored", sp.line)
					return
				}
				promptLine = at
				pb.Prompt = b.promptBody(p, i, rest)
			}
		})
	}
	switch {
	case promptLine == 0:
		problems = append(problems, "no prompt body: the block has no `**Prompt:**` line")
	case pb.Prompt == "":
		problems = append(problems, fmt.Sprintf("no prompt body: `**Prompt:**` (line %d) is followed by neither text nor a `>` quote", promptLine))
	}
	pb.Err = strings.Join(problems, "; ")
	b.doc.Blocks = append(b.doc.Blocks, pb)
}

// skillName reads the name after **Skill:**: a code span, or a name in
// quotes where a chat client replaced the backticks.
func (b *planBuilder) skillName(rest string, line int) string {
	if rest == "" {
		return ""
	}
	if rest[0] == '`' {
		n := len(rest) - len(strings.TrimLeft(rest, "`"))
		if end := strings.Index(rest[n:], rest[:n]); end >= 0 {
			return strings.TrimSpace(rest[n : n+end])
		}
	} else if r, n := utf8.DecodeRuneInString(rest); planIsQuote(r) {
		if end := strings.IndexFunc(rest[n:], planIsQuote); end >= 0 {
			return strings.TrimSpace(rest[n : n+end])
		}
	}
	if f := strings.Fields(rest); len(f) > 0 {
		if w := strings.TrimRight(f[0], ".,;:"); engine.ValidSkillName(w) && strings.Contains(w, "-") {
			b.warn(line, "`**Skill:** %s` names the skill without backticks, so the block names no skill; write `**Skill:** `%s`` for it to run", rest, w)
		}
	}
	return ""
}

// promptBody collects the prompt that starts at line i of paragraph p: the
// rest of that line and paragraph, then the quotes right after the
// paragraph (or, for a bare marker, a code block).
func (b *planBuilder) promptBody(p ast.Node, i int, rest string) string {
	lines := []string{strings.TrimSpace(strings.TrimPrefix(rest, ">"))}
	l := p.Lines()
	for j := i + 1; j < l.Len(); j++ {
		seg := l.At(j)
		lines = append(lines, string(planTrimLine(seg.Value(b.md))))
	}
	inline := strings.TrimSpace(strings.Join(lines, "\n"))
	var quotes []string
	next := p.NextSibling()
	// A blank line without ">" splits a quote in two; pasted prompts often
	// lose those markers, so consecutive quotes are one prompt.
	for ; next != nil && next.Kind() == ast.KindBlockquote; next = next.NextSibling() {
		if q := b.quoteText(next); q != "" {
			quotes = append(quotes, q)
		}
	}
	after := strings.Join(quotes, "\n\n")
	if inline == "" && after == "" && next != nil && (next.Kind() == ast.KindFencedCodeBlock || next.Kind() == ast.KindCodeBlock) {
		after = b.codeText(next)
	}
	switch {
	case inline == "":
		return after
	case after == "":
		return inline
	}
	return inline + "\n\n" + after
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
	last := max(first, b.lineOf(max(planLastOffset(q), start)))
	// A quote's last lines can hold no segment (a closing code fence, a bare
	// ">"); they still start with ">".
	for last < len(b.lines) {
		next, _ := planNextLine(b.text, b.lines[last])
		if t := bytes.TrimLeft(next, " \t"); len(t) == 0 || t[0] != '>' {
			break
		}
		last++
	}
	var sb strings.Builder
	for ln := first; ln <= last; ln++ {
		from := b.lines[ln-1]
		if ln == first {
			from = b.base + start
		}
		line, _ := planNextLine(b.text, from)
		line = bytes.TrimLeft(line, " \t")
		if len(line) > 0 && line[0] == '>' {
			line = line[1:]
			if len(line) > 0 && (line[0] == ' ' || line[0] == '\t') {
				line = line[1:]
			}
		}
		if ln > first {
			sb.WriteByte('\n')
		}
		sb.Write(planTrimLine(line))
	}
	return strings.Trim(sb.String(), "\n")
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
