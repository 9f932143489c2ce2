package bot

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
)

func earlierAttempts(s *engine.Step, shown int, now time.Time) string {
	var parts []string
	for i := range s.Attempts {
		a := &s.Attempts[i]
		if a.N == shown {
			continue
		}
		p := strconv.Itoa(a.N) + " " + mdLine(string(a.Result), 40)
		if a.Result == "" {
			p = strconv.Itoa(a.N) + " unfinished"
		}
		p += fallbackPart(s, a)
		for _, d := range decisionsOn(s, a) {
			w, ok := decisionWords[d.Kind]
			if !ok {
				continue
			}
			if engine.AutomaticActor(d.Actor) {
				p += " (retried automatically)"
				continue
			}
			p += " (" + w.short + " by " + who(d.Actor)
			if d.Feedback != "" {
				p += ": “" + mdLine(d.Feedback, 120) + "”"
			}
			p += ")"
		}
		parts = append(parts, p)
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

// decisionLines says who decided what on attempt a, and when. With a
// quorum, approvals are votes: while the step waits the quorum line counts
// them; once they carried it they read as one approval by all who gave one;
// votes overtaken by another decision are listed as such.
func decisionLines(r *engine.Run, s *engine.Step, a *engine.Attempt, latest bool, now time.Time) []string {
	ds := decisionsOn(s, a)
	var approvers []string
	var lastApprove *engine.Decision
	var others []string
	for i := range ds {
		if ds[i].Kind == engine.DecideApprove {
			approvers = append(approvers, ds[i].Actor)
			lastApprove = &ds[i]
			continue
		}
		others = append(others, decisionLine(ds[i], now))
	}
	if lastApprove == nil {
		return others
	}
	carried := ds[len(ds)-1].Kind == engine.DecideApprove && (s.Status == engine.StepDone || !latest)
	switch {
	case carried:
		d := *lastApprove
		line := decisionLine(d, now)
		if len(uniq(approvers)) > 1 {
			line = decisionWords[engine.DecideApprove].emoji + " Approved by " + people(approvers) + " " + at(d.Time, now)
		}
		return append([]string{line}, others...)
	case latest && s.Status == engine.StepWaiting:
		return others // the quorum line counts the votes
	}
	vote := fmt.Sprintf("👍 Approved by %s (%d of the %d approvals needed)", people(approvers), len(uniq(approvers)), max(r.Quorum, 1))
	return append([]string{vote}, others...)
}

func decisionLine(d engine.Decision, now time.Time) string {
	w, ok := decisionWords[d.Kind]
	if !ok {
		return "❔ " + who(d.Actor) + " decided " + mdLine(string(d.Kind), 40) + " " + at(d.Time, now)
	}
	if d.Kind == engine.DecideRedo && d.Actor == engine.RetryActor {
		return w.emoji + " Retried automatically (on_error: retry) " + at(d.Time, now)
	}
	if d.Kind == engine.DecideRedo && d.Actor == engine.RateLimitActor {
		return w.emoji + " Retried automatically after the agent's rate limit " + at(d.Time, now)
	}
	line := w.emoji + " " + w.done + " by " + who(d.Actor) + " " + at(d.Time, now)
	if d.Kind == engine.DecidePick {
		line = fmt.Sprintf("%s %s candidate %d by %s %s", w.emoji, w.done, d.Candidate, who(d.Actor), at(d.Time, now))
	}
	if d.Kind == engine.DecideRedo && strings.TrimSpace(d.Feedback) != "" {
		line += " with feedback: “" + mdLine(d.Feedback, 800) + "”"
	}
	if d.Kind == engine.DecidePick && strings.TrimSpace(d.Feedback) != "" {
		line += " with the note: “" + mdLine(d.Feedback, 800) + "”"
	}
	return line
}

// waitingNotes are what a step waiting for a decision is waiting for
// beyond the buttons: the retry gonogo makes itself and when, what a
// failed step's on_error gate offers, the quorum count, the last reminder
// and the deadline.
func waitingNotes(r *engine.Run, s *engine.Step, v View, now time.Time) []slack.Block {
	var notes []string
	if line := retryLine(s, now); line != "" {
		notes = append(notes, line)
	}
	if r.PausedByPerson() {
		notes = append(notes, "⏸ "+who(r.PausedBy)+" paused the run "+at(r.PausedAt, now)+
			": this step waits here whatever the run's mode, and no step starts. *Resume* goes on in the run's mode; a decision here goes on from this step.")
	}
	if engine.GateOnError(s) {
		notes = append(notes, "🚧 This step's on_error is *gate*: fix it and go on (*Edit* writes its output, *Skip* goes on without it, "+
			"*Redo* runs it again), or *Abort* the run.")
	}
	if r.Quorum > 1 {
		votes := engine.Approvals(s)
		line := fmt.Sprintf("👥 Approvals: %d of %d", len(uniq(votes)), r.Quorum)
		if len(votes) > 0 {
			line += " (" + people(votes) + ")"
		}
		if r.ExcludeStarter && r.StartedBy != "" {
			line += ". " + who(r.StartedBy) + "'s own approval does not count"
		}
		notes = append(notes, line)
	}
	if !v.RemindedAt.IsZero() {
		notes = append(notes, "⏰ Reminded "+when(v.RemindedAt, now))
	}
	if !v.Deadline.IsZero() {
		line := "⌛ Decide by " + when(v.Deadline, now)
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
	return []slack.Block{contextBlock(strings.Join(notes, "\n"))}
}

// decisionButtons are the buttons engine.Allowed offers for s, each
// carrying the step's latest attempt; nil when the step takes no decision.
func decisionButtons(r *engine.Run, s *engine.Step) *slack.ActionBlock {
	allowed := engine.Allowed(s)
	if len(allowed) == 0 || r.Finished() {
		return nil
	}
	ref := StepRef{Run: r.ID, Step: s.N}
	if l := s.Latest(); l != nil {
		ref.Attempt = l.N
	}
	val := fitValue(ref.Value())
	var els []slack.BlockElement
	for _, k := range allowed {
		label, ok := buttonLabels[k]
		if !ok {
			continue
		}
		b := slack.NewButtonBlockElement(buttonActions[k], val, plainText(label))
		switch k {
		case engine.DecideApprove:
			b.Style = slack.StylePrimary
		case engine.DecideAbort:
			b.Style = slack.StyleDanger
			b.Confirm = confirm("Abort the run?",
				fmt.Sprintf("The run stops at step %d. Everything produced so far is kept.", s.N), "Abort", "Keep going")
		}
		els = append(els, b)
	}
	if len(els) > 0 && r.PausedByPerson() {
		els = append(els, resumeButtons(r)...)
	}
	if len(els) == 0 {
		return nil
	}
	return slack.NewActionBlock("", els...)
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
