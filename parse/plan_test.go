package parse_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/parse"
)

// The -update flag rewrites golden files. Every golden test of the package
// shares it, so it is registered by whichever test file initializes first.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files")
	}
}

// checkGolden compares got with the golden file, or rewrites the file
// under -update.
func checkGolden(t *testing.T, golden string, got []byte, test string) {
	t.Helper()
	if planUpdate() {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./parse -run %s -update)", err, test)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("result differs from %s (run with -update and review the diff)\ngot:\n%s", filepath.Base(golden), got)
	}
}

func planUpdate() bool {
	g, ok := flag.Lookup("update").Value.(flag.Getter)
	if !ok {
		return false
	}
	v, _ := g.Get().(bool)
	return v
}

// planModuleRoot finds the directory holding go.mod, so tests do not depend on
// where `go test` runs from.
func planModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// planCorpusDir is the shared third-party corpus next to the module; tests that
// read it skip when it is not there.
func planCorpusDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(planModuleRoot(t)), "shared", "corpus", "pm-skills")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("corpus not available: %v", err)
	}
	return dir
}

func planFixturesDir(t testing.TB) string {
	return filepath.Join(planModuleRoot(t), "testdata", "plans")
}

func planRead(t *testing.T, name string) (engine.PlanDocument, []byte) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(planFixturesDir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := parse.Plan(src, name, parse.PlanOptions{})
	if err != nil {
		t.Fatalf("Plan(%s): %v", name, err)
	}
	return doc, src
}

type planWant struct {
	line   int
	tokens []string
	effort string
	skill  string
	prompt string // the first characters of the prompt
}

func planCheckBlocks(t *testing.T, got []engine.PlanBlock, want []planWant) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d blocks, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Line != w.line || !slices.Equal(g.PTokens, w.tokens) || g.Effort != w.effort || g.Skill != w.skill {
			t.Errorf("block %d = line %d %q %q skill %q, want line %d %q %q skill %q",
				i+1, g.Line, g.PTokens, g.Effort, g.Skill, w.line, w.tokens, w.effort, w.skill)
		}
		if !strings.HasPrefix(g.Prompt, w.prompt) {
			t.Errorf("block %d prompt = %.60q..., want it to start with %q", i+1, g.Prompt, w.prompt)
		}
		if w.prompt != "" && g.Err != "" {
			t.Errorf("block %d: unexpected Err %q", i+1, g.Err)
		}
	}
}

// planNoQuoteMarkers fails when a prompt line still starts with a ">" marker.
func planNoQuoteMarkers(t *testing.T, blocks []engine.PlanBlock) {
	t.Helper()
	for i, b := range blocks {
		for _, l := range strings.Split(b.Prompt, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), ">") {
				t.Errorf("block %d prompt keeps a quote marker: %q", i+1, l)
			}
		}
	}
}

func TestPlanCorpus(t *testing.T) {
	corpus := planCorpusDir(t)
	const samples = "library/skill-output-samples/foundation-prioritized-action-plan/"
	const skill = "skills/foundation-prioritized-action-plan/"
	tests := []struct {
		file       string
		blocks     []planWant
		domain     engine.Domain
		ambiguous  bool
		domainLine int
		conf       string
		reason     string
	}{
		{
			file: samples + "sample_foundation-prioritized-action-plan_storevine_campaigns.md",
			blocks: []planWant{
				{153, []string{"P1"}, "diagnose the drop-off", "measure-experiment-results", "Analyze the Storevine Campaigns first-to"},
				{162, []string{"P2"}, "spec the post-send fix", "deliver-prd", "Write a PRD for an in-product post-campa"},
			},
			domain: engine.DomainComplicated, domainLine: 75,
			conf: "Medium-High", reason: "Well-sourced; residual risk is that diagnosis splits between a guidance gap and a results-quality problem.",
		},
		{
			file: samples + "sample_foundation-prioritized-action-plan_brainshelf_resurface.md",
			blocks: []planWant{
				{155, []string{"P2", "P3"}, "design the probes", "measure-experiment-design", "Design two safe-to-fail experiments for "},
				{164, []string{"P1"}, "synthesize the cohort interviews", "discover-interview-synthesis", "Synthesize 8 to 10 short interviews with"},
			},
			domain: engine.DomainComplex, domainLine: 77,
			conf: "Low-Medium", reason: "Honest: the team is arguing from anecdote, not evidence.",
		},
		{
			file: samples + "sample_foundation-prioritized-action-plan_workbench_blueprints.md",
			blocks: []planWant{
				{157, []string{"P1"}, "instrument the funnel", "measure-instrumentation-spec", "Write an instrumentation spec for the Wo"},
				{166, []string{"P2"}, "spec the targeted fix", "deliver-prd", "Write a PRD for a Blueprints approval-co"},
			},
			domain: engine.DomainComplicated, domainLine: 78,
			conf: "Medium-High", reason: "Strong baselines and a known incident history (S3) make the cause analyzable.",
		},
		{
			file: skill + "references/EXAMPLE.md",
			blocks: []planWant{
				{134, []string{"P1"}, "decide format and delivery", "define-problem-statement", "Frame the problem behind a Q3 enterprise"},
				{143, []string{"P3"}, "scope the build", "deliver-prd", "Write a PRD for an enterprise bulk-expor"},
			},
			domain: engine.DomainComplicated, domainLine: 52,
			conf: "Medium-High", reason: "The constraint and P1 are well-sourced; the residual risk is that the customer check changes the format.",
		},
		{
			file: skill + "examples/02-interview-transcript.md",
			blocks: []planWant{
				{130, []string{"P3"}, "interview synthesis on the Tasks failure", "discover-interview-synthesis", "Synthesize 4 to 6 interviews with teams "},
				{139, []string{"P1", "P2"}, "design the probes as experiments", "measure-experiment-design", "Design two safe-to-fail experiments. Exp"},
			},
			domain: engine.DomainComplex, domainLine: 52,
			conf: "Low-Medium", reason: "The signal is vivid but unrepresentative; the honesty here is that we do not yet know.",
		},
		{
			file: skill + "examples/03-executive-ask.md",
			blocks: []planWant{
				{125, []string{"P1"}, "define the SMB problem", "define-problem-statement", "Frame the problem behind a CEO ask to be"},
				{134, []string{"P1"}, "diagnose why SMB deals are lost", "discover-competitive-analysis", "Build a competitive analysis focused on "},
			},
			domain: engine.DomainComplex, domainLine: 43,
			conf: "Low", reason: "This is honest: the ask contains pressure and a hunch, not a diagnosis.",
		},
		{
			file: skill + "references/TEMPLATE.md",
			blocks: []planWant{
				{114, []string{"P1"}, "[effort name]", "[exact-skill-name]", "[Full prompt with the user's actual cont"},
				{123, []string{"P2"}, "[effort name]", "[exact-skill-name]", "[Full prompt with the user's actual cont"},
			},
			ambiguous: true, domainLine: 39,
		},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(corpus, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			doc, err := parse.Plan(src, tt.file, parse.PlanOptions{})
			if err != nil {
				t.Fatalf("Plan: %v", err)
			}
			if !doc.HasSection7 || doc.Source != tt.file {
				t.Errorf("HasSection7 = %v, Source = %q", doc.HasSection7, doc.Source)
			}
			planCheckBlocks(t, doc.Blocks, tt.blocks)
			planNoQuoteMarkers(t, doc.Blocks)
			for i, b := range doc.Blocks {
				// Every corpus prompt is one quoted paragraph: the body is
				// that paragraph exactly as written.
				if strings.Contains(b.Prompt, "\n") || !bytes.Contains(src, []byte("> "+b.Prompt+"\n")) {
					t.Errorf("block %d prompt is not the quoted paragraph as written: %.80q", i+1, b.Prompt)
				}
			}
			wantSource := ""
			if tt.domain != "" {
				wantSource = "section-2"
			}
			if doc.Domain != tt.domain || doc.DomainSource != wantSource || doc.DomainAmbiguous != tt.ambiguous || doc.DomainLine != tt.domainLine {
				t.Errorf("domain = %q from %q ambiguous %v line %d, want %q from %q ambiguous %v line %d",
					doc.Domain, doc.DomainSource, doc.DomainAmbiguous, doc.DomainLine, tt.domain, wantSource, tt.ambiguous, tt.domainLine)
			}
			if doc.Confidence != tt.conf || doc.ConfidenceReason != tt.reason {
				t.Errorf("confidence = %q %q, want %q %q", doc.Confidence, doc.ConfidenceReason, tt.conf, tt.reason)
			}
			if tt.conf == "" && !planHasWarning(doc, "line 28:", "unfilled template value") {
				t.Errorf("no warning about the template confidence: %q", doc.Warnings)
			}
			if tt.conf != "" && len(doc.Warnings) != 0 {
				t.Errorf("unexpected warnings: %q", doc.Warnings)
			}
		})
	}
}

func planHasWarning(doc engine.PlanDocument, parts ...string) bool {
	for _, w := range doc.Warnings {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(w, p)
		}
		if ok {
			return true
		}
	}
	return false
}

// TestPlanGolden pins the whole document read from every fixture; run with
// -update after an intended change and review the diff.
func TestPlanGolden(t *testing.T) {
	dir := planFixturesDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in %s: %v", dir, err)
	}
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := parse.Plan(src, name, parse.PlanOptions{})
			if err != nil {
				t.Fatalf("Plan: %v", err)
			}
			got, err := json.MarshalIndent(doc, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			checkGolden(t, strings.TrimSuffix(file, ".md")+".golden.json", got, "TestPlanGolden")
		})
	}
}

// TestPlanFixtures states what each fixture is for, independently of the
// golden files, so regenerating them cannot quietly accept a regression.
func TestPlanFixtures(t *testing.T) {
	t.Run("h2 sections", func(t *testing.T) {
		doc, _ := planRead(t, "h2-sections.md")
		planCheckBlocks(t, doc.Blocks, []planWant{
			{24, []string{"P1"}, "collapse duplicate alerts", "deliver-prd", "Write a PRD for collapsing duplicate Tidepool"},
			{33, []string{"P2"}, "measure alert trust", "measure-instrumentation-spec", "Specify the events"},
		})
		if doc.Section7Line != 22 || doc.Domain != engine.DomainComplicated || doc.DomainSource != "section-2" || doc.DomainLine != 11 {
			t.Errorf("section 7 line %d, domain %q %q line %d", doc.Section7Line, doc.Domain, doc.DomainSource, doc.DomainLine)
		}
		if doc.Confidence != "Medium" || doc.ConfidenceReason != "the duplicate rate is measured, the fix is not." {
			t.Errorf("confidence %q %q", doc.Confidence, doc.ConfidenceReason)
		}
		if strings.Contains(doc.Blocks[1].Prompt, "Evidence") || strings.Contains(doc.Blocks[1].Prompt, "|") {
			t.Errorf("Section 8 leaked into the last prompt: %q", doc.Blocks[1].Prompt)
		}
	})
	t.Run("h3 sections wrapped in front matter, H1 and Output", func(t *testing.T) {
		doc, _ := planRead(t, "h3-wrapped-frontmatter.md")
		planCheckBlocks(t, doc.Blocks, []planWant{
			{29, []string{"P1"}, "learn which conflicts hurt", "discover-interview-synthesis", "Synthesize six interviews"},
			{38, []string{"P2"}, "probe a merge preview", "measure-experiment-design", "Design a two-week experiment"},
		})
		if doc.Section7Line != 27 || doc.Domain != engine.DomainComplex || doc.DomainLine != 23 || doc.Confidence != "Low-Medium" {
			t.Errorf("got section 7 line %d, domain %q line %d, confidence %q", doc.Section7Line, doc.Domain, doc.DomainLine, doc.Confidence)
		}
		if doc.Blocks[1].Prompt != "Design a two-week experiment that shows a merge preview to half of Quillstack's offline users on reconnect." {
			t.Errorf("last prompt = %q", doc.Blocks[1].Prompt)
		}
	})
	t.Run("last block ends at an H3 Section 8", func(t *testing.T) {
		doc, _ := planRead(t, "last-block-h3-section8.md")
		planCheckBlocks(t, doc.Blocks, []planWant{
			{11, []string{"P1"}, "fix the Harborline label printer queue", "deliver-user-stories", "Write user stories"},
		})
		if p := doc.Blocks[0].Prompt; strings.Contains(p, "Section 8") || strings.Contains(p, "leak") {
			t.Errorf("Section 8 leaked into the prompt: %q", p)
		}
		if doc.Domain != engine.DomainClear || doc.Confidence != "Medium" || doc.ConfidenceReason != "The data is partial." {
			t.Errorf("domain %q confidence %q %q", doc.Domain, doc.Confidence, doc.ConfidenceReason)
		}
	})
	t.Run("Section 7 only inside fenced code", func(t *testing.T) {
		doc, _ := planRead(t, "fence-section7.md")
		if doc.HasSection7 || doc.Section7Line != 0 || len(doc.Blocks) != 0 || len(doc.Warnings) != 0 {
			t.Errorf("fenced Section 7 was read: %+v", doc)
		}
		if doc.Domain != engine.DomainClear || doc.Confidence != "High" {
			t.Errorf("domain %q confidence %q", doc.Domain, doc.Confidence)
		}
	})
	t.Run("To execute inside a code fence", func(t *testing.T) {
		doc, _ := planRead(t, "fence-to-execute.md")
		planCheckBlocks(t, doc.Blocks, []planWant{
			{7, []string{"P1"}, "document the Lumenfeed export format", "deliver-technical-spec", "Write a technical spec for Lumenfeed"},
			{22, []string{"P2"}, "check the export with two partners", "discover-interview-synthesis", "Synthesize feedback"},
		})
		if len(doc.Warnings) != 0 {
			t.Errorf("fenced headings produced warnings: %q", doc.Warnings)
		}
	})
	t.Run("compound P-tokens", func(t *testing.T) {
		doc, _ := planRead(t, "compound-ptokens.md")
		planCheckBlocks(t, doc.Blocks, []planWant{
			{7, []string{"P1", "P2"}, "design the Gristmill onboarding probes", "measure-experiment-design", "Design two probes"},
			{14, []string{"P3", "P4"}, "size the wholesale tier", "define-opportunity-tree", "Map opportunities"},
			{21, []string{"P1", "P5"}, "align the founders", "define-problem-statement", "Frame the disagreement"},
			{28, []string{"P2", "P3", "P4"}, "one prompt for three efforts", "deliver-prd", "Write one PRD"},
			{35, []string{"P6", "P7"}, "lower case is read too", "deliver-user-stories", "Write stories"},
		})
		if doc.Blocks[4].Heading != "To execute p6 AND p7: lower case is read too" {
			t.Errorf("heading not kept as written: %q", doc.Blocks[4].Heading)
		}
	})
	t.Run("duplicate and gapped tokens keep page order", func(t *testing.T) {
		doc, _ := planRead(t, "duplicate-gapped-tokens.md")
		var got [][]string
		for _, b := range doc.Blocks {
			got = append(got, b.PTokens)
		}
		if want := [][]string{{"P1"}, {"P1"}, {"P4"}, {"P2"}}; !reflect.DeepEqual(got, want) {
			t.Errorf("tokens = %q, want %q", got, want)
		}
	})
	t.Run("prompt on the marker line", func(t *testing.T) {
		doc, _ := planRead(t, "prompt-same-line.md")
		want := []string{
			"Write a PRD for ingredient-first recipe search in the Saltmarsh cooking app.",
			"Write user stories for saving a Saltmarsh search.\nInclude the offline case, and keep **bold** and `code` as written.",
			"Start from this framing:\n\nSaltmarsh users search by what is in the fridge, not by dish name.",
		}
		if len(doc.Blocks) != len(want) {
			t.Fatalf("got %d blocks", len(doc.Blocks))
		}
		for i, w := range want {
			if doc.Blocks[i].Prompt != w || doc.Blocks[i].Err != "" {
				t.Errorf("block %d prompt = %q (err %q), want %q", i+1, doc.Blocks[i].Prompt, doc.Blocks[i].Err, w)
			}
		}
	})
	t.Run("multi-paragraph quote prompt", func(t *testing.T) {
		doc, _ := planRead(t, "prompt-multi-paragraph.md")
		want := "Write a PRD for trail-closure alerts in the Fernway hiking app.\n\n" +
			"Context: rangers post closures on a website that hikers rarely check. *Two* rescues last\n" +
			"season involved closed trails; see [the ranger notes](https://example.invalid/notes).\n\n" +
			"Constraints:\n\n" +
			"- alerts must work with no signal at the trailhead\n" +
			"- rangers have no time for a new tool\n\n" +
			"```\nclosure: trail-id, reason, until\n```\n\n" +
			"Flag where the evidence is thin."
		if len(doc.Blocks) != 3 {
			t.Fatalf("got %d blocks", len(doc.Blocks))
		}
		if doc.Blocks[0].Prompt != want {
			t.Errorf("prompt =\n%s\nwant\n%s", doc.Blocks[0].Prompt, want)
		}
		if want := "Design an experiment for Fernway closure alerts.\n\nSecond paragraph pasted without its quote marker on the blank line."; doc.Blocks[1].Prompt != want {
			t.Errorf("split quote prompt = %q", doc.Blocks[1].Prompt)
		}
		if want := "Specify the events for Fernway closure alerts:\n  alert_shown, alert_opened, route_changed"; doc.Blocks[2].Prompt != want {
			t.Errorf("code block prompt = %q", doc.Blocks[2].Prompt)
		}
		planNoQuoteMarkers(t, doc.Blocks)
	})
	t.Run("missing prompt body", func(t *testing.T) {
		doc, _ := planRead(t, "missing-prompt-body.md")
		if len(doc.Blocks) != 4 {
			t.Fatalf("got %d blocks", len(doc.Blocks))
		}
		wantErr := []string{
			"no prompt body: the block has no `**Prompt:**` line",
			"no prompt body: `**Prompt:**` (line 12) is followed by neither text nor a `>` quote",
			"no prompt body: `**Prompt:**` (line 18) is followed by neither text nor a `>` quote",
			"",
		}
		for i, w := range wantErr {
			if b := doc.Blocks[i]; b.Err != w || b.Prompt != "" && w != "" {
				t.Errorf("block %d (line %d) Err = %q, prompt %q; want Err %q", i+1, b.Line, b.Err, b.Prompt, w)
			}
		}
		if doc.Blocks[0].Skill != "deliver-prd" || doc.Blocks[0].Line != 3 {
			t.Errorf("a block without a prompt still reports its skill and line: %+v", doc.Blocks[0])
		}
	})
	t.Run("malformed heading", func(t *testing.T) {
		doc, _ := planRead(t, "malformed-heading.md")
		want := []struct {
			line   int
			tokens []string
			err    string
		}{
			{3, nil, "no P-token"},
			{10, []string{"P2"}, "no `:` after the P-tokens"},
			{17, []string{"P3"}, "no effort title after the colon"},
			{24, nil, "no P-token"},
			{26, []string{"P5"}, ""},
		}
		if len(doc.Blocks) != len(want) {
			t.Fatalf("got %d blocks: %+v", len(doc.Blocks), doc.Blocks)
		}
		for i, w := range want {
			b := doc.Blocks[i]
			if b.Line != w.line || !slices.Equal(b.PTokens, w.tokens) || !strings.Contains(b.Err, w.err) || (w.err == "") != (b.Err == "") {
				t.Errorf("block %d = line %d tokens %q err %q; want line %d tokens %q err containing %q", i+1, b.Line, b.PTokens, b.Err, w.line, w.tokens, w.err)
			}
			if w.err != "" && !strings.Contains(b.Err, "#### To execute P<n>: <effort>") {
				t.Errorf("block %d error does not show the expected form: %q", i+1, b.Err)
			}
		}
		if !strings.Contains(doc.Blocks[3].Err, "no prompt body") {
			t.Errorf("a bare heading also lacks a prompt: %q", doc.Blocks[3].Err)
		}
	})
	t.Run("no Section 7", func(t *testing.T) {
		doc, _ := planRead(t, "no-section7.md")
		if doc.HasSection7 || len(doc.Blocks) != 0 {
			t.Errorf("HasSection7 %v, %d blocks", doc.HasSection7, len(doc.Blocks))
		}
		if !planHasWarning(doc, "line 16:", "outside Section 7") {
			t.Errorf("no warning for the stray block heading: %q", doc.Warnings)
		}
		if doc.Domain != engine.DomainChaotic || doc.Confidence != "Low" || doc.ConfidenceReason != "" {
			t.Errorf("domain %q confidence %q %q", doc.Domain, doc.Confidence, doc.ConfidenceReason)
		}
	})
	t.Run("placeholder, none, missing and bare skills", func(t *testing.T) {
		doc, _ := planRead(t, "placeholder-skill.md")
		var skills []string
		for _, b := range doc.Blocks {
			skills = append(skills, b.Skill)
			if b.Err != "" {
				t.Errorf("block at line %d: %s", b.Line, b.Err)
			}
		}
		if want := []string{"[exact-skill-name]", "", "", ""}; !slices.Equal(skills, want) {
			t.Errorf("skills = %q, want %q", skills, want)
		}
		if len(doc.Warnings) != 1 || !planHasWarning(doc, "line 25:", "without backticks", "`**Skill:** `deliver-prd``") {
			t.Errorf("want one warning for the bare name: %q", doc.Warnings)
		}
	})
	t.Run("workflow skill kept as written", func(t *testing.T) {
		doc, _ := planRead(t, "workflow-skill.md")
		if len(doc.Blocks) != 2 || doc.Blocks[0].Skill != "workflow-feature-kickoff" || doc.Blocks[0].Err != "" {
			t.Errorf("blocks = %+v", doc.Blocks)
		}
	})
	t.Run("orchestrator only where Section 7 names it", func(t *testing.T) {
		doc, _ := planRead(t, "orchestrator-mentions.md")
		planCheckBlocks(t, doc.Blocks, []planWant{
			{13, []string{"P1"}, "run the Nimbus plan automatically", "utility-pm-workflow-orchestrator", "Run this Nimbus plan"},
			{20, []string{"P2"}, "spec the Nimbus billing export", "deliver-prd", "Write a PRD for Nimbus"},
		})
		if doc.Confidence != "Medium-High" || !strings.HasPrefix(doc.ConfidenceReason, "mentions of") {
			t.Errorf("confidence %q %q", doc.Confidence, doc.ConfidenceReason)
		}
	})
	domainTests := []struct {
		file      string
		domain    engine.Domain
		source    string
		ambiguous bool
		line      int
		warning   string
	}{
		{"domain-source-clause.md", engine.DomainChaotic, "section-2", false, 7, ""},
		{"domain-two-domains.md", "", "", true, 7, "several Cynefin domains (Complicated, Complex)"},
		{"domain-section0-only.md", engine.DomainClear, "section-0", false, 3, ""},
		{"nbsp.md", engine.DomainComplex, "section-2", false, 3, ""},
		{"smart-quotes.md", engine.DomainComplicated, "section-2", false, 7, ""},
	}
	for _, tt := range domainTests {
		t.Run("domain "+tt.file, func(t *testing.T) {
			doc, _ := planRead(t, tt.file)
			if doc.Domain != tt.domain || doc.DomainSource != tt.source || doc.DomainAmbiguous != tt.ambiguous || doc.DomainLine != tt.line {
				t.Errorf("domain %q from %q ambiguous %v line %d; want %q from %q ambiguous %v line %d",
					doc.Domain, doc.DomainSource, doc.DomainAmbiguous, doc.DomainLine, tt.domain, tt.source, tt.ambiguous, tt.line)
			}
			if tt.warning != "" && !planHasWarning(doc, tt.warning) {
				t.Errorf("no warning %q in %q", tt.warning, doc.Warnings)
			}
		})
	}
	t.Run("ambiguous Section 2 is not overridden by Section 0", func(t *testing.T) {
		doc, _ := planRead(t, "domain-two-domains.md")
		if !planHasWarning(doc, "line 3:", "Section 0 classifies the situation as Complicated") {
			t.Errorf("the Section 0 disagreement is not reported: %q", doc.Warnings)
		}
	})
	confTests := []struct{ file, conf, reason string }{
		{"confidence-dash-reason.md", "Medium-High", "Juniper's funnel data is solid; the fix is untested."},
		{"confidence-period-reason.md", "Medium-High", "Juniper's funnel data is solid; the fix is untested."},
		{"confidence-em-dash.md", "High", "three customers asked for the Juniper export in writing."},
		{"confidence-bare.md", "Low", ""},
		{"confidence-other-labels.md", "", ""},
		{"smart-quotes.md", "Medium", "pasted from a chat client that curls quotes."},
	}
	for _, tt := range confTests {
		t.Run("confidence "+tt.file, func(t *testing.T) {
			doc, _ := planRead(t, tt.file)
			if doc.Confidence != tt.conf || doc.ConfidenceReason != tt.reason {
				t.Errorf("confidence %q %q, want %q %q", doc.Confidence, doc.ConfidenceReason, tt.conf, tt.reason)
			}
		})
	}
	t.Run("NBSP", func(t *testing.T) {
		doc, _ := planRead(t, "nbsp.md")
		planCheckBlocks(t, doc.Blocks, []planWant{
			{7, []string{"P1"}, "map the Sorrel dispatch delays", "define-opportunity-tree", "Map why Sorrel courier dispatch runs 12 minutes late"},
		})
	})
	t.Run("smart quotes and single emphasis around markers", func(t *testing.T) {
		doc, _ := planRead(t, "smart-quotes.md")
		planCheckBlocks(t, doc.Blocks, []planWant{
			{11, []string{"P1"}, "spec the Vellum reading-list sync", "deliver-prd", "Write a PRD for syncing Vellum"},
			{19, []string{"P2"}, "double quotes instead of backticks", "deliver-user-stories", "“Write stories for Vellum’s offline reading mode.”"},
			{25, []string{"P3"}, "straight quotes and single emphasis", "define-hypothesis", "State a hypothesis"},
		})
		if !strings.HasSuffix(doc.Blocks[0].Prompt, "Keep the “read later” label.") {
			t.Errorf("quotes inside a prompt must be kept: %q", doc.Blocks[0].Prompt)
		}
	})
	t.Run("trailing spaces", func(t *testing.T) {
		doc, _ := planRead(t, "trailing-spaces.md")
		planCheckBlocks(t, doc.Blocks, []planWant{
			{11, []string{"P1"}, "speed up Lattice report builds", "measure-instrumentation-spec", ""},
		})
		if want := "Specify timing events for Lattice report builds.\nEvery line of this prompt ends with spaces."; doc.Blocks[0].Prompt != want {
			t.Errorf("prompt = %q", doc.Blocks[0].Prompt)
		}
		if doc.Domain != engine.DomainComplicated || doc.Confidence != "Medium-High" || doc.ConfidenceReason != "Lattice's numbers are fresh." {
			t.Errorf("domain %q confidence %q %q", doc.Domain, doc.Confidence, doc.ConfidenceReason)
		}
	})
	for _, name := range []string{"crlf.md", "bom-cr-only.md"} {
		t.Run("line ends "+name, func(t *testing.T) {
			doc, _ := planRead(t, name)
			planCheckBlocks(t, doc.Blocks, []planWant{
				{11, []string{"P1"}, "understand Pinecrest's no-show rate", "discover-interview-synthesis", "Synthesize interviews"},
				{21, []string{"P2"}, "test reminder timing", "measure-experiment-design", "Design an experiment"},
			})
			if want := "Synthesize interviews with Pinecrest clinic patients who missed appointments.\n\nKeep their words."; doc.Blocks[0].Prompt != want {
				t.Errorf("prompt = %q", doc.Blocks[0].Prompt)
			}
			if doc.DomainSource != "section-0" || doc.DomainLine != 6 || doc.Confidence != "Low-Medium" || doc.ConfidenceReason != "saved on Windows." {
				t.Errorf("domain %q %q line %d, confidence %q %q", doc.Domain, doc.DomainSource, doc.DomainLine, doc.Confidence, doc.ConfidenceReason)
			}
			for _, b := range doc.Blocks {
				if strings.ContainsRune(b.Prompt+b.Heading+b.Effort+b.Skill, '\r') {
					t.Errorf("a carriage return survived: %+v", b)
				}
			}
		})
	}
	t.Run("stray headings", func(t *testing.T) {
		doc, _ := planRead(t, "stray-headings.md")
		planCheckBlocks(t, doc.Blocks, []planWant{
			{9, []string{"P1"}, "price the Ridgeback add-on", "define-problem-statement", "Frame the pricing question"},
			{30, []string{"P3"}, "still inside Section 7", "deliver-prd", "Write a PRD for the Ridgeback collar subscription."},
		})
		if strings.Contains(doc.Blocks[0].Prompt, "Not a prompt") {
			t.Errorf("a heading did not end the block: %q", doc.Blocks[0].Prompt)
		}
		for _, w := range [][]string{
			{"line 5:", "outside Section 7"},
			{"line 16:", "not a `To execute` block"},
			{"line 23:", "level-3 heading"},
			{"line 33:", "second `**Skill:**`"},
			{"line 38:", "second `**Prompt:**`"},
			{"line 41:", "level-5 heading"},
			{"line 43:", "a second Section 7 heading; only the first (line 7) is read"},
			{"line 45:", "outside Section 7"},
		} {
			if !planHasWarning(doc, w...) {
				t.Errorf("no warning %q in\n%s", w, strings.Join(doc.Warnings, "\n"))
			}
		}
		if len(doc.Warnings) != 8 {
			t.Errorf("want 8 warnings, got %d:\n%s", len(doc.Warnings), strings.Join(doc.Warnings, "\n"))
		}
		if doc.Section7Line != 7 {
			t.Errorf("Section7Line = %d, want the first heading", doc.Section7Line)
		}
	})
}

// TestPlanLineEndings reads the same plan with LF, CRLF and CR line ends and
// expects the same document, line numbers included.
func TestPlanLineEndings(t *testing.T) {
	for _, name := range []string{"h2-sections.md", "prompt-multi-paragraph.md", "h3-wrapped-frontmatter.md"} {
		lf, err := os.ReadFile(filepath.Join(planFixturesDir(t), name))
		if err != nil {
			t.Fatal(err)
		}
		want, err := parse.Plan(lf, name, parse.PlanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, nl := range []string{"\r\n", "\r"} {
			src := bytes.ReplaceAll(lf, []byte("\n"), []byte(nl))
			orig := bytes.Clone(src)
			got, err := parse.Plan(src, name, parse.PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s with %q line ends differs:\n got %+v\nwant %+v", name, nl, got, want)
			}
			if !bytes.Equal(src, orig) {
				t.Errorf("Plan modified its input")
			}
		}
	}
}

func TestPlanInvalidInput(t *testing.T) {
	tests := []struct {
		name    string
		src     []byte
		max     int
		line    int
		message string
	}{
		{"empty", nil, 0, 1, "the plan is empty"},
		{"byte order mark only", []byte("\xef\xbb\xbf"), 0, 1, "the plan is empty"},
		{"whitespace only", []byte("  \n\t\n\u00a0\r\n   "), 0, 1, "only whitespace"},
		{"not UTF-8", []byte("## Section 7\n\nline three \xff here\n"), 0, 3, "not valid UTF-8 (byte 0xff"},
		{"not UTF-8 after CR line ends", []byte("a\rb\rc\xc3"), 0, 3, "not valid UTF-8"},
		{"NUL byte", []byte("## Section 0\n\n## Section 7\x00\n"), 0, 3, "not a text file: it contains a NUL byte"},
		{"UTF-16", []byte("\xff\xfe#\x00#\x00"), 0, 1, "UTF-16"},
		{"mostly control characters", []byte("ok\n\x01\x02\x03\x04\x05\x06\x07\x08"), 0, 2, "not a text file: 8 of its 11 characters are control characters"},
		{"over the limit", bytes.Repeat([]byte("x"), 2049), 2048, 1, "the plan is 2 KiB (2049 bytes), over the 2 KiB (2048 bytes) limit; raise the limit with --max-plan-bytes or GONOGO_MAX_PLAN_BYTES"},
		// A binary file over the limit is refused as not text: a larger
		// limit would not make it a plan.
		{"binary over the limit", append([]byte("PK\x03\x04\x00\x00"), bytes.Repeat([]byte{0x9c, 0x00}, 2048)...), 2048, 1, "not a text file: it contains a NUL byte"},
		{"binary past the first line, over the limit", append([]byte("a\nb\n\x00"), bytes.Repeat([]byte("x"), 2048)...), 2048, 3, "not a text file"},
		// What lies past the limit is not read; a character cut by the
		// limit is not a fault.
		{"a NUL past the limit", append(bytes.Repeat([]byte("x"), 2048), 0), 2048, 1, "over the 2 KiB (2048 bytes) limit"},
		{"a character cut by the limit", append(bytes.Repeat([]byte("x"), 2047), "é"...), 2048, 1, "over the 2 KiB (2048 bytes) limit"},
		{"a four-byte character cut by the limit", append(bytes.Repeat([]byte("x"), 2046), "😀"...), 2048, 1, "over the 2 KiB (2048 bytes) limit"},
		{"over the default limit", bytes.Repeat([]byte("# x\n"), parse.DefaultMaxPlanBytes/4+1), 0, 1, "over the 1 MiB (1048576 bytes) limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse.Plan(tt.src, "upload.md", parse.PlanOptions{MaxBytes: tt.max})
			var r *engine.Refusal
			if !errors.As(err, &r) {
				t.Fatalf("error %v is not a refusal", err)
			}
			if r.Reason != engine.RefuseInvalidInput || r.Source != "upload.md" || r.Line != tt.line {
				t.Errorf("refusal %q source %q line %d, want %q upload.md line %d", r.Reason, r.Source, r.Line, engine.RefuseInvalidInput, tt.line)
			}
			if !strings.Contains(r.Message, tt.message) {
				t.Errorf("message %q does not say %q", r.Message, tt.message)
			}
		})
	}
}

func TestPlanSizeLimit(t *testing.T) {
	src := []byte("## Section 7\n")
	for _, max := range []int{len(src), -1} {
		if _, err := parse.Plan(src, "p.md", parse.PlanOptions{MaxBytes: max}); err != nil {
			t.Errorf("MaxBytes %d: a plan within the limit was refused: %v", max, err)
		}
	}
	if _, err := parse.Plan(src, "p.md", parse.PlanOptions{MaxBytes: len(src) - 1}); err == nil {
		t.Errorf("a plan one byte over the limit was accepted")
	}
}

// TestPlanNotErrors checks that what is wrong with a plan, as opposed to the
// bytes, never becomes an error.
func TestPlanNotErrors(t *testing.T) {
	for _, src := range []string{
		"just a sentence",
		"---\ntitle: front matter only\n---\n",
		"## Section 7\n",
		"#### To execute\n",
		"## Section 7\n#### To execute P1:\n**Prompt:**",
		"\x1b[1mbold\x1b[0m terminal paste with a few escapes, still mostly text\n",
	} {
		if _, err := parse.Plan([]byte(src), "p.md", parse.PlanOptions{}); err != nil {
			t.Errorf("Plan(%q) = %v", src, err)
		}
	}
}

func TestPlanFrontMatter(t *testing.T) {
	// A plan opening with a thematic break keeps its first section: only a
	// block whose first line is a YAML key is front matter.
	src := "---\n## Section 2. Situation\n\n**Domain:** Clear.\n\n---\n"
	doc, err := parse.Plan([]byte(src), "p.md", parse.PlanOptions{})
	if err != nil || doc.Domain != engine.DomainClear || doc.DomainLine != 4 {
		t.Errorf("domain %q line %d, err %v", doc.Domain, doc.DomainLine, err)
	}
	// Unclosed front matter is not front matter either.
	src = "---\ntitle: x\n## Section 2\n**Domain:** Complex\n"
	doc, err = parse.Plan([]byte(src), "p.md", parse.PlanOptions{})
	if err != nil || doc.Domain != engine.DomainComplex || doc.DomainLine != 4 {
		t.Errorf("domain %q line %d, err %v", doc.Domain, doc.DomainLine, err)
	}
	// Front matter is skipped, and its lines still count.
	src = "---\ntitle: \"## Section 7\"\n---\n## Section 7\n#### To execute P1: x\n**Prompt:** y\n"
	doc, err = parse.Plan([]byte(src), "p.md", parse.PlanOptions{})
	if err != nil || doc.Section7Line != 4 || len(doc.Blocks) != 1 || doc.Blocks[0].Line != 5 || doc.Blocks[0].Prompt != "y" {
		t.Errorf("got %+v, err %v", doc, err)
	}
}

// TestPlanConcurrent parses plans from several goroutines, as the bot does
// with uploads; run with -race it checks that the shared Markdown parser
// keeps no per-call state.
func TestPlanConcurrent(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(planFixturesDir(t), "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	srcs := make([][]byte, len(files))
	want := make([]engine.PlanDocument, len(files))
	for i, f := range files {
		if srcs[i], err = os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
		want[i], _ = parse.Plan(srcs[i], f, parse.PlanOptions{})
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range files {
				j := (i + g) % len(files)
				if got, _ := parse.Plan(srcs[j], files[j], parse.PlanOptions{}); !reflect.DeepEqual(got, want[j]) {
					t.Errorf("%s read differently under concurrency", files[j])
				}
			}
		})
	}
	wg.Wait()
}

func TestPlanBlockHeadings(t *testing.T) {
	tests := []struct {
		heading string
		tokens  []string
		effort  string
		err     string // part of Err; "" for none
	}{
		{"To execute P1: a", []string{"P1"}, "a", ""},
		{"To execute P1,P2: a", []string{"P1", "P2"}, "a", ""},
		{"To  execute   P10  and  P2 :  spaced out", []string{"P10", "P2"}, "spaced out", ""},
		{"TO EXECUTE P1 & p3: shouting", []string{"P1", "P3"}, "shouting", ""},
		{"To execute P1: a: b", []string{"P1"}, "a: b", ""},
		{"To execute P1 and: a", []string{"P1"}, "", "no `:` after the P-tokens"},
		{"To execute P1 andP2: a", []string{"P1"}, "", "no `:` after the P-tokens"},
		{"To execute P: a", nil, "", "no P-token"},
		{"To execute: P1 a", nil, "", "no P-token"},
		{"To execute P1 -- a", []string{"P1"}, "", "no `:`"},
	}
	for _, tt := range tests {
		src := "## Section 7\n\n#### " + tt.heading + "\n\n**Prompt:** go\n"
		doc, err := parse.Plan([]byte(src), "p.md", parse.PlanOptions{})
		if err != nil || len(doc.Blocks) != 1 {
			t.Errorf("%q: %d blocks, err %v", tt.heading, len(doc.Blocks), err)
			continue
		}
		b := doc.Blocks[0]
		if !slices.Equal(b.PTokens, tt.tokens) || b.Effort != tt.effort || !strings.Contains(b.Err, tt.err) || (tt.err == "") != (b.Err == "") {
			t.Errorf("%q = tokens %q effort %q err %q; want %q %q err containing %q", tt.heading, b.PTokens, b.Effort, b.Err, tt.tokens, tt.effort, tt.err)
		}
		if b.Heading != strings.TrimSpace(tt.heading) || b.Line != 3 || b.Prompt != "go" {
			t.Errorf("%q: heading %q line %d prompt %q", tt.heading, b.Heading, b.Line, b.Prompt)
		}
	}
	// Headings that only look like blocks.
	src := "## Section 7\n\n#### Notes\n\n#### To executed P1: no\n\n#### Tomorrow P1: no\n"
	doc, _ := parse.Plan([]byte(src), "p.md", parse.PlanOptions{})
	if len(doc.Blocks) != 0 || len(doc.Warnings) != 3 || !planHasWarning(doc, "line 3:", "\"Notes\"", "is ignored") || planHasWarning(doc, "block above") {
		t.Errorf("blocks %+v, warnings %q", doc.Blocks, doc.Warnings)
	}
}
