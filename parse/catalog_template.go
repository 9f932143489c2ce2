package parse

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// MaxSectionHeadingBytes is the longest "##" heading of a TEMPLATE.md read
// as a section. Goldmark's inline parser can take time that grows with the
// square of a block's length (runs of "[a](" or of mixed emphasis), so
// gonogo parses inlines in headings only, and only in headings this short:
// reading a template then costs at most this many times its size.
const MaxSectionHeadingBytes = 256

// markdownInline parses headings for their text: the block parsers of
// planMarkdown plus goldmark's inline parsers.
var markdownInline = parser.NewParser(
	parser.WithBlockParsers(markdownBlockParsers(MaxNesting)...),
	parser.WithInlineParsers(parser.DefaultInlineParsers()...),
	parser.WithParagraphTransformers(markdownParagraphTransformers()...),
)

// catalogTemplateSections returns the text of the top-level level-2
// headings of a TEMPLATE.md. Goldmark's block tree keeps headings inside
// fenced code, HTML and block quotes out; front matter is cut off first,
// since goldmark would read its closing "---" as a setext heading
// underline. A template nested deeper than MaxNesting is refused (problem
// names the line); a heading over MaxSectionHeadingBytes is left out with a
// note. path is used in messages only.
func catalogTemplateSections(src []byte, path string) (sections, notes []string, problem string) {
	s, lineBase := catalogTemplateBody(src)
	source := []byte(s)
	pc := parser.NewContext()
	doc, deep, err := markdownParse(planMarkdown, source, pc)
	if err != nil {
		return nil, nil, fmt.Sprintf("%s: cannot be read as Markdown: %v", path, err)
	}
	if deep >= 0 {
		return nil, nil, fmt.Sprintf("%s:%d: block quotes and lists nest more than %d deep here; gonogo reads templates nested at most %d deep",
			path, lineBase+planLineAt(source, deep), MaxNesting, MaxNesting)
	}
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		h, ok := catalogSectionHeading(n)
		if !ok {
			continue
		}
		from, to := catalogHeadingSource(h, source)
		if to-from > MaxSectionHeadingBytes {
			notes = append(notes, fmt.Sprintf("%s:%d: a \"##\" heading of %d bytes is not read as a template section (at most %d)",
				path, lineBase+planLineAt(source, from), to-from, MaxSectionHeadingBytes))
			continue
		}
		if t := catalogHeadingText(source[from:to], pc); t != "" {
			sections = append(sections, t)
		}
	}
	return sections, notes, ""
}

// catalogSectionHeading reports whether the top-level block n is a
// level-2 heading with text, which names a template section.
func catalogSectionHeading(n ast.Node) (*ast.Heading, bool) {
	h, ok := n.(*ast.Heading)
	return h, ok && h.Level == 2 && h.Lines().Len() > 0
}

// catalogTemplateBody is a template's text without its byte order mark
// and front matter, and the number of lines cut off above it.
func catalogTemplateBody(src []byte) (string, int) {
	s := strings.TrimPrefix(string(src), "\ufeff")
	if _, body, ok, err := catalogSplitFrontMatter(s, ""); ok && err == nil {
		return body, strings.Count(s[:len(s)-len(body)], "\n")
	}
	return s, 0
}

// catalogHeadingSource is where a top-level heading's lines are in source:
// the whole lines, from the first line of its text to the end of its ATX
// line or of its setext underline. Alone, those lines parse as the same
// heading: a top-level block does not depend on what is above it.
func catalogHeadingSource(h *ast.Heading, source []byte) (from, to int) {
	first, last := h.Lines().At(0), h.Lines().At(h.Lines().Len()-1)
	from = bytes.LastIndexByte(source[:first.Start], '\n') + 1
	_, to = planNextLine(source, last.Start)
	// A setext heading's text starts where the heading does; an ATX
	// heading's starts after its "##".
	if first.Start == h.Pos() {
		_, to = planNextLine(source, to)
	}
	return from, to
}

// catalogHeadingText is the plain text of the heading in src, parsed with
// the link references of the whole template (pc).
func catalogHeadingText(src []byte, pc parser.Context) string {
	doc := markdownInline.Parse(text.NewReader(src), parser.WithContext(pc))
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		if h, ok := n.(*ast.Heading); ok {
			return catalogInlineText(h, src)
		}
	}
	return ""
}

// catalogInlineText is the plain text of a node's inline content, with
// markup dropped and runs of space folded.
func catalogInlineText(n ast.Node, source []byte) string {
	w := &catalogTextWriter{source: source}
	_ = ast.Walk(n, w.visit)
	return strings.Join(strings.Fields(w.b.String()), " ")
}

// catalogTextWriter collects the plain text of the inline nodes it visits.
type catalogTextWriter struct {
	source []byte
	b      bytes.Buffer
}

func (w *catalogTextWriter) visit(n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	switch n := n.(type) {
	case *ast.Text:
		w.text(n)
	case *ast.String:
		w.b.Write(n.Value)
	case *ast.AutoLink:
		w.b.Write(n.Label(w.source))
	case *ast.RawHTML:
		return ast.WalkSkipChildren, nil
	}
	return ast.WalkContinue, nil
}

// text writes a text node with its escapes and references resolved, and a
// line break as a space.
func (w *catalogTextWriter) text(n *ast.Text) {
	v := n.Value(w.source)
	if !n.IsRaw() { // code spans are raw: their backslashes are literal
		v = util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(v)))
	}
	w.b.Write(v)
	if n.SoftLineBreak() || n.HardLineBreak() {
		w.b.WriteByte(' ')
	}
}
