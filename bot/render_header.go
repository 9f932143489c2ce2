package bot

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
)

// Header is the run's root message, updated as the run goes: input, mode,
// domain and confidence, the steps as a plan (stepPlan) with their state
// and the manual and deferred blocks, cost so far, elapsed time and who
// started it.
func Header(r *engine.Run, v View) []slack.Block {
	if r == nil {
		return noRun()
	}
	body := []slack.Block{headerBlock(emojiOrQ(runEmoji[r.State]) + " " + runTitle(r.Input, r.Plan.Source)), fieldsSection(headerFields(r, v))}
	if ctx := strings.TrimSpace(r.Plan.Context); ctx != "" {
		body = append(body, contextBlock("Context: "+mdLine(ctx, 300)))
	}
	if args := argsLine(r.Plan.Args); args != "" {
		body = append(body, contextBlock(args))
	}
	body = append(body, stepPlan(r))
	if w := warnings(r.Plan.Warnings); w != nil {
		body = append(body, w)
	}
	body = append(body, contextBlock("Run `"+mdLine(string(r.ID), 100)+"`"))
	var tail []slack.Block
	if act := headerButtons(r); act != nil {
		tail = append(tail, act)
	}
	return fit(body, withOpen(tail, runRef(r), v), maxMessageBlocks)
}

// headerFields are the header's facts: input, mode (a plan's domain and
// confidence too), state, steps done, who started it, elapsed time and
// cost.
func headerFields(r *engine.Run, v View) []string {
	fields := inputFields(r.Input, r.Plan.Source, r.Plan, modeLine(r))
	cost := money(r.CostUSD)
	if r.BudgetUSD > 0 {
		cost += " of a " + money(r.BudgetUSD) + " budget"
	}
	return append(fields,
		"*State*\n"+runStateLine(r, v),
		fmt.Sprintf("*Steps*\n%d of %d done", r.StepsDone(), len(r.Steps)),
		"*Started by*\n"+who(r.StartedBy)+" "+when(r.Created, v.Now),
		"*Elapsed*\n"+duration(runElapsed(r, v)),
		"*Cost so far*\n"+cost,
	)
}

// inputFields are the first facts of a header or a preview: the input (a
// workflow by name), the mode, and a plan's domain and confidence.
func inputFields(kind engine.InputKind, source string, p engine.Plan, mode string) []string {
	input := inputLine(kind, source)
	if kind == engine.InputWorkflow && strings.TrimSpace(source) != "" {
		input = "Workflow: `" + mdLine(source, 300) + "`"
	}
	fields := []string{"*Input*\n" + input, "*Mode*\n" + mode}
	if kind == engine.InputPlan {
		fields = append(fields, "*Domain*\n"+domainLine(p), "*Confidence*\n"+confidenceLine(p))
	}
	return fields
}

// withOpen adds the Open button to a message's tail when v asks for it:
// beside the buttons the tail ends with, else in a row of its own.
func withOpen(tail []slack.Block, ref StepRef, v View) []slack.Block {
	if !v.Open {
		return tail
	}
	b := slack.NewButtonBlockElement(ActionOpen, fitValue(ref.Value()), plainText("Open"))
	if n := len(tail); n > 0 {
		if act, ok := tail[n-1].(*slack.ActionBlock); ok && act.Elements != nil && len(act.Elements.ElementSet) < maxActionElements {
			act.Elements.ElementSet = append(act.Elements.ElementSet, b)
			return tail
		}
	}
	return append(tail, slack.NewActionBlock("", b))
}

// headerButtons are Pause while the run moves (a step running or about to
// start) and is not paused, and the resume buttons while a person's pause
// holds it.
func headerButtons(r *engine.Run) *slack.ActionBlock {
	switch {
	case r.Finished():
		return nil
	case !r.Paused && r.State == engine.RunRunning:
		b := slack.NewButtonBlockElement(ActionPause, fitValue(runRef(r).Value()), plainText("Pause"))
		return slack.NewActionBlock("", b)
	case r.PausedByPerson():
		return slack.NewActionBlock("", resumeButtons(r)...)
	}
	return nil
}

// runRef is the button value of a run-wide action: the run, its first
// step (a StepRef always names one), no attempt.
func runRef(r *engine.Run) StepRef { return StepRef{Run: r.ID, Step: 1} }

// resumeButtons resume a paused run: in its mode ("Resume auto" for a run
// in guarded auto), and for a run in guarded auto also checkpointed.
func resumeButtons(r *engine.Run) []slack.BlockElement {
	val := fitValue(runRef(r).Value())
	label := "Resume"
	if r.Mode == engine.ModeGuardedAuto {
		label = "Resume auto"
	}
	b := slack.NewButtonBlockElement(ActionResume, val, plainText(label))
	b.Style = slack.StylePrimary
	els := []slack.BlockElement{b}
	if r.Mode == engine.ModeGuardedAuto {
		els = append(els, slack.NewButtonBlockElement(ActionResumeCheckpointed, val, plainText("Resume checkpointed")))
	}
	return els
}

// pausedLine says who paused a run and what that holds, or why gonogo
// paused it.
func pausedLine(r *engine.Run, v View) string {
	if r.PausedBy == engine.RateLimitActor {
		return "paused: " + mdLine(r.PauseReason, 300)
	}
	line := "paused by " + who(r.PausedBy) + " " + when(r.PausedAt, v.Now)
	if r.State == engine.RunRunning {
		return line + ": the running steps finish and wait at a checkpoint"
	}
	return line + ": no step starts until it is resumed"
}

// argsLine lists a workflow's argument values, by name.
func argsLine(args map[string]string) string {
	if len(args) == 0 {
		return ""
	}
	names := make([]string, 0, len(args))
	for k := range args {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, 0, min(len(names), 10))
	for _, k := range names[:min(len(names), 10)] {
		parts = append(parts, "`"+mdLine(k, 60)+"` = "+mdLine(args[k], 200))
	}
	if more := len(names) - len(parts); more > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", more))
	}
	return "Arguments: " + strings.Join(parts, ", ")
}

// leftovers lists a plan's manual blocks (shown, never run) and its
// deferred blocks (past the first runnable ones).
func leftovers(p engine.Plan) []slack.Block {
	var out []slack.Block
	if len(p.Manual) > 0 {
		out = append(out, blockList(fmt.Sprintf("*Manual* (%d, SKIPPED-MANUAL: shown, never run)", len(p.Manual)), p.Manual, true))
	}
	if len(p.Deferred) > 0 {
		out = append(out, blockList(fmt.Sprintf("*Deferred* (%d, past the first %d runnable blocks)", len(p.Deferred), engine.MaxPlanSteps), p.Deferred, false))
	}
	return out
}

func blockList(title string, blocks []engine.Block, withReason bool) slack.Block {
	var lines []string
	for _, b := range blocks[:min(len(blocks), leftoverMax)] {
		name := "-"
		if b.Skill != "" {
			name = "`" + mdLine(b.Skill, 80) + "`"
		}
		line := "• " + name + tokensEffort(b.PTokens, b.Effort)
		if withReason && b.Reason != "" {
			line += ": " + mdLine(b.Reason, 300)
		}
		lines = append(lines, line)
	}
	if n := len(blocks) - leftoverMax; n > 0 {
		lines = append(lines, fmt.Sprintf("… and %d more", n))
	}
	return section(title + "\n" + strings.Join(lines, "\n"))
}

func tokensEffort(tokens []string, effort string) string {
	var parts []string
	if len(tokens) > 0 {
		parts = append(parts, mdLine(strings.Join(tokens[:min(len(tokens), 5)], "+"), 40))
	}
	if strings.TrimSpace(effort) != "" {
		parts = append(parts, mdLine(effort, 150))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ": ") + ")"
}

func warnings(ws []string) slack.Block {
	if len(ws) == 0 {
		return nil
	}
	var lines []string
	for _, w := range ws[:min(len(ws), 5)] {
		lines = append(lines, "⚠️ "+mdLine(w, 400))
	}
	if n := len(ws) - 5; n > 0 {
		lines = append(lines, fmt.Sprintf("… and %d more warnings", n))
	}
	return contextBlock(strings.Join(lines, "\n"))
}

func inputLine(kind engine.InputKind, source string) string {
	k := mdLine(string(kind), 40)
	if k == "" {
		k = "input"
	}
	if strings.TrimSpace(source) == "" {
		return k
	}
	return k + " `" + mdLine(source, 300) + "`"
}

// modeLine is a run's mode in words.
func modeLine(r *engine.Run) string {
	return modeWords(r.Mode, engine.Flags{ForceAuto: r.ForceAuto, DryRun: r.DryRun, Thread: r.Thread})
}

// modeWords name a run's mode, and the flags that change how it runs.
func modeWords(mode engine.Mode, f engine.Flags) string {
	m := mdLine(engine.RunModeName(mode, f.DryRun), 40)
	if f.ForceAuto && !f.DryRun {
		m += " (--force-auto)"
	}
	if f.Thread {
		m += ", threaded"
	}
	return m
}

func domainLine(p engine.Plan) string {
	switch {
	case p.DomainAmbiguous:
		return "ambiguous (stays checkpointed)"
	case p.Domain == "":
		return "not stated (stays checkpointed)"
	case p.DomainSource != "":
		return mdLine(string(p.Domain), 40) + " (" + mdLine(p.DomainSource, 40) + ")"
	}
	return mdLine(string(p.Domain), 40)
}

func confidenceLine(p engine.Plan) string {
	if strings.TrimSpace(p.Confidence) == "" {
		return "not stated"
	}
	c := mdLine(p.Confidence, 60)
	if strings.TrimSpace(p.ConfidenceReason) != "" {
		c += " - " + mdLine(p.ConfidenceReason, 400)
	}
	return c
}

// runStateLine is the header's State field: paused, running which
// steps, waiting for what, complete or aborted by whom.
func runStateLine(r *engine.Run, v View) string {
	if r.Paused && !r.Finished() {
		return pausedLine(r, v)
	}
	switch r.State {
	case engine.RunRunning:
		return runningStateLine(engine.StandingOf(r))
	case engine.RunWaiting:
		return waitingStateLine(engine.StandingOf(r), v)
	case engine.RunCompleted:
		return "complete"
	case engine.RunAborted:
		return abortedStateLine(r, v)
	}
	return mdLine(string(r.State), 40)
}

// runningStateLine names the steps a running run runs.
func runningStateLine(st engine.Standing) string {
	if ns := stepNumbers(st.Running); len(ns) > 0 {
		return "running " + stepWord(ns)
	}
	return "running"
}

// waitingStateLine is the state of a run that waits: halted at a step,
// retrying one, or waiting for a decision.
func waitingStateLine(st engine.Standing, v View) string {
	switch s := st.At; st.Stand {
	case engine.StandInterrupted:
		return "halted: step " + strconv.Itoa(s.N) + " was interrupted"
	case engine.StandHalted:
		return "halted: step " + strconv.Itoa(s.N) + " FAILED"
	case engine.StandRetrying:
		if due, n, of, ok := engine.RetryDue(s); ok {
			return fmt.Sprintf("step %d FAILED: retrying at %s (retry %d of %d)", s.N, clock(due, v.Now), n, of)
		}
	}
	if ns := stepNumbers(st.Waiting); len(ns) > 0 {
		return "waiting for a decision on " + stepWord(ns)
	}
	return "waiting for a decision"
}

// abortedStateLine says who aborted the run, when anyone is known to.
func abortedStateLine(r *engine.Run, v View) string {
	if v.AbortedBy != "" {
		return "aborted by " + who(v.AbortedBy)
	}
	if _, d := abortDecision(r); d != nil {
		return "aborted by " + who(d.Actor)
	}
	return "aborted"
}

// abortDecision is the decision that aborted the run, and its step; nil
// when nobody aborted it with a decision.
func abortDecision(r *engine.Run) (*engine.Step, *engine.Decision) {
	for i := range r.Steps {
		s := &r.Steps[i]
		for j := range s.Decisions {
			if s.Decisions[j].Kind == engine.DecideAbort {
				return s, &s.Decisions[j]
			}
		}
	}
	return nil, nil
}

// stepNumbers are the numbers of steps, the first five and an ellipsis
// past them.
func stepNumbers(steps []*engine.Step) []string {
	var out []string
	for _, s := range steps {
		out = append(out, strconv.Itoa(s.N))
	}
	if len(out) > 5 {
		out = append(out[:5], "…")
	}
	return out
}

// stepWord names one step or several by number.
func stepWord(ns []string) string {
	if len(ns) == 1 {
		return "step " + ns[0]
	}
	return "steps " + strings.Join(ns, ", ")
}
