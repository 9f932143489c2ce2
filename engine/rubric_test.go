package engine

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

// readFixture reads a file of testdata/engine at the module root.
func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(moduleRoot(t), "testdata", "engine", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// moduleRoot walks up from the package directory to the directory holding
// go.mod.
func moduleRoot(t *testing.T) string {
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
			t.Fatal("no go.mod above the package directory")
		}
		dir = parent
	}
}

// templateHeadings returns the "## " headings of a TEMPLATE.md outside code
// fences, the way the skill catalog reads them.
func templateHeadings(text string) []string {
	var out []string
	fence := ""
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		t := strings.TrimSpace(sc.Text())
		if fence != "" {
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			continue
		}
		switch {
		case strings.HasPrefix(t, "```"):
			fence = "```"
		case strings.HasPrefix(t, "~~~"):
			fence = "~~~"
		case strings.HasPrefix(t, "## "):
			out = append(out, strings.TrimSpace(t[3:]))
		}
	}
	return out
}

func launchNoteSkill(t *testing.T) Skill {
	tmpl := string(readFixture(t, "TEMPLATE.md"))
	return Skill{Name: "launch-note", Template: tmpl, TemplateSections: templateHeadings(tmpl)}
}

func TestTemplateHeadingsSkipsFences(t *testing.T) {
	got := templateHeadings("## A\n```\n## not a section\n```\n## B\n~~~md\n## nor this\n~~~\n")
	if strings.Join(got, "|") != "A|B" {
		t.Fatalf("headings = %q, want [A B]", got)
	}
}

func TestJudge(t *testing.T) {
	sk := launchNoteSkill(t)
	longStderr := "line 1 early noise\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7 panic: out of tokens"
	tests := []struct {
		name       string
		out        Outcome
		want       Result
		reasonHas  []string
		reasonLack []string
	}{
		{name: "dry run", out: Outcome{NotRun: true},
			want: ResultNotExecuted, reasonHas: []string{"NOT EXECUTED - dry run"}},
		{name: "dry run wins over an artifact", out: Outcome{NotRun: true, Artifact: []byte("# Real\n\nText.")},
			want: ResultNotExecuted},
		{name: "runner error with stderr", out: Outcome{Err: errors.New("step timed out after 30m"), Stderr: "killed\n"},
			want: ResultFailed, reasonHas: []string{"step timed out after 30m", "killed"}},
		{name: "runner error beats a good artifact", out: Outcome{Err: errors.New("cancelled by bob"), Artifact: readFixture(t, "filled.md")},
			want: ResultFailed, reasonHas: []string{"cancelled by bob"}},
		{name: "non-zero exit keeps the stderr tail", out: Outcome{ExitCode: 3, Stderr: longStderr, Artifact: []byte("partial")},
			want: ResultFailed, reasonHas: []string{"exited with code 3", "panic: out of tokens", "line 3"}, reasonLack: []string{"early noise"}},
		{name: "non-zero exit without stderr", out: Outcome{ExitCode: 1},
			want: ResultFailed, reasonHas: []string{"exited with code 1"}},
		{name: "agent error", out: Outcome{AgentError: "rate limited\n  by the API", Artifact: []byte("# Something")},
			want: ResultFailed, reasonHas: []string{"the agent reported an error: rate limited by the API"}},
		{name: "agent error beats its exit code", out: Outcome{AgentError: "Not logged in · Please run /login", ExitCode: 1, Stderr: "noise\n"},
			want: ResultFailed, reasonHas: []string{"the agent reported an error: Not logged in · Please run /login"}, reasonLack: []string{"exited with code", "noise"}},
		{name: "non-UTF-8", out: Outcome{Artifact: []byte("# Title\n\n\xff\xfe bytes")},
			want: ResultFailed, reasonHas: []string{"not UTF-8"}},
		{name: "ERROR first line", out: Outcome{Artifact: []byte("\n\nERROR: I cannot read the plan file\n\nmore")},
			want: ResultFailed, reasonHas: []string{"ERROR: I cannot read the plan file"}},
		{name: "bold error first line", out: Outcome{Artifact: []byte("**Error:** no access to the repository")},
			want: ResultFailed, reasonHas: []string{"no access to the repository"}},
		{name: "REFUSED first line", out: Outcome{Artifact: []byte("REFUSED: the prompt asks for credentials")},
			want: ResultFailed},
		{name: "a title with a dash is content", out: Outcome{Artifact: []byte("# FAILED - payments we retried\n\nA postmortem of the retry storm.")},
			want: ResultProduced},
		{name: "error word later is content", out: Outcome{Artifact: []byte("# Error budget policy\n\nERROR: lines are logged at level 4.")},
			want: ResultProduced},
		{name: "no artifact", out: Outcome{},
			want: ResultEmpty, reasonHas: []string{"no artifact"}},
		{name: "whitespace only", out: Outcome{Artifact: []byte(" \n\t\n  ")},
			want: ResultEmpty},
		{name: "punctuation only", out: Outcome{Artifact: []byte("---\n***\n- . , ;\n|--|--|\n")},
			want: ResultEmpty},
		{name: "template as is", out: Outcome{Artifact: readFixture(t, "TEMPLATE.md")},
			want: ResultEmpty, reasonHas: []string{"launch-note", "template"}},
		{name: "template with only the title and date filled", out: Outcome{Artifact: readFixture(t, "stub.md")},
			want: ResultEmpty},
		{name: "filled artifact keeping brackets, links and checkboxes", out: Outcome{Artifact: readFixture(t, "filled.md")},
			want: ResultProduced},
		{name: "short real answer", out: Outcome{Artifact: []byte("Ship it on Tuesday.")},
			want: ResultProduced},
		{name: "filled artifact opening with a rule, not front matter", out: Outcome{Artifact: []byte(
			"---\n\n## Summary\n\nSaved carts ship in April for every signed-in shopper.\n\n## Risks\n\n- Cart storage grows; carts expire after 30 days.\n")},
			want: ResultProduced},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reason := Judge(tt.out, sk)
			if got != tt.want {
				t.Fatalf("Judge = %s (%q), want %s", got, reason, tt.want)
			}
			if got == ResultProduced && reason != "" {
				t.Errorf("a PRODUCED result carries reason %q", reason)
			}
			if got != ResultProduced && reason == "" {
				t.Errorf("a %s result carries no reason", got)
			}
			for _, s := range tt.reasonHas {
				if !strings.Contains(reason, s) {
					t.Errorf("reason %q does not contain %q", reason, s)
				}
			}
			for _, s := range tt.reasonLack {
				if strings.Contains(reason, s) {
					t.Errorf("reason %q contains %q", reason, s)
				}
			}
		})
	}
}

// A skill without a TEMPLATE has no stub to recognise: any text is PRODUCED.
func TestJudgeWithoutTemplate(t *testing.T) {
	got, _ := Judge(Outcome{Artifact: readFixture(t, "stub.md")}, Skill{Name: "launch-note"})
	if got != ResultProduced {
		t.Fatalf("Judge without a template = %s, want PRODUCED", got)
	}
}

func TestJudgeLongReasonsStayShortAndValid(t *testing.T) {
	long := strings.Repeat("é", 400)
	_, reason := Judge(Outcome{AgentError: long}, Skill{})
	if len(reason) > 400 || !utf8.ValidString(reason) {
		t.Fatalf("reason is %d bytes, valid UTF-8 %v", len(reason), utf8.ValidString(reason))
	}
	_, reason = Judge(Outcome{ExitCode: 1, Stderr: strings.Repeat("x", 5000)}, Skill{})
	if len(reason) > 700 {
		t.Fatalf("stderr reason is %d bytes", len(reason))
	}
}

// corpusDir is the shared corpus next to the module, or "" when absent.
func corpusDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(moduleRoot(t)), "shared", "corpus")
	if _, err := os.Stat(dir); err != nil {
		return ""
	}
	return dir
}

// Every real EXAMPLE in pm-skills is a finished artifact and every TEMPLATE
// an unfilled one; the rubric must tell them apart.
func TestJudgeCorpus(t *testing.T) {
	dir := corpusDir(t)
	if dir == "" {
		t.Skip("shared corpus not present")
	}
	refs, err := filepath.Glob(filepath.Join(dir, "pm-skills", "skills", "*", "references"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ref := range refs {
		tmpl, err1 := os.ReadFile(filepath.Join(ref, "TEMPLATE.md"))
		example, err2 := os.ReadFile(filepath.Join(ref, "EXAMPLE.md"))
		if err1 != nil || err2 != nil {
			continue
		}
		name := filepath.Base(filepath.Dir(ref))
		n++
		t.Run(name, func(t *testing.T) {
			sk := Skill{Name: name, Template: string(tmpl), TemplateSections: templateHeadings(string(tmpl))}
			if got, reason := Judge(Outcome{Artifact: example}, sk); got != ResultProduced {
				t.Errorf("EXAMPLE.md: Judge = %s (%s), want PRODUCED", got, reason)
			}
			if got, reason := Judge(Outcome{Artifact: tmpl}, sk); got != ResultEmpty {
				t.Errorf("TEMPLATE.md: Judge = %s (%s), want EMPTY", got, reason)
			}
		})
	}
	if n == 0 {
		t.Fatal("no skill in the corpus has both TEMPLATE.md and EXAMPLE.md")
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"first heading", "# PRD: Saved carts\n\nBody text.", "PRD: Saved carts"},
		{"front matter skipped", "---\nartifact: prd\ncreated: 2031-01-01\n---\n\n## Overview\n", "Overview"},
		{"first sentence", "Carts now persist. They last 30 days.", "Carts now persist."},
		{"comments and fences skipped", "<!-- note -->\n```\n\nSaved carts ship in April.", "Saved carts ship in April."},
		{"list marker and emphasis trimmed", "- **Saved carts ship**", "Saved carts ship"},
		{"punctuation-only lines skipped", "***\n\n- -\n> _\n", ""},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Summarize([]byte(tt.in)); got != tt.want {
				t.Errorf("Summarize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	long := strings.Repeat("word ", 60)
	got := Summarize([]byte(long))
	if len(got) > 123 || !strings.HasSuffix(got, "...") {
		t.Errorf("Summarize of a long line = %q (%d bytes), want at most 120 bytes and an ellipsis", got, len(got))
	}
	if strings.Contains(Summarize(readFixture(t, "filled.md")), "artifact:") {
		t.Error("Summarize read the front matter")
	}
}

// Judging an artifact and summarising it read it in place: the checks of
// an 8 MiB artifact (refusal line, content, the template stub check,
// which reads every line) allocate a small fraction of its size, not
// copies of it.
func TestJudgingAnArtifactCopiesNoneOfIt(t *testing.T) {
	sk := Skill{Name: "prd", Template: "## Goals\n\n[What it is for]\n\n## Risks\n\n[What could go wrong]\n", TemplateSections: []string{"Goals", "Risks"}}
	var b bytes.Buffer
	b.WriteString("# PRD\n\n## Goals\n\n")
	for i := 0; b.Len() < 8<<20; i++ {
		fmt.Fprintf(&b, "Goal %d: the address form keeps what the customer typed when validation fails.\n", i)
	}
	artifact := b.Bytes()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, reason := Judge(Outcome{Artifact: artifact}, sk)
	summary := Summarize(artifact)
	runtime.ReadMemStats(&after)
	if res != ResultProduced || summary != "PRD" {
		t.Fatalf("Judge = %s (%s), Summarize = %q", res, reason, summary)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > uint64(len(artifact))/16 {
		t.Errorf("judging and summarising a %d-byte artifact allocated %d bytes", len(artifact), got)
	}
}

func TestResultText(t *testing.T) {
	for _, c := range []struct {
		res    Result
		reason string
		want   string
	}{
		{ResultNotExecuted, DryRunReason, "NOT EXECUTED - dry run"},
		{ResultFailed, "the agent exited with code 1", "FAILED - the agent exited with code 1"},
		{ResultProduced, "", "PRODUCED"},
		{ResultNotExecuted, "", "NOT-EXECUTED"},
	} {
		if got := ResultText(c.res, c.reason); got != c.want {
			t.Errorf("ResultText(%s, %q) = %q, want %q", c.res, c.reason, got, c.want)
		}
	}
	// A dry run's step says the design's words, exactly.
	if res, why := Judge(Outcome{NotRun: true}, Skill{}); ResultText(res, why) != "NOT EXECUTED - dry run" {
		t.Errorf("a dry run's step reads %q", ResultText(res, why))
	}
}
