package parse_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/parse"
)

// FuzzPlan checks what must hold for any upload: no panic, errors are
// refusals that name a line, and blocks come out in page order with lines.
// Seeds are the plan fixtures, testdata/fuzz/FuzzPlan and the shapes that
// once cost goldmark more than linear time (deep nesting, link reference
// runs, delimiter runs), small.
func FuzzPlan(f *testing.F) {
	planAddHostileSeeds(f)
	files, err := filepath.Glob(filepath.Join(planFixturesDir(f), "*.md"))
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src, filepath.Base(file))
	}
	f.Fuzz(func(t *testing.T, src []byte, name string) {
		doc, err := parse.Plan(src, name, parse.PlanOptions{MaxBytes: 64 << 10})
		if err != nil {
			var r *engine.Refusal
			if !errors.As(err, &r) {
				t.Fatalf("error %v (%T) is not a refusal", err, err)
			}
			if r.Line < 1 || r.Source != name || r.Message == "" {
				t.Fatalf("refusal without a line, source or message: %+v", r)
			}
			return
		}
		if doc.HasSection7 != (doc.Section7Line >= 1) {
			t.Fatalf("HasSection7 %v with Section7Line %d", doc.HasSection7, doc.Section7Line)
		}
		if len(doc.Blocks) > 0 && !doc.HasSection7 {
			t.Fatalf("blocks without a Section 7")
		}
		prev := 0
		for i, b := range doc.Blocks {
			if b.Line < 1 || b.Line <= prev || b.Line <= doc.Section7Line {
				t.Fatalf("block %d at line %d after line %d (Section 7 at %d)", i+1, b.Line, prev, doc.Section7Line)
			}
			prev = b.Line
			if b.Err == "" && b.Prompt == "" {
				t.Fatalf("block %d has neither a prompt nor an error", i+1)
			}
			if b.Err == "" && (len(b.PTokens) == 0 || b.Effort == "") {
				t.Fatalf("block %d has no error but no P-tokens or effort: %+v", i+1, b)
			}
		}
		if (doc.Domain != "" || doc.DomainAmbiguous) != (doc.DomainLine >= 1) {
			t.Fatalf("domain %q ambiguous %v at line %d", doc.Domain, doc.DomainAmbiguous, doc.DomainLine)
		}
		if doc.Domain != "" && doc.DomainAmbiguous {
			t.Fatalf("a domain that is also ambiguous")
		}
	})
}

func planAddHostileSeeds(f *testing.F) {
	for name, src := range parse.HostileShapes(4 << 10) {
		f.Add([]byte(src), name+".md")
	}
}
