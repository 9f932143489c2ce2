package bot

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// commonMark reads Markdown as a CommonMark parser with GitHub's tables
// does: the stand-in for how Slack's markdown block reads a preview.
var commonMark = goldmark.New(goldmark.WithExtensions(extension.Table))

// codeRanges are the byte ranges of md that CommonMark reads as code:
// code spans' text and code blocks' lines.
func codeRanges(md string) []bool {
	src := []byte(md)
	in := make([]bool, len(src))
	mark := func(s text.Segment) {
		for i := s.Start; i < s.Stop && i < len(in); i++ {
			in[i] = true
		}
	}
	doc := commonMark.Parser().Parse(text.NewReader(src))
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.CodeSpan:
			for c := n.FirstChild(); c != nil; c = c.NextSibling() {
				if t, ok := c.(*ast.Text); ok {
					mark(t.Segment)
				}
			}
			return ast.WalkSkipChildren, nil
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			for i := 0; i < n.Lines().Len(); i++ {
				mark(n.Lines().At(i))
			}
		}
		return ast.WalkContinue, nil
	})
	return in
}

// checkDefangedOutsideCode fails when md, read as CommonMark, holds markup
// outside its code that Slack could act on (see checkDefanged).
func checkDefangedOutsideCode(t testing.TB, md string) {
	t.Helper()
	code := codeRanges(md)
	for i := 0; i < len(md); i++ {
		if code[i] {
			continue
		}
		switch md[i] {
		case '<', '&', ']':
			if !strings.HasPrefix(md[i+1:], wordJoiner) {
				t.Fatalf("%q at %d, outside code, is not defanged: %q\nin %q", md[i], i, around(md, i), md)
			}
		case '@':
			if broadcast(md[i+1:]) {
				t.Fatalf("a broadcast mention at %d, outside code: %q\nin %q", i, around(md, i), md)
			}
		}
	}
}

// Code in a preview is the agent's code: no word joiner is inserted in a
// code span or a fenced block, while the text around it is defanged.
func TestPreviewKeepsTheAgentsCode(t *testing.T) {
	artifact := "# Fix\n\nCall `if a < b && c[0] {}` or ``x := `<!channel>` `` here, not <!channel> or [a](https://evil.example).\n\n" +
		"```go\nif a < b && m[k](x) { notify(\"<!here>\", \"@channel\") }\n```\n~~ and <@U1>\n"
	b, ok := preview(artifact)
	if !ok {
		t.Fatal("no preview")
	}
	want := "# Fix\n\nCall `if a < b && c[0] {}` or ``x := `<!channel>` `` here, not <\u2060!channel> or [a]\u2060(https://evil.example).\n\n" +
		"```go\nif a < b && m[k](x) { notify(\"<!here>\", \"@channel\") }\n```\n~~ and <\u2060@U1>"
	if b.Text != want {
		t.Errorf("preview\n got %q\nwant %q", b.Text, want)
	}
	checkDefangedOutsideCode(t, b.Text)
}

// Where another reading could make code text, it is defanged: a span that
// could run across lines, a fence indented into a list item that a
// less indented line ends, a fence that a tilde fence may hold, a table
// row (cut into cells before spans are read), an info string with a
// backtick (no fence at all), an escaped backtick.
func TestPreviewCodeInDoubtIsDefanged(t *testing.T) {
	for _, artifact := range []string{
		"`` a\nb `` <!channel> ``",
		"- x\n  ```\n<!channel>\n  ```",
		"~~~\n```\n~~~\n<!channel>\n```",
		"| a | b |\n|---|---|\n| `a | b` `<!channel>` |",
		"```a`b\n<!channel>\n```",
		"\\`<!channel>`",
		"x\n    ```\n<!channel>\n```",
	} {
		b, ok := preview(artifact)
		if !ok {
			t.Fatalf("no preview of %q", artifact)
		}
		checkDefangedOutsideCode(t, b.Text)
		if !strings.Contains(b.Text, "<\u2060!channel>") {
			t.Errorf("preview of %q keeps <!channel> whole: %q", artifact, b.Text)
		}
	}
}

func FuzzPreviewDefang(f *testing.F) {
	for _, s := range []string{
		"`<!channel>`", "```\n<!channel>\n```", "`` a\nb `` <!channel> ``", "- x\n  ```\n<!channel>\n  ```",
		"~~~\n```\n~~~\n<!channel>\n```", "| a | b |\n|---|---|\n| `a | b` `<!channel>` |", "\\`<!channel>`",
		"> ```\n<!channel>\n```", "1. ```\n   <@U1>\n<!here>", "`a\\`<!here>`",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, artifact string) {
		if b, ok := preview(artifact); ok {
			checkDefangedOutsideCode(t, b.Text)
		}
	})
}

// Thousands of artifacts made of the pieces that decide what is code (of
// fences, spans, containers, tables, escapes) and of markup: outside what
// CommonMark reads as code, each preview is defanged.
func TestPreviewDefangHoldsForMarkdownPieces(t *testing.T) {
	pieces := []string{"`", "``", "```", "~~~", "\n", "\n\n", " ", "   ", "    ", "\t", "<!channel>", "<@U1>", "|", "\\",
		"- ", "> ", "1. ", "x", "[a]", "(b)", "&amp;", "@here", "---", "# ", "|---|", "* "}
	rng := rand.New(rand.NewPCG(22, 11))
	for range 20000 {
		var b strings.Builder
		for n := rng.IntN(40); n > 0; n-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		if p, ok := preview(b.String()); ok {
			checkDefangedOutsideCode(t, p.Text)
		}
	}
}
