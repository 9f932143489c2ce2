package intake_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/intake"
	"github.com/gonogo/gonogo/parse"
)

// fakeWorkflows stands in for a workflows directory: workflow files by
// name, read from text.
type fakeWorkflows map[string]string

func (f fakeWorkflows) Workflow(name string) (engine.WorkflowSpec, error) {
	src, ok := f[name]
	if !ok {
		return engine.WorkflowSpec{}, &engine.Refusal{Reason: engine.RefuseUnknownWorkflow, Source: name, Message: "no such workflow"}
	}
	return parse.Workflow([]byte(src), name+".yaml")
}

var testWorkflows = fakeWorkflows{
	// Pre-flight finds three problems: an unknown skill, a dependency on
	// no step, and a reference to an undeclared argument.
	"broken": `steps:
  - id: prd
    skill: deliver-prdd
  - id: stories
    skill: deliver-user-stories
    depends_on: [design]
    prompt: Stories for {{audience}}.
`,
	"needs-feature": `args:
  feature: {required: true}
steps:
  - id: prd
    skill: deliver-prd
    prompt: A PRD for {{feature}}.
`,
}

func readFixture(t *testing.T, path ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{"..", "..", "testdata"}, path...)...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTake states what the intake makes of each kind of request: the plan
// and start options of an accepted one, the refusal of the others, and
// that the skills are read only for an input that reads.
func TestTake(t *testing.T) {
	cat, err := parse.LoadSkills(filepath.Join("..", "..", "testdata", "skills"))
	if err != nil {
		t.Fatal(err)
	}
	noSection7 := readFixture(t, "plans", "no-section7.md")
	h2 := readFixture(t, "plans", "h2-sections.md")
	big := []byte(strings.Repeat("x", 4097))
	binary := append([]byte("\x7fELF\x02\x01\x01\x00"), big...)

	type want struct {
		reason      engine.RefusalReason // "": accepted
		message     string               // in the refusal's message
		line        int
		problems    []int // lines of the refusal's problems
		suggestions map[string][]string
		flags       engine.Flags
		skills      []string
		context     string
		source      string
		skillsRead  bool
	}
	tests := []struct {
		name string
		req  intake.Request
		dir  engine.WorkflowSource // nil: testWorkflows
		want want
	}{
		{"chain: its own flags and those beside it merge",
			intake.Request{Input: engine.InputChain, Chain: "deliver-prd -> deliver-user-stories --thread -- mobile checkout", Flags: engine.Flags{DryRun: true}},
			nil, want{flags: engine.Flags{Thread: true, DryRun: true}, skills: []string{"deliver-prd", "deliver-user-stories"},
				context: "mobile checkout", source: "deliver-prd -> deliver-user-stories --thread -- mobile checkout", skillsRead: true}},
		{"chain: a flag given in both places is given once",
			intake.Request{Input: engine.InputChain, Chain: "deliver-prd --force-auto", Flags: engine.Flags{ForceAuto: true, Auto: true}},
			nil, want{flags: engine.Flags{ForceAuto: true, Auto: true}, skills: []string{"deliver-prd"}, source: "deliver-prd --force-auto", skillsRead: true}},
		{"chain: an unknown skill is refused with the close names",
			intake.Request{Input: engine.InputChain, Chain: "deliver-prdd -> deliver-user-stories", Flags: engine.Flags{Auto: true}},
			nil, want{reason: engine.RefuseUnknownSkill, message: "unknown skill `deliver-prdd` (did you mean `deliver-prd`, `deliver-user-stories`?)", line: 1,
				suggestions: map[string][]string{"deliver-prdd": {"deliver-prd", "deliver-user-stories"}}, flags: engine.Flags{Auto: true},
				source: "deliver-prdd -> deliver-user-stories", skillsRead: true}},
		{"chain: one that does not read is refused before the skills are read",
			intake.Request{Input: engine.InputChain, Chain: "deliver-prd ->", Flags: engine.Flags{Thread: true}},
			nil, want{reason: engine.RefuseTrailingSeparator, message: "trailing", line: 1, flags: engine.Flags{Thread: true}, source: "deliver-prd ->"}},
		{"workflow: every problem of the file is kept, each with its line",
			intake.Request{Input: engine.InputWorkflow, Workflow: "unknown-keys", Flags: engine.Flags{DryRun: true}},
			intake.Dir(filepath.Join("..", "..", "testdata", "workflows")),
			want{reason: engine.RefuseInvalidWorkflow, message: "12 problems:\n  line 2: workflow: unknown key \"descripton\"", line: 2,
				problems: []int{2, 4, 8, 9, 11, 12, 12, 13, 13, 14, 14, 17}, flags: engine.Flags{DryRun: true}, source: "unknown-keys"}},
		{"workflow: every problem pre-flight finds is kept, each with its line",
			intake.Request{Input: engine.InputWorkflow, Workflow: "broken", Context: "for shoppers"},
			nil, want{reason: engine.RefuseInvalidWorkflow, message: "3 problems:\n  line 2: step \"prd\": `deliver-prdd` is not an installed skill", line: 2, problems: []int{2, 4, 4},
				source: "broken", skillsRead: true}},
		{"workflow: a missing argument alone is refused as that",
			intake.Request{Input: engine.InputWorkflow, Workflow: "needs-feature"},
			nil, want{reason: engine.RefuseMissingArg, message: "feature", line: 2, problems: []int{2}, source: "needs-feature", skillsRead: true}},
		{"workflow: arguments, context and flags",
			intake.Request{Input: engine.InputWorkflow, Workflow: "needs-feature", Args: map[string]string{"feature": "saved searches"},
				Context: "for shoppers", Flags: engine.Flags{Auto: true}},
			nil, want{flags: engine.Flags{Auto: true}, skills: []string{"deliver-prd"}, context: "for shoppers", source: "needs-feature", skillsRead: true}},
		{"workflow: an unknown name is refused as the source says",
			intake.Request{Input: engine.InputWorkflow, Workflow: "nope"},
			nil, want{reason: engine.RefuseUnknownWorkflow, message: "no such workflow", source: "nope"}},
		{"plan: accepted",
			intake.Request{Input: engine.InputPlan, Plan: h2, PlanName: "h2-sections.md", Flags: engine.Flags{DryRun: true}},
			nil, want{flags: engine.Flags{DryRun: true}, skills: []string{"deliver-prd"}, source: "h2-sections.md", skillsRead: true}},
		{"plan: no Section 7",
			intake.Request{Input: engine.InputPlan, Plan: noSection7, PlanName: "no-section7.md", Flags: engine.Flags{Auto: true}},
			nil, want{reason: engine.RefuseNoSection7, message: "no Section 7 found", flags: engine.Flags{Auto: true}, source: "no-section7.md", skillsRead: true}},
		{"plan: over the size limit, its whole size known",
			intake.Request{Input: engine.InputPlan, Plan: big, PlanName: "big.md", PlanSize: 3 << 20},
			nil, want{reason: engine.RefuseInvalidInput, source: "big.md",
				message: "the plan is 3MiB (3145728 bytes), over the 4KiB (4096 bytes) limit; raise it with --max-plan-bytes 4MiB or GONOGO_MAX_PLAN_BYTES=4MiB"}},
		{"plan: over the size limit, its size unknown",
			intake.Request{Input: engine.InputPlan, Plan: big, PlanName: "big.md"},
			nil, want{reason: engine.RefuseInvalidInput, source: "big.md",
				message: "the plan is larger than that, over the 4KiB (4096 bytes) limit; raise it with --max-plan-bytes 8KiB or GONOGO_MAX_PLAN_BYTES=8KiB"}},
		{"plan: a binary file over the size limit is refused as not text, not as too large",
			intake.Request{Input: engine.InputPlan, Plan: binary, PlanName: "gonogo", PlanSize: 9 << 20},
			nil, want{reason: engine.RefuseInvalidInput, source: "gonogo", line: 1, message: "the plan is not a text file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			read := false
			cfg := intake.Config{
				Catalog:   func() (engine.Catalog, error) { read = true; return cat, nil },
				Policy:    engine.DefaultPolicy(),
				Workflows: tt.dir, MaxPlanBytes: 4096,
				BudgetUSD: 2.5, Quorum: 2, ExcludeStarter: true, Setup: &engine.Setup{Runner: "dry-run"},
			}
			if cfg.Workflows == nil {
				cfg.Workflows = testWorkflows
			}
			req := tt.req
			req.StartedBy, req.Origin, req.Key = "U1", engine.Origin{Channel: "C1", Thread: "1.2"}, "slack-command:E1"
			p, opt, err := intake.Take(cfg, req)
			w := tt.want

			var ref *engine.Refusal
			switch {
			case w.reason == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case w.reason != "" && !errors.As(err, &ref):
				t.Fatalf("error %v (%T), want a refusal %s", err, err, w.reason)
			case ref != nil:
				if ref.Reason != w.reason || !strings.Contains(ref.Message, w.message) || ref.Line != w.line {
					t.Errorf("refusal %s at line %d: %q\nwant %s at line %d, with %q", ref.Reason, ref.Line, ref.Message, w.reason, w.line, w.message)
				}
				var lines []int
				for _, pr := range ref.Problems {
					lines = append(lines, pr.Line)
				}
				if !reflect.DeepEqual(lines, w.problems) {
					t.Errorf("problems on lines %v, want %v", lines, w.problems)
				}
				if w.suggestions != nil && !reflect.DeepEqual(ref.Suggestions, w.suggestions) {
					t.Errorf("suggestions %v, want %v", ref.Suggestions, w.suggestions)
				}
			}
			if p.Input != req.Input || p.Source != w.source || p.Flags != w.flags || p.Context != w.context {
				t.Errorf("plan %s %q, flags %+v, context %q\nwant %s %q, flags %+v, context %q",
					p.Input, p.Source, p.Flags, p.Context, req.Input, w.source, w.flags, w.context)
			}
			var skills []string
			for _, s := range p.Steps {
				skills = append(skills, s.Skill)
			}
			if w.reason == "" && !reflect.DeepEqual(skills, w.skills) {
				t.Errorf("steps %v, want %v", skills, w.skills)
			}
			if read != w.skillsRead {
				t.Errorf("skills read: %v, want %v", read, w.skillsRead)
			}
			wantOpt := engine.StartOptions{StartedBy: "U1", Origin: engine.Origin{Channel: "C1", Thread: "1.2"}, Key: "slack-command:E1",
				BudgetUSD: 2.5, Quorum: 2, ExcludeStarter: true, Setup: cfg.Setup}
			if !reflect.DeepEqual(opt, wantOpt) {
				t.Errorf("options %+v, want %+v", opt, wantOpt)
			}
		})
	}
}

// TestTakeErrors: what is not a refusal stays an error of its own, for the
// front end to report as a fault rather than as the person's input.
func TestTakeErrors(t *testing.T) {
	broken := errors.New("skills directory unreadable")
	cfg := intake.Config{
		Catalog: func() (engine.Catalog, error) { return nil, broken },
		Policy:  engine.DefaultPolicy(),
	}
	if _, _, err := intake.Take(cfg, intake.Request{Input: engine.InputChain, Chain: "deliver-prd"}); !errors.Is(err, broken) {
		t.Errorf("unreadable skills: %v", err)
	}
	if _, _, err := intake.Take(cfg, intake.Request{Input: engine.InputWorkflow, Workflow: "x"}); !errors.Is(err, intake.ErrNoWorkflows) {
		t.Errorf("no workflows directory: %v", err)
	}
	var ref *engine.Refusal
	if _, _, err := intake.Take(cfg, intake.Request{Chain: "deliver-prd"}); err == nil || errors.As(err, &ref) {
		t.Errorf("no input kind: %v", err)
	}
}

// TestChainAndIsPlan: the readers a front end uses to check a request
// when it arrives agree with what Take makes of it.
func TestChainAndIsPlan(t *testing.T) {
	expr, err := intake.Chain("deliver-prd -> deliver-user-stories --thread -- mobile checkout")
	if err != nil || len(expr.Names) != 2 || !expr.Flags.Thread || expr.Context != "mobile checkout" {
		t.Fatalf("Chain = %+v, %v", expr, err)
	}
	if _, err := intake.Chain("deliver-prd ->"); err == nil {
		t.Error("a trailing separator was read")
	}
	if !intake.IsPlan(readFixture(t, "plans", "h2-sections.md"), "h2-sections.md") {
		t.Error("a plan with a Section 7 is not a plan")
	}
	for _, body := range [][]byte{readFixture(t, "plans", "no-section7.md"), []byte("notes\n"), {}} {
		if intake.IsPlan(body, "x.md") {
			t.Errorf("%.40q reads as a plan", body)
		}
	}
}
