package bot

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
)

// Completion is the end of a run that completed: `Run complete`, a summary,
// a table of the steps (Slack's table block: each step's result, decision,
// who made it and its cost), the manual steps, the deferred blocks and the
// total cost; a chain also offers to be saved as a workflow. A run that did not complete gets Halt's message instead.
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
	body := append([]slack.Block{headerBlock(title)}, endFacts(r, v)...)
	body = append(body, contextBlock("Run `"+mdLine(string(r.ID), 100)+"` finished "+when(r.Updated, now)+"."))
	return fit(body, saveWorkflowOffer(r, v), maxMessageBlocks)
}

// endFacts is what every end message says after its headline: the summary,
// the table of the steps and the plan's leftovers.
func endFacts(r *engine.Run, v View) []slack.Block {
	out := []slack.Block{section(endSummary(r, v))}
	out = append(out, stepTable(r)...)
	return append(out, leftovers(r.Plan)...)
}

// saveWorkflowOffer is the button that saves a completed chain as a
// workflow, when the view offers it; its value names the last step's
// latest attempt.
func saveWorkflowOffer(r *engine.Run, v View) []slack.Block {
	if !v.OfferSaveWorkflow || r.Input != engine.InputChain || len(r.Steps) == 0 {
		return nil
	}
	ref := StepRef{Run: r.ID, Step: len(r.Steps)}
	if l := r.Steps[len(r.Steps)-1].Latest(); l != nil {
		ref.Attempt = l.N
	}
	save := slack.NewButtonBlockElement(ActionSaveWorkflow, fitValue(ref.Value()), plainText("Save as workflow"))
	return []slack.Block{slack.NewActionBlock("", save)}
}

// Halt is the end of a run that stopped short: `Run halted` with the
// reason, and the buttons engine.Allowed offers when it halted on a FAILED
// or interrupted step (Redo and Abort; with on_error: gate also Edit and
// Skip); for a run someone aborted, `Run halted: aborted` and who did it. A
// FAILED step that gonogo retries by itself is not a halt: its notice says
// when the retry comes, and still offers Redo and Abort. v.Step picks the
// step when several are halted. A completed run gets Completion's message
// instead.
//
// A halt is shown with a header and a section, not Slack's alert block:
// Slack takes alert blocks in modals only, not in messages
// (https://docs.slack.dev/reference/block-kit/blocks/alert-block, and the
// surfaces column of https://docs.slack.dev/reference/block-kit/blocks),
// and a message carrying one is refused whole. internal/fakeslack refuses
// it the same way.
func Halt(r *engine.Run, v View) []slack.Block {
	if r == nil {
		return noRun()
	}
	if r.State == engine.RunCompleted {
		return Completion(r, v)
	}
	now := nowOf(r, v)
	s := haltedStep(r, v)
	if s != nil && !r.Finished() {
		if due, n, of, ok := engine.RetryDue(s); ok {
			return retryNotice(r, s, due, n, of, now)
		}
	}
	body, tail := haltHead(r, s, v, now)
	body = append(body, endFacts(r, v)...)
	body = append(body, contextBlock("Run `"+mdLine(string(r.ID), 100)+"`, last change "+when(r.Updated, now)+"."))
	return fit(body, tail, maxMessageBlocks)
}

// haltedStep is the step a halt message is about: the one v.Step names
// when it waits or was interrupted, else the one the engine says halted.
func haltedStep(r *engine.Run, v View) *engine.Step {
	if st := r.Step(v.Step); st != nil && (st.Status == engine.StepWaiting || st.Status == engine.StepInterrupted) {
		return st
	}
	return engine.Halted(r)
}

// haltHead is a halt message's headline and why the run stopped, with the
// buttons (in tail) when the halted step offers them.
func haltHead(r *engine.Run, s *engine.Step, v View, now time.Time) (body, tail []slack.Block) {
	switch {
	case r.State == engine.RunAborted:
		return []slack.Block{headerBlock("🛑 Run halted: aborted"), section(abortLine(r, v, now) + " Everything produced so far is kept.")}, nil
	case s == nil && r.State == engine.RunRunning:
		return []slack.Block{headerBlock("⏳ Run not halted"), section("The run is still running.")}, nil
	case s == nil:
		return []slack.Block{headerBlock("🛑 Run halted"), section("The run is waiting: " + waitReason(r) + ".")}, nil
	case failedOrInterrupted(s):
		return failedHead(r, s)
	}
	return []slack.Block{headerBlock("🛑 Run halted"), section("Halted at *" + stepTitle(r, s) + "*" + effortPart(s.Effort) + ": " +
		resultText(s.Latest()) + "\nDecide with the buttons on the step's message in this thread.")}, nil
}

// waitReason is why a run with no halted step waits: the reason it
// recorded, else a decision.
func waitReason(r *engine.Run) string {
	if r.Halt != "" {
		return mdLine(r.Halt, 1000)
	}
	return "it is waiting for a decision"
}

// failedOrInterrupted reports a step that halted the run by itself: its
// latest attempt FAILED, or gonogo stopped while it ran.
func failedOrInterrupted(s *engine.Step) bool {
	return s.Status == engine.StepInterrupted || s.Latest() != nil && s.Latest().Result == engine.ResultFailed
}

// failedHead is the headline of a halt at a FAILED or interrupted step:
// what happened, what each button does, and the buttons.
func failedHead(r *engine.Run, s *engine.Step) (body, tail []slack.Block) {
	what := "*interrupted*, gonogo stopped while it was running."
	if s.Status != engine.StepInterrupted {
		what = resultText(s.Latest())
	}
	how := "*Redo* runs the step again; *Abort* ends the run and keeps everything produced so far."
	if engine.GateOnError(s) {
		how = "This step's on_error is *gate*: *Edit* writes its output, *Skip* goes on without it, *Redo* runs it again; " +
			"*Abort* ends the run and keeps everything produced so far."
	}
	body = []slack.Block{headerBlock("🛑 Run halted"),
		section("Halted at *" + stepTitle(r, s) + "*" + effortPart(s.Effort) + ": " + what),
		contextBlock(how)}
	if act := decisionButtons(r, s); act != nil {
		tail = append(tail, act)
	}
	return body, tail
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
	if s, d := abortDecision(r); d != nil {
		return fmt.Sprintf("🛑 Run aborted by %s at step %d of %d (%s) %s.", who(d.Actor), s.N, len(r.Steps),
			mdLine(s.Skill, 120), at(d.Time, now))
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

// stepTable is the end message's table of the steps, in the header's
// order (a step the output of another added follows it, marked ↳): each
// step's result, what became of it, who decided and what it cost. Slack
// takes one table a message, of at most 100 rows with the titles' row: a
// run of more steps lists the first 98 and sums up the rest in the last
// row, and says where every step is.
func stepTable(r *engine.Run) []slack.Block {
	nodes := tree(r)
	if len(nodes) == 0 {
		return nil
	}
	t := slack.NewTableBlock("").WithColumnSettings(
		slack.ColumnSetting{Align: slack.ColumnAlignmentLeft, IsWrapped: true},
		slack.ColumnSetting{Align: slack.ColumnAlignmentLeft},
		slack.ColumnSetting{Align: slack.ColumnAlignmentLeft, IsWrapped: true},
		slack.ColumnSetting{Align: slack.ColumnAlignmentLeft, IsWrapped: true},
		slack.ColumnSetting{Align: slack.ColumnAlignmentRight},
	)
	t.AddRow(headCell("Step"), headCell("Result"), headCell("Decision"), headCell("Who"), headCell("Cost"))
	listed := nodes
	if len(nodes) > maxTableRows-1 {
		listed = nodes[:maxTableRows-2]
	}
	for _, nd := range listed {
		addStepRow(t, r, nd)
	}
	out := []slack.Block{t}
	if rest := nodes[len(listed):]; len(rest) > 0 {
		cost := 0.0
		for _, nd := range rest {
			cost += stepCost(nd.s)
		}
		t.AddRow(textCell("… "+nodeSpan(rest), 80), textCell(countResults(rest), 80), textCell(countStatuses(nodeSteps(rest)), 80),
			textCell("-", 5), textCell(money(cost), 20))
		out = append(out, contextBlock(fmt.Sprintf("The table lists %d of the %d steps; its last row sums up the rest. "+
			"The run's audit trail (`gonogo export %s`) has every step.", len(listed), len(nodes), mdLine(string(r.ID), 100))))
	}
	return out
}

// addStepRow is one step's row in the end message's table.
func addStepRow(t *slack.TableBlock, r *engine.Run, nd node) {
	s := nd.s
	step := fmt.Sprintf("%d. %s", s.N, s.Skill)
	if nd.depth > 0 {
		step = strings.Repeat("  ", min(nd.depth, 5)-1) + "↳ " + step
	}
	result := "-"
	if l := s.Latest(); l != nil && l.Result != "" {
		result = emojiOrQ(resultEmoji[l.Result]) + " " + string(l.Result)
	}
	t.AddRow(textCell(step+effortCell(s.Effort), 80), textCell(result, 30), textCell(stepOutcome(r, s), 60),
		whoCell(stepDeciders(s)), textCell(money(stepCost(s)), 20))
}

// effortCell is a step's effort after its name in the table.
func effortCell(effort string) string {
	if strings.TrimSpace(effort) == "" {
		return ""
	}
	return " (" + effort + ")"
}

// stepOutcome is what became of a step, in the table's words.
func stepOutcome(r *engine.Run, s *engine.Step) string {
	if engine.OptionalFailed(s) {
		return "skipped (optional step failed)"
	}
	switch s.Status {
	case engine.StepDone:
		return doneOutcome(engine.StepDecision(s))
	case engine.StepSkipped:
		return "skipped"
	case engine.StepAborted:
		return abortedOutcome(s)
	case engine.StepWaiting:
		return waitingOutcome(r, s)
	case engine.StepInterrupted:
		return "interrupted"
	}
	return string(s.Status)
}

// waitingOutcome is what a waiting step waits for: waitingState's words,
// which carry no markup, but a retry's count in place of its time.
func waitingOutcome(r *engine.Run, s *engine.Step) string {
	if _, n, of, ok := engine.RetryDue(s); ok {
		return fmt.Sprintf("retrying (retry %d of %d)", n, of)
	}
	return waitingState(r, s)
}

// doneOutcome is how a done step got past its gate, given its deciding
// decision.
func doneOutcome(d *engine.Decision) string {
	switch {
	case d != nil && d.Kind == engine.DecideEdit:
		return "edited"
	case d != nil && d.Kind == engine.DecideApprove:
		return "approved"
	}
	return "advanced automatically" // engine.DecidedAuto
}

// abortedOutcome tells the step where someone aborted the run from the
// steps the abort stopped or left unrun.
func abortedOutcome(s *engine.Step) string {
	d := engine.StepDecision(s)
	switch l := s.Latest(); {
	case d != nil && d.Kind == engine.DecideAbort:
		return "aborted here"
	case l != nil && l.Result == "":
		return "stopped (run aborted)"
	case l != nil:
		return "run aborted"
	}
	return "not run (run aborted)"
}

// stepDeciders are the people behind a step's outcome: everyone whose
// approval carried it, or who made its last decision.
func stepDeciders(s *engine.Step) []string {
	d := engine.StepDecision(s)
	if d == nil || d.Kind == engine.DecidedAuto || !s.Settled() && d.Kind != engine.DecideAbort {
		return nil
	}
	if d.Kind == engine.DecideApprove {
		if votes := uniq(engine.Approvals(s)); len(votes) > 0 {
			return votes
		}
	}
	return []string{d.Actor}
}

// whoCell names people in a table cell: a Slack user as a mention (which
// Slack shows as the person's name), anyone else as text.
func whoCell(actors []string) slack.TableCell {
	if len(actors) == 0 {
		return textCell("-", 5)
	}
	var els []slack.RichTextSectionElement
	for i, a := range actors[:min(len(actors), 10)] {
		if i > 0 {
			els = append(els, slack.NewRichTextSectionTextElement(", ", nil))
		}
		if slackUserRE.MatchString(a) {
			els = append(els, slack.NewRichTextSectionUserElement(a, nil))
		} else {
			els = append(els, slack.NewRichTextSectionTextElement(defang(plain(oneLine(a, 400), 80)), nil))
		}
	}
	if extra := len(actors) - 10; extra > 0 {
		els = append(els, slack.NewRichTextSectionTextElement(fmt.Sprintf(" and %d more", extra), nil))
	}
	return slack.NewTableRichTextCell(slack.NewRichTextSection(els...))
}

// stepCost is what every attempt at a step cost.
func stepCost(s *engine.Step) float64 {
	cost := 0.0
	for _, a := range s.Attempts {
		cost += a.CostUSD
	}
	return cost
}

// countResults counts the results of listed steps' latest attempts.
func countResults(nodes []node) string {
	counts := map[engine.Result]int{}
	var order []engine.Result
	for _, nd := range nodes {
		res := engine.Result("no result")
		if l := nd.s.Latest(); l != nil && l.Result != "" {
			res = l.Result
		}
		if counts[res] == 0 {
			order = append(order, res)
		}
		counts[res]++
	}
	parts := make([]string, 0, len(order))
	for _, res := range order {
		parts = append(parts, fmt.Sprintf("%d %s", counts[res], res))
	}
	return strings.Join(parts, ", ")
}

// endSummary is the end message's summary: the input, the mode, who
// started it, how long it took, the steps done and the total cost.
func endSummary(r *engine.Run, v View) string {
	steps := fmt.Sprintf("%d of %d steps done", r.StepsDone(), len(r.Steps))
	if parts := settledParts(r); len(parts) > 0 {
		steps += " (" + strings.Join(parts, ", ") + ")"
	}
	return strings.Join([]string{
		"*Input:* " + inputLine(r.Input, r.Plan.Source),
		"*Mode:* " + modeLine(r) + " · *Started by* " + who(r.StartedBy) + " · *Elapsed:* " + duration(runElapsed(r, v)),
		"*Steps:* " + steps,
		"*Total cost:* " + money(r.CostUSD),
	}, "\n")
}

// settledParts counts how the run's settled steps got past their gates,
// in the summary's words and order: approved, edited, skipped, advanced
// automatically, then optional steps that failed.
func settledParts(r *engine.Run) []string {
	counts, optional := settledCounts(r)
	var parts []string
	for _, k := range []engine.DecisionKind{engine.DecideApprove, engine.DecideEdit, engine.DecideSkip} {
		if counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[k], decisionWords[k].short))
		}
	}
	if n := counts[engine.DecidedAuto]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d advanced automatically", n))
	}
	if optional > 0 {
		parts = append(parts, fmt.Sprintf("%d skipped (optional, failed)", optional))
	}
	return parts
}

// settledCounts counts the run's settled steps by the kind of decision
// that settled them, and apart the optional steps that failed.
func settledCounts(r *engine.Run) (counts map[engine.DecisionKind]int, optional int) {
	counts = map[engine.DecisionKind]int{}
	for i := range r.Steps {
		s := &r.Steps[i]
		if engine.OptionalFailed(s) {
			optional++
			continue
		}
		if d := engine.StepDecision(s); d != nil && s.Settled() {
			counts[d.Kind]++
		}
	}
	return counts, optional
}
