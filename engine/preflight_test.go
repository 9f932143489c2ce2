package engine

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

// memCatalog is an in-memory Catalog.
type memCatalog struct {
	skills map[string]Skill
	agents map[string]string
}

func (c *memCatalog) Skill(name string) (Skill, error) {
	if s, ok := c.skills[name]; ok {
		if s.Problem != "" {
			return s, fmt.Errorf("skill %q: %s: %w", name, s.Problem, ErrBrokenSkill)
		}
		return s, nil
	}
	return Skill{}, fmt.Errorf("skill %q: %w", name, ErrNotFound)
}

func (c *memCatalog) Names() []string {
	var out []string
	for n, s := range c.skills {
		if s.Problem == "" {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

func (c *memCatalog) Agent(name string) (string, error) {
	if a, ok := c.agents[name]; ok {
		return a, nil
	}
	return "", fmt.Errorf("agent %q: %w", name, ErrNotFound)
}

// installed are the skill names of the test catalog; it holds the
// orchestrator, a maintenance skill and a workflow too, so that refusals
// cannot come from a missing skill.
var installed = []string{
	"define-problem-statement", "deliver-prd", "deliver-user-stories", "discover-interview-synthesis",
	"measure-experiment-design", "utility-pm-critic", "workflow-feature-kickoff",
	"utility-pm-workflow-orchestrator", "foundation-prioritized-action-plan", "utility-pm-skill-builder",
}

// testCatalog returns the test catalog, with the pm-critic leaf agent when
// withLeaf is set.
func testCatalog(withLeaf bool) *memCatalog {
	c := &memCatalog{skills: map[string]Skill{}, agents: map[string]string{}}
	for _, n := range installed {
		c.skills[n] = Skill{Name: n, Instructions: "Instructions of " + n + ".", Path: "skills/" + n + "/SKILL.md"}
	}
	c.skills["broken-skill"] = Skill{Name: "broken-skill", Path: "skills/broken-skill/SKILL.md",
		Problem: `skills/broken-skill/SKILL.md:1: the front matter opened with "---" is never closed by a "---" line`}
	if withLeaf {
		c.agents["pm-critic"] = "You are pm-critic. Critique the artifact."
	}
	return c
}

// planDoc is a plan document with Section 7 at line 40 and a clear domain.
func planDoc(blocks ...PlanBlock) PlanDocument {
	return PlanDocument{Source: "plan.md", HasSection7: true, Section7Line: 40, Blocks: blocks,
		Domain: DomainComplicated, DomainSource: "section-2", DomainLine: 12, Confidence: "High", ConfidenceReason: "data in hand"}
}

// blk is a Section 7 block naming skill, written at line.
func blk(line int, skill string) PlanBlock {
	effort := fmt.Sprintf("effort at %d", line)
	return PlanBlock{Line: line, Heading: "To execute P1: " + effort, PTokens: []string{"P1", "Q2"},
		Effort: effort, Skill: skill, Prompt: fmt.Sprintf("prompt at %d", line)}
}

func refusalOf(t *testing.T, err error) *Refusal {
	t.Helper()
	var r *Refusal
	if !errors.As(err, &r) {
		t.Fatalf("error %v is not a *Refusal", err)
	}
	return r
}

func TestPreflightPlanRefusals(t *testing.T) {
	runnable := []PlanBlock{blk(50, "deliver-prd"), blk(60, "deliver-user-stories"), blk(70, "define-problem-statement"), blk(80, "measure-experiment-design")}
	with := func(extra ...PlanBlock) PlanDocument { return planDoc(append(slices.Clone(runnable), extra...)...) }
	tests := []struct {
		name   string
		doc    PlanDocument
		reason RefusalReason
		line   int
		msg    []string
	}{
		{"no Section 7", PlanDocument{Source: "plan.md"}, RefuseNoSection7, 0, []string{"plan.md: ", "Section 7"}},
		{"block that cannot be parsed", with(PlanBlock{Line: 91, Heading: "To execute: ???", Err: "no **Prompt:** body"}),
			RefuseParseError, 91, []string{"plan.md:91: ", "no **Prompt:** body", "To execute: ???"}},
		{"orchestrator past the cap", with(blk(95, "utility-pm-workflow-orchestrator")),
			RefuseSelfReference, 95, []string{"plan.md:95: ", "utility-pm-workflow-orchestrator", "does not run itself"}},
		{"plan producer first", planDoc(blk(45, "foundation-prioritized-action-plan"), blk(50, "deliver-prd")),
			RefuseSelfReference, 45, []string{"foundation-prioritized-action-plan"}},
		{"self reference that is not installed", planDoc(blk(50, "deliver-prd"), blk(66, "utility-pm-workflow-orchestrator")),
			RefuseSelfReference, 66, nil},
		{"maintenance skill", with(blk(97, "utility-pm-skill-builder")),
			RefuseRefusedSkill, 97, []string{"utility-pm-skill-builder", "maintenance"}},
		{"maintenance skill not installed", planDoc(blk(50, "utility-pm-release-conductor")),
			RefuseRefusedSkill, 50, nil},
		{"only manual blocks", planDoc(blk(50, ""), blk(60, "[skill-name]"), blk(70, "workflow-feature-kickoff")),
			RefuseNoRunnableSteps, 40, []string{"all 3 Section 7 blocks are manual", "names no skill"}},
		{"no blocks at all", planDoc(), RefuseNoRunnableSteps, 40, []string{"no runnable step"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := PreflightPlan(tt.doc, testCatalog(true), DefaultPolicy(), Flags{})
			r := refusalOf(t, err)
			if r.Reason != tt.reason || r.Line != tt.line {
				t.Fatalf("refusal %s at line %d (%v), want %s at line %d", r.Reason, r.Line, err, tt.reason, tt.line)
			}
			if r.Source != "plan.md" {
				t.Errorf("refusal source %q, want plan.md", r.Source)
			}
			for _, m := range tt.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("refusal %q does not say %q", err, m)
				}
			}
		})
	}
}

// A plan's Section 7 blocks are independent, so --thread has nothing to
// hand on: it is refused, not announced and ignored.
func TestPreflightPlanRefusesThread(t *testing.T) {
	p, err := PreflightPlan(planDoc(blk(50, "deliver-prd"), blk(60, "deliver-user-stories")), testCatalog(true), DefaultPolicy(), Flags{Thread: true})
	r := refusalOf(t, err)
	if r.Reason != RefuseInvalidInput || r.Source != "plan.md" {
		t.Fatalf("refusal %s from %q, want invalid-input from plan.md", r.Reason, r.Source)
	}
	for _, want := range []string{"--thread", "independent", "chain"} {
		if !strings.Contains(r.Message, want) {
			t.Errorf("refusal %q does not say %q", r.Message, want)
		}
	}
	if p.Domain != DomainComplicated {
		t.Errorf("the refused plan lost its header facts: %+v", p)
	}
}

func TestPreflightPlanClassifiesBlocks(t *testing.T) {
	doc := planDoc(
		blk(50, "deliver-prd"),
		blk(55, ""),
		blk(60, "[skill-name]"),
		blk(65, "delivr-prd"),
		blk(70, "workflow-feature-kickoff"),
		blk(75, "utility-pm-critic"),
		blk(80, "deliver-user-stories"),
		blk(85, "define-problem-statement"),
		blk(90, ""),
		blk(95, "measure-experiment-design"),
	)
	doc.Warnings = []string{"Section 5 has no table"}
	p, err := PreflightPlan(doc, testCatalog(true), DefaultPolicy(), Flags{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, s := range p.Steps {
		steps = append(steps, fmt.Sprintf("%s@%d/%s/%s/%s", s.Skill, s.Line, s.Category, s.Execution, s.Leaf))
	}
	wantSteps := []string{
		"deliver-prd@50/content/delegate/",
		"utility-pm-critic@75/dispatch/inline-leaf/pm-critic",
		"deliver-user-stories@80/content/delegate/",
	}
	if !slices.Equal(steps, wantSteps) {
		t.Fatalf("steps = %q\nwant %q", steps, wantSteps)
	}
	if s := p.Steps[0]; s.Effort != "effort at 50" || s.Prompt != "prompt at 50" || !slices.Equal(s.PTokens, []string{"P1", "Q2"}) {
		t.Errorf("step 1 = %+v, want the block's effort, prompt and P-tokens", s)
	}
	manual := map[int][]string{
		55: {"names no skill"},
		60: {"placeholder"},
		65: {"`delivr-prd` is not an installed skill", "did you mean `deliver-prd`?"},
		70: {"workflow-feature-kickoff", "whole workflow"},
		90: {"names no skill"},
	}
	if len(p.Manual) != len(manual) {
		t.Fatalf("manual = %+v, want blocks at lines 55 60 65 70 90", p.Manual)
	}
	for i, b := range p.Manual {
		if i > 0 && b.Line < p.Manual[i-1].Line {
			t.Errorf("manual blocks out of document order: %d after %d", b.Line, p.Manual[i-1].Line)
		}
		for _, w := range manual[b.Line] {
			if !strings.Contains(b.Reason, w) {
				t.Errorf("manual block at %d: reason %q does not say %q", b.Line, b.Reason, w)
			}
		}
		if b.Prompt != fmt.Sprintf("prompt at %d", b.Line) || b.Effort == "" {
			t.Errorf("manual block at %d lost its effort or prompt: %+v", b.Line, b)
		}
	}
	if p.Manual[1].Skill != "" {
		t.Errorf("a placeholder is reported as skill %q, want none", p.Manual[1].Skill)
	}
	if p.Manual[2].Skill != "delivr-prd" {
		t.Errorf("an unknown skill is reported as %q, want the name as written", p.Manual[2].Skill)
	}
	if len(p.Deferred) != 2 || p.Deferred[0].Line != 85 || p.Deferred[1].Line != 95 {
		t.Fatalf("deferred = %+v, want the blocks at 85 and 95", p.Deferred)
	}
	if !strings.Contains(p.Deferred[0].Reason, "first 3") || p.Deferred[0].Skill != "define-problem-statement" {
		t.Errorf("deferred block = %+v", p.Deferred[0])
	}
	if p.Input != InputPlan || p.Source != "plan.md" || p.Domain != DomainComplicated || p.DomainSource != "section-2" ||
		p.Confidence != "High" || p.ConfidenceReason != "data in hand" || !p.Flags.DryRun {
		t.Errorf("header facts lost: %+v", p)
	}
	if !slices.Equal(p.Warnings, []string{"Section 5 has no table"}) {
		t.Errorf("warnings = %q, want only the parser's", p.Warnings)
	}
	doc.Blocks[0].PTokens[0] = "P9"
	if p.Steps[0].PTokens[0] != "P1" {
		t.Error("the plan shares P-tokens with the document")
	}
}

func TestPreflightPlanDispatchWithoutLeaf(t *testing.T) {
	p, err := PreflightPlan(planDoc(blk(50, "utility-pm-critic"), blk(60, "deliver-prd")), testCatalog(false), DefaultPolicy(), Flags{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Steps) != 1 || p.Steps[0].Skill != "deliver-prd" {
		t.Fatalf("steps = %+v, want deliver-prd only", p.Steps)
	}
	if len(p.Manual) != 1 || !strings.Contains(p.Manual[0].Reason, "leaf agent `pm-critic`") {
		t.Fatalf("manual = %+v, want utility-pm-critic naming its missing leaf", p.Manual)
	}
}

func TestPreflightPlanWarnings(t *testing.T) {
	tests := []struct {
		name      string
		domain    Domain
		ambiguous bool
		flags     Flags
		want      []string // words some warning must hold
		mode      Mode
	}{
		{"clear domain", DomainClear, false, Flags{}, nil, ModeCheckpointed},
		{"clear domain, auto", DomainClear, false, Flags{Auto: true}, nil, ModeGuardedAuto},
		{"ambiguous domain", "", true, Flags{}, []string{"ambiguous"}, ModeCheckpointed},
		{"absent domain", "", false, Flags{}, []string{"no Cynefin domain"}, ModeCheckpointed},
		{"absent domain, auto", "", false, Flags{Auto: true}, []string{"no Cynefin domain", "--auto ignored"}, ModeCheckpointed},
		{"complex domain, auto", DomainComplex, false, Flags{Auto: true}, []string{"--auto ignored", "Complex"}, ModeCheckpointed},
		{"complex domain, force-auto", DomainComplex, false, Flags{ForceAuto: true}, nil, ModeGuardedAuto},
		{"absent domain, force-auto", "", false, Flags{ForceAuto: true}, []string{"no Cynefin domain"}, ModeGuardedAuto},
		{"ambiguous domain, force-auto", "", true, Flags{Auto: true, ForceAuto: true}, []string{"ambiguous"}, ModeGuardedAuto},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := planDoc(blk(50, "deliver-prd"))
			doc.Domain, doc.DomainAmbiguous = tt.domain, tt.ambiguous
			if tt.domain == "" {
				doc.DomainSource = ""
			}
			p, err := PreflightPlan(doc, testCatalog(true), DefaultPolicy(), tt.flags)
			if err != nil {
				t.Fatal(err)
			}
			all := strings.Join(p.Warnings, "\n")
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("warnings %q do not say %q", p.Warnings, w)
				}
			}
			if tt.want == nil && len(p.Warnings) != 0 {
				t.Errorf("unexpected warnings %q", p.Warnings)
			}
			mode, _ := ResolveMode(p)
			if mode != tt.mode {
				t.Errorf("mode = %s, want %s", mode, tt.mode)
			}
			// A warning must not promise a mode the run will not have.
			if mode == ModeGuardedAuto && strings.Contains(all, "stays checkpointed") {
				t.Errorf("the run is %s but a warning says %q", mode, all)
			}
		})
	}
}

func TestPreflightChain(t *testing.T) {
	chain := func(names ...string) ChainExpr {
		return ChainExpr{Source: strings.Join(names, " -> "), Names: names, Context: "mobile checkout"}
	}
	t.Run("accepted", func(t *testing.T) {
		c := chain("deliver-prd", "utility-pm-critic", "deliver-user-stories")
		c.Flags = Flags{Thread: true, DryRun: true}
		p, err := PreflightChain(c, testCatalog(true), DefaultPolicy())
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range p.Steps {
			got = append(got, s.Skill+"/"+string(s.Execution))
		}
		want := []string{"deliver-prd/delegate", "utility-pm-critic/inline-leaf", "deliver-user-stories/delegate"}
		if !slices.Equal(got, want) {
			t.Fatalf("steps = %q, want %q", got, want)
		}
		if p.Input != InputChain || p.Context != "mobile checkout" || p.Source != c.Source || !p.Flags.Thread || !p.Flags.DryRun {
			t.Fatalf("chain facts lost: %+v", p)
		}
		if len(p.Warnings) != 0 {
			t.Fatalf("unexpected warnings %q", p.Warnings)
		}
	})
	refusals := []struct {
		name   string
		c      ChainExpr
		reason RefusalReason
		msg    []string
	}{
		{"empty", ChainExpr{Source: "--thread"}, RefuseEmptyChain, []string{"names no skill"}},
		{"invalid name", chain("deliver-prd", "Deliver_PRD"), RefuseInvalidSkillName, []string{`"Deliver_PRD"`}},
		{"orchestrator", chain("deliver-prd", "utility-pm-workflow-orchestrator"), RefuseSelfReference, []string{"utility-pm-workflow-orchestrator"}},
		{"plan producer", chain("foundation-prioritized-action-plan"), RefuseSelfReference, []string{"plan producer"}},
		{"maintenance skill", chain("utility-update-pm-skills", "deliver-prd"), RefuseRefusedSkill, []string{"utility-update-pm-skills", "maintenance"}},
		{"only a workflow", chain("workflow-feature-kickoff"), RefuseRefusedSkill, []string{"whole workflow"}},
		{"a workflow among skills", chain("deliver-prd", "workflow-feature-kickoff"), RefuseRefusedSkill, []string{"`workflow-feature-kickoff` is a whole workflow"}},
		{"dispatch without its leaf is not runnable", chain("utility-pm-critic"), RefuseBrokenSkill, []string{"`utility-pm-critic` runs its leaf agent `pm-critic`, which is not installed"}},
		{"dispatch without its leaf among skills", chain("deliver-prd", "utility-pm-critic"), RefuseBrokenSkill, []string{"`utility-pm-critic`", "`pm-critic`"}},
		{"broken skill", chain("deliver-prd", "broken-skill"), RefuseBrokenSkill,
			[]string{"`broken-skill` cannot be used: skills/broken-skill/SKILL.md:1: the front matter opened with \"---\" is never closed"}},
		{"broken and unknown", chain("broken-skill", "deliver-prdd"), RefuseUnknownSkill, []string{"`deliver-prdd`"}},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			cat := testCatalog(!strings.HasPrefix(tt.name, "dispatch without its leaf"))
			_, err := PreflightChain(tt.c, cat, DefaultPolicy())
			r := refusalOf(t, err)
			if r.Reason != tt.reason {
				t.Fatalf("refusal %s (%v), want %s", r.Reason, err, tt.reason)
			}
			for _, m := range tt.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("refusal %q does not say %q", err, m)
				}
			}
		})
	}
	t.Run("one unknown name refuses the whole chain", func(t *testing.T) {
		_, err := PreflightChain(chain("prd", "deliver-user-stories"), testCatalog(true), DefaultPolicy())
		r := refusalOf(t, err)
		if r.Reason != RefuseUnknownSkill {
			t.Fatalf("refusal %s, want unknown-skill", r.Reason)
		}
		if s := r.Suggestions["prd"]; len(s) == 0 || s[0] != "deliver-prd" {
			t.Fatalf("suggestions for prd = %q, want deliver-prd first", s)
		}
		if len(r.Suggestions) != 1 {
			t.Fatalf("suggestions %v name installed skills too", r.Suggestions)
		}
		for _, m := range []string{"unknown skill `prd`", "did you mean `deliver-prd`"} {
			if !strings.Contains(r.Message, m) {
				t.Errorf("message %q does not say %q", r.Message, m)
			}
		}
	})
	t.Run("every unknown name is reported", func(t *testing.T) {
		_, err := PreflightChain(chain("prd", "deliver-prd", "user-stories", "zzzz", "prd"), testCatalog(true), DefaultPolicy())
		r := refusalOf(t, err)
		if r.Reason != RefuseUnknownSkill {
			t.Fatalf("refusal %s, want unknown-skill", r.Reason)
		}
		for _, n := range []string{"prd", "user-stories", "zzzz"} {
			if _, ok := r.Suggestions[n]; !ok {
				t.Errorf("unknown %q missing from the suggestions %v", n, r.Suggestions)
			}
			if !strings.Contains(r.Message, "`"+n+"`") {
				t.Errorf("message %q does not name %q", r.Message, n)
			}
		}
		if s := r.Suggestions["user-stories"]; len(s) == 0 || s[0] != "deliver-user-stories" {
			t.Errorf("suggestions for user-stories = %q", s)
		}
		if len(r.Suggestions["zzzz"]) != 0 {
			t.Errorf("zzzz got suggestions %q", r.Suggestions["zzzz"])
		}
		if strings.Count(r.Message, "`prd`") != 1 || !strings.HasPrefix(r.Message, "unknown skills ") {
			t.Errorf("message %q: want each unknown name once, in the plural", r.Message)
		}
	})
	t.Run("long chain warns", func(t *testing.T) {
		p, err := PreflightChain(chain("deliver-prd", "deliver-user-stories", "define-problem-statement", "measure-experiment-design"), testCatalog(true), DefaultPolicy())
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "4 steps") {
			t.Fatalf("warnings = %q, want one about 4 steps", p.Warnings)
		}
	})
	t.Run("no context warns", func(t *testing.T) {
		c := chain("deliver-prd")
		c.Context = "  "
		p, err := PreflightChain(c, testCatalog(true), DefaultPolicy())
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "no shared context") {
			t.Fatalf("warnings = %q, want one about the missing context", p.Warnings)
		}
	})
	t.Run("auto is ignored on a chain", func(t *testing.T) {
		c := chain("deliver-prd")
		c.Flags.Auto = true
		p, err := PreflightChain(c, testCatalog(true), DefaultPolicy())
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "--auto ignored") {
			t.Fatalf("warnings = %q, want --auto ignored", p.Warnings)
		}
		c.Flags.ForceAuto = true
		if p, _ = PreflightChain(c, testCatalog(true), DefaultPolicy()); len(p.Warnings) != 0 {
			t.Fatalf("warnings with --force-auto = %q", p.Warnings)
		}
	})
}

func TestPreflightChainForgottenArrow(t *testing.T) {
	tests := []struct {
		name string
		c    ChainExpr
		want string // a fragment of the one warning, or "" for none
	}{
		{"one name", ChainExpr{Names: []string{"deliver-prd"}, Context: "deliver-user-stories -- mobile checkout"},
			"did you mean `deliver-prd -> deliver-user-stories`?"},
		{"two names, quoted and with a comma", ChainExpr{Names: []string{"deliver-prd"}, Context: "`deliver-user-stories`, measure-experiment-design for checkout"},
			"did you mean `deliver-prd -> deliver-user-stories -> measure-experiment-design`?"},
		{"a broken skill is installed too", ChainExpr{Names: []string{"deliver-prd"}, Context: "broken-skill x"},
			"did you mean `deliver-prd -> broken-skill`?"},
		{"plain context", ChainExpr{Names: []string{"deliver-prd"}, Context: "mobile checkout deliver-user-stories"}, ""},
		{"not installed", ChainExpr{Names: []string{"deliver-prd"}, Context: "deliver-user-storiez for checkout"}, ""},
		{"after a lone --", ChainExpr{Names: []string{"deliver-prd"}, Context: "deliver-user-stories are next", ExplicitContext: true}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.c.Source = "expr"
			tt.c.Flags.ForceAuto = true // no mode warning
			p, err := PreflightChain(tt.c, testCatalog(true), DefaultPolicy())
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Steps) != len(tt.c.Names) || p.Context != tt.c.Context {
				t.Fatalf("the chain changed: steps %+v, context %q", p.Steps, p.Context)
			}
			switch {
			case tt.want == "" && len(p.Warnings) != 0:
				t.Errorf("unexpected warnings %q", p.Warnings)
			case tt.want != "" && (len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], tt.want)):
				t.Errorf("warnings = %q, want one saying %q", p.Warnings, tt.want)
			}
		})
	}
}

// The warnings of the skills a run uses come with the plan, each once.
func TestPreflightSkillWarnings(t *testing.T) {
	cat := testCatalog(true)
	prd := cat.skills["deliver-prd"]
	prd.Warnings = []string{"skills/deliver-prd/SKILL.md:3: read leniently"}
	cat.skills["deliver-prd"] = prd
	c := ChainExpr{Source: "x", Names: []string{"deliver-prd", "deliver-user-stories", "deliver-prd"}, Context: "ctx", Flags: Flags{ForceAuto: true}}
	p, err := PreflightChain(c, cat, DefaultPolicy())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Warnings, prd.Warnings) {
		t.Errorf("chain warnings = %q, want the skill's, once", p.Warnings)
	}
	pp, err := PreflightPlan(planDoc(blk(50, "deliver-user-stories"), blk(60, "deliver-prd")), cat, DefaultPolicy(), Flags{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pp.Warnings, prd.Warnings[0]) {
		t.Errorf("plan warnings = %q, want the skill's", pp.Warnings)
	}
	wp, err := PreflightWorkflow(wflow(WorkflowStep{ID: "a", Skill: "deliver-prd", Line: 2}), nil, "", Flags{ForceAuto: true}, cat, DefaultPolicy())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(wp.Warnings, prd.Warnings[0]) {
		t.Errorf("workflow warnings = %q, want the skill's", wp.Warnings)
	}
}

func TestPreflightPlanBrokenSkill(t *testing.T) {
	p, err := PreflightPlan(planDoc(blk(50, "deliver-prd"), blk(60, "broken-skill")), testCatalog(true), DefaultPolicy(), Flags{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Steps) != 1 || len(p.Manual) != 1 {
		t.Fatalf("steps %+v manual %+v", p.Steps, p.Manual)
	}
	m := p.Manual[0]
	if m.Skill != "broken-skill" || !strings.Contains(m.Reason, "skills/broken-skill/SKILL.md:1: the front matter") {
		t.Errorf("manual block %+v, want broken-skill with the file and problem as its reason", m)
	}
}

func TestSuggest(t *testing.T) {
	names := testCatalog(false).Names()
	tests := []struct {
		name  string
		first string // "" for no suggestion
	}{
		{"prd", "deliver-prd"},
		{"delivr-prd", "deliver-prd"},
		{"deliver-prdd", "deliver-prd"},
		{"deliver-user-story", "deliver-user-stories"},
		{"user-stories", "deliver-user-stories"},
		{"interview", "discover-interview-synthesis"},
		{"critic", "utility-pm-critic"},
		{"problem-statement", "define-problem-statement"},
		{"xyz", ""},
		{"ab", ""},
		{"kubernetes-operator", ""},
	}
	for _, tt := range tests {
		got := Suggest(tt.name, names)
		switch {
		case tt.first == "" && len(got) != 0:
			t.Errorf("Suggest(%q) = %q, want nothing", tt.name, got)
		case tt.first != "" && (len(got) == 0 || got[0] != tt.first):
			t.Errorf("Suggest(%q) = %q, want %q first", tt.name, got, tt.first)
		case len(got) > 3:
			t.Errorf("Suggest(%q) = %q, want at most 3", tt.name, got)
		}
	}
	if got := Suggest("deliver", names); len(got) > 3 || len(got) < 2 {
		t.Errorf("Suggest(deliver) = %q, want the deliver-* names, at most 3", got)
	}
	if got := Suggest("prd", nil); got != nil {
		t.Errorf("Suggest with no installed skill = %q", got)
	}
}

func TestClassify(t *testing.T) {
	pol := DefaultPolicy()
	tests := []struct {
		name  string
		class SkillClass
		leaf  string
	}{
		{"deliver-prd", ClassContent, ""},
		{"utility-pm-critic", ClassDispatch, "pm-critic"},
		{"workflow-anything", ClassComposite, ""},
		{"utility-pm-skill-validate", ClassRefused, ""},
		{"utility-pm-workflow-orchestrator", ClassSelf, ""},
		{"foundation-prioritized-action-plan", ClassSelf, ""},
	}
	for _, tt := range tests {
		class, leaf, reason := pol.Classify(tt.name)
		if class != tt.class || leaf != tt.leaf {
			t.Errorf("Classify(%s) = %v %q, want %v %q", tt.name, class, leaf, tt.class, tt.leaf)
		}
		if (class == ClassRefused || class == ClassSelf || class == ClassComposite) && reason == "" {
			t.Errorf("Classify(%s) gives no reason", tt.name)
		}
	}
	for _, n := range []string{"", "A", "-x", "x_y", "../etc", "a b", strings.Repeat("a", 129)} {
		if ValidSkillName(n) {
			t.Errorf("ValidSkillName(%q) = true", n)
		}
	}
	for _, n := range []string{"a", "9-lives", "deliver-prd"} {
		if !ValidSkillName(n) {
			t.Errorf("ValidSkillName(%q) = false", n)
		}
	}
}
