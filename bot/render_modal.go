package bot

import (
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"
)

// EditModal opens a step's artifact in a multiline input for editing.
// Slack's input holds 3,000 characters: a longer artifact gets
// EditTooLongModal instead. The private_metadata is the StepRef's value.
func EditModal(ref StepRef, skill string, artifact string) slack.ModalViewRequest {
	text := rdClean(artifact)
	if n := rdTextLen(text); n > maxModalInputText {
		return EditTooLongModal(ref, skill, n)
	}
	input := slack.NewPlainTextInputBlockElement(nil, InputArtifact).
		WithMultiline(true).WithMinLength(1).WithMaxLength(maxModalInputText).WithInitialValue(text)
	intro := "\nReplace the artifact below. Saving records your edit, and the run goes on with the new text."
	if strings.TrimSpace(text) == "" {
		// A FAILED attempt the team fixes by hand (on_error: gate) has none.
		intro = "\nThis attempt has no artifact. Write the step's output below: saving records it, and the run goes on with it."
	}
	blocks := []slack.Block{
		rdSection(rdModalStep(ref, skill) + intro),
		slack.NewInputBlock(BlockArtifact, rdPlainText("Artifact"),
			rdPlainText("Up to 3,000 characters. For a longer artifact, reply in the thread with a file and press Edit again."), input),
	}
	return rdModal(ModalEdit, fmt.Sprintf("Edit step %d", ref.Step), "Save", "Cancel", rdValue(ref.Value()), blocks)
}

// EditTooLongModal says a step's artifact (size characters) is too long for
// Slack's edit box, and how to replace it: reply in the thread with a file
// (or the text) and press Edit again. It has no submit button.
func EditTooLongModal(ref StepRef, skill string, size int) slack.ModalViewRequest {
	blocks := []slack.Block{
		rdSection(rdModalStep(ref, skill) + fmt.Sprintf("\nThe artifact is *%s characters*; Slack's edit box holds at most %s.",
			rdThousands(size), rdThousands(maxModalInputText))),
		rdSection("To replace it, reply in this run's thread with the new artifact as a file (or paste the text), " +
			"then press *Edit* on the step again: gonogo offers your reply as the new artifact."),
	}
	return rdModal("", fmt.Sprintf("Edit step %d", ref.Step), "", "OK", rdValue(ref.Value()), blocks)
}

// EditFromReplyModal offers replies found in the run's thread (most recent
// first; the first ten) as a step's new artifact: "Use @ana's reply from
// 14:05 (file plan.md, 12,345 characters) as the new artifact?". Its
// callback id is ModalEditReply and its private_metadata the StepRef's
// rdValue; the chosen reply comes back as a ReplyRef value in the BlockReply
// input, where the first reply is selected. With no reply it says how to
// give one.
func EditFromReplyModal(ref StepRef, skill string, replies ...Reply) slack.ModalViewRequest {
	title := fmt.Sprintf("Edit step %d", ref.Step)
	if len(replies) == 0 {
		return rdModal("", title, "", "OK", rdValue(ref.Value()), []slack.Block{rdSection(rdModalStep(ref, skill) +
			"\nNo reply to use yet. Reply in this run's thread with the new artifact as a file (or paste the text), then press *Edit* again.")})
	}
	replies = replies[:min(len(replies), rdMaxOptions)]
	first := replies[0]
	line := fmt.Sprintf("Use %s's reply%s (%s, %s characters) as the new artifact of %s?",
		rdWho(first.User), rdReplyTime(first.Time), rdReplyWhat(first), rdThousands(first.Chars), rdModalStep(ref, skill))
	if len(replies) > 1 {
		line += "\nOr choose another reply below."
	}
	opts := make([]*slack.OptionBlockObject, 0, len(replies))
	for _, r := range replies {
		text := rdCut(fmt.Sprintf("%s: %s, %s characters", rdWho(r.User), rdReplyWhat(r), rdThousands(r.Chars)), rdMaxOptionText)
		var desc *slack.TextBlockObject
		if !r.Time.IsZero() {
			desc = rdPlainText(rdPlain("posted "+r.Time.UTC().Format("Jan 2 15:04 UTC"), rdMaxOptionText))
		}
		opts = append(opts, slack.NewOptionBlockObject(rdValue(r.Ref().Value()), rdMrkdwnText(text), desc))
	}
	radio := slack.NewRadioButtonsBlockElement(InputReply, opts...)
	radio.InitialOption = opts[0]
	blocks := []slack.Block{
		rdSection(line),
		slack.NewInputBlock(BlockReply, rdPlainText("Reply to use"), nil, radio),
		rdContextBlock("Saving records your edit, and the run goes on with the reply. The agent's original stays attached in the thread."),
	}
	return rdModal(ModalEditReply, title, "Use this reply", "Cancel", rdValue(ref.Value()), blocks)
}

func rdReplyWhat(r Reply) string {
	if r.File != "" || r.FileID != "" {
		name := r.File
		if name == "" {
			name = "attached"
		}
		return "file `" + rdMdLine(name, 60) + "`"
	}
	return "text"
}

func rdReplyTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return " from " + rdWhen(t, time.Time{})
}

// RedoModal asks for optional feedback to add to the agent's prompt before a
// step is run again.
func RedoModal(ref StepRef, skill string) slack.ModalViewRequest {
	input := slack.NewPlainTextInputBlockElement(rdPlainText("What should change?"), InputFeedback).
		WithMultiline(true).WithMaxLength(maxModalInputText)
	blocks := []slack.Block{
		rdSection("Run " + rdModalStep(ref, skill) + " again as a new attempt. Earlier attempts are kept in the thread."),
		slack.NewInputBlock(BlockFeedback, rdPlainText("Feedback for the agent (optional)"), nil, input).WithOptional(true),
	}
	return rdModal(ModalRedo, fmt.Sprintf("Redo step %d", ref.Step), "Redo", "Cancel", rdValue(ref.Value()), blocks)
}

// SaveWorkflowModal asks for the name a completed chain is saved under as a
// workflow, with name (made of its skills) filled in. Its callback id is
// ModalSaveWorkflow and its private_metadata the StepRef's value; the name
// comes back in the BlockWorkflowName input, where a name that cannot be
// used is shown as the field's error.
func SaveWorkflowModal(ref StepRef, name string, skills []string, thread bool) slack.ModalViewRequest {
	quoted := make([]string, 0, min(len(skills), 20))
	for _, sk := range skills[:min(len(skills), 20)] {
		quoted = append(quoted, "`"+rdMdLine(sk, 100)+"`")
	}
	chain := strings.Join(quoted, " → ")
	if more := len(skills) - len(quoted); more > 0 {
		chain += fmt.Sprintf(" → … %d more", more)
	}
	if thread {
		chain += " (threaded: each step gets the previous step's output)"
	}
	input := slack.NewPlainTextInputBlockElement(nil, InputWorkflowName).
		WithMinLength(1).WithMaxLength(MaxWorkflowName).WithInitialValue(rdPlain(name, MaxWorkflowName))
	blocks := []slack.Block{
		rdSection("Save this run's chain as a workflow the team can run by name:\n" + chain),
		slack.NewInputBlock(BlockWorkflowName, rdPlainText("Workflow name"),
			rdPlainText(fmt.Sprintf("Lower-case letters, digits and dashes, at most %d. Run it later with %s run NAME -- CONTEXT.",
				MaxWorkflowName, rdDefaultCommand)), input),
		rdContextBlock("The chain's context is not saved: give one each time the workflow runs."),
	}
	return rdModal(ModalSaveWorkflow, "Save as workflow", "Save", "Cancel", rdValue(ref.Value()), blocks)
}

func rdModalStep(ref StepRef, skill string) string {
	return fmt.Sprintf("*step %d: %s*", ref.Step, rdMdLine(skill, 120))
}

func rdModal(callback, title, submit, closeLabel, metadata string, blocks []slack.Block) slack.ModalViewRequest {
	m := slack.ModalViewRequest{
		Type:            slack.VTModal,
		Title:           rdPlainText(rdPlain(title, rdMaxModalTitle)),
		Close:           rdPlainText(rdPlain(closeLabel, rdMaxModalTitle)),
		Blocks:          slack.Blocks{BlockSet: blocks},
		PrivateMetadata: metadata,
		CallbackID:      callback,
	}
	if submit != "" {
		m.Submit = rdPlainText(rdPlain(submit, rdMaxModalTitle))
	}
	return m
}
