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
// skill (effort)`, then while it runs the live progress and a Cancel button;
// once it finished the result, a one-line summary, a preview of the
// artifact and where it is attached; at a checkpoint the buttons
// engine.Allowed offers (only Redo and Abort after a FAILED or interrupted
// step); after a decision, who decided what and when instead of buttons.
func StepMessage(r *engine.Run, n int, v View) []slack.Block {
	s := rdStepOf(r, n)
	if s == nil {
		return rdNoStep(r, n)
	}
	now := rdNowOf(r, v)
	a, latest := rdShownAttempt(s, v.Attempt)
	title := "*" + rdStepTitle(r, s) + "*" + rdEffortPart(s.Effort)
	if a != nil && a.N > 1 {
		title += fmt.Sprintf(" · attempt %d", a.N)
	}
	if a != nil {
		title += rdFallbackPart(s, a)
	}
	body := []slack.Block{rdSection(title)}
	var tail []slack.Block
	if line := rdParentLine(r, s); line != "" {
		body = append(body, rdContextBlock(line))
	}
	if a != nil && a.Feedback != "" {
		body = append(body, rdContextBlock("🔁 Started with the reviewer's feedback: “"+rdMdLine(a.Feedback, 600)+"”"))
	}
	running := latest && s.Status == engine.StepRunning && a != nil && a.Result == ""
	switch {
	case a == nil:
		body = append(body, rdSection(rdNoAttemptLine(s)))
	case running:
		body = append(body, rdSection(rdProgressLine(a, v, now)))
		tail = append(tail, slack.NewActionBlock("", rdCancelButton(StepRef{Run: r.ID, Step: s.N, Attempt: a.N})))
	case latest && s.Status == engine.StepInterrupted:
		body = append(body, rdSection("⚠️ *interrupted*: gonogo stopped while this step was running. Redo it, or abort the run."))
	case a.Result == "":
		body = append(body, rdSection("🛑 Stopped: the run was aborted while this step was running."))
	default:
		body = append(body, rdResultBlocks(r, s, a, v)...)
	}
	if latest && len(s.Attempts) > 1 {
		if line := rdEarlierAttempts(s, a.N, now); line != "" {
			body = append(body, rdContextBlock(line))
		}
	}
	if note := rdAddedNote(r, s, v); note != "" && latest {
		tail = append(tail, rdContextBlock(note))
	}
	decided := rdDecisionLines(r, s, a, latest, now)
	if len(decided) > 0 {
		tail = append(tail, rdSection(strings.Join(decided, "\n")))
	}
	switch {
	case !latest:
		tail = append(tail, rdContextBlock(fmt.Sprintf("A newer attempt (%d) of this step follows in the thread.", s.Latest().N)))
	case r.Finished() && !s.Settled() && !slices.ContainsFunc(rdDecisionsOn(s, a), func(d engine.Decision) bool { return d.Kind == engine.DecideAbort }):
		tail = append(tail, rdSection(rdAbortLine(r, v, now)))
	case s.Status == engine.StepWaiting || s.Status == engine.StepInterrupted:
		if s.Status == engine.StepWaiting {
			tail = append(tail, rdWaitingNotes(r, s, v, now)...)
		}
		if act := rdDecisionButtons(r, s); act != nil {
			tail = append(tail, act)
		}
	case s.Status == engine.StepQueued && a != nil && engine.AttemptSkill(s, nil) != engine.AttemptSkill(s, a):
		tail = append(tail, rdContextBlock("🕒 The fallback skill `"+rdMdLine(engine.AttemptSkill(s, nil), 120)+
			"` runs next: its attempt starts when a runner slot is free."))
	case s.Status == engine.StepQueued && a != nil:
		tail = append(tail, rdContextBlock("🕒 A new attempt is queued: it starts when a runner slot is free."))
	case s.Status == engine.StepSkipped && rdOptionalFailed(s):
		tail = append(tail, rdContextBlock("⏭ "+rdOptionalFailedWords(s)+": the run goes on without it."))
	case s.Status == engine.StepDone && len(decided) == 0 && a != nil && a.Result != "":
		tail = append(tail, rdContextBlock("⏩ Advanced automatically (guarded auto)."))
	}
	return rdFit(body, tail, rdMaxMessageBlocks)
}

// Interrupted announces, in the run's thread, a step that was running when
// gonogo stopped; it offers Redo and Abort while the step still waits for
// one of them.
func Interrupted(r *engine.Run, n int, v View) []slack.Block {
	s := rdStepOf(r, n)
	if s == nil {
		return rdNoStep(r, n)
	}
	now := rdNowOf(r, v)
	body := []slack.Block{rdSection("⚠️ *" + rdStepTitle(r, s) + "*" + rdEffortPart(s.Effort) +
		" was *interrupted*: gonogo stopped while it was running.")}
	var facts []string
	a, latest := rdShownAttempt(s, v.Attempt)
	if a != nil {
		f := fmt.Sprintf("Attempt %d", a.N)
		if !a.Started.IsZero() {
			f += " started " + rdWhen(a.Started, now)
		}
		facts = append(facts, f+".")
	}
	facts = append(facts, "*Redo* runs it again from the start; *Abort* ends the run and keeps everything produced so far.")
	body = append(body, rdContextBlock(strings.Join(facts, " ")))
	var tail []slack.Block
	if latest && s.Status == engine.StepInterrupted && !r.Finished() {
		if act := rdDecisionButtons(r, s); act != nil {
			tail = append(tail, act)
		}
	} else {
		tail = append(tail, rdContextBlock("This step has moved on: it is "+rdMdLine(string(s.Status), 40)+" now."))
	}
	return rdFit(body, tail, rdMaxMessageBlocks)
}

// Reminder nudges the approvers of a step that has been waiting for a
// decision; the buttons stay on the step's own message.
func Reminder(r *engine.Run, n int, v View) []slack.Block {
	s := rdStepOf(r, n)
	if s == nil {
		return rdNoStep(r, n)
	}
	now := rdNowOf(r, v)
	line := "⏰ *" + rdStepTitle(r, s) + "*" + rdEffortPart(s.Effort) + " is waiting for a decision"
	if a := s.Latest(); a != nil && !a.Finished.IsZero() {
		line += " since " + rdWhen(a.Finished, now)
	}
	line += ". " + rdWho(r.StartedBy) + ", approvers: decide with the buttons on the step's message."
	body := []slack.Block{rdSection(line)}
	notes := v
	notes.RemindedAt = time.Time{} // this message is the reminder
	body = append(body, rdWaitingNotes(r, s, notes, now)...)
	return rdFit(body, nil, rdMaxMessageBlocks)
}

// rdStepName is how a note names a step: its workflow id, else its skill.
func rdStepName(s *engine.Step) string {
	if s.ID != "" {
		return s.ID
	}
	return s.Skill
}

// rdFallbackPart names the fallback skill an attempt ran instead of the
// step's own.
func rdFallbackPart(s *engine.Step, a *engine.Attempt) string {
	if sk := engine.AttemptSkill(s, a); sk != s.Skill {
		return " · ran the fallback `" + rdMdLine(sk, 120) + "`"
	}
	return ""
}

// rdParentLine places a step that another step's output added under it.
func rdParentLine(r *engine.Run, s *engine.Step) string {
	p := r.Step(s.Parent)
	if p == nil || s.Parent >= s.N {
		return ""
	}
	what := "from the workflow it routed the run to"
	if p.Rules.Decompose != "" {
		what = "one of the tasks it split its work into"
	}
	return fmt.Sprintf("↳ Sub-step of step %d `%s`: %s.", p.N, rdMdLine(rdStepName(p), 120), what)
}

// rdAddedNote says what a route or decompose step's output added to the
// run, once it has: "Step 2 `triage` routed the run to workflow `bugfix`:
// 3 steps added (steps 5 to 7)". A route step's output (the preview) names
// the workflow.
func rdAddedNote(r *engine.Run, s *engine.Step, v View) string {
	var added []rdNode
	for i := range r.Steps {
		if r.Steps[i].Parent == s.N && s.N < r.Steps[i].N {
			added = append(added, rdNode{s: &r.Steps[i]})
		}
	}
	if len(added) == 0 {
		return ""
	}
	who := fmt.Sprintf("Step %d `%s`", s.N, rdMdLine(rdStepName(s), 120))
	if s.Rules.Decompose != "" {
		return fmt.Sprintf("➕ %s split its work into %s, each run with `%s` (%s, listed in the header).",
			who, rdPlural(len(added), "task"), rdMdLine(s.Rules.Decompose, 120), rdNodeSpan(added))
	}
	to := "another workflow"
	if name, err := engine.RouteTarget([]byte(v.Preview)); err == nil {
		to = "workflow `" + rdMdLine(name, 120) + "`"
	}
	return fmt.Sprintf("➕ %s routed the run to %s: %s added (%s).", who, to, rdPlural(len(added), "step"), rdNodeSpan(added))
}

// rdOptionalFailed reports an optional step whose failure the run went on
// without: skipped, its latest attempt FAILED, and no one skipped it.
func rdOptionalFailed(s *engine.Step) bool {
	l := s.Latest()
	if s.Status != engine.StepSkipped || !s.Rules.Optional || l == nil || l.Result != engine.ResultFailed {
		return false
	}
	return !slices.ContainsFunc(rdDecisionsOn(s, l), func(d engine.Decision) bool { return d.Kind == engine.DecideSkip })
}

func rdOptionalFailedWords(s *engine.Step) string {
	reason := "no reason given"
	if l := s.Latest(); l != nil && strings.TrimSpace(l.Reason) != "" {
		reason = rdMdLine(l.Reason, 600)
	}
	return "skipped (optional step failed: " + reason + ")"
}

// rdGateOnError reports a FAILED step whose on_error is gate: the team may
// fix it (edit, skip, redo) besides aborting.
func rdGateOnError(s *engine.Step) bool {
	l := s.Latest()
	return s.Status == engine.StepWaiting && l != nil && l.Result == engine.ResultFailed && s.Rules.OnError.Kind == engine.OnErrorGate
}

// rdRetryLine says when gonogo retries a FAILED step by itself.
func rdRetryLine(s *engine.Step, now time.Time) string {
	due, n, of, ok := engine.RetryDue(s)
	if !ok {
		return ""
	}
	return fmt.Sprintf("🔁 Retrying at %s (retry %d of %d). *Redo* runs it now; *Abort* ends the run.", rdClock(due, now), n, of)
}

// rdRetryNotice is a FAILED step's notice while gonogo waits to retry it.
func rdRetryNotice(r *engine.Run, s *engine.Step, due time.Time, n, of int, now time.Time) []slack.Block {
	body := []slack.Block{rdHeader(fmt.Sprintf("🔁 Step %d failed: retrying", s.N)),
		rdSection("*" + rdStepTitle(r, s) + "*" + rdEffortPart(s.Effort) + ": " + rdResultText(s.Latest())),
		rdContextBlock(fmt.Sprintf("gonogo runs it again at %s (retry %d of %d, on_error: retry). *Redo* runs it now; "+
			"*Abort* ends the run and keeps everything produced so far.", rdClock(due, now), n, of))}
	var tail []slack.Block
	if act := rdDecisionButtons(r, s); act != nil {
		tail = append(tail, act)
	}
	return rdFit(body, tail, rdMaxMessageBlocks)
}

func rdNoRun() []slack.Block { return []slack.Block{rdSection("There is no run to show.")} }

func rdNoStep(r *engine.Run, n int) []slack.Block {
	if r == nil {
		return rdNoRun()
	}
	return []slack.Block{rdSection(fmt.Sprintf("Run `%s` has no step %d.", rdMdLine(string(r.ID), 100), n))}
}

func rdStepOf(r *engine.Run, n int) *engine.Step {
	if r == nil {
		return nil
	}
	return r.Step(n)
}

// rdShownAttempt returns the attempt a step message shows and whether it is
// the step's latest.
func rdShownAttempt(s *engine.Step, n int) (*engine.Attempt, bool) {
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

func rdDecisionsOn(s *engine.Step, a *engine.Attempt) []engine.Decision {
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

func rdStepTitle(r *engine.Run, s *engine.Step) string {
	return fmt.Sprintf("Step %d of %d: %s", s.N, len(r.Steps), rdMdLine(s.Skill, 120))
}

func rdEffortPart(effort string) string {
	if strings.TrimSpace(effort) == "" {
		return ""
	}
	return " (" + rdMdLine(effort, 200) + ")"
}

func rdNoAttemptLine(s *engine.Step) string {
	switch s.Status {
	case engine.StepPending:
		if len(s.DependsOn) > 0 {
			var deps []string
			for _, d := range s.DependsOn[:min(len(s.DependsOn), 10)] {
				deps = append(deps, strconv.Itoa(d))
			}
			return "⚪ Pending: starts when step " + strings.Join(deps, ", ") + " is settled."
		}
		return "⚪ Pending."
	case engine.StepQueued:
		return "🕒 Queued: waiting for a free runner slot."
	case engine.StepRunning:
		return "⏳ Starting."
	case engine.StepInterrupted:
		return "⚠️ *interrupted*: gonogo stopped while this step was starting. Redo it, or abort the run."
	case engine.StepAborted:
		return "🛑 Not run: the run was aborted."
	}
	return rdOrQ(rdStatusEmoji[s.Status]) + " " + rdMdLine(string(s.Status), 40)
}

func rdProgressLine(a *engine.Attempt, v View, now time.Time) string {
	el := now.Sub(a.Started)
	p := v.Progress
	if p != nil && p.Elapsed > 0 {
		el = p.Elapsed
	}
	parts := []string{"⏳ *Running*", rdDuration(el)}
	if p != nil {
		parts = append(parts, rdPlural(p.Turns, "turn"))
		tools := rdPlural(p.ToolCalls, "tool call")
		if p.LastTool != "" {
			tools += " (last: " + rdMdLine(p.LastTool, 60) + ")"
		}
		parts = append(parts, tools)
		if p.CostUSD > 0 {
			parts = append(parts, rdMoney(p.CostUSD))
		}
	}
	return strings.Join(parts, " · ")
}

// rdResultText is an attempt's result and its reason: "FAILED - the agent
// exited with code 1".
func rdResultText(a *engine.Attempt) string {
	if a == nil || a.Result == "" {
		return "no result yet"
	}
	line := rdMdLine(string(a.Result), 40)
	reason := a.Reason
	if a.Result == engine.ResultNotExecuted {
		reason = strings.TrimPrefix(reason, "NOT EXECUTED - ")
	}
	if strings.TrimSpace(reason) != "" {
		line += " - " + rdMdLine(reason, 1000)
	}
	return line
}

func rdResultBlocks(r *engine.Run, s *engine.Step, a *engine.Attempt, v View) []slack.Block {
	text := rdOrQ(rdResultEmoji[a.Result]) + " *Result:* " + rdResultText(a)
	if a.Result == engine.ResultManual {
		text += "\nShown, never run."
	}
	if sum := strings.TrimSpace(a.Summary); sum != "" {
		text += "\n*Summary:* " + rdMdLine(sum, 600)
	}
	out := []slack.Block{rdSection(text)}
	var facts []string
	if !a.Started.IsZero() && !a.Finished.IsZero() && a.Finished.After(a.Started) {
		facts = append(facts, rdDuration(a.Finished.Sub(a.Started)))
	}
	if a.Usage.Turns > 0 {
		facts = append(facts, rdPlural(a.Usage.Turns, "turn"))
	}
	if a.CostUSD > 0 {
		facts = append(facts, rdMoney(a.CostUSD))
	}
	if len(facts) > 0 {
		out = append(out, rdContextBlock(strings.Join(facts, " · ")))
	}
	if a.Artifact {
		if p, ok := rdPreview(v.Preview); ok {
			out = append(out, rdSection(p))
		}
		name := v.ArtifactName
		if name == "" {
			name = rdArtifactName(r, s, a)
		}
		label := "`" + rdMdLine(name, 200) + "`"
		if u := rdSafeURL(v.ArtifactLink); u != "" {
			label = "<" + u + "|" + strings.ReplaceAll(rdMdLine(name, 200), "|", "¦") + ">"
		}
		note := "📎 Attached in this thread as " + label
		if a.Size > 0 {
			note += " (" + rdBytesize(a.Size) + ")"
		}
		if a.Edited {
			note += " · ✏️ edited by a person"
		}
		out = append(out, rdContextBlock(note))
	}
	return out
}

// rdArtifactName is the attached file's name: the one gonogo wrote it under,
// or the name it would have.
func rdArtifactName(r *engine.Run, s *engine.Step, a *engine.Attempt) string {
	if a.File != "" {
		return path.Base(a.File)
	}
	l := s.Latest()
	return path.Base(engine.ArtifactFile(r.ID, s.N, s.Skill, a.N, l == nil || l.N == a.N))
}

// rdPreview is the first lines of an artifact as a code block, cut to stay
// well within a section's 3,000 characters. It reads only the lines it
// shows (and counts the rest), however large the artifact.
func rdPreview(text string) (string, bool) {
	text = strings.TrimLeft(text, " \t\r\n")
	if text == "" {
		return "", false
	}
	var lines []string
	rest := text
	for len(lines) < rdPreviewLines && rest != "" {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		line = strings.TrimRight(rdClean(line), " \t")
		// A fence inside the artifact would end the code block early.
		line = strings.ReplaceAll(rdCut(rdEscape(line), 240), "``", "`\u200b`")
		lines = append(lines, line)
	}
	more := 0
	if strings.TrimSpace(rest) != "" {
		more = strings.Count(strings.TrimRight(rest, " \t\r\n"), "\n") + 1
	}
	size := 0
	for i, l := range lines {
		if size+rdTextLen(l)+1 > rdPreviewBudget {
			more += len(lines) - i
			lines = lines[:i]
			break
		}
		size += rdTextLen(l) + 1
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 {
		return "", false
	}
	out := "```\n" + strings.Join(lines, "\n") + "\n```"
	if more > 0 {
		out += "\n_… " + rdPlural(more, "more line") + " in the attached file_"
	}
	return out, true
}

func rdEarlierAttempts(s *engine.Step, shown int, now time.Time) string {
	var parts []string
	for i := range s.Attempts {
		a := &s.Attempts[i]
		if a.N == shown {
			continue
		}
		p := strconv.Itoa(a.N) + " " + rdMdLine(string(a.Result), 40)
		if a.Result == "" {
			p = strconv.Itoa(a.N) + " unfinished"
		}
		p += rdFallbackPart(s, a)
		for _, d := range rdDecisionsOn(s, a) {
			w, ok := rdDecisionWords[d.Kind]
			if !ok {
				continue
			}
			if d.Actor == engine.RetryActor {
				p += " (retried automatically)"
				continue
			}
			p += " (" + w.short + " by " + rdWho(d.Actor)
			if d.Feedback != "" {
				p += ": “" + rdMdLine(d.Feedback, 120) + "”"
			}
			p += ")"
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return ""
	}
	rdPrefix := "Earlier attempts: "
	if len(parts) > rdAttemptsListed {
		rdPrefix = fmt.Sprintf("Earlier attempts (the last %d of %d): ", rdAttemptsListed, len(parts))
		parts = parts[len(parts)-rdAttemptsListed:]
	}
	return rdPrefix + strings.Join(parts, ", ")
}

// rdDecisionLines says who decided what on attempt a, and when. With a
// quorum, approvals are votes: while the step waits the quorum line counts
// them; once they carried it they read as one approval by all who gave one;
// votes overtaken by another decision are listed as such.
func rdDecisionLines(r *engine.Run, s *engine.Step, a *engine.Attempt, latest bool, now time.Time) []string {
	ds := rdDecisionsOn(s, a)
	var approvers []string
	var lastApprove *engine.Decision
	var others []string
	for i := range ds {
		if ds[i].Kind == engine.DecideApprove {
			approvers = append(approvers, ds[i].Actor)
			lastApprove = &ds[i]
			continue
		}
		others = append(others, rdDecisionLine(ds[i], now))
	}
	if lastApprove == nil {
		return others
	}
	carried := ds[len(ds)-1].Kind == engine.DecideApprove && (s.Status == engine.StepDone || !latest)
	switch {
	case carried:
		d := *lastApprove
		line := rdDecisionLine(d, now)
		if len(rdUniq(approvers)) > 1 {
			line = rdDecisionWords[engine.DecideApprove].emoji + " Approved by " + rdPeople(approvers) + " " + rdAt(d.Time, now)
		}
		return append([]string{line}, others...)
	case latest && s.Status == engine.StepWaiting:
		return others // the quorum line counts the votes
	}
	vote := fmt.Sprintf("👍 Approved by %s (%d of the %d approvals needed)", rdPeople(approvers), len(rdUniq(approvers)), max(r.Quorum, 1))
	return append([]string{vote}, others...)
}

func rdDecisionLine(d engine.Decision, now time.Time) string {
	w, ok := rdDecisionWords[d.Kind]
	if !ok {
		return "❔ " + rdWho(d.Actor) + " decided " + rdMdLine(string(d.Kind), 40) + " " + rdAt(d.Time, now)
	}
	if d.Kind == engine.DecideRedo && d.Actor == engine.RetryActor {
		return w.emoji + " Retried automatically (on_error: retry) " + rdAt(d.Time, now)
	}
	line := w.emoji + " " + w.done + " by " + rdWho(d.Actor) + " " + rdAt(d.Time, now)
	if d.Kind == engine.DecideRedo && strings.TrimSpace(d.Feedback) != "" {
		line += " with feedback: “" + rdMdLine(d.Feedback, 800) + "”"
	}
	return line
}

// rdWaitingNotes are what a step waiting for a decision is waiting for
// beyond the buttons: the retry gonogo makes itself and when, what a
// failed step's on_error gate offers, the quorum count, the last reminder
// and the deadline.
func rdWaitingNotes(r *engine.Run, s *engine.Step, v View, now time.Time) []slack.Block {
	var notes []string
	if line := rdRetryLine(s, now); line != "" {
		notes = append(notes, line)
	}
	if rdGateOnError(s) {
		notes = append(notes, "🚧 This step's on_error is *gate*: fix it and go on (*Edit* writes its output, *Skip* goes on without it, "+
			"*Redo* runs it again), or *Abort* the run.")
	}
	if r.Quorum > 1 {
		votes := engine.Approvals(s)
		line := fmt.Sprintf("👥 Approvals: %d of %d", len(rdUniq(votes)), r.Quorum)
		if len(votes) > 0 {
			line += " (" + rdPeople(votes) + ")"
		}
		if r.ExcludeStarter && r.StartedBy != "" {
			line += ". " + rdWho(r.StartedBy) + "'s own approval does not count"
		}
		notes = append(notes, line)
	}
	if !v.RemindedAt.IsZero() {
		notes = append(notes, "⏰ Reminded "+rdWhen(v.RemindedAt, now))
	}
	if !v.Deadline.IsZero() {
		line := "⌛ Decide by " + rdWhen(v.Deadline, now)
		if v.AbortAtDeadline {
			line += ": the run is aborted then"
		} else {
			line += ": after that the step keeps waiting"
		}
		notes = append(notes, line)
	}
	if len(notes) == 0 {
		return nil
	}
	return []slack.Block{rdContextBlock(strings.Join(notes, "\n"))}
}

// rdDecisionButtons are the buttons engine.Allowed offers for s, each
// carrying the step's latest attempt; nil when the step takes no decision.
func rdDecisionButtons(r *engine.Run, s *engine.Step) *slack.ActionBlock {
	allowed := engine.Allowed(s)
	if len(allowed) == 0 || r.Finished() {
		return nil
	}
	ref := StepRef{Run: r.ID, Step: s.N}
	if l := s.Latest(); l != nil {
		ref.Attempt = l.N
	}
	val := rdValue(ref.Value())
	var els []slack.BlockElement
	for _, k := range allowed {
		label, ok := rdButtonLabels[k]
		if !ok {
			continue
		}
		b := slack.NewButtonBlockElement(rdButtonActions[k], val, rdPlainText(label))
		switch k {
		case engine.DecideApprove:
			b.Style = slack.StylePrimary
		case engine.DecideAbort:
			b.Style = slack.StyleDanger
			b.Confirm = rdConfirm("Abort the run?",
				fmt.Sprintf("The run stops at step %d. Everything produced so far is kept.", s.N), "Abort", "Keep going")
		}
		els = append(els, b)
	}
	if len(els) == 0 {
		return nil
	}
	return slack.NewActionBlock("", els...)
}

func rdCancelButton(ref StepRef) *slack.ButtonBlockElement {
	b := slack.NewButtonBlockElement(ActionCancel, rdValue(ref.Value()), rdPlainText("Cancel"))
	b.Style = slack.StyleDanger
	b.Confirm = rdConfirm("Cancel this step?",
		"The agent is stopped and the step FAILS; then you can redo it or abort the run.", "Cancel step", "Let it run")
	return b
}

func rdConfirm(title, text, yes, no string) *slack.ConfirmationBlockObject {
	c := slack.NewConfirmationBlockObject(rdPlainText(rdPlain(title, rdMaxConfirmTitle)), rdPlainText(rdPlain(text, rdMaxConfirmText)),
		rdPlainText(rdPlain(yes, rdMaxConfirmButton)), rdPlainText(rdPlain(no, rdMaxConfirmButton)))
	c.Style = slack.StyleDanger
	return c
}
