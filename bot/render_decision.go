package bot

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
)

// earlierAttempts lists a step's attempts other than the one shown (the
// last attemptsListed of them), each with the decisions made on it.
func earlierAttempts(s *engine.Step, shown int, now time.Time) string {
	var parts []string
	for i := range s.Attempts {
		if a := &s.Attempts[i]; a.N != shown {
			parts = append(parts, earlierAttempt(s, a))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	prefix := "Earlier attempts: "
	if len(parts) > attemptsListed {
		prefix = fmt.Sprintf("Earlier attempts (the last %d of %d): ", attemptsListed, len(parts))
		parts = parts[len(parts)-attemptsListed:]
	}
	return prefix + strings.Join(parts, ", ")
}

// earlierAttempt is one entry of the earlier attempts' line: its number,
// result, fallback skill and the decisions made on it.
func earlierAttempt(s *engine.Step, a *engine.Attempt) string {
	p := strconv.Itoa(a.N) + " " + mdLine(string(a.Result), 40)
	if a.Result == "" {
		p = strconv.Itoa(a.N) + " unfinished"
	}
	p += fallbackPart(s, a)
	for _, d := range decisionsOn(s, a) {
		p += earlierDecision(d)
	}
	return p
}

// earlierDecision is a decision on an earlier attempt, in brackets after
// it; nothing for a kind with no words.
func earlierDecision(d engine.Decision) string {
	w, ok := decisionWords[d.Kind]
	if !ok {
		return ""
	}
	if engine.AutomaticActor(d.Actor) {
		return " (retried automatically)"
	}
	p := " (" + w.short + " by " + who(d.Actor)
	if d.Feedback != "" {
		p += ": “" + mdLine(d.Feedback, 120) + "”"
	}
	return p + ")"
}

// decisionLines says who decided what on attempt a, and when. With a
// quorum, approvals are votes: while the step waits the quorum line counts
// them; once they carried it they read as one approval by all who gave one;
// votes overtaken by another decision are listed as such.
func decisionLines(r *engine.Run, s *engine.Step, a *engine.Attempt, latest bool, now time.Time) []string {
	ds := decisionsOn(s, a)
	approvers, lastApprove, others := sortDecisions(ds, now)
	if lastApprove == nil {
		return others
	}
	carried := ds[len(ds)-1].Kind == engine.DecideApprove && (s.Status == engine.StepDone || !latest)
	if !carried && latest && s.Status == engine.StepWaiting {
		return others // the quorum line counts the votes
	}
	return append([]string{approvalLine(r, approvers, *lastApprove, carried, now)}, others...)
}

// sortDecisions parts the decisions on an attempt into approvals (who gave
// them, and the last) and the lines of the others.
func sortDecisions(ds []engine.Decision, now time.Time) (approvers []string, lastApprove *engine.Decision, others []string) {
	for i := range ds {
		if ds[i].Kind == engine.DecideApprove {
			approvers = append(approvers, ds[i].Actor)
			lastApprove = &ds[i]
			continue
		}
		others = append(others, decisionLine(ds[i], now))
	}
	return approvers, lastApprove, others
}

// approvalLine sums up the approvals given on an attempt: once they
// carried it, one approval by all who gave one; else the votes, counted
// against the quorum.
func approvalLine(r *engine.Run, approvers []string, last engine.Decision, carried bool, now time.Time) string {
	switch {
	case carried && len(uniq(approvers)) > 1:
		return decisionWords[engine.DecideApprove].emoji + " Approved by " + people(approvers) + " " + at(last.Time, now)
	case carried:
		return decisionLine(last, now)
	}
	return fmt.Sprintf("👍 Approved by %s (%d of the %d approvals needed)", people(approvers), len(uniq(approvers)), max(r.Quorum, 1))
}

// decisionLine says who made decision d and when, with the feedback or
// note given with it.
func decisionLine(d engine.Decision, now time.Time) string {
	w, ok := decisionWords[d.Kind]
	if !ok {
		return "❔ " + who(d.Actor) + " decided " + mdLine(string(d.Kind), 40) + " " + at(d.Time, now)
	}
	if why, auto := automaticRedoWhy[d.Actor]; auto && d.Kind == engine.DecideRedo {
		return w.emoji + " Retried automatically " + why + " " + at(d.Time, now)
	}
	line := w.emoji + " " + w.done + " by " + who(d.Actor) + " " + at(d.Time, now)
	if d.Kind == engine.DecidePick {
		line = fmt.Sprintf("%s %s candidate %d by %s %s", w.emoji, w.done, d.Candidate, who(d.Actor), at(d.Time, now))
	}
	if lead, ok := feedbackLead[d.Kind]; ok && strings.TrimSpace(d.Feedback) != "" {
		line += lead + "“" + mdLine(d.Feedback, 800) + "”"
	}
	return line
}

// automaticRedoWhy says, for each actor that redoes a step by itself, why
// it did.
var automaticRedoWhy = map[string]string{
	engine.RetryActor:     "(on_error: retry)",
	engine.RateLimitActor: "after the agent's rate limit",
}

// feedbackLead introduces the words a person gave with a decision, for
// the kinds that take some.
var feedbackLead = map[engine.DecisionKind]string{
	engine.DecideRedo: " with feedback: ",
	engine.DecidePick: " with the note: ",
}

// waitingNotes are what a step waiting for a decision is waiting for
// beyond the buttons: the retry gonogo makes itself and when, what a
// failed step's on_error gate offers, the quorum count, the last reminder
// and the deadline.
func waitingNotes(r *engine.Run, s *engine.Step, v View, now time.Time) []slack.Block {
	notes := []string{retryLine(s, now), pausedNote(r, now), gateNote(s), quorumLine(r, s), remindedNote(v, now), deadlineLine(v, now)}
	notes = slices.DeleteFunc(notes, func(n string) bool { return n == "" })
	if len(notes) == 0 {
		return nil
	}
	return []slack.Block{contextBlock(strings.Join(notes, "\n"))}
}

// pausedNote says that a person paused the run, so the waiting step
// holds whatever the run's mode.
func pausedNote(r *engine.Run, now time.Time) string {
	if !r.PausedByPerson() {
		return ""
	}
	return "⏸ " + who(r.PausedBy) + " paused the run " + at(r.PausedAt, now) +
		": this step waits here whatever the run's mode, and no step starts. *Resume* goes on in the run's mode; a decision here goes on from this step."
}

// gateNote says what a failed step's on_error gate offers.
func gateNote(s *engine.Step) string {
	if !engine.GateOnError(s) {
		return ""
	}
	return "🚧 This step's on_error is *gate*: fix it and go on (*Edit* writes its output, *Skip* goes on without it, " +
		"*Redo* runs it again), or *Abort* the run."
}

// quorumLine counts the approvals a step has of the quorum it needs, and
// names who gave them; nothing when one approval is enough.
func quorumLine(r *engine.Run, s *engine.Step) string {
	if r.Quorum <= 1 {
		return ""
	}
	votes := engine.Approvals(s)
	line := fmt.Sprintf("👥 Approvals: %d of %d", len(uniq(votes)), r.Quorum)
	if len(votes) > 0 {
		line += " (" + people(votes) + ")"
	}
	if r.ExcludeStarter && r.StartedBy != "" {
		line += ". " + who(r.StartedBy) + "'s own approval does not count"
	}
	return line
}

// remindedNote says when the approvers were last reminded.
func remindedNote(v View, now time.Time) string {
	if v.RemindedAt.IsZero() {
		return ""
	}
	return "⏰ Reminded " + when(v.RemindedAt, now)
}

// deadlineLine says by when to decide and what happens after.
func deadlineLine(v View, now time.Time) string {
	if v.Deadline.IsZero() {
		return ""
	}
	line := "⌛ Decide by " + when(v.Deadline, now)
	if v.AbortAtDeadline {
		return line + ": the run is aborted then"
	}
	return line + ": after that the step keeps waiting"
}

// decisionButtons are the buttons engine.Allowed offers for s, each
// carrying the step's latest attempt; nil when the step takes no decision.
func decisionButtons(r *engine.Run, s *engine.Step) *slack.ActionBlock {
	allowed := engine.Allowed(s)
	if len(allowed) == 0 || r.Finished() {
		return nil
	}
	val := fitValue(attemptRef(r, s, s.Latest()).Value())
	var els []slack.BlockElement
	for _, k := range allowed {
		if b := decisionButton(k, val, s.N); b != nil {
			els = append(els, b)
		}
	}
	if len(els) > 0 && r.PausedByPerson() {
		els = append(els, resumeButtons(r)...)
	}
	if len(els) == 0 {
		return nil
	}
	return slack.NewActionBlock("", els...)
}

// attemptRef names attempt a of step s (no attempt when a is nil).
func attemptRef(r *engine.Run, s *engine.Step, a *engine.Attempt) StepRef {
	ref := StepRef{Run: r.ID, Step: s.N}
	if a != nil {
		ref.Attempt = a.N
	}
	return ref
}

// decisionButton is the button for decision k on step n, carrying val:
// Approve is the primary one, Abort asks to be confirmed; nil for a kind
// with no button.
func decisionButton(k engine.DecisionKind, val string, n int) *slack.ButtonBlockElement {
	label, ok := buttonLabels[k]
	if !ok {
		return nil
	}
	b := slack.NewButtonBlockElement(buttonActions[k], val, plainText(label))
	switch k {
	case engine.DecideApprove:
		b.Style = slack.StylePrimary
	case engine.DecideAbort:
		b.Style = slack.StyleDanger
		b.Confirm = confirm("Abort the run?",
			fmt.Sprintf("The run stops at step %d. Everything produced so far is kept.", n), "Abort", "Keep going")
	}
	return b
}

func cancelButton(ref StepRef) *slack.ButtonBlockElement {
	b := slack.NewButtonBlockElement(ActionCancel, fitValue(ref.Value()), plainText("Cancel"))
	b.Style = slack.StyleDanger
	b.Confirm = confirm("Cancel this step?",
		"The agent is stopped and the step FAILS; then you can redo it or abort the run.", "Cancel step", "Let it run")
	return b
}

func confirm(title, text, yes, no string) *slack.ConfirmationBlockObject {
	c := slack.NewConfirmationBlockObject(plainText(plain(title, maxConfirmTitle)), plainText(plain(text, maxConfirmText)),
		plainText(plain(yes, maxConfirmButton)), plainText(plain(no, maxConfirmButton)))
	c.Style = slack.StyleDanger
	return c
}
