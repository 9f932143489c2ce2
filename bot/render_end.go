package bot

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
)

// Completion is the end of a run that completed: `Run complete`, a table of
// the steps with their result, decision and who made it, the manual steps,
// the deferred blocks and the total cost; a chain also offers to be saved
// as a workflow. A run that did not complete gets Halt's message instead.
func Completion(r *engine.Run, v View) []slack.Block {
	if r == nil {
		return noRun()
	}
	if r.State != engine.RunCompleted {
		return Halt(r, v)
	}
	now := nowOf(r, v)
	title := "✅ Run complete"
	if r.DryRun {
		title += " (dry run)"
	}
	body := []slack.Block{headerBlock(title), section(endSummary(r, v))}
	body = append(body, stepTable(r)...)
	body = append(body, leftovers(r.Plan)...)
	body = append(body, contextBlock("Run `"+mdLine(string(r.ID), 100)+"` finished "+when(r.Updated, now)+"."))
	var tail []slack.Block
	if v.OfferSaveWorkflow && r.Input == engine.InputChain && len(r.Steps) > 0 {
		ref := StepRef{Run: r.ID, Step: len(r.Steps)}
		if l := r.Steps[len(r.Steps)-1].Latest(); l != nil {
			ref.Attempt = l.N
		}
		save := slack.NewButtonBlockElement(ActionSaveWorkflow, fitValue(ref.Value()), plainText("Save as workflow"))
		tail = append(tail, slack.NewActionBlock("", save))
	}
	return fit(body, tail, maxMessageBlocks)
}

// Halt is the end of a run that stopped short: `Run halted` with the
// reason, and the buttons engine.Allowed offers when it halted on a FAILED
// or interrupted step (Redo and Abort; with on_error: gate also Edit and
// Skip); for a run someone aborted, `Run halted: aborted` and who did it. A
// FAILED step that gonogo retries by itself is not a halt: its notice says
// when the retry comes, and still offers Redo and Abort. v.Step picks the
// step when several are halted. A completed run gets Completion's message
// instead.
func Halt(r *engine.Run, v View) []slack.Block {
	if r == nil {
		return noRun()
	}
	if r.State == engine.RunCompleted {
		return Completion(r, v)
	}
	now := nowOf(r, v)
	s := engine.Halted(r)
	if st := r.Step(v.Step); st != nil && (st.Status == engine.StepWaiting || st.Status == engine.StepInterrupted) {
		s = st
	}
	if s != nil && !r.Finished() {
		if due, n, of, ok := engine.RetryDue(s); ok {
			return retryNotice(r, s, due, n, of, now)
		}
	}
	var body, tail []slack.Block
	switch {
	case r.State == engine.RunAborted:
		body = append(body, headerBlock("🛑 Run halted: aborted"), section(abortLine(r, v, now)+" Everything produced so far is kept."))
	case s == nil && r.State == engine.RunRunning:
		body = append(body, headerBlock("⏳ Run not halted"), section("The run is still running."))
	case s == nil:
		reason := "it is waiting for a decision"
		if r.Halt != "" {
			reason = mdLine(r.Halt, 1000)
		}
		body = append(body, headerBlock("🛑 Run halted"), section("The run is waiting: "+reason+"."))
	case s.Status == engine.StepInterrupted || s.Latest() != nil && s.Latest().Result == engine.ResultFailed:
		what := "*interrupted*, gonogo stopped while it was running."
		if s.Status != engine.StepInterrupted {
			what = resultText(s.Latest())
		}
		how := "*Redo* runs the step again; *Abort* ends the run and keeps everything produced so far."
		if engine.GateOnError(s) {
			how = "This step's on_error is *gate*: *Edit* writes its output, *Skip* goes on without it, *Redo* runs it again; " +
				"*Abort* ends the run and keeps everything produced so far."
		}
		body = append(body, headerBlock("🛑 Run halted"),
			section("Halted at *"+stepTitle(r, s)+"*"+effortPart(s.Effort)+": "+what),
			contextBlock(how))
		if act := decisionButtons(r, s); act != nil {
			tail = append(tail, act)
		}
	default:
		body = append(body, headerBlock("🛑 Run halted"), section("Halted at *"+stepTitle(r, s)+"*"+effortPart(s.Effort)+": "+
			resultText(s.Latest())+"\nDecide with the buttons on the step's message in this thread."))
	}
	body = append(body, section(endSummary(r, v)))
	body = append(body, stepTable(r)...)
	body = append(body, leftovers(r.Plan)...)
	body = append(body, contextBlock("Run `"+mdLine(string(r.ID), 100)+"`, last change "+when(r.Updated, now)+"."))
	return fit(body, tail, maxMessageBlocks)
}

// HaltHandled is a FAILED halt notice once someone acted on it: what
// failed, and that the step has moved on; no buttons.
func HaltHandled(r *engine.Run, n, attempt int) []slack.Block {
	s := stepOf(r, n)
	if s == nil || attempt < 1 || attempt > len(s.Attempts) {
		return noStep(r, n)
	}
	a := &s.Attempts[attempt-1]
	if i := slices.IndexFunc(decisionsOn(s, a), func(d engine.Decision) bool { return engine.AutomaticActor(d.Actor) }); i >= 0 {
		why := "on_error: retry"
		if decisionsOn(s, a)[i].Actor == engine.RateLimitActor {
			why = "after the agent's rate limit"
		}
		body := []slack.Block{headerBlock("🔁 Retried"),
			section("*" + stepTitle(r, s) + "*" + effortPart(s.Effort) + fmt.Sprintf(", attempt %d: ", a.N) + resultText(a)),
			contextBlock("gonogo retried it (" + why + "): the step is " + mdLine(string(s.Status), 40) + " now.")}
		return fit(body, nil, maxMessageBlocks)
	}
	body := []slack.Block{headerBlock("🛑 Run halted"),
		section("Halted at *" + stepTitle(r, s) + "*" + effortPart(s.Effort) + fmt.Sprintf(", attempt %d: ", a.N) + resultText(a)),
		contextBlock("This halt was handled: the step is " + mdLine(string(s.Status), 40) + " now.")}
	return fit(body, nil, maxMessageBlocks)
}

// abortLine says who aborted a finished run, and where.
func abortLine(r *engine.Run, v View, now time.Time) string {
	for i := range r.Steps {
		s := &r.Steps[i]
		for _, d := range s.Decisions {
			if d.Kind == engine.DecideAbort {
				return fmt.Sprintf("🛑 Run aborted by %s at step %d of %d (%s) %s.", who(d.Actor), s.N, len(r.Steps),
					mdLine(s.Skill, 120), at(d.Time, now))
			}
		}
	}
	if r.State != engine.RunAborted {
		return "🛑 The run stopped."
	}
	line := "🛑 Run aborted"
	if v.AbortedBy != "" {
		line += " by " + who(v.AbortedBy)
	}
	line += " " + at(r.Updated, now)
	if r.Halt != "" && v.AbortedBy == "" {
		line += ": " + mdLine(r.Halt, 600)
	}
	return line + "."
}

// stepTable is the end message's table of steps, in the header's order.
func stepTable(r *engine.Run) []slack.Block {
	nodes := tree(r)
	lines := make([]string, 0, min(len(nodes), tableMax+1))
	for _, nd := range nodes[:min(len(nodes), tableMax)] {
		lines = append(lines, treeLine(r, nd, true))
	}
	if len(nodes) > tableMax {
		rest := nodes[tableMax:]
		lines = append(lines, "… "+nodeSpan(rest)+": "+countStatuses(nodeSteps(rest)))
	}
	return packSections("*Steps*", lines, 12, func(n int) string {
		return fmt.Sprintf("… and %d more lines", n)
	})
}

func endSummary(r *engine.Run, v View) string {
	counts := map[engine.DecisionKind]int{}
	auto, optional := 0, 0
	for i := range r.Steps {
		s := &r.Steps[i]
		if engine.OptionalFailed(s) {
			optional++
			continue
		}
		if d := s.LastDecision(); d != nil && s.Settled() {
			counts[d.Kind]++
		} else if s.Status == engine.StepDone {
			auto++
		}
	}
	var parts []string
	for _, k := range []engine.DecisionKind{engine.DecideApprove, engine.DecideEdit, engine.DecideSkip} {
		if counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[k], decisionWords[k].short))
		}
	}
	if auto > 0 {
		parts = append(parts, fmt.Sprintf("%d advanced automatically", auto))
	}
	if optional > 0 {
		parts = append(parts, fmt.Sprintf("%d skipped (optional, failed)", optional))
	}
	steps := fmt.Sprintf("%d of %d steps done", r.StepsDone(), len(r.Steps))
	if len(parts) > 0 {
		steps += " (" + strings.Join(parts, ", ") + ")"
	}
	return strings.Join([]string{
		"*Input:* " + inputLine(r.Input, r.Plan.Source),
		"*Mode:* " + modeLine(r) + " · *Started by* " + who(r.StartedBy) + " · *Elapsed:* " + duration(runElapsed(r, v)),
		"*Steps:* " + steps,
		"*Total cost:* " + money(r.CostUSD),
	}, "\n")
}
