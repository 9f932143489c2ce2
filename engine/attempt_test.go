package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// wfPlan is a workflow of steps, checked against the test catalog.
func wfPlan(t *testing.T, flags Flags, steps ...WorkflowStep) Plan {
	t.Helper()
	p, err := PreflightWorkflow(WorkflowSpec{Name: "attempt-flow", Steps: steps}, nil, "", flags, testCatalog(true), DefaultPolicy())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// astep is a workflow step of skill.
func astep(id, skill string, deps ...string) WorkflowStep {
	return WorkflowStep{ID: id, Skill: skill, DependsOn: deps, Line: 1}
}

// threadChain is a threaded chain of the named skills.
func threadChain(skills ...string) Plan {
	p := testPlan(InputChain, skills...)
	p.Flags.Thread = true
	return p
}

func TestPlanAttemptReads(t *testing.T) {
	cat := testCatalog(true)
	refs := astep("c", "deliver-prd", "a", "b")
	refs.Prompt = "A: {{steps.a.output}} B: {{steps.b.output}} again {{steps.a.output}} in {{run.id}}"
	refPlan := wfPlan(t, Flags{}, astep("a", "deliver-prd"), astep("b", "deliver-user-stories"), refs)
	// Pre-flight refuses a reference to no step; one left as written reads nothing.
	refPlan.Steps[2].Prompt += " Z: {{steps.zz.output}}"
	pre := astep("p", "deliver-prd")
	pre.Pre = []Condition{{Kind: CondFileExists, Path: "docs/brief.md"}}
	tests := []struct {
		name     string
		plan     Plan
		dry      bool
		moves    func(s *script)
		step     int
		reads    []ArtifactRef
		checkPre bool
	}{
		{name: "the first step of a thread reads nothing", plan: threadChain("deliver-prd", "deliver-user-stories"),
			moves: func(s *script) { s.start(1) }, step: 1},
		{name: "a threaded step reads the confirmed artifact before it", plan: threadChain("deliver-prd", "deliver-user-stories"),
			moves: func(s *script) { s.start(1); s.finish(1, ResultProduced); s.decide(1, DecideApprove, ""); s.start(2) },
			step:  2, reads: []ArtifactRef{{1, 1}}},
		{name: "past a skipped step", plan: threadChain("deliver-prd", "deliver-user-stories", "define-problem-statement"),
			moves: func(s *script) {
				s.start(1)
				s.finish(1, ResultProduced)
				s.decide(1, DecideApprove, "")
				s.start(2)
				s.finish(2, ResultProduced)
				s.decide(2, DecideSkip, "")
				s.start(3)
			},
			step: 3, reads: []ArtifactRef{{1, 1}}},
		{name: "a redo with feedback reads the attempt it redoes", plan: testPlan(InputChain, "deliver-prd"),
			moves: func(s *script) {
				s.start(1)
				s.finish(1, ResultProduced)
				s.decide(1, DecideRedo, "shorter")
				s.start(1)
			},
			step: 1, reads: []ArtifactRef{{1, 1}}},
		{name: "a redo without feedback reads nothing", plan: testPlan(InputChain, "deliver-prd"),
			moves: func(s *script) { s.start(1); s.finish(1, ResultProduced); s.decide(1, DecideRedo, ""); s.start(1) },
			step:  1},
		{name: "references read confirmed outputs once, not skipped or unknown steps",
			plan: refPlan,
			moves: func(s *script) {
				s.start(1)
				s.finish(1, ResultProduced)
				s.decide(1, DecideApprove, "")
				s.start(2)
				s.finish(2, ResultProduced)
				s.decide(2, DecideSkip, "")
				s.start(3)
			},
			step: 3, reads: []ArtifactRef{{1, 1}}},
		{name: "preconditions are checked", plan: wfPlan(t, Flags{}, pre),
			moves: func(s *script) { s.start(1) }, step: 1, checkPre: true},
		{name: "a dry run reads and checks nothing", plan: wfPlan(t, Flags{}, pre), dry: true,
			moves: func(s *script) { s.start(1) }, step: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.plan.Flags.DryRun = tt.dry
			s := newScript(t, tt.plan, StartOptions{})
			tt.moves(s)
			p, err := PlanAttempt(s.r, s.step(tt.step), cat, DefaultPolicy())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p.Reads, tt.reads) {
				t.Errorf("reads %v, want %v", p.Reads, tt.reads)
			}
			if p.CheckPre != tt.checkPre {
				t.Errorf("check preconditions %v, want %v", p.CheckPre, tt.checkPre)
			}
			l := s.step(tt.step).Latest()
			if p.Job.Run != s.r.ID || p.Job.Step != tt.step || p.Job.Attempt != l.N || p.Job.DryRun != tt.dry {
				t.Errorf("job %+v", p.Job)
			}
		})
	}
}

func TestPlanAttemptFallback(t *testing.T) {
	flaky := astep("f", "deliver-prd")
	flaky.Fallback, flaky.Timeout, flaky.Options = "deliver-user-stories", time.Minute, map[string]string{"model": "opus"}
	s := newScript(t, wfPlan(t, Flags{}, flaky), StartOptions{})
	s.start(1)
	s.finish(1, ResultFailed) // the step falls back
	s.start(1)
	st := s.step(1)
	if got := AttemptSkill(st, st.Latest()); got != "deliver-user-stories" {
		t.Fatalf("the second attempt runs %q", got)
	}
	p, err := PlanAttempt(s.r, st, testCatalog(true), DefaultPolicy())
	if err != nil {
		t.Fatal(err)
	}
	if p.Step.Skill != "deliver-user-stories" || p.Job.Skill != "deliver-user-stories" || st.Skill != "deliver-prd" {
		t.Errorf("the fallback runs as %q (job %q); the run's step became %q", p.Step.Skill, p.Job.Skill, st.Skill)
	}
	if p.Job.Timeout != time.Minute || p.Job.Options["model"] != "opus" {
		t.Errorf("job %+v", p.Job)
	}
	cat := testCatalog(true)
	delete(cat.skills, "deliver-user-stories")
	p, err = PlanAttempt(s.r, st, cat, DefaultPolicy())
	if err == nil || !strings.HasPrefix(err.Error(), "the fallback: ") || p.Job.Skill != "deliver-prd" {
		t.Errorf("a fallback that is not installed: %v, job skill %q", err, p.Job.Skill)
	}
}

func TestComposeJob(t *testing.T) {
	now := time.Date(2031, 5, 6, 23, 30, 0, 0, time.FixedZone("X", -3*3600))
	refs := astep("c", "deliver-prd", "a", "b")
	refs.Prompt = "A: {{steps.a.output}} B: {{steps.b.output}}"
	refPlan := wfPlan(t, Flags{}, astep("a", "deliver-prd"), astep("b", "deliver-user-stories"), refs)
	refPlan.Steps[2].Prompt += " Z: {{steps.zz.output}} in {{run.id}} on {{today}}"
	refRun := newScript(t, refPlan, StartOptions{})
	refRun.start(1)
	refRun.finish(1, ResultProduced)
	refRun.decide(1, DecideApprove, "")
	refRun.start(2)
	refRun.finish(2, ResultProduced)
	refRun.decide(2, DecideSkip, "")
	refRun.start(3)

	thread := newScript(t, threadChain("deliver-prd", "utility-pm-critic"), StartOptions{})
	thread.r.Plan.Steps[1].Category, thread.r.Plan.Steps[1].Execution, thread.r.Plan.Steps[1].Leaf = CategoryDispatch, ExecInlineLeaf, "pm-critic"
	thread.start(1)
	thread.finish(1, ResultProduced)
	thread.decide(1, DecideApprove, "")
	thread.start(2)
	thread.step(2).Leaf = "pm-critic"

	unconfirmed := newScript(t, threadChain("deliver-prd", "deliver-user-stories"), StartOptions{})
	unconfirmed.start(1)
	unconfirmed.finish(1, ResultProduced)
	unconfirmed.decide(1, DecideApprove, "")
	unconfirmed.start(2)
	unconfirmed.r.Steps[0].Status = StepWaiting // as if step 1 were redone meanwhile

	redo := newScript(t, testPlan(InputChain, "deliver-prd"), StartOptions{})
	redo.start(1)
	redo.finish(1, ResultProduced)
	redo.decide(1, DecideRedo, "make it shorter")
	redo.start(1)

	pre := astep("p", "deliver-prd")
	pre.Pre = []Condition{{Kind: CondFileExists, Path: "docs/brief.md"}}
	withPre := newScript(t, wfPlan(t, Flags{}, pre), StartOptions{})
	withPre.start(1)

	cat := testCatalog(true)
	noSkills := &memCatalog{skills: map[string]Skill{}, agents: map[string]string{}}
	noLeaf := testCatalog(false)
	boom := errors.New("disk on fire")
	tests := []struct {
		name   string
		s      *script
		step   int
		read   map[ArtifactRef]ArtifactRead
		pre    error
		cat    Catalog
		has    []string
		hasNot []string
		err    string
	}{
		{name: "references are filled in from what was read", s: refRun, step: 3,
			read: map[ArtifactRef]ArtifactRead{{1, 1}: {Body: []byte("\n the PRD \n")}}, cat: cat,
			has:    []string{"A: the PRD B:  Z: {{steps.zz.output}} in run-1 on 2031-05-07"},
			hasNot: []string{"## Input"}},
		{name: "a reference that could not be read fails", s: refRun, step: 3,
			read: map[ArtifactRef]ArtifactRead{{1, 1}: {Err: boom}}, cat: cat,
			err: `read the output of step "a" for {{steps.a.output}}: disk on fire`},
		{name: "a reference not read at all fails", s: refRun, step: 3, cat: cat,
			err: `read the output of step "a" for {{steps.a.output}}`},
		{name: "a failed precondition fails before a missing skill", s: withPre, step: 1, cat: noSkills,
			pre: errors.New("file docs/brief.md does not exist"), err: "precondition failed: file docs/brief.md does not exist"},
		{name: "a skill no longer installed", s: withPre, step: 1, cat: noSkills,
			err: "skill `deliver-prd` is no longer installed"},
		{name: "the threaded artifact and the leaf agent are inlined", s: thread, step: 2, cat: cat,
			read: map[ArtifactRef]ArtifactRead{{1, 1}: {Body: []byte("# PRD\n\nSaved carts.\n")}},
			has:  []string{"## Input: the confirmed artifact of step 1 (`deliver-prd`)\n\n# PRD\n\nSaved carts.\n", "You are pm-critic."}},
		{name: "a leaf agent not installed", s: thread, step: 2, cat: noLeaf,
			err: "leaf agent `pm-critic` of `utility-pm-critic` is not installed"},
		{name: "a thread artifact that could not be read", s: thread, step: 2, cat: cat,
			read: map[ArtifactRef]ArtifactRead{{1, 1}: {Err: boom}}, err: "read the artifact of step 1: disk on fire"},
		{name: "a thread source with no confirmed artifact", s: unconfirmed, step: 2, cat: cat,
			err: "step 2 (deliver-user-stories) takes the artifact of step 1 (deliver-prd), which has no confirmed artifact; redo step 2 or abort"},
		{name: "a redo shows the previous attempt with the feedback", s: redo, step: 1, cat: cat,
			read: map[ArtifactRef]ArtifactRead{{1, 1}: {Body: []byte("the long PRD")}},
			has:  []string{"## Your previous attempt\n\nthe long PRD\n", "## Reviewer feedback on the previous attempt\n\nmake it shorter\n"}},
		{name: "a previous attempt that could not be read leaves the feedback", s: redo, step: 1, cat: cat,
			read:   map[ArtifactRef]ArtifactRead{{1, 1}: {Err: boom}},
			has:    []string{"## Reviewer feedback on the previous attempt\n\nmake it shorter\n"},
			hasNot: []string{"## Your previous attempt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := tt.s.step(tt.step)
			p, err := PlanAttempt(tt.s.r, st, cat, DefaultPolicy())
			if err != nil {
				t.Fatal(err)
			}
			job, err := ComposeJob(p, tt.read, tt.pre, tt.cat, now)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, want %q", err, tt.err)
				}
				if job.Skill != st.Skill || job.Prompt != "" {
					t.Errorf("a failed composition gives job %+v", job)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range tt.has {
				if !strings.Contains(job.Prompt, h) {
					t.Errorf("prompt lacks %q:\n%s", h, job.Prompt)
				}
			}
			for _, h := range tt.hasNot {
				if strings.Contains(job.Prompt, h) {
					t.Errorf("prompt has %q:\n%s", h, job.Prompt)
				}
			}
			if job.SkillDir == "" {
				t.Error("the job does not know its skill's folder")
			}
		})
	}
}

func TestJudgeAttempt(t *testing.T) {
	cancelled := errors.New("cancelled by U-bo")
	limit := RateLimit{Wait: time.Second, Tries: 3}
	tests := []struct {
		name      string
		e         AttemptEnd
		result    Result
		reason    string
		cancelled bool
	}{
		{name: "produced", e: AttemptEnd{Outcome: Outcome{Artifact: []byte("# PRD\n\nDone."), CostUSD: 0.5}}, result: ResultProduced},
		{name: "a person's cancel is the reason", e: AttemptEnd{Outcome: Outcome{Err: errors.New("context canceled")}, Cancel: cancelled},
			result: ResultFailed, reason: "cancelled by U-bo", cancelled: true},
		{name: "a cancel after the agent finished changes nothing", e: AttemptEnd{Outcome: Outcome{Artifact: []byte("# PRD\n\nDone.")}, Cancel: cancelled},
			result: ResultProduced},
		{name: "a rate limit keeps its kind", e: AttemptEnd{Outcome: Outcome{AgentError: "rate limited", AgentErrorKind: AgentErrRateLimit}},
			result: ResultFailed, reason: "the agent reported an error: rate limited"},
		{name: "dry run", e: AttemptEnd{Outcome: Outcome{NotRun: true}}, result: ResultNotExecuted, reason: "NOT EXECUTED - dry run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.e.RateLimit = limit
			f := JudgeAttempt(tt.e)
			if f.Result != tt.result || !strings.Contains(f.Reason, tt.reason) || f.Cancelled != tt.cancelled {
				t.Fatalf("got %s %q cancelled %v", f.Result, f.Reason, f.Cancelled)
			}
			if f.CostUSD != tt.e.Outcome.CostUSD || f.ErrorKind != tt.e.Outcome.AgentErrorKind || f.RateLimit != limit {
				t.Fatalf("finished %+v", f)
			}
		})
	}
}

func TestPostconditionsDue(t *testing.T) {
	post := astep("q", "deliver-prd")
	post.Post = []Condition{{Kind: CondOutputContains, Text: "x"}}
	r := newScript(t, wfPlan(t, Flags{}, post, astep("n", "deliver-user-stories")), StartOptions{}).r
	for _, tt := range []struct {
		step int
		res  Result
		want bool
	}{{1, ResultProduced, true}, {1, ResultEmpty, false}, {1, ResultFailed, false}, {2, ResultProduced, false}} {
		if got := PostconditionsDue(r.Step(tt.step), Finished{Result: tt.res}); got != tt.want {
			t.Errorf("step %d %s: %v, want %v", tt.step, tt.res, got, tt.want)
		}
	}
}

func TestSettleAttempt(t *testing.T) {
	body := []byte("# PRD\n\nSaved carts for returning shoppers.\n")
	two := newScript(t, testPlan(InputChain, "deliver-prd", "deliver-user-stories"), StartOptions{})
	two.start(1)
	one := newScript(t, testPlan(InputChain, "deliver-prd"), StartOptions{})
	one.start(1)
	// A redo whose first attempt's file sits at the step's name.
	again := newScript(t, testPlan(InputChain, "deliver-prd", "deliver-user-stories"), StartOptions{})
	again.start(1)
	again.finish(1, ResultProduced)
	again.decide(1, DecideRedo, "")
	again.start(1)
	split := astep("s", "deliver-prd")
	split.Decompose = "deliver-user-stories"
	dec := newScript(t, wfPlan(t, Flags{}, split, astep("n", "define-problem-statement", "s")), StartOptions{})
	dec.start(1)
	x := Expander{Catalog: testCatalog(true), Policy: DefaultPolicy()}

	latest := "runs/run-1/01-deliver-prd.md"
	tests := []struct {
		name    string
		s       *script
		attempt int
		out     []byte
		f       Finished
		post    error
		result  Result
		reason  string
		files   []FileWrite
		kept    bool
		added   int
	}{
		{name: "produced output is the step's artifact file", s: two, attempt: 1, out: body, f: Finished{Result: ResultProduced},
			result: ResultProduced, files: []FileWrite{{Path: latest, Body: body}}, kept: true},
		{name: "a run of one step writes no file", s: one, attempt: 1, out: body, f: Finished{Result: ResultProduced},
			result: ResultProduced, kept: true},
		{name: "failed postconditions keep the output under the attempt's name", s: two, attempt: 1, out: body,
			f: Finished{Result: ResultProduced}, post: errors.New(`the output does not contain "Acceptance"`),
			result: ResultFailed, reason: `postcondition failed: the output does not contain "Acceptance"`,
			files: []FileWrite{{Path: "runs/run-1/01-deliver-prd.attempt-1.md", Body: body}}, kept: true},
		{name: "a failed attempt keeps nothing", s: two, attempt: 1, out: body, f: Finished{Result: ResultFailed, Reason: "exit 1"},
			result: ResultFailed, reason: "exit 1"},
		{name: "an empty stub is kept", s: two, attempt: 1, out: []byte("## Goals\n\n[the goals]\n"), f: Finished{Result: ResultEmpty},
			result: ResultEmpty, files: []FileWrite{{Path: latest, Body: []byte("## Goals\n\n[the goals]\n")}}, kept: true},
		{name: "nothing at all is not kept", s: two, attempt: 1, out: []byte(" \n"), f: Finished{Result: ResultEmpty}, result: ResultEmpty},
		{name: "a redo's artifact makes way for itself", s: again, attempt: 2, out: body, f: Finished{Result: ResultProduced},
			result: ResultProduced, kept: true, files: []FileWrite{
				{From: latest, Path: "runs/run-1/01-deliver-prd.attempt-1.md"}, {Path: latest, Body: body}}},
		{name: "a decompose step's tasks are added", s: dec, attempt: 1, out: []byte(`{"tasks": [{"name": "one"}, {"name": "two"}]}`),
			f: Finished{Result: ResultProduced}, result: ResultProduced, kept: true, added: 2,
			files: []FileWrite{{Path: "runs/run-1/01-deliver-prd.md", Body: []byte(`{"tasks": [{"name": "one"}, {"name": "two"}]}`)}}},
		{name: "output a decompose step cannot expand fails it", s: dec, attempt: 1, out: body,
			f: Finished{Result: ResultProduced}, result: ResultFailed, reason: "decompose", kept: true,
			files: []FileWrite{{Path: "runs/run-1/01-deliver-prd.attempt-1.md", Body: body}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := AttemptEnd{Run: tt.s.r, Step: 1, Attempt: tt.attempt, Outcome: Outcome{Artifact: tt.out}}
			f, arts, files := SettleAttempt(e, tt.f, tt.post, x)
			if f.Result != tt.result || !strings.Contains(f.Reason, tt.reason) {
				t.Fatalf("got %s %q, want %s %q", f.Result, f.Reason, tt.result, tt.reason)
			}
			if len(f.Added) != tt.added {
				t.Errorf("added %d steps, want %d", len(f.Added), tt.added)
			}
			if got := fmt.Sprint(files); got != fmt.Sprint(tt.files) {
				t.Errorf("files %s, want %s", got, fmt.Sprint(tt.files))
			}
			want := []ArtifactWrite(nil)
			if tt.kept {
				want = []ArtifactWrite{{Step: 1, Attempt: tt.attempt, Body: tt.out}}
				if !f.Artifact || f.Size != len(tt.out) || f.Summary == "" {
					t.Errorf("finished %+v does not describe the kept output", f)
				}
			}
			if fmt.Sprint(arts) != fmt.Sprint(want) {
				t.Errorf("artifacts %v, want %v", arts, want)
			}
			if wantFile := ""; len(tt.files) > 0 {
				wantFile = tt.files[len(tt.files)-1].Path
				if f.File != wantFile {
					t.Errorf("file %q, want %q", f.File, wantFile)
				}
			}
		})
	}
}
