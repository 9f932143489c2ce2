package bot

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
)

// StepMessage is one step's message in the run's thread: `Step i of N:
// skill (effort)`, then while it runs when it started and a Cancel button
// (its live progress is the thread's loading status, ThreadStatus, so that
// progress never spends a chat.update); once it finished the result, a
// one-line summary, the artifact's beginning rendered as Markdown and
// where it is attached; at a checkpoint the buttons
// engine.Allowed offers (only Redo and Abort after a FAILED or interrupted
// step); after a decision, who decided what and when instead of buttons.
func StepMessage(r *engine.Run, n int, v View) []slack.Block {
	s := stepOf(r, n)
	if s == nil {
		return noStep(r, n)
	}
	now := nowOf(r, v)
	a, latest := shownAttempt(s, v.Attempt)
	cands := latest && engine.Candidates(s) != nil
	body := stepIntro(r, s, a, cands)
	shown, tail := attemptBlocks(r, s, a, latest, v, now)
	if cands {
		shown, tail = candidateBlocks(r, s, v, now), nil
	}
	body = append(body, shown...)
	body = append(body, earlierBlocks(s, a, latest, now)...)
	tail = append(tail, stepAftermath(r, s, a, latest, v, now)...)
	return fit(body, withOpen(tail, attemptRef(r, s, a), v), maxMessageBlocks)
}

// earlierBlocks list, under a step's latest attempt, its other attempts.
func earlierBlocks(s *engine.Step, a *engine.Attempt, latest bool, now time.Time) []slack.Block {
	if !latest || len(s.Attempts) <= 1 {
		return nil
	}
	if line := earlierAttempts(s, a.N, now); line != "" {
		return []slack.Block{contextBlock(line)}
	}
	return nil
}

// stepIntro opens a step message: its heading (the best-of count in place
// of the attempt when candidates are shown), the step it is a sub-step of,
// and the feedback the attempt started with.
func stepIntro(r *engine.Run, s *engine.Step, a *engine.Attempt, cands bool) []slack.Block {
	heading := stepHeading(r, s, a)
	if cands {
		heading = stepHeading(r, s, nil) + bestOfPart(s)
	}
	body := []slack.Block{section(heading)}
	if line := parentLine(r, s); line != "" {
		body = append(body, contextBlock(line))
	}
	if a != nil && a.Feedback != "" {
		body = append(body, contextBlock("🔁 Started with the reviewer's feedback: “"+mdLine(a.Feedback, 600)+"”"))
	}
	return body
}

// stepAftermath is what a step message says after the attempt: the steps
// its output added, the decisions made on it and what comes next.
func stepAftermath(r *engine.Run, s *engine.Step, a *engine.Attempt, latest bool, v View, now time.Time) []slack.Block {
	var tail []slack.Block
	if note := addedNote(r, s, v); note != "" && latest {
		tail = append(tail, contextBlock(note))
	}
	decided := decisionLines(r, s, a, latest, now)
	if len(decided) > 0 {
		tail = append(tail, section(strings.Join(decided, "\n")))
	}
	return append(tail, stepOutlook(r, s, a, latest, len(decided) > 0, v, now)...)
}

// stepHeading is a step message's first line: `Step i of N: skill
// (effort)`, the attempt shown after the first, and the fallback skill it
// ran with.
func stepHeading(r *engine.Run, s *engine.Step, a *engine.Attempt) string {
	title := "*" + stepTitle(r, s) + "*" + effortPart(s.Effort)
	if a != nil && a.N > 1 {
		title += fmt.Sprintf(" · attempt %d", a.N)
	}
	if a != nil {
		title += fallbackPart(s, a)
	}
	return title
}

// attemptBlocks show the attempt a step message is about: that it runs
// and a Cancel button (the tail) while it runs, its result once it
// finished, or why it has neither.
func attemptBlocks(r *engine.Run, s *engine.Step, a *engine.Attempt, latest bool, v View, now time.Time) (body, tail []slack.Block) {
	switch {
	case a == nil:
		return []slack.Block{section(noAttemptLine(s))}, nil
	case latest && s.Status == engine.StepRunning && a.Result == "":
		return []slack.Block{section(runningLine(a, now))},
			[]slack.Block{slack.NewActionBlock("", cancelButton(StepRef{Run: r.ID, Step: s.N, Attempt: a.N}))}
	case latest && s.Status == engine.StepInterrupted:
		return []slack.Block{section("⚠️ *interrupted*: " + interruptedWhy(s, "gonogo stopped while this step was running") + ". Redo it, or abort the run.")}, nil
	case a.Result == "":
		return []slack.Block{section("🛑 Stopped: the run was aborted while this step was running.")}, nil
	}
	return resultBlocks(r, s, a, v), nil
}

// stepOutlook ends a step message with what comes next for the step: a
// newer attempt, the end of the run, the buttons of a checkpoint, a queued
// attempt, or how it moved on without a decision.
func stepOutlook(r *engine.Run, s *engine.Step, a *engine.Attempt, latest, decided bool, v View, now time.Time) []slack.Block {
	switch {
	case !latest:
		return []slack.Block{contextBlock(fmt.Sprintf("A newer attempt (%d) of this step follows in the thread.", s.Latest().N))}
	case abortedElsewhere(r, s, a):
		return []slack.Block{section(abortLine(r, v, now))}
	case s.Status == engine.StepWaiting || s.Status == engine.StepInterrupted:
		return checkpointBlocks(r, s, v, now)
	case s.Status == engine.StepQueued && a != nil:
		return queuedOutlook(s, a)
	}
	return movedOnOutlook(s, a, decided)
}

// abortedElsewhere reports a step the run ended around: it finished while
// the step was unsettled, and not by an abort made on attempt a.
func abortedElsewhere(r *engine.Run, s *engine.Step, a *engine.Attempt) bool {
	return r.Finished() && !s.Settled() && !abortedOn(s, a)
}

// abortedOn tells whether someone aborted the run with attempt a of s.
func abortedOn(s *engine.Step, a *engine.Attempt) bool {
	return slices.ContainsFunc(decisionsOn(s, a), func(d engine.Decision) bool { return d.Kind == engine.DecideAbort })
}

// queuedOutlook says when a queued new attempt starts, and names the
// fallback skill when the next attempt runs one.
func queuedOutlook(s *engine.Step, a *engine.Attempt) []slack.Block {
	if engine.AttemptSkill(s, nil) != engine.AttemptSkill(s, a) {
		return []slack.Block{contextBlock("🕒 The fallback skill `" + mdLine(engine.AttemptSkill(s, nil), 120) +
			"` runs next: its attempt starts when a runner slot is free.")}
	}
	return []slack.Block{contextBlock("🕒 A new attempt is queued: it starts when a runner slot is free.")}
}

// movedOnOutlook says how a step moved on without anyone's decision: an
// optional step that failed, or guarded auto.
func movedOnOutlook(s *engine.Step, a *engine.Attempt, decided bool) []slack.Block {
	switch {
	case s.Status == engine.StepSkipped && engine.OptionalFailed(s):
		return []slack.Block{contextBlock("⏭ " + optionalFailedWords(s) + ": the run goes on without it.")}
	case s.Status == engine.StepDone && !decided && a != nil && a.Result != "":
		return []slack.Block{contextBlock("⏩ Advanced automatically (guarded auto).")}
	}
	return nil
}

// checkpointBlocks are what a step waiting for a decision (or a redo after
// an interruption) shows: its deadline and reminders, and its buttons.
func checkpointBlocks(r *engine.Run, s *engine.Step, v View, now time.Time) []slack.Block {
	var out []slack.Block
	if s.Status == engine.StepWaiting {
		out = append(out, waitingNotes(r, s, v, now)...)
	}
	if act := decisionButtons(r, s); act != nil {
		out = append(out, act)
	}
	return out
}

// Interrupted announces, in the run's thread, a step that was running when
// gonogo stopped; it offers Redo and Abort while the step still waits for
// one of them.
func Interrupted(r *engine.Run, n int, v View) []slack.Block {
	s := stepOf(r, n)
	if s == nil {
		return noStep(r, n)
	}
	now := nowOf(r, v)
	body := []slack.Block{section("⚠️ *" + stepTitle(r, s) + "*" + effortPart(s.Effort) +
		" was *interrupted*: " + interruptedWhy(s, "gonogo stopped while it was running") + ".")}
	var facts []string
	a, latest := shownAttempt(s, v.Attempt)
	if a != nil {
		facts = append(facts, attemptStarted(a, now))
	}
	facts = append(facts, "*Redo* runs it again from the start; *Abort* ends the run and keeps everything produced so far.")
	body = append(body, contextBlock(strings.Join(facts, " ")))
	return fit(body, interruptedTail(r, s, latest), maxMessageBlocks)
}

// attemptStarted names an attempt and when it started.
func attemptStarted(a *engine.Attempt, now time.Time) string {
	f := fmt.Sprintf("Attempt %d", a.N)
	if !a.Started.IsZero() {
		f += " started " + when(a.Started, now)
	}
	return f + "."
}

// interruptedTail ends an interruption notice: Redo and Abort while the
// step still waits for one of them, else where the step is now.
func interruptedTail(r *engine.Run, s *engine.Step, latest bool) []slack.Block {
	if !latest || s.Status != engine.StepInterrupted || r.Finished() {
		return []slack.Block{contextBlock("This step has moved on: it is " + mdLine(string(s.Status), 40) + " now.")}
	}
	if act := decisionButtons(r, s); act != nil {
		return []slack.Block{act}
	}
	return nil
}

// Reminder nudges the approvers of a step that has been waiting for a
// decision; the buttons stay on the step's own message.
func Reminder(r *engine.Run, n int, v View) []slack.Block {
	s := stepOf(r, n)
	if s == nil {
		return noStep(r, n)
	}
	now := nowOf(r, v)
	line := "⏰ *" + stepTitle(r, s) + "*" + effortPart(s.Effort) + " is waiting for a decision"
	if a := s.Latest(); a != nil && !a.Finished.IsZero() {
		line += " since " + when(a.Finished, now)
	}
	line += ". " + who(r.StartedBy) + ", approvers: decide with the buttons on the step's message."
	body := []slack.Block{section(line)}
	notes := v
	notes.RemindedAt = time.Time{} // this message is the reminder
	body = append(body, waitingNotes(r, s, notes, now)...)
	return fit(body, nil, maxMessageBlocks)
}

// TimeoutNote says in the run's thread that the decision on step n timed
// out and the step keeps waiting (GONOGO_DECISION_TIMEOUT_ACTION=wait).
func TimeoutNote(r *engine.Run, n int) string {
	s := stepOf(r, n)
	if s == nil || r.Oversight == nil {
		return ""
	}
	t := engine.Title(r, s)
	return fmt.Sprintf("Step %d of %d (%s) has waited %s for a decision; it keeps waiting.", t.N, t.Of, t.Skill, r.Oversight.DecisionTimeout)
}

// stepName is how a note names a step: its workflow id, else its skill.
func stepName(s *engine.Step) string {
	if s.ID != "" {
		return s.ID
	}
	return s.Skill
}

// fallbackPart names the fallback skill an attempt ran instead of the
// step's own.
func fallbackPart(s *engine.Step, a *engine.Attempt) string {
	if sk := engine.AttemptSkill(s, a); sk != s.Skill {
		return " · ran the fallback `" + mdLine(sk, 120) + "`"
	}
	return ""
}

// parentLine places a step that another step's output added under it.
func parentLine(r *engine.Run, s *engine.Step) string {
	p := r.Step(s.Parent)
	if p == nil || s.Parent >= s.N {
		return ""
	}
	what := "from the workflow it routed the run to"
	if p.Rules.Decompose != "" {
		what = "one of the tasks it split its work into"
	}
	return fmt.Sprintf("↳ Sub-step of step %d `%s`: %s.", p.N, mdLine(stepName(p), 120), what)
}

// addedNote says what a route or decompose step's output added to the
// run, once it has: "Step 2 `triage` routed the run to workflow `bugfix`:
// 3 steps added (steps 5 to 7)". A route step's output (the preview) names
// the workflow.
func addedNote(r *engine.Run, s *engine.Step, v View) string {
	var added []node
	for i := range r.Steps {
		if r.Steps[i].Parent == s.N && s.N < r.Steps[i].N {
			added = append(added, node{s: &r.Steps[i]})
		}
	}
	if len(added) == 0 {
		return ""
	}
	who := fmt.Sprintf("Step %d `%s`", s.N, mdLine(stepName(s), 120))
	if s.Rules.Decompose != "" {
		return fmt.Sprintf("➕ %s split its work into %s, each run with `%s` (%s, listed in the header).",
			who, plural(len(added), "task"), mdLine(s.Rules.Decompose, 120), nodeSpan(added))
	}
	to := "another workflow"
	if name, err := engine.RouteTarget([]byte(v.Preview)); err == nil {
		to = "workflow `" + mdLine(name, 120) + "`"
	}
	return fmt.Sprintf("➕ %s routed the run to %s: %s added (%s).", who, to, plural(len(added), "step"), nodeSpan(added))
}

func optionalFailedWords(s *engine.Step) string {
	reason := "no reason given"
	if l := s.Latest(); l != nil && strings.TrimSpace(l.Reason) != "" {
		reason = mdLine(l.Reason, 600)
	}
	return "skipped (optional step failed: " + reason + ")"
}

// retryLine says when gonogo retries a FAILED step by itself.
func retryLine(s *engine.Step, now time.Time) string {
	due, n, of, ok := engine.RetryDue(s)
	if !ok {
		return ""
	}
	why := ""
	if engine.RetryActorFor(s) == engine.RateLimitActor {
		why = rateLimitWords(s) + ". "
	}
	return fmt.Sprintf("🔁 %sRetrying at %s (retry %d of %d). *Redo* runs it now; *Abort* ends the run.", why, clock(due, now), n, of)
}

// rateLimitWords say what the agent reported that gonogo waits out.
func rateLimitWords(s *engine.Step) string {
	if l := s.Latest(); l != nil && l.ErrorKind == engine.AgentErrOverloaded {
		return "The agent is overloaded; the run is paused"
	}
	return "The agent is rate limited; the run is paused"
}

// retryWhy names what makes gonogo retry s by itself.
func retryWhy(s *engine.Step) string {
	if engine.RetryActorFor(s) == engine.RateLimitActor {
		return "the agent's rate limit"
	}
	return "on_error: retry"
}

// retryNotice is a FAILED step's notice while gonogo waits to retry it.
func retryNotice(r *engine.Run, s *engine.Step, due time.Time, n, of int, now time.Time) []slack.Block {
	body := []slack.Block{headerBlock(fmt.Sprintf("🔁 Step %d failed: retrying", s.N)),
		section("*" + stepTitle(r, s) + "*" + effortPart(s.Effort) + ": " + resultText(s.Latest())),
		contextBlock(fmt.Sprintf("gonogo runs it again at %s (retry %d of %d, %s). *Redo* runs it now; "+
			"*Abort* ends the run and keeps everything produced so far.", clock(due, now), n, of, retryWhy(s)))}
	var tail []slack.Block
	if act := decisionButtons(r, s); act != nil {
		tail = append(tail, act)
	}
	return fit(body, tail, maxMessageBlocks)
}

func noRun() []slack.Block { return []slack.Block{section("There is no run to show.")} }

func noStep(r *engine.Run, n int) []slack.Block {
	if r == nil {
		return noRun()
	}
	return []slack.Block{section(fmt.Sprintf("Run `%s` has no step %d.", mdLine(string(r.ID), 100), n))}
}

func stepOf(r *engine.Run, n int) *engine.Step {
	if r == nil {
		return nil
	}
	return r.Step(n)
}

// shownAttempt returns the attempt a step message shows and whether it is
// the step's latest.
func shownAttempt(s *engine.Step, n int) (*engine.Attempt, bool) {
	l := s.Latest()
	if n > 0 {
		for i := range s.Attempts {
			if a := &s.Attempts[i]; a.N == n {
				return a, a == l
			}
		}
	}
	return l, true
}

func decisionsOn(s *engine.Step, a *engine.Attempt) []engine.Decision {
	n := 0
	if a != nil {
		n = a.N
	}
	var out []engine.Decision
	for _, d := range s.Decisions {
		if d.Attempt == n {
			out = append(out, d)
		}
	}
	return out
}

// stepTitle is the engine's heading of a step, `Step i of N: skill`, with
// the skill escaped for mrkdwn.
func stepTitle(r *engine.Run, s *engine.Step) string {
	t := engine.Title(r, s)
	t.Skill = mdLine(t.Skill, 120)
	return t.Heading()
}

func effortPart(effort string) string {
	if strings.TrimSpace(effort) == "" {
		return ""
	}
	return " (" + mdLine(effort, 200) + ")"
}

func noAttemptLine(s *engine.Step) string {
	switch s.Status {
	case engine.StepPending:
		return pendingLine(s)
	case engine.StepQueued:
		return "🕒 Queued: waiting for a free runner slot."
	case engine.StepRunning:
		return "⏳ Starting."
	case engine.StepInterrupted:
		return "⚠️ *interrupted*: " + interruptedWhy(s, "gonogo stopped while this step was starting") + ". Redo it, or abort the run."
	case engine.StepAborted:
		return "🛑 Not run: the run was aborted."
	}
	return emojiOrQ(statusEmoji[s.Status]) + " " + mdLine(string(s.Status), 40)
}

// pendingLine says what a pending step waits for: the steps it depends on
// (the first ten), if any.
func pendingLine(s *engine.Step) string {
	if len(s.DependsOn) == 0 {
		return "⚪ Pending."
	}
	var deps []string
	for _, d := range s.DependsOn[:min(len(s.DependsOn), 10)] {
		deps = append(deps, strconv.Itoa(d))
	}
	return "⚪ Pending: starts when step " + strings.Join(deps, ", ") + " is settled."
}

// runningLine says that an attempt runs and since when. It holds nothing
// that changes while the attempt runs, so that the message is updated only
// when the step's state changes; the live progress is the thread's
// loading status.
func runningLine(a *engine.Attempt, now time.Time) string {
	line := "⏳ *Running*"
	if !a.Started.IsZero() {
		line += " since " + when(a.Started, now)
	}
	return line + ". Its live progress shows at the foot of this thread."
}

// resultText is an attempt's result and its reason (engine.ResultText):
// "FAILED - the agent exited with code 1".
func resultText(a *engine.Attempt) string {
	if a == nil || a.Result == "" {
		return "no result yet"
	}
	return mdLine(engine.ResultText(a.Result, a.Reason), 1040)
}

func resultBlocks(r *engine.Run, s *engine.Step, a *engine.Attempt, v View) []slack.Block {
	text := emojiOrQ(resultEmoji[a.Result]) + " *Result:* " + resultText(a)
	if a.Result == engine.ResultManual {
		text += "\nShown, never run."
	}
	if sum := strings.TrimSpace(a.Summary); sum != "" {
		text += "\n*Summary:* " + mdLine(sum, 600)
	}
	out := []slack.Block{section(text)}
	if facts := attemptFacts(a); len(facts) > 0 {
		out = append(out, contextBlock(strings.Join(facts, " · ")))
	}
	if a.Artifact {
		if p, ok := preview(v.Preview); ok {
			out = append(out, p)
		}
		out = append(out, contextBlock(attachedNote(r, s, a, v)))
	}
	return out
}

// attemptFacts are what an attempt took: how long, how many turns, what
// it cost; each only when known.
func attemptFacts(a *engine.Attempt) []string {
	var facts []string
	if !a.Started.IsZero() && !a.Finished.IsZero() && a.Finished.After(a.Started) {
		facts = append(facts, duration(a.Finished.Sub(a.Started)))
	}
	if a.Usage.Turns > 0 {
		facts = append(facts, plural(a.Usage.Turns, "turn"))
	}
	if a.CostUSD > 0 {
		facts = append(facts, money(a.CostUSD))
	}
	return facts
}

// attachedNote says where an attempt's artifact is attached (a link when
// the view has one), its size, and whether a person edited it.
func attachedNote(r *engine.Run, s *engine.Step, a *engine.Attempt, v View) string {
	name := v.ArtifactName
	if name == "" {
		name = artifactName(r, s, a)
	}
	label := "`" + mdLine(name, 200) + "`"
	if u := safeURL(v.ArtifactLink); u != "" {
		label = "<" + u + "|" + strings.ReplaceAll(mdLine(name, 200), "|", "¦") + ">"
	}
	note := "📎 Attached in this thread as " + label
	if a.Size > 0 {
		note += " (" + bytesize(a.Size) + ")"
	}
	if a.Edited {
		note += " · ✏️ edited by a person"
	}
	return note
}

// artifactName is the attached file's name: the one gonogo wrote it under,
// or the name it would have.
func artifactName(r *engine.Run, s *engine.Step, a *engine.Attempt) string {
	if a.File != "" {
		return path.Base(a.File)
	}
	l := s.Latest()
	return path.Base(engine.ArtifactFile(r.ID, s.N, s.Skill, a.N, l == nil || l.N == a.N))
}

// interruptedWhy says why step s was interrupted: the worker running it
// was lost (engine.WorkerLost), else stopped, how gonogo stopping reads
// where it is said.
func interruptedWhy(s *engine.Step, stopped string) string {
	if engine.WorkerLost(s) {
		return "the worker running this step was lost"
	}
	return stopped
}
