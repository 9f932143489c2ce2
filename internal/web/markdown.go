package web

import (
	"bytes"
	"html/template"
	"net/url"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// markdown renders an agent's artifact. Raw HTML is left out (goldmark's
// default: never html.WithUnsafe), and safeLinks drops every link and
// image whose address is not http, https, mailto or relative.
var markdown = goldmark.New(
	goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.TaskList),
	goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(safeLinks{}, 0))),
)

// renderMarkdown is body as HTML for a page; what goldmark cannot render
// is shown as text.
func renderMarkdown(body []byte) template.HTML {
	var b bytes.Buffer
	if err := markdown.Convert(body, &b); err != nil {
		return template.HTML("<pre>" + template.HTMLEscapeString(string(body)) + "</pre>")
	}
	return template.HTML(b.String()) //nolint:gosec // goldmark escapes text and omits raw HTML
}

// safeURL reports whether dest may be a link's address: http, https,
// mailto, or relative (no scheme).
func safeURL(dest []byte) bool {
	u, err := url.Parse(string(dest))
	if err != nil {
		return false
	}
	switch u.Scheme { // url.Parse lower-cases it
	case "", "http", "https", "mailto":
		return true
	}
	return false
}

// safeLinks replaces each link or image with an unsafe address by its
// text.
type safeLinks struct{}

func (safeLinks) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	var unsafe []ast.Node
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch l := n.(type) {
		case *ast.Link:
			if !safeURL(l.Destination) {
				unsafe = append(unsafe, n)
			}
		case *ast.Image:
			if !safeURL(l.Destination) {
				unsafe = append(unsafe, n)
			}
		case *ast.AutoLink:
			if !safeURL(l.URL(reader.Source())) {
				unsafe = append(unsafe, n)
			}
		}
		return ast.WalkContinue, nil
	})
	for _, n := range unsafe {
		unwrap(n, reader.Source())
	}
}

// unwrap puts n's text where n was.
func unwrap(n ast.Node, source []byte) {
	parent := n.Parent()
	if parent == nil {
		return
	}
	if al, ok := n.(*ast.AutoLink); ok {
		parent.ReplaceChild(parent, n, ast.NewString(al.URL(source)))
		return
	}
	for c := n.FirstChild(); c != nil; {
		next := c.NextSibling()
		parent.InsertBefore(parent, n, c)
		c = next
	}
	parent.RemoveChild(parent, n)
}
