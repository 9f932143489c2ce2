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
	b.finishWarnings()
}

// finishWarnings puts the warnings into the document in line order: they
// are found section by section, and the user reads them top down.
func (b *planBuilder) finishWarnings() {
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
	b.closeSection(h.Level, isSection)
	if isSection {
		b.openSection(num, h.Level, line)
		return
	}
	if _, exec := planCutExecute(txt); exec {
		b.executeHeading(txt, h.Level, line)
		return
	}
	b.otherHeading(txt, h.Level, line, endsBlock)
}

// closeSection ends the open section at a heading of its level or above,
// or at any "Section <n>" heading.
func (b *planBuilder) closeSection(level int, isSection bool) {
	if b.sec >= 0 && (level <= b.secLevel || isSection) {
		b.sec = -1
	}
}

// executeHeading opens a block at a level-4 "To execute" heading in
// Section 7 and says why any other one is ignored.
func (b *planBuilder) executeHeading(txt string, level, line int) {
	switch {
	case b.sec == 7 && level == 4:
		b.block = &planSpan{line: line, heading: txt}
	case b.sec == 7:
		b.warn(line, "%q is a level-%d heading; Section 7 blocks are level-4 headings (`#### To execute ...`), so it is ignored", txt, level)
	default:
		b.warn(line, "%q is outside Section 7 and is ignored", txt)
	}
}

// otherHeading warns about a heading of level 4 or above inside Section 7
// that is not a block, saying whether it cut the block above it short.
func (b *planBuilder) otherHeading(txt string, level, line int, endsBlock bool) {
	if b.sec != 7 || level > 4 {
		return
	}
	if endsBlock {
		b.warn(line, "heading %q inside Section 7 is not a `To execute` block; it ends the block above it and is otherwise ignored", txt)
		return
	}
	b.warn(line, "heading %q inside Section 7 is not a `To execute` block and is ignored", txt)
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
	t, ok := planAfterSectionWord(txt)
	if !ok {
		return 0, false
	}
	j := planDigits(t, 4)
	// A fifth digit, or ".1" after the number, makes it no section number.
	if rest := t[j:]; j == 0 || planDigits(rest, 1) > 0 || strings.HasPrefix(rest, ".") && planDigits(rest[1:], 1) > 0 {
		return 0, false
	}
	n, err := strconv.Atoi(t[:j])
	return n, err == nil
}

// planAfterSectionWord returns what follows the word "Section" (any case,
// after leading emphasis) and the spaces after it; without a space the word
// is something else ("Sections").
func planAfterSectionWord(txt string) (string, bool) {
	rest, ok := planCutFold(strings.TrimLeft(txt, "*_ "), "section")
	if !ok {
		return "", false
	}
	t := strings.TrimLeft(rest, " \t")
	return t, len(t) < len(rest)
}

// planDigits is the number of ASCII digits at the start of s, counting at
// most most of them.
func planDigits(s string, most int) int {
	j := 0
	for j < len(s) && j < most && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	return j
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
	s, quoted := planCutQuote(bytes.TrimLeft(line, " \t"))
	d := planEmphasis(s)
	if d == 0 {
		return "", false
	}
	delim := s[:d]
	s = bytes.TrimLeft(s[d:], " ")
	if len(s) < len(label) || !bytes.EqualFold(s[:len(label)], []byte(label)) {
		return "", false
	}
	s, ok := planMarkerEnd(bytes.TrimLeft(s[len(label):], " "), delim)
	if !ok {
		return "", false
	}
	if quoted {
		s, _ = planCutQuote(s)
	}
	return string(bytes.TrimSpace(s)), true
}

// planCutQuote drops one quote character at the start of s, reporting
// whether there was one.
func planCutQuote(s []byte) ([]byte, bool) {
	if r, n := utf8.DecodeRune(s); planIsQuote(r) {
		return s[n:], true
	}
	return s, false
}

// planEmphasis is the length of the emphasis opening a marker: one or two
// '*' or '_', or 0 for none.
func planEmphasis(s []byte) int {
	d := 0
	for d < len(s) && d < 2 && (s[d] == '*' || s[d] == '_') {
		d++
	}
	return d
}

// planMarkerEnd reads the end of a marker after its label: the colon inside
// the emphasis (**Skill:**) or just after it (**Skill**:), and returns what
// follows.
func planMarkerEnd(s, delim []byte) ([]byte, bool) {
	switch {
	case bytes.HasPrefix(s, []byte(":")):
		s = bytes.TrimLeft(s[1:], " ")
		return bytes.TrimPrefix(s, delim), bytes.HasPrefix(s, delim)
	case bytes.HasPrefix(s, delim):
		s = bytes.TrimLeft(s[len(delim):], " ")
		return bytes.TrimPrefix(s, []byte(":")), bytes.HasPrefix(s, []byte(":"))
	}
	return nil, false
}

// sectionMarker records the Section 0 and Section 2 markers and the overall
// confidence, first occurrence of each.
func (b *planBuilder) sectionMarker(_ ast.Node, _, off int, line []byte) {
	if !planMaybeMarker(line) || b.domainMarker(line, off) || !b.wantConfidence() {
		return
	}
	m := b.marked(line, off, "Overall plan confidence")
	if m == nil {
		return
	}
	if b.sec == 0 {
		b.conf0 = m
	}
	if b.conf == nil {
		b.conf = m
	}
}

// domainMarker records the domain line of the open section (Section 2's
// **Domain:**, Section 0's **Situation classification:**) when line is the
// first one, and reports whether it was.
func (b *planBuilder) domainMarker(line []byte, off int) bool {
	switch {
	case b.sec == 2 && b.domain2 == nil:
		b.domain2 = b.marked(line, off, "Domain")
		return b.domain2 != nil
	case b.sec == 0 && b.domain0 == nil:
		b.domain0 = b.marked(line, off, "Situation classification")
		return b.domain0 != nil
	}
	return false
}

// marked reads the marker label from line at offset off, or returns nil
// when line is not that marker.
func (b *planBuilder) marked(line []byte, off int, label string) *planMarked {
	rest, ok := planMarker(line, label)
	if !ok {
		return nil
	}
	return &planMarked{line: b.lineOf(off), rest: rest}
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
