package bot

import (
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"
)

// LoadingModal is the modal a click on Edit, Redo or Save as workflow
// opens at once, before anything is read: Slack takes the click's trigger
// for 3 s only, and reading the artifact, the thread or who may decide can
// take longer. views.update then replaces it with the modal itself, or
// with a NoticeModal saying why there is none. It has no submit button.
func LoadingModal(kind ActionKind, ref StepRef) slack.ModalViewRequest {
	return modal(ModalLoading, modalTitle(kind, ref), "", "Cancel", fitValue(ref.Value()),
		[]slack.Block{section("⏳ Loading…")})
}

// NoticeModal takes the place of a modal that cannot be offered: text
// says why (the person may not decide, the step has moved on, the
// artifact cannot be read) and that nothing changed. text is mrkdwn that
// gonogo wrote (it may mention the run's starter), never what a person
// typed. It has no submit button.
func NoticeModal(kind ActionKind, ref StepRef, text string) slack.ModalViewRequest {
	return modal("", modalTitle(kind, ref), "", "OK", fitValue(ref.Value()), []slack.Block{section(text)})
}

// modalTitle is the title of the modal a button opens, the same from the
// loading view to the filled one.
func modalTitle(kind ActionKind, ref StepRef) string {
	switch kind {
	case ActRedo:
		return fmt.Sprintf("Redo step %d", ref.Step)
	case ActSaveWorkflow:
		return "Save as workflow"
	}
	return fmt.Sprintf("Edit step %d", ref.Step)
}

// EditModal opens a step's artifact in a multiline input for editing.
// Slack's input holds 3,000 characters: a longer artifact gets
// EditTooLongModal instead. The private_metadata is the StepRef's value.
func EditModal(ref StepRef, skill string, artifact string) slack.ModalViewRequest {
	text := clean(artifact)
	if n := textLen(text); n > maxModalInputText {
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
		section(modalStep(ref, skill) + intro),
		slack.NewInputBlock(BlockArtifact, plainText("Artifact"),
			plainText("Up to 3,000 characters. For a longer artifact, reply in the thread with a file and press Edit again."), input),
	}
	return modal(ModalEdit, modalTitle(ActEdit, ref), "Save", "Cancel", fitValue(ref.Value()), blocks)
}

// EditTooLongModal says a step's artifact (size characters) is too long for
// Slack's edit box, and how to replace it: reply in the thread with a file
// (or the text) and press Edit again. It has no submit button.
func EditTooLongModal(ref StepRef, skill string, size int) slack.ModalViewRequest {
	blocks := []slack.Block{
		section(modalStep(ref, skill) + fmt.Sprintf("\nThe artifact is *%s characters*; Slack's edit box holds at most %s.",
			thousands(size), thousands(maxModalInputText))),
		section("To replace it, reply in this run's thread with the new artifact as a file (or paste the text), " +
			"then press *Edit* on the step again: gonogo offers your reply as the new artifact."),
	}
	return modal("", modalTitle(ActEdit, ref), "", "OK", fitValue(ref.Value()), blocks)
}

// EditFromReplyModal offers replies found in the run's thread (most recent
// first; the first ten) as a step's new artifact: "Use @ana's reply from
// 14:05 (file plan.md, 12,345 characters) as the new artifact?". Its
// callback id is ModalEditReply and its private_metadata the StepRef's
// fitValue; the chosen reply comes back as a ReplyRef value in the BlockReply
// input, where the first reply is selected. With no reply it says how to
// give one.
func EditFromReplyModal(ref StepRef, skill string, replies ...Reply) slack.ModalViewRequest {
	title := modalTitle(ActEdit, ref)
	if len(replies) == 0 {
		return modal("", title, "", "OK", fitValue(ref.Value()), []slack.Block{section(modalStep(ref, skill) +
			"\nNo reply to use yet. Reply in this run's thread with the new artifact as a file (or paste the text), then press *Edit* again.")})
	}
	replies = replies[:min(len(replies), maxOptions)]
	first := replies[0]
	line := fmt.Sprintf("Use %s's reply%s (%s, %s characters) as the new artifact of %s?",
		who(first.User), replyTime(first.Time), replyWhat(first), thousands(first.Chars), modalStep(ref, skill))
	if len(replies) > 1 {
		line += "\nOr choose another reply below."
	}
	opts := make([]*slack.OptionBlockObject, 0, len(replies))
	for _, r := range replies {
		text := cut(fmt.Sprintf("%s: %s, %s characters", who(r.User), replyWhat(r), thousands(r.Chars)), maxOptionText)
		var desc *slack.TextBlockObject
		if !r.Time.IsZero() {
			desc = plainText(plain("posted "+r.Time.UTC().Format("Jan 2 15:04 UTC"), maxOptionText))
		}
		opts = append(opts, slack.NewOptionBlockObject(fitValue(r.Ref().Value()), mrkdwnText(text), desc))
	}
	radio := slack.NewRadioButtonsBlockElement(InputReply, opts...)
	radio.InitialOption = opts[0]
	blocks := []slack.Block{
		section(line),
		slack.NewInputBlock(BlockReply, plainText("Reply to use"), nil, radio),
		contextBlock("Saving records your edit, and the run goes on with the reply. The agent's original stays attached in the thread."),
	}
	return modal(ModalEditReply, title, "Use this reply", "Cancel", fitValue(ref.Value()), blocks)
}

// UnusableReplyModal says that the reply found in the thread for a
// step's new artifact (the person's latest) cannot replace it, and why
// (problem, in words for the person), before anything is submitted: how
// to give another. It has no submit button.
func UnusableReplyModal(ref StepRef, skill string, r Reply, problem string) slack.ModalViewRequest {
	line := fmt.Sprintf("Your reply%s (%s) cannot replace the artifact of %s: %s.", replyTime(r.Time), replyWhat(r),
		modalStep(ref, skill), md(strings.TrimSuffix(problem, "."), 1500))
	blocks := []slack.Block{
		section(line),
		section("Reply again in this run's thread with the new artifact as a file (or paste the text), then press *Edit* again. Nothing changed."),
	}
	return modal("", modalTitle(ActEdit, ref), "", "OK", fitValue(ref.Value()), blocks)
}

func replyWhat(r Reply) string {
	if r.File != "" || r.FileID != "" {
		name := r.File
		if name == "" {
			name = "attached"
		}
		return "file `" + mdLine(name, 60) + "`"
	}
	return "text"
}

func replyTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return " from " + when(t, time.Time{})
}

// RedoModal asks for optional feedback to add to the agent's prompt before a
// step is run again.
func RedoModal(ref StepRef, skill string) slack.ModalViewRequest {
	input := slack.NewPlainTextInputBlockElement(plainText("What should change?"), InputFeedback).
		WithMultiline(true).WithMaxLength(maxModalInputText)
	blocks := []slack.Block{
		section("Run " + modalStep(ref, skill) + " again as a new attempt. Earlier attempts are kept in the thread."),
		slack.NewInputBlock(BlockFeedback, plainText("Feedback for the agent (optional)"), nil, input).WithOptional(true),
	}
	return modal(ModalRedo, modalTitle(ActRedo, ref), "Redo", "Cancel", fitValue(ref.Value()), blocks)
}

// SaveWorkflowModal asks for the name a completed chain is saved under as a
// workflow, with name (made of its skills) filled in. Its callback id is
// ModalSaveWorkflow and its private_metadata the StepRef's value; the name
// comes back in the BlockWorkflowName input, where a name that cannot be
// used is shown as the field's error.
func SaveWorkflowModal(ref StepRef, name string, skills []string, thread bool) slack.ModalViewRequest {
	quoted := make([]string, 0, min(len(skills), 20))
	for _, sk := range skills[:min(len(skills), 20)] {
		quoted = append(quoted, "`"+mdLine(sk, 100)+"`")
	}
	chain := strings.Join(quoted, " → ")
	if more := len(skills) - len(quoted); more > 0 {
		chain += fmt.Sprintf(" → … %d more", more)
	}
	if thread {
		chain += " (threaded: each step gets the previous step's output)"
	}
	input := slack.NewPlainTextInputBlockElement(nil, InputWorkflowName).
		WithMinLength(1).WithMaxLength(MaxWorkflowName).WithInitialValue(plain(name, MaxWorkflowName))
	blocks := []slack.Block{
		section("Save this run's chain as a workflow the team can run by name:\n" + chain),
		slack.NewInputBlock(BlockWorkflowName, plainText("Workflow name"),
			plainText(fmt.Sprintf("Lower-case letters, digits and dashes, at most %d. Run it later with %s run NAME -- CONTEXT.",
				MaxWorkflowName, defaultCommand)), input),
		contextBlock("The chain's context is not saved: give one each time the workflow runs."),
	}
	return modal(ModalSaveWorkflow, modalTitle(ActSaveWorkflow, ref), "Save", "Cancel", fitValue(ref.Value()), blocks)
}

func modalStep(ref StepRef, skill string) string {
	return fmt.Sprintf("*step %d: %s*", ref.Step, mdLine(skill, 120))
}

func modal(callback, title, submit, closeLabel, metadata string, blocks []slack.Block) slack.ModalViewRequest {
	m := slack.ModalViewRequest{
		Type:            slack.VTModal,
		Title:           plainText(plain(title, maxModalTitle)),
		Close:           plainText(plain(closeLabel, maxModalTitle)),
		Blocks:          slack.Blocks{BlockSet: blocks},
		PrivateMetadata: metadata,
		CallbackID:      callback,
	}
	if submit != "" {
		m.Submit = plainText(plain(submit, maxModalTitle))
	}
	return m
}
