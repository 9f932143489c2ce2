package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/gonogo/gonogo/engine"
)

// Modals: Edit, Redo and Save as workflow open one. Slack takes a click's
// trigger_id for 3 s, and what fills the modal (who may decide, which may
// ask Slack for a user group's members; the artifact; the thread's replies)
// can take longer. So the modal is opened first, as the click arrives, with
// nothing but "Loading…" in it (LoadingModal), and then filled with
// views.update, or with why there is nothing to fill it with (NoticeModal).
// A submission a person can correct is answered in its acknowledgement,
// with the problem under the field (submissionErrors), and the modal stays
// open; only what cannot be known then (a decision refused by the engine,
// a reply that cannot be read any more) is told in the thread afterwards.

// opensModal reports whether a click of kind opens a modal.
func opensModal(kind ActionKind) bool {
	_, ok := modalButtons[kind]
	return ok
}

// modalButtons are the labels of the buttons that open a modal, by the
// kind of their click.
var modalButtons = map[ActionKind]string{
	ActEdit:         "Edit",
	ActRedo:         "Redo",
	ActSaveWorkflow: "Save as workflow",
}

// modalClick reads an envelope that is a click on a button that opens a
// modal.
func modalClick(evt socketmode.Event) (Action, bool) {
	cb, ok := evt.Data.(slack.InteractionCallback)
	if !ok || cb.Type != slack.InteractionTypeBlockActions {
		return Action{}, false
	}
	a, err := ParseAction(cb)
	if err != nil || !opensModal(a.Kind) || a.TriggerID == "" {
		return Action{}, false
	}
	return a, true
}

// openLoading opens the loading modal on a click that arrived at received,
// before anything else is read or asked, and returns the view's id; "" when
// Slack did not open it (the trigger ran out, most likely), which is logged.
func (b *Bot) openLoading(ctx context.Context, a Action, received time.Time) string {
	id, err := b.send.openView(ctx, a.TriggerID, LoadingModal(a.Kind, a.Ref), received)
	if err != nil {
		b.cfg.Log.Warn("a modal could not be opened", "button", a.Kind, "run", a.Ref.Run,
			"since_click", time.Since(received).Round(time.Millisecond), "err", err)
		return ""
	}
	return id
}

// fillModal fills the modal a click opened (env.view) with what it is for,
// or with why there is none. An envelope carried out after a restart opens
// its modal now, if its trigger is still young enough. With no modal open,
// the person is told in the thread: why nothing can be done, or that the
// modal did not open and to press again.
func (b *Bot) fillModal(ctx context.Context, a Action, env envelope) {
	view := env.view
	if !env.opened {
		view = b.openLoading(ctx, a, env.received)
	}
	content, why := b.modalContent(ctx, a)
	if view == "" {
		if why == "" {
			why = fmt.Sprintf("Slack did not open the %s form in time (a form must open within 3 seconds of the click). Press *%s* again.",
				buttonLabel(a.Kind), buttonLabel(a.Kind))
		}
		b.tell(ctx, a.Channel, a.ThreadTS, a.User, why, nil)
		return
	}
	if why != "" {
		content = NoticeModal(a.Kind, a.Ref, why)
	}
	if err := b.send.updateView(ctx, view, content); err != nil {
		// Most often the person closed the loading modal meanwhile.
		b.cfg.Log.Warn("a modal could not be filled", "button", a.Kind, "run", a.Ref.Run, "err", err)
	}
}

// buttonLabel is the label of the button a click of kind was on.
func buttonLabel(kind ActionKind) string {
	if label, ok := modalButtons[kind]; ok {
		return label
	}
	return "Edit"
}

// modalContent is the modal a click asks for, or why there is none: the
// run is not in the store, the person may not decide on it (the engine's
// rule), the step has moved on, the artifact cannot be read.
func (b *Bot) modalContent(ctx context.Context, a Action) (slack.ModalViewRequest, string) {
	r, why := b.runForModal(ctx, a)
	if why != "" {
		return slack.ModalViewRequest{}, why
	}
	switch a.Kind {
	case ActSaveWorkflow:
		return b.saveWorkflowContent(r, a)
	case ActRedo:
		s, ok := stepWaits(r, a.Ref, engine.DecideRedo)
		if !ok {
			return slack.ModalViewRequest{}, movedOn
		}
		return RedoModal(a.Ref, s.Skill), ""
	}
	return b.editContent(ctx, r, a)
}

// runForModal reads the run a click is for, when the person may decide on
// it; else why there is no modal to show.
func (b *Bot) runForModal(ctx context.Context, a Action) (*engine.Run, string) {
	r, err := b.eng.Load(ctx, a.Ref.Run)
	if err == nil {
		var may bool
		if may, err = b.mayDecide(ctx, r, a.User); err == nil && !may {
			return nil, mayNot(a.Kind, r.StartedBy)
		}
	}
	switch {
	case errors.Is(err, engine.ErrNotFound):
		return nil, notInStore
	case err != nil:
		// A form's trigger lasts seconds: the person presses again.
		b.cfg.Log.Warn("a form could not read its run", "button", a.Kind, "run", a.Ref.Run, "err", err)
		return nil, "gonogo could not read this run just now; nothing changed. Press the button again in a moment."
	}
	return r, ""
}

// movedOn tells a person that what they clicked or submitted was for an
// attempt that no longer waits for that decision.
const movedOn = "This step has moved on: the buttons you clicked were for an earlier moment. Nothing changed."

// stepWaits returns the step ref names when its attempt is still the latest
// and the engine allows decision kind on it.
func stepWaits(r *engine.Run, ref StepRef, kind engine.DecisionKind) (*engine.Step, bool) {
	s := r.Step(ref.Step)
	if s == nil || s.Latest() == nil || s.Latest().N != ref.Attempt || !slices.Contains(engine.Allowed(s), kind) {
		return nil, false
	}
	return s, true
}

// editContent is the edit modal: the artifact in an input when it fits
// Slack's 3,000 characters, else an offer of the person's latest reply in
// the thread (when it can replace the artifact), else how to give the new
// artifact as a reply.
func (b *Bot) editContent(ctx context.Context, r *engine.Run, a Action) (slack.ModalViewRequest, string) {
	s, ok := stepWaits(r, a.Ref, engine.DecideEdit)
	if !ok {
		return slack.ModalViewRequest{}, movedOn
	}
	body, why := b.artifactToEdit(ctx, r, s, a.Ref.Attempt)
	if why != "" {
		return slack.ModalViewRequest{}, why
	}
	n := utf8.RuneCount(body)
	if n <= maxModalInputText {
		return EditModal(a.Ref, s.Skill, string(body)), ""
	}
	return b.replyModal(ctx, r, s, a, n)
}

// artifactToEdit is the artifact of the attempt to edit; why it cannot be
// read, else. A FAILED attempt (on_error: gate) may have no artifact: the
// team writes the step's output from nothing.
func (b *Bot) artifactToEdit(ctx context.Context, r *engine.Run, s *engine.Step, attempt int) ([]byte, string) {
	if !s.Latest().Artifact {
		return nil, ""
	}
	body, err := b.eng.Artifact(ctx, r.ID, s.N, attempt)
	if err != nil {
		b.cfg.Log.Error("read the artifact to edit", "run", r.ID, "step", s.N, "err", err)
		return nil, "gonogo could not read this step's artifact, so it cannot be edited now. Nothing changed. The operator can find why in gonogo's log."
	}
	return body, ""
}

// replyModal is the edit modal for an artifact of n characters, too long
// for Slack's input: the person's latest reply in the thread offered in
// its place (or why it cannot be), else how to give one.
func (b *Bot) replyModal(ctx context.Context, r *engine.Run, s *engine.Step, a Action, n int) (slack.ModalViewRequest, string) {
	reply, problem, err := b.findReply(ctx, r, s, a.User)
	switch {
	case err != nil:
		b.cfg.Log.Error("read a reply in a run's thread", "run", r.ID, "err", err)
		return slack.ModalViewRequest{}, "gonogo could not read your reply in the thread; nothing changed. Press *Edit* again in a moment; the operator can find why in gonogo's log."
	case reply == nil:
		return EditTooLongModal(a.Ref, s.Skill, n), ""
	case problem != "":
		return UnusableReplyModal(a.Ref, s.Skill, *reply, problem), ""
	}
	return EditFromReplyModal(a.Ref, s.Skill, *reply), ""
}

// findReply finds user's latest reply in the run's thread after the step's
// message (a file, or text) and reads it as the new artifact would be
// read: problem says, in the person's words, why it cannot replace the
// artifact. No reply is (nil, "", nil); err is a failure to read.
func (b *Bot) findReply(ctx context.Context, r *engine.Run, s *engine.Step, user string) (*Reply, string, error) {
	notes, err := b.eng.Notes(ctx, r.ID)
	if err != nil || notes[noteThread] == "" {
		return nil, "", err
	}
	msgs, err := b.threadMessages(ctx, r.Origin.Channel, notes[noteThread])
	if err != nil {
		return nil, "", fmt.Errorf("read the run's thread: %w", err)
	}
	after := notes[noteStep(s.N)]
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := msgs[i]; mayReplace(m, user, after) {
			return b.readReply(ctx, m, user)
		}
	}
	return nil, "", nil
}

// mayReplace reports whether m may replace the artifact: user's own
// message, after the step's (after), with a file or text.
func mayReplace(m slack.Message, user, after string) bool {
	return m.User == user && m.BotID == "" && !tsBefore(m.Timestamp, after) && (len(m.Files) > 0 || m.Text != "")
}

// readReply reads the reply m as the new artifact would be read: its
// first file, else its text as typed (see findReply).
func (b *Bot) readReply(ctx context.Context, m slack.Message, user string) (*Reply, string, error) {
	rep := &Reply{User: user, TS: m.Timestamp, Time: tsTime(m.Timestamp)}
	body := slackText(m.Text, false)
	if len(m.Files) > 0 {
		f := m.Files[0]
		rep.File, rep.FileID, rep.Chars = f.Name, f.ID, f.Size
		raw, err := b.download(ctx, FileRefFrom(f), min(b.cfg.MaxPlanBytes, MaxEditBytes))
		if err != nil {
			return replyProblem(rep, err)
		}
		body = string(raw)
	}
	rep.Chars = utf8.RuneCountInString(body)
	if err := CheckArtifact(body, MaxEditBytes); err != nil {
		return replyProblem(rep, err)
	}
	return rep, "", nil
}

// threadMessages are the messages of a thread (its first 1,000).
func (b *Bot) threadMessages(ctx context.Context, channel, thread string) ([]slack.Message, error) {
	var msgs []slack.Message
	err := b.send.do(ctx, "conversations.replies", func() error {
		var err error
		msgs, _, _, err = b.api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
			ChannelID: channel, Timestamp: thread, Limit: 1000,
		})
		return err
	})
	return msgs, err
}

// replyProblem is findReply's answer for a reply that could not be read:
// a problem when the person can correct it, else the error.
func replyProblem(rep *Reply, err error) (*Reply, string, error) {
	var in *InputError
	if errors.As(err, &in) {
		return rep, in.Problem, nil
	}
	return nil, "", err
}

func tsBefore(a, b string) bool {
	ta, tb := tsTime(a), tsTime(b)
	return !ta.After(tb)
}

func tsTime(ts string) time.Time {
	var sec, usec int64
	fmt.Sscanf(ts, "%d.%d", &sec, &usec)
	return time.Unix(sec, usec*1000)
}

// submissionErrors are the field errors a view_submission is answered
// with in its acknowledgement, by input block: what ParseSubmission finds
// wrong with what the person typed or chose (an empty, oversized or
// binary artifact, no reply chosen, feedback too long, a malformed name),
// a workflow name that is taken, and a decision the step no longer waits
// for. Slack then keeps the modal open with the message under the field,
// and nothing else is done. It reads the store and the workflows
// directory, never Slack: the acknowledgement waits for it. Whether the
// person may decide is left to the handler (it may ask Slack who is in a
// user group); so is a payload no person could have sent.
func (b *Bot) submissionErrors(ctx context.Context, cb slack.InteractionCallback) map[string]string {
	sub, err := ParseSubmission(cb)
	var in *InputError
	switch {
	case errors.As(err, &in) && in.Block != "":
		return map[string]string{in.Block: plain(in.Problem, maxFieldError)}
	case err != nil:
		return nil
	}
	if sub.Kind == SubmitSaveWorkflow {
		if problem := b.saveProblem(sub); problem != "" {
			return map[string]string{BlockWorkflowName: plain(problem, maxFieldError)}
		}
		return nil
	}
	return b.movedOnErrors(ctx, sub)
}

// movedOnErrors is the field error of a decision modal whose step no
// longer waits for its decision.
func (b *Bot) movedOnErrors(ctx context.Context, sub Submission) map[string]string {
	r, err := b.eng.Load(ctx, sub.Ref.Run)
	if err != nil {
		return nil // the handler says so
	}
	target := submissionTargets[sub.Kind]
	if _, ok := stepWaits(r, sub.Ref, target.kind); !ok {
		return map[string]string{target.block: "This step has moved on (another decision was taken, or a new attempt started) since this form opened. Nothing changed: close it."}
	}
	return nil
}

// submissionTargets are, for each decision modal, the decision it makes
// and the input block its errors are shown under.
var submissionTargets = map[SubmissionKind]struct {
	kind  engine.DecisionKind
	block string
}{
	SubmitEdit:      {engine.DecideEdit, BlockArtifact},
	SubmitEditReply: {engine.DecideEdit, BlockReply},
	SubmitRedo:      {engine.DecideRedo, BlockFeedback},
}

// maxFieldError is how long a field error shown under an input may be.
const maxFieldError = 300

// onSubmit carries out a submitted modal: an edit, a redo with feedback,
// an edit from a reply in the thread, or saving a workflow.
func (b *Bot) onSubmit(ctx context.Context, cb slack.InteractionCallback, received time.Time) {
	sub, err := ParseSubmission(cb)
	if err != nil {
		b.submissionRefused(ctx, cb, err)
		return
	}
	ctx = asPerson(ctx, sub.Team)
	r, err := b.eng.Load(ctx, sub.Ref.Run)
	if err != nil {
		b.couldNotRead(ctx, "", "", sub.User, err) // its thread is not known
		return
	}
	notes, _ := b.eng.Notes(ctx, r.ID)
	channel, thread := r.Origin.Channel, notes[noteThread]
	if !b.maySubmit(ctx, r, sub.User, channel, thread) {
		return
	}
	d := engine.Decision{Actor: sub.User, Step: sub.Ref.Step, Attempt: sub.Ref.Attempt, Key: sub.Key()}
	switch sub.Kind {
	case SubmitEdit:
		d.Kind = engine.DecideEdit
		b.decide(ctx, r, channel, thread, d, []byte(sub.Artifact))
	case SubmitRedo:
		d.Kind, d.Feedback = engine.DecideRedo, sub.Feedback
		b.decide(ctx, r, channel, thread, d, nil)
	case SubmitSaveWorkflow:
		b.saveWorkflow(ctx, r, sub, channel, thread, received)
	case SubmitEditReply:
		b.editFromReply(ctx, r, channel, thread, d, sub.Reply)
	}
}

// submissionRefused tells the person why a submission gonogo could not
// use changed nothing, unless its acknowledgement showed that by the
// field; a payload no person could have sent is logged.
func (b *Bot) submissionRefused(ctx context.Context, cb slack.InteractionCallback, err error) {
	var in *InputError
	if !errors.As(err, &in) {
		b.cfg.Log.Warn("a modal submission gonogo cannot use", "err", err)
		return
	}
	if in.Block != "" {
		return // the acknowledgement showed it by the field, and the modal stayed open
	}
	// The modal is closed by the time gonogo reads it (every envelope
	// is acknowledged first), so the person is told in the thread.
	ref, err := ParseStepRef(cb.View.PrivateMetadata)
	if err != nil {
		return
	}
	if r, err := b.eng.Load(ctx, ref.Run); err == nil {
		notes, _ := b.eng.Notes(ctx, r.ID)
		blocks := InputProblem(in)
		b.tell(ctx, r.Origin.Channel, notes[noteThread], cb.User.ID, "Nothing changed: "+FallbackText(blocks), blocks)
	}
}

// maySubmit reports whether user may decide on the run a modal was for;
// when not, or when that cannot be known, the person is told why.
func (b *Bot) maySubmit(ctx context.Context, r *engine.Run, user, channel, thread string) bool {
	may, err := b.mayDecide(ctx, r, user)
	switch {
	case err != nil:
		b.couldNotRead(ctx, channel, thread, user, err)
	case !may:
		b.tell(ctx, channel, thread, user, mayNot("", r.StartedBy), nil)
	}
	return err == nil && may
}

// editFromReply makes the edit whose new artifact is the reply the
// person chose in the modal, read again now.
func (b *Bot) editFromReply(ctx context.Context, r *engine.Run, channel, thread string, d engine.Decision, rep ReplyRef) {
	body, err := b.replyBody(ctx, channel, thread, rep)
	if err != nil {
		// The reply was read when the modal was filled; it changed
		// since, or cannot be fetched now.
		msg := "gonogo could not read your reply; nothing changed."
		var in *InputError
		if errors.As(err, &in) {
			msg = "Your reply cannot replace the artifact: " + in.Problem
		} else {
			b.cfg.Log.Error("read a reply in a run's thread", "run", r.ID, "err", err)
		}
		b.tell(ctx, channel, thread, d.Actor, msg, nil)
		return
	}
	d.Kind = engine.DecideEdit
	b.decide(ctx, r, channel, thread, d, body)
}

// replyBody reads the reply offered as a new artifact: its file, or its
// text as the person typed it (Slack stores "<", ">" and "&" as entities
// and mentions as markup). Either is checked like an edit in the modal.
func (b *Bot) replyBody(ctx context.Context, channel, thread string, rep ReplyRef) ([]byte, error) {
	var body []byte
	if rep.File != "" {
		var err error
		if body, err = b.download(ctx, FileRef{ID: rep.File, NeedsInfo: true}, min(b.cfg.MaxPlanBytes, MaxEditBytes)); err != nil {
			return nil, err
		}
	} else {
		text, err := b.replyText(ctx, channel, thread, rep.TS)
		if err != nil {
			return nil, err
		}
		body = []byte(text)
	}
	if err := CheckArtifact(string(body), MaxEditBytes); err != nil {
		return nil, err
	}
	return body, nil
}

// replyText is the text of the reply ts in the thread, as typed.
func (b *Bot) replyText(ctx context.Context, channel, thread, ts string) (string, error) {
	msgs, err := b.threadMessages(ctx, channel, thread)
	if err != nil {
		return "", err
	}
	for _, m := range msgs {
		if m.Timestamp == ts {
			return slackText(m.Text, false), nil
		}
	}
	return "", errors.New("the reply is no longer in the thread")
}
