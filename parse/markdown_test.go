package parse

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// markdownHostileShapes are documents of about n bytes that goldmark reads
// in more than linear time, or that look as if it might: nesting past the
// limit on one line and across lines, nesting at the limit on every line
// (the most a document that is read can cost), the "- - - x"
// thematic-break rescan, paragraphs of link reference definitions, and
// inline runs, which only a parser of inlines pays for.
func markdownHostileShapes(n int) map[string]string {
	fill := func(unit string) string { return strings.Repeat(unit, max(1, n/len(unit))) }
	climb := func(marker string) string { // 1, 2, 3 ... markers, line by line
		var b strings.Builder
		for i := 1; b.Len() < n; i++ {
			b.WriteString(strings.Repeat(marker, i%(4*MaxNesting)) + "x\n")
		}
		return b.String()
	}
	stair := func(marker string, top int) string { // nested by indentation, top deep
		var b strings.Builder
		for i := 0; b.Len() < n; i = (i + 1) % top {
			b.WriteString(strings.Repeat(" ", i*len(marker)) + marker + "x\n")
		}
		return b.String()
	}
	atLimit := strings.Repeat("> ", MaxNesting)
	return map[string]string{
		"quotes on one line":       fill(">"),
		"quotes climbing":          climb("> "),
		"bullets on one line":      fill("- ") + "x",
		"stars on one line":        fill("* ") + "x",
		"ordered on one line":      fill("1. "),
		"quote list mix":           fill("> - "),
		"lists climbing":           climb("- "),
		"list staircase":           stair("- ", 1<<20),
		"ordered staircase":        stair("1. ", 1<<20),
		"quotes at the limit":      fill(atLimit + "x\n"),
		"lazy lines at the limit":  atLimit + "a\n" + fill("b\n"),
		"lists at the limit":       stair("- ", MaxNesting),
		"indent under the limit":   stair("- ", MaxNesting)[:n/8] + fill(strings.Repeat(" ", 62)+"x\n"),
		"link references":          fill("[a]: b\n"),
		"references then rule":     fill("[a]: b\n") + "---\n",
		"reference runs then rule": fill(strings.Repeat("[a]: b\n", MaxRefParagraphLines) + "---\n"),
		"brackets":                 fill("["),
		"open links":               fill("[a]("),
		"mixed emphasis":           fill("*a_b*c_d**e_f*g**h*i_j**"),
		"backslash backticks":      fill("\\``"),
		"html":                     fill("<div>\n"),
		"setext headings":          fill("a\n=\n"),
		"fences":                   fill("```\n"),
	}
}

// callCounter counts the calls goldmark makes to one block parser, by the
// line they are made on.
type callCounter struct {
	parser.BlockParser
	perLine map[int]int
}

func (c callCounter) count(r text.Reader) {
	line, _ := r.Position()
	c.perLine[line]++
}

func (c callCounter) Open(parent ast.Node, r text.Reader, pc parser.Context) (ast.Node, parser.State) {
	c.count(r)
	return c.BlockParser.Open(parent, r, pc)
}

func (c callCounter) Continue(n ast.Node, r text.Reader, pc parser.Context) parser.State {
	c.count(r)
	return c.BlockParser.Continue(n, r, pc)
}

// refWork sums, over the paragraphs goldmark's link reference transformer
// is given, lines squared: a bound on what removing the definitions it
// finds costs.
type refWork struct {
	parser.ParagraphTransformer
	work *int
}

func (w refWork) Transform(p *ast.Paragraph, r text.Reader, pc parser.Context) {
	*w.work += p.Lines().Len() * p.Lines().Len()
	w.ParagraphTransformer.Transform(p, r, pc)
}

// markdownWork parses src with the given block parsers and paragraph
// transformers, counting block parser calls per line and link reference
// work.
func markdownWork(src []byte, bps, pts []util.PrioritizedValue) (maxPerLine, refs int) {
	perLine := map[int]int{}
	counted := make([]util.PrioritizedValue, len(bps))
	for i, v := range bps {
		counted[i] = util.Prioritized(callCounter{v.Value.(parser.BlockParser), perLine}, v.Priority)
	}
	wrapped := make([]util.PrioritizedValue, len(pts))
	for i, v := range pts {
		if guard, ok := v.Value.(markdownLinkRefs); ok {
			guard.inner = refWork{guard.inner, &refs}
			wrapped[i] = util.Prioritized(guard, v.Priority)
			continue
		}
		wrapped[i] = util.Prioritized(refWork{v.Value.(parser.ParagraphTransformer), &refs}, v.Priority)
	}
	p := parser.NewParser(parser.WithBlockParsers(counted...), parser.WithParagraphTransformers(wrapped...))
	if _, _, err := markdownParse(p, src, parser.NewContext()); err != nil {
		panic(err)
	}
	for _, n := range perLine {
		maxPerLine = max(maxPerLine, n)
	}
	return maxPerLine, refs
}

// TestMarkdownWorkIsLinear proves by counting that reading a plan costs a
// bounded amount per byte whatever its shape. Goldmark's cost on a line is
// its block parser calls on that line, each at most the length of the line
// (a column computed from the line start, an indent or a thematic break
// scanned), plus, for a paragraph of link reference definitions, its
// length squared. With nesting guarded, calls per line are bounded by
// MaxNesting, and definitions are looked for only in paragraphs of at most
// MaxRefParagraphLines: the whole parse is then at most a constant times
// the size of the document. Goldmark's own parsers, counted the same way,
// show the quadratic shapes that took seconds to minutes.
func TestMarkdownWorkIsLinear(t *testing.T) {
	const n = 64 << 10
	// At each level a line opens, goldmark tries the few parsers its
	// character triggers (a list is two levels of its tree, list and item).
	const callBound = 8 * (MaxNesting + 1)
	for name, src := range markdownHostileShapes(n) {
		t.Run(name, func(t *testing.T) {
			src := []byte(src)
			lines := strings.Count(string(src), "\n") + 1
			calls, refs := markdownWork(src, markdownBlockParsers(MaxNesting), markdownParagraphTransformers())
			if calls > callBound {
				t.Errorf("%d block parser calls on one line, want at most %d", calls, callBound)
			}
			if refs > MaxRefParagraphLines*lines {
				t.Errorf("link reference work %d, want at most %d (%d lines)", refs, MaxRefParagraphLines*lines, lines)
			}
		})
	}
	// The counters see the trouble they bound (in a smaller document:
	// unguarded, it costs the square).
	const small = 4 << 10
	src := markdownHostileShapes(small)
	if calls, _ := markdownWork([]byte(src["quotes on one line"]), parser.DefaultBlockParsers(), nil); calls <= callBound {
		t.Errorf("goldmark's own parsers make %d calls on a line of %d \">\"; the counter misses nesting", calls, small)
	}
	if _, refs := markdownWork([]byte(src["link references"]), parser.DefaultBlockParsers(), parser.DefaultParagraphTransformers()); refs <= MaxRefParagraphLines*small/7 {
		t.Errorf("goldmark's own transformer does %d work on %d definitions; the counter misses it", refs, small/7)
	}
}

// markdownDump writes a block tree as one line per node: kind, position
// and line segments.
func markdownDump(n ast.Node, depth int, b *strings.Builder) {
	fmt.Fprintf(b, "%s%s pos=%d", strings.Repeat(" ", depth), n.Kind(), n.Pos())
	if n.Type() == ast.TypeBlock {
		for i := 0; i < n.Lines().Len(); i++ {
			s := n.Lines().At(i)
			fmt.Fprintf(b, " [%d,%d)", s.Start, s.Stop)
		}
	}
	b.WriteByte('\n')
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		markdownDump(c, depth+1, b)
	}
}

// TestMarkdownGuardsChangeNothingWithinLimits: a document nested at most
// MaxNesting deep, without a paragraph of over MaxRefParagraphLines lines
// that starts with a link reference definition, gets exactly goldmark's
// block tree.
func TestMarkdownGuardsChangeNothingWithinLimits(t *testing.T) {
	docs := map[string]string{
		"nested to the limit":       strings.Repeat("> ", MaxNesting) + "x\n" + strings.Repeat(">", MaxNesting) + " y\nlazy\n",
		"lists to the limit":        strings.Repeat("- ", MaxNesting) + "x\n",
		"quote list mix":            strings.Repeat("> 1. ", MaxNesting/2) + "x\n\n---\n",
		"reference then rule":       "[a]: /u\n---\n",
		"references then heading":   "[a]: /u\n[b]: /v 'title'\nText\n---\n",
		"reference with title line": "[a]: /u\n'title'\n===\n",
	}
	root := planModuleRootDir(t)
	for _, dir := range []string{filepath.Join(root, "testdata", "plans"), filepath.Join(root, "parse", "testdata", "fuzz", "FuzzPlan")} {
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil {
				docs[filepath.Base(f)] = string(b)
			}
		}
	}
	if len(docs) < 20 {
		t.Fatalf("only %d documents to compare", len(docs))
	}
	plain := parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
	)
	for name, doc := range docs {
		src := []byte(doc)
		var want, got strings.Builder
		markdownDump(plain.Parse(text.NewReader(src)), 0, &want)
		root, deep, err := markdownParse(planMarkdown, src, parser.NewContext())
		if err != nil || deep >= 0 {
			t.Errorf("%s: refused (depth at %d, %v)", name, deep, err)
			continue
		}
		markdownDump(root, 0, &got)
		if got.String() != want.String() {
			t.Errorf("%s: block tree\n%s\nwant goldmark's\n%s", name, got.String(), want.String())
		}
	}
}

func planModuleRootDir(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(wd)
}
