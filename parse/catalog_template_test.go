package parse

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// goldmarkSections is what a whole-document goldmark parse reads as a
// template's sections: the reference TestTemplateSectionsMatchGoldmark
// holds catalogTemplateSections to.
func goldmarkSections(src []byte) []string {
	s := strings.TrimPrefix(string(src), "\ufeff")
	if _, body, ok, err := catalogSplitFrontMatter(s, ""); ok && err == nil {
		s = body
	}
	source := []byte(s)
	var out []string
	doc := goldmark.New().Parser().Parse(text.NewReader(source))
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		if h, ok := n.(*ast.Heading); ok && h.Level == 2 {
			if t := catalogInlineText(h, source); t != "" {
				out = append(out, t)
			}
		}
	}
	return out
}

// TestTemplateSectionsMatchGoldmark: parsing inlines heading by heading
// reads the same sections as parsing the whole template would, link
// references defined elsewhere in it included.
func TestTemplateSectionsMatchGoldmark(t *testing.T) {
	docs := map[string]string{
		"reference link":       "## See [the spec][s] and [Ref]\n\ntext\n\n[s]: http://x\n[ref]: /r\n",
		"closing sequence":     "## foo # ##\n## bar \\#\n",
		"setext on two lines":  "First line\nsecond *line*\n---\n\nText\n",
		"setext hard breaks":   "one\\\ntwo  \nthree\n---\n",
		"setext after refs":    "[a]: /u\nTitle [a]\n---\n",
		"only refs then rule":  "[a]: /u\n---\n## After\n",
		"indented headings":    "   ## Three spaces\n  Setext\n  ---\n",
		"code span and html":   "## `a ## b` <span>c</span> &amp; d\n",
		"heading after a list": "- item\n## Next\n",
	}
	root := planModuleRootDir(t)
	files, _ := filepath.Glob(filepath.Join(root, "testdata", "skills", "*", "references", "TEMPLATE.md"))
	more, _ := filepath.Glob(filepath.Join(root, "testdata", "skills-shapes", "skills", "*", "references", "TEMPLATE.md"))
	for _, f := range append(append(files, more...), filepath.Join(root, "testdata", "engine", "TEMPLATE.md")) {
		if b, err := os.ReadFile(f); err == nil {
			docs[f] = string(b)
		}
	}
	if len(docs) < 12 {
		t.Fatalf("only %d templates to compare", len(docs))
	}
	for name, doc := range docs {
		got, notes, problem := catalogTemplateSections([]byte(doc), "TEMPLATE.md")
		if want := goldmarkSections([]byte(doc)); !reflect.DeepEqual(got, want) || notes != nil || problem != "" {
			t.Errorf("%s: sections %q (notes %q, problem %q), want goldmark's %q", name, got, notes, problem, want)
		}
	}
}

func TestTemplateSectionsLimits(t *testing.T) {
	t.Run("nested too deep", func(t *testing.T) {
		src := "---\nartifact: x\n---\n\n## A\n\n" + strings.Repeat("> ", MaxNesting+1) + "deep\n"
		got, _, problem := catalogTemplateSections([]byte(src), "refs/TEMPLATE.md")
		if got != nil || !strings.HasPrefix(problem, "refs/TEMPLATE.md:7: ") || !strings.Contains(problem, "more than 16 deep") {
			t.Errorf("sections %q, problem %q; want none and a problem at line 7", got, problem)
		}
	})
	t.Run("long heading", func(t *testing.T) {
		long := strings.Repeat("[a](", 4096)
		src := "## A\n\n## " + long + "\n\n## B\n"
		got, notes, problem := catalogTemplateSections([]byte(src), "TEMPLATE.md")
		if !reflect.DeepEqual(got, []string{"A", "B"}) || problem != "" || len(notes) != 1 || !strings.HasPrefix(notes[0], "TEMPLATE.md:3: ") {
			t.Errorf("sections %q, notes %q, problem %q; want A and B and a note about line 3", got, notes, problem)
		}
	})
}
