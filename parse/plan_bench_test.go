package parse_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"

	"github.com/gonogo/gonogo/parse"
)

// planBenchSource builds a plan of about size bytes shaped like a real one: front
// matter, an H1, "## Output" and H3 sections with bullets, tables and quotes,
// a long Section 5 of efforts and a Section 7 of many "To execute" blocks.
func planBenchSource(size int) []byte {
	var b strings.Builder
	b.WriteString("---\ntitle: \"Prioritized Action Plan: Halyard fleet telemetry\"\nstatus: sample\n---\n\n")
	b.WriteString("# Sample: Halyard fleet telemetry\n\n## Output\n\n### Section 0. Executive summary\n\n")
	b.WriteString("- **Situation classification:** Complicated (Cynefin). The delays are measurable.\n")
	b.WriteString("- **Overall plan confidence:** Medium-High. Telemetry is complete for most vessels.\n\n")
	b.WriteString("### Section 2. Situation classification (Cynefin)\n\n**Domain:** Complicated. **Source:** S1, S2.\n\n")
	b.WriteString("### Section 5. The prioritized action plan\n\n")
	half := size / 2
	for i := 1; b.Len() < half; i++ {
		fmt.Fprintf(&b, "#### P%d. Reduce berth wait for route %d\n\n", i, i)
		fmt.Fprintf(&b, "- **Why:** route %d loses *hours* at the berth (S%d); fixing it lifts the binding constraint.\n", i, i%9+1)
		b.WriteString("- **What:** a berth-slot forecast the harbour office can act on, see [notes](https://example.invalid/n).\n")
		b.WriteString("- **How:** (1) join AIS pings with berth logs. (2) Model arrival spread. (3) Pilot with `berth-ops`.\n")
		b.WriteString("- **Confidence:** Medium. Depends on log quality.\n- **Source:** S1, S3.\n\n")
		b.WriteString("| Now | Next | Later |\n|---|---|---|\n| P1 | P2 | P3 |\n\n")
		b.WriteString("> Note: arrival data before 2025 is sparse; treat early *trends* with care.\n\n")
	}
	b.WriteString("### Section 7. Recommended pm-skill prompts (copy/paste ready)\n\n")
	skills := []string{"deliver-prd", "measure-experiment-design", "discover-interview-synthesis", "define-problem-statement"}
	for i := 1; b.Len() < size; i++ {
		fmt.Fprintf(&b, "#### To execute P%d and P%d: forecast berth slots for route %d\n\n", i, i+1, i)
		fmt.Fprintf(&b, "**Skill:** `%s`\n**Why this skill:** the forecast needs a **clear** spec.\n**Source:** S1, S2\n\n", skills[i%len(skills)])
		fmt.Fprintf(&b, "**Prompt:**\n> Write a spec for berth-slot forecasting on Halyard route %d. Arrival spread is *wide*; ", i)
		b.WriteString("the harbour office wants `slot` suggestions a day ahead, and [pilots](https://example.invalid/p) need a fallback.\n>\n")
		b.WriteString("> Flag where the evidence is thin and keep the scope to one quarter.\n\n")
	}
	b.WriteString("### Section 8. Evidence and source map\n\n| Claim | Source |\n|---|---|\n| Berth wait dominates | S1 |\n")
	return []byte(b.String())
}

// BenchmarkPlanParse measures parse.Plan on a realistic 2 MiB plan
// (plain) and on 1 MiB documents of every shape that costs goldmark more
// than linear time (parse.HostileShapes: deep nesting, link reference
// runs, inline delimiter runs, ...).
//
// In plain, x-goldmark is Plan's time over goldmark.New().Parser()'s on the
// same bytes, timed in the same loop so both see the same machine state.
// Plan builds only goldmark's block tree, so x-blocks (Plan over a
// block-only goldmark parse) is the cost of everything Plan does besides
// goldmark. In every other case, x-plain is Plan's time on that shape over
// its time on a plain plan of the same size, timed in the same loop: a
// shape read (or refused) in linear time stays a small constant, where
// before nesting was guarded 128,000 ">" took 31 seconds.
func BenchmarkPlanParse(b *testing.B) {
	b.Run("plain", benchPlanPlain)
	const size = 1 << 20
	plain := planBenchSource(size)
	opt := parse.PlanOptions{MaxBytes: 4 << 20}
	shapes := parse.HostileShapes(size)
	names := make([]string, 0, len(shapes))
	for name := range shapes {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		src := []byte(shapes[name])
		b.Run(strings.ReplaceAll(name, " ", "-"), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			var base, shape time.Duration
			for b.Loop() {
				t0 := time.Now()
				if _, err := parse.Plan(plain, "plain.md", opt); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				_, _ = parse.Plan(src, "shape.md", opt) // read or refused: both are answers
				base += t1.Sub(t0)
				shape += time.Since(t1)
			}
			b.ReportMetric(float64(shape)/float64(base), "x-plain")
			b.ReportMetric(shape.Seconds()*1e3/float64(b.N), "plan-ms/op")
		})
	}
}

func benchPlanPlain(b *testing.B) {
	src := planBenchSource(2 << 20)
	opt := parse.PlanOptions{MaxBytes: 4 << 20}
	doc, err := parse.Plan(src, "bench.md", opt)
	if err != nil || len(doc.Blocks) < 1000 || doc.Domain == "" || doc.Confidence == "" || len(doc.Warnings) != 0 {
		b.Fatalf("benchmark plan misread: %d blocks, domain %q, confidence %q, warnings %d, err %v",
			len(doc.Blocks), doc.Domain, doc.Confidence, len(doc.Warnings), err)
	}
	full := goldmark.New().Parser()
	blocks := parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
	)
	b.SetBytes(int64(len(src)))
	var bare, blockOnly, plan time.Duration
	for b.Loop() {
		t0 := time.Now()
		full.Parse(text.NewReader(src))
		t1 := time.Now()
		blocks.Parse(text.NewReader(src))
		t2 := time.Now()
		if _, err := parse.Plan(src, "bench.md", opt); err != nil {
			b.Fatal(err)
		}
		bare += t1.Sub(t0)
		blockOnly += t2.Sub(t1)
		plan += time.Since(t2)
	}
	b.ReportMetric(float64(plan)/float64(bare), "x-goldmark")
	b.ReportMetric(float64(plan)/float64(blockOnly), "x-blocks")
	b.ReportMetric(bare.Seconds()*1e3/float64(b.N), "goldmark-ms/op")
	b.ReportMetric(plan.Seconds()*1e3/float64(b.N), "plan-ms/op")
}
