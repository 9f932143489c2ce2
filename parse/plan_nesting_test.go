package parse_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/parse"
)

// nestingPlan is a plan with one block whose prompt quote is followed, at
// line 16, by extra.
func nestingPlan(extra string) string {
	return "---\ntitle: nesting\n---\n\n## Section 7. Prompts\n\n" + // lines 1-6
		"#### To execute P1: write the spec\n\n" + // 7-8
		"**Skill:** `deliver-prd`\n\n" + // 9-10
		"**Prompt:**\n> Write the spec.\n>\n> - keep it short\n>   - one page\n\n" + // 11-16
		extra
}

// TestPlanRefusesDeepNesting: a plan nesting block quotes and lists deeper
// than parse.MaxNesting is refused, naming the line where the limit is
// passed, however the nesting is written; one at the limit is read.
func TestPlanRefusesDeepNesting(t *testing.T) {
	tooDeep := parse.MaxNesting + 1
	var stair strings.Builder
	for i := range tooDeep {
		fmt.Fprintf(&stair, "%s- level %d\n", strings.Repeat("  ", i), i+1)
	}
	tests := []struct {
		name string
		src  string
		line int
	}{
		{"128,000 quote markers on one line", strings.Repeat(">", 128000), 1},
		{"quotes on one line after a plan", nestingPlan(strings.Repeat("> ", tooDeep) + "deep\n"), 17},
		{"quotes line by line", nestingPlan(strings.Repeat(">", 10) + " a\n" + strings.Repeat(">", tooDeep) + " b\n"), 18},
		{"a list nested by indentation", nestingPlan(stair.String()), 17 + tooDeep - 1},
		{"ordered lists on one line", strings.Repeat("1. ", tooDeep) + "x\n", 1},
		{"bullets on one line", "text\n\n" + strings.Repeat("- ", 3*tooDeep) + "x\n", 3},
		{"quotes and lists mixed", nestingPlan(strings.Repeat("> - ", tooDeep/2+1) + "x\n"), 17},
		{"CRLF line ends", strings.ReplaceAll(nestingPlan(strings.Repeat("> ", tooDeep)+"deep\n"), "\n", "\r\n"), 17},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse.Plan([]byte(tt.src), "deep.md", parse.PlanOptions{})
			var r *engine.Refusal
			if !errors.As(err, &r) {
				t.Fatalf("Plan() error = %v, want a refusal", err)
			}
			want := fmt.Sprintf("more than %d deep", parse.MaxNesting)
			if r.Reason != engine.RefuseInvalidInput || r.Line != tt.line || r.Source != "deep.md" || !strings.Contains(r.Message, want) {
				t.Errorf("refusal %s %q at line %d, want %s at line %d saying %q", r.Reason, r.Message, r.Line, engine.RefuseInvalidInput, tt.line, want)
			}
		})
	}

	t.Run("at the limit is read", func(t *testing.T) {
		inner := strings.Repeat("> ", parse.MaxNesting-1) + "deepest\n"
		doc, err := parse.Plan([]byte(nestingPlan(">\n> "+inner)), "deep.md", parse.PlanOptions{})
		if err != nil {
			t.Fatalf("Plan() = %v", err)
		}
		if len(doc.Blocks) != 1 || !strings.HasSuffix(doc.Blocks[0].Prompt, inner[:len(inner)-1]) {
			t.Errorf("blocks %+v, want one whose prompt ends with the innermost quote", doc.Blocks)
		}
	})
}
