package engine

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The rules of one attempt, apart from the I/O that feeds them, so that
// every backend prepares and judges an attempt the same way. A backend:
//
//  1. plans the attempt (PlanAttempt): the skill it runs and what it reads;
//  2. reads the artifacts the plan names from its store and, when the plan
//     says so, checks the preconditions (CheckConditions with its Probe);
//  3. composes the job from what it read (ComposeJob) and runs it on a
//     Runner, unless composing failed the attempt;
//  4. judges the outcome (JudgeAttempt), checks the postconditions when
//     PostconditionsDue says so, and settles the verdict (SettleAttempt):
//     the Finished to record with Finish, and the artifacts and files to
//     commit with it.

// ArtifactRef names one attempt's artifact in a run.
type ArtifactRef struct {
	Step    int
	Attempt int
}

// ArtifactRead is one artifact as a backend read it from its store.
type ArtifactRead struct {
	Body []byte
	Err  error
}

// AttemptPlan is what the latest attempt of a step needs before its prompt
// can be composed.
type AttemptPlan struct {
	Run *Run
	// Step is the step as the attempt runs it: with its fallback's skill,
	// category and leaf when the attempt falls back.
	Step *Step
	// Job is the runner's job without Prompt and SkillDir.
	Job Job
	// Reads are the artifacts composing the prompt reads, each once: the
	// outputs {{steps.ID.output}} references name, the artifact threading
	// hands on, and the redone attempt's, when the reviewer gave feedback.
	Reads []ArtifactRef
	// CheckPre says the step's preconditions are checked before the job
	// is composed (not in a dry run).
	CheckPre bool
}

// PlanAttempt plans the latest attempt of st in r: the skill it runs (the
// fallback's, once the step falls back, resolved against cat and pol) and
// what must be read and checked before its prompt is composed. An error
// (a fallback that cannot be used) fails the attempt without running
// anything; the plan's Job is still the one to judge it with.
func PlanAttempt(r *Run, st *Step, cat Catalog, pol Policy) (AttemptPlan, error) {
	l := st.Latest()
	p := AttemptPlan{Run: r, Step: st, Job: Job{Run: r.ID, Step: st.N, Attempt: l.N, Skill: st.Skill, DryRun: r.DryRun,
		Timeout: st.Rules.Timeout, Options: st.Rules.Options}}
	if skill := AttemptSkill(st, l); skill != st.Skill {
		fb, err := asFallback(r, st, skill, cat, pol)
		if err != nil {
			return p, err
		}
		p.Step, p.Job.Skill = fb, skill
	}
	st = p.Step
	p.Reads = promptReads(r, st.Prompt)
	p.CheckPre = len(st.Rules.Pre) > 0 && !r.DryRun
	if ref, ok := threadRead(r, st); ok {
		p.Reads = appendRead(p.Reads, ref)
	}
	if prev, ok := previousAttempt(st, l); ok {
		p.Reads = appendRead(p.Reads, prev)
	}
	return p, nil
}

// threadRead is the artifact threading hands st, when it is handed one;
// a dry run has no artifact to hand on.
func threadRead(r *Run, st *Step) (ArtifactRef, bool) {
	if st.ThreadFrom == 0 || r.DryRun {
		return ArtifactRef{}, false
	}
	if _, from, err := threadOf(r, st); err == nil && from != nil {
		return ArtifactRef{from.N, from.Latest().N}, true
	}
	return ArtifactRef{}, false
}

// asFallback is st as its fallback skill runs it: as the step, with its
// own instructions, category and leaf agent. A fallback that cannot be
// used is an error, except in a dry run.
func asFallback(r *Run, st *Step, skill string, cat Catalog, pol Policy) (*Step, error) {
	ps, why, _ := resolve(skill, cat, pol)
	if why != "" && !r.DryRun {
		return nil, fmt.Errorf("the fallback: %s", why)
	}
	c, d := *st, *st.StepDef
	d.Skill, d.Category, d.Execution, d.Leaf = skill, ps.Category, ps.Execution, ps.Leaf
	c.StepDef = &d
	return &c, nil
}

// promptReads are the confirmed outputs the {{steps.ID.output}}
// references of prompt read in r, each once, in the order written.
func promptReads(r *Run, prompt string) []ArtifactRef {
	if !strings.Contains(prompt, "{{") {
		return nil
	}
	var reads []ArtifactRef
	refs, _ := promptRefs(prompt)
	for _, ref := range refs {
		if _, src, has := refSource(r, ref.name); has {
			reads = appendRead(reads, src)
		}
	}
	return reads
}

// appendRead adds ref to reads unless it is there already: each artifact
// is read once, however often the prompt names it.
func appendRead(reads []ArtifactRef, ref ArtifactRef) []ArtifactRef {
	if slices.Contains(reads, ref) {
		return reads
	}
	return append(reads, ref)
}

// ComposeJob composes the job of a planned attempt from what the backend
// read: the artifacts of p.Reads (one missing from read counts as
// unreadable), the verdict of the preconditions when p.CheckPre (pre, from
// CheckConditions; nil when they hold), the skill and leaf agent from cat,
// and now for {{today}}. An error fails the attempt without running the
// agent; the returned Job is still the one to judge it with.
func ComposeJob(p AttemptPlan, read map[ArtifactRef]ArtifactRead, pre error, cat Catalog, now time.Time) (Job, error) {
	r, job := p.Run, p.Job
	st, err := interpolated(r, p.Step, read, now)
	if err != nil {
		return job, err
	}
	if pre != nil {
		return job, fmt.Errorf("precondition failed: %w", pre)
	}
	in := PromptInput{Run: r, Step: st, Feedback: st.Latest().Feedback}
	sk, err := cat.Skill(st.Skill)
	if err != nil && !r.DryRun {
		return job, fmt.Errorf("skill `%s` is no longer installed: %w", st.Skill, err)
	}
	in.Skill, job.SkillDir = sk, SkillDir(sk)
	if err := readInputs(&in, r, st, read, cat); err != nil {
		return job, err
	}
	job.Prompt = ComposePrompt(in)
	return job, nil
}

// interpolated is st with the references its prompt keeps until it runs
// filled in (see interpolate); st itself when its prompt has none.
func interpolated(r *Run, st *Step, read map[ArtifactRef]ArtifactRead, now time.Time) (*Step, error) {
	if !strings.Contains(st.Prompt, "{{") {
		return st, nil
	}
	prompt, err := interpolate(r, st.Prompt, read, now)
	if err != nil {
		return nil, err
	}
	c, d := *st, *st.StepDef
	d.Prompt = prompt
	c.StepDef = &d
	return &c, nil
}

// readInputs completes in for step st with what the agent is shown
// besides its skill: the leaf agent a dispatch skill runs, the artifact
// threading hands on, and the artifact of the attempt a redo's feedback
// is about.
func readInputs(in *PromptInput, r *Run, st *Step, read map[ArtifactRef]ArtifactRead, cat Catalog) error {
	var err error
	if in.Leaf, err = leafAgent(r, st, cat); err != nil {
		return err
	}
	if st.ThreadFrom > 0 && !r.DryRun {
		if in.Step, in.Threaded, err = threaded(r, st, read); err != nil {
			return err
		}
	}
	if prev, ok := previousAttempt(st, st.Latest()); ok {
		// Without it the feedback still reaches the agent.
		in.Previous = lookup(read, prev).Body
	}
	return nil
}

// leafAgent is the instructions of the leaf agent a dispatch step st
// inlines; "" for any other step, and in a dry run.
func leafAgent(r *Run, st *Step, cat Catalog) (string, error) {
	if st.Leaf == "" || r.DryRun {
		return "", nil
	}
	leaf, err := cat.Agent(st.Leaf)
	if err != nil {
		return "", fmt.Errorf("leaf agent `%s` of `%s` is not installed: %w", st.Leaf, st.Skill, err)
	}
	return leaf, nil
}

// previousAttempt is the artifact of the attempt l redoes, which the agent
// is shown with the reviewer's feedback; false when there is no feedback
// or no such artifact.
func previousAttempt(st *Step, l *Attempt) (ArtifactRef, bool) {
	// The attempt before the latest start: before the first candidate
	// when that start was a best-of round.
	first := len(st.Attempts) - 1
	if idx := st.round(); idx != nil {
		first = idx[0]
	}
	if first < 1 || l.Feedback == "" {
		return ArtifactRef{}, false
	}
	prev := st.Attempts[first-1]
	return ArtifactRef{st.N, prev.N}, prev.Artifact
}

// lookup is what the backend read for ref.
func lookup(read map[ArtifactRef]ArtifactRead, ref ArtifactRef) ArtifactRead {
	if a, ok := read[ref]; ok {
		return a
	}
	return ArtifactRead{Err: fmt.Errorf("step %d attempt %d: %w", ref.Step, ref.Attempt, ErrNotFound)}
}

// refSource reads a {{steps.ID.output}} reference in r: the step id it
// names and, when that step's output is confirmed, the artifact it reads
// (has). known is false for anything else, which is left as written;
// known without has (the step was skipped, produced nothing, is not done,
// or the run is dry) reads as "".
func refSource(r *Run, name string) (known bool, src ArtifactRef, has bool) {
	id, ok := stepRef(name)
	if !ok {
		return false, src, false
	}
	from := stepByID(r, id)
	if from == nil {
		return false, src, false
	}
	l := from.Latest()
	if from.Status != StepDone || l == nil || !l.Artifact || r.DryRun {
		return true, src, false
	}
	return true, ArtifactRef{from.N, l.N}, true
}

// stepByID is the step of r with id (the last, should two share it), or
// nil.
func stepByID(r *Run, id string) *Step {
	var from *Step
	for i := range r.Steps {
		if r.Steps[i].ID == id {
			from = &r.Steps[i]
		}
	}
	return from
}

// interpolate fills in the references a workflow prompt keeps until its
// step runs: {{run.id}}, {{today}} (now's UTC date, YYYY-MM-DD) and
// {{steps.ID.output}}, the confirmed output of an upstream step (empty
// when that step was skipped or produced nothing).
func interpolate(r *Run, prompt string, read map[ArtifactRef]ArtifactRead, now time.Time) (string, error) {
	var ferr error
	out := expandPromptRefs(prompt, func(name string) (string, bool) {
		switch name {
		case "run.id":
			return string(r.ID), true
		case "today":
			return now.UTC().Format("2006-01-02"), true
		}
		out, known, err := stepOutput(r, name, read)
		if ferr == nil {
			ferr = err
		}
		return out, known
	})
	return out, ferr
}

// stepOutput is what reference name reads from what the backend read: the
// confirmed output of the step {{steps.ID.output}} names ("" when it has
// none); known is false for a name that is no such reference. An output
// that could not be read is an error.
func stepOutput(r *Run, name string, read map[ArtifactRef]ArtifactRead) (out string, known bool, err error) {
	known, src, has := refSource(r, name)
	if !known || !has {
		return "", known, nil
	}
	a := lookup(read, src)
	if a.Err != nil {
		id, _ := stepRef(name)
		err = fmt.Errorf("read the output of step %q for {{%s}}: %w", id, name, a.Err)
	}
	return strings.TrimSpace(string(a.Body)), true, err
}

// threadOf is the threaded step st as it runs, handed the confirmed
// artifact of from (ThreadSource, past skipped steps); from is nil when st
// is handed nothing. It is an error when the source has no confirmed
// artifact.
func threadOf(r *Run, st *Step) (*Step, *Step, error) {
	from, _ := ThreadSource(r, st)
	if from == nil {
		return withoutThread(st), nil, nil
	}
	if from.N != st.ThreadFrom {
		st = threadedFrom(st, from.N)
	}
	l := from.Latest()
	if from.Status != StepDone || l == nil || !l.Artifact {
		return st, nil, fmt.Errorf("step %d (%s) takes the artifact of step %d (%s), which has no confirmed artifact; redo step %d or abort",
			st.N, st.Skill, from.N, from.Skill, st.N)
	}
	return st, from, nil
}

// threaded is the threaded step st as it runs and the artifact it is
// handed, from what the backend read.
func threaded(r *Run, st *Step, read map[ArtifactRef]ArtifactRead) (*Step, []byte, error) {
	st, from, err := threadOf(r, st)
	if err != nil || from == nil {
		return st, nil, err
	}
	a := lookup(read, ArtifactRef{from.N, from.Latest().N})
	if a.Err != nil {
		return st, nil, fmt.Errorf("read the artifact of step %d: %w", from.N, a.Err)
	}
	return st, a.Body, nil
}

// withoutThread is a copy of st that is handed no artifact.
func withoutThread(st *Step) *Step { return threadedFrom(st, 0) }

// threadedFrom is a copy of st that is handed the artifact of step n.
func threadedFrom(st *Step, n int) *Step {
	c, d := *st, *st.StepDef
	d.ThreadFrom = n
	c.StepDef = &d
	return &c
}

// AttemptEnd is how an attempt ended, as judging it needs to know.
type AttemptEnd struct {
	Run     *Run // the run as the attempt started
	Step    int
	Attempt int
	Outcome Outcome
	Skill   Skill // the skill the attempt ran (its fallback's, when it fell back)
	// Cancel is why a person, or an abort, stopped the attempt; nil when
	// nobody did.
	Cancel    error
	RateLimit RateLimit
}

// JudgeAttempt is the rubric's verdict on an attempt (Judge), with its
// cost, usage and the kind of error the agent reported: an attempt a
// person stopped fails with their reason. The step's postconditions come
// next (PostconditionsDue), then SettleAttempt.
func JudgeAttempt(e AttemptEnd) Finished {
	out, cancelled := e.Outcome, false
	if e.Cancel != nil && out.Err != nil {
		out.Err, cancelled = e.Cancel, true
	}
	res, reason := Judge(out, e.Skill)
	return Finished{Result: res, Reason: reason, CostUSD: out.CostUSD, Usage: out.Usage, Cancelled: cancelled,
		ErrorKind: out.AgentErrorKind, RateLimit: e.RateLimit}
}

// PostconditionsDue says whether the step's postconditions are checked on
// the attempt judged f: only output judged good is; a failed or empty one
// fails or pauses on its own.
func PostconditionsDue(st *Step, f Finished) bool {
	return f.Result == ResultProduced && len(st.Rules.Post) > 0
}

// SettleAttempt completes the verdict f of JudgeAttempt. Output that fails
// the step's postconditions (post, from CheckConditions; nil when they
// hold or were not due), or that a route or decompose step cannot be
// expanded from (x), fails the attempt but is kept, so the team can see
// why. It returns the Finished to record with Finish and the artifact and
// files the change stores: the output, when kept, goes to the step's
// artifact file, or under the attempt's own name when it failed (a run of
// one step has no files).
func SettleAttempt(e AttemptEnd, f Finished, post error, x Expander) (Finished, []ArtifactWrite, []FileWrite) {
	r, st, out := e.Run, e.Run.Step(e.Step), e.Outcome.Artifact
	keep := f.Result == ResultProduced || f.Result == ResultEmpty
	if f.Result == ResultProduced {
		f = checkOutput(r, st, f, out, post, x)
	}
	if !keep || !hasContent(out) {
		return f, nil, nil
	}
	f.Artifact, f.Size, f.Summary = true, len(out), Summarize(out)
	arts := []ArtifactWrite{{Step: e.Step, Attempt: e.Attempt, Body: out}}
	if len(r.Steps) == 1 {
		return f, arts, nil
	}
	var files []FileWrite
	f.File, files = outputFiles(r, st, e.Attempt, f.Result, out)
	return f, arts, files
}

// outputFiles are where the output kept of attempt a of st (judged res)
// is written, and the writes that put it there: the step's artifact file,
// the attempt that sat there making way for it; or, for output kept to
// show why it failed, or a candidate's until it is picked, which is not
// the step's artifact, the attempt's own name.
func outputFiles(r *Run, st *Step, a int, res Result, out []byte) (string, []FileWrite) {
	if res == ResultFailed || isCandidate(st, a) {
		file := ArtifactFile(r.ID, st.N, st.Skill, a, false)
		return file, []FileWrite{{Path: file, Body: out}}
	}
	file := ArtifactFile(r.ID, st.N, st.Skill, a, true)
	return file, append(makeWay(r.ID, st, a, file), FileWrite{Path: file, Body: out})
}

// checkOutput fails output f judged good when it fails the step's
// postconditions (post), or when st is a route or decompose step that
// cannot be expanded from it; else it records the steps it adds.
func checkOutput(r *Run, st *Step, f Finished, out []byte, post error, x Expander) Finished {
	if post != nil {
		f.Result, f.Reason = ResultFailed, "postcondition failed: "+post.Error()
		return f
	}
	var err error
	if f.Added, err = x.Expand(r, st, out); err != nil {
		f.Result, f.Reason = ResultFailed, err.Error()
	}
	return f
}

// isCandidate reports whether attempt n of st is a best-of candidate.
func isCandidate(st *Step, n int) bool {
	a := attempt(st, n)
	return a != nil && a.Candidate > 0
}
