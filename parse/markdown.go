package parse

import (
	"bytes"
	"fmt"
	"reflect"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// MaxNesting is how deep block quotes and lists may nest in a plan or a
// skill's TEMPLATE.md; a deeper document is refused, naming the line of
// the first container past the limit, and is read no further. A quote
// counts one level, a list one level, so "> - > x" is three deep. Real
// plans nest a handful of levels; the limit is far above them.
//
// The limit is what keeps reading a document linear in its size. Goldmark
// computes a line's column afresh, from the start of the line, each time a
// container on that line opens or continues (text.Reader.LineOffset), and
// asks every open container whether each line continues it, so a line that
// opens n containers costs n², and n open containers cost n on every line
// after them: 128,000 ">" on one line took 31 seconds. With at most
// MaxNesting containers open, each line costs a bounded number of block
// parser calls, each at most the length of the line.
const MaxNesting = 16

// markdownTooDeep stops a parse at the first container nested deeper than
// the limit: the document is refused, so nothing after it needs reading.
// off is the source offset of its marker.
type markdownTooDeep struct{ off int }

// nestingGuard wraps a container parser (block quote, list) so that it
// opens nothing nested deeper than limit: the parse stops there.
type nestingGuard struct {
	parser.BlockParser
	limit int
}

func (g nestingGuard) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	_, pos := reader.Position()
	node, state := g.BlockParser.Open(parent, reader, pc)
	if node != nil && markdownDepth(parent, g.limit) >= g.limit {
		panic(markdownTooDeep{off: pos.Start})
	}
	return node, state
}

// markdownDepth is the number of block quotes and lists n is in (n
// included), counted up to limit: the guard keeps it from growing past
// that, so the walk is bounded too.
func markdownDepth(n ast.Node, limit int) int {
	depth := 0
	for ; n != nil && depth < limit; n = n.Parent() {
		switch n.Kind() {
		case ast.KindBlockquote, ast.KindList:
			depth++
		}
	}
	return depth
}

// markdownBlockParsers are goldmark's default block parsers with the
// container parsers (block quote, list) guarded to limit levels. A list
// item needs a list to open in, so guarding the list guards its items.
func markdownBlockParsers(limit int) []util.PrioritizedValue {
	containers := map[reflect.Type]bool{
		reflect.TypeOf(parser.NewBlockquoteParser()): true,
		reflect.TypeOf(parser.NewListParser()):       true,
	}
	bps := parser.DefaultBlockParsers()
	for i, v := range bps {
		if containers[reflect.TypeOf(v.Value)] {
			bps[i].Value = nestingGuard{BlockParser: v.Value.(parser.BlockParser), limit: limit}
		}
	}
	return bps
}

// MaxRefParagraphLines is the longest paragraph in which link reference
// definitions ("[id]: url" lines) are looked for. Goldmark removes each
// definition it finds by copying the rest of its paragraph, so a paragraph
// of n definitions costs n²: 150,000 of them took minutes. A longer
// paragraph keeps its definitions as text, which changes what is read only
// when it sits right above a "---" or "===" line: it is then a heading even
// if it holds nothing but definitions.
const MaxRefParagraphLines = 64

// markdownLinkRefs hands goldmark's link reference transformer (inner)
// the paragraphs of at most MaxRefParagraphLines lines.
type markdownLinkRefs struct {
	inner parser.ParagraphTransformer
}

func (t markdownLinkRefs) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := node.Lines()
	if lines.Len() == 0 || lines.Len() > MaxRefParagraphLines {
		return
	}
	// A definition starts with "[": most paragraphs need no reader built.
	first := lines.At(0)
	if l := bytes.TrimLeft(first.Value(reader.Source()), " \t"); len(l) == 0 || l[0] != '[' {
		return
	}
	t.inner.Transform(node, reader, pc)
}

// markdownParagraphTransformers replaces goldmark's defaults (only the link
// reference transformer) with the bounded one.
func markdownParagraphTransformers() []util.PrioritizedValue {
	return []util.PrioritizedValue{
		util.Prioritized(markdownLinkRefs{inner: parser.LinkReferenceParagraphTransformer}, 100),
	}
}

// markdownParse parses src with p in pc and returns the source offset of
// the first container nested deeper than MaxNesting, or -1. A panic inside
// the third-party parser is an error, not a crash: a bot parses uploads
// from strangers.
func markdownParse(p parser.Parser, src []byte, pc parser.Context) (root ast.Node, tooDeep int, err error) {
	defer func() {
		switch r := recover().(type) {
		case nil:
		case markdownTooDeep:
			root, tooDeep = nil, r.off
		default:
			root, tooDeep, err = nil, -1, fmt.Errorf("markdown parser failed: %v", r)
		}
	}()
	return p.Parse(text.NewReader(src), parser.WithContext(pc)), -1, nil
}
