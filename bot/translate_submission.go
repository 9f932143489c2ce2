package bot

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/internal/intake"
)

// SubmissionKind is which of gonogo's modals was submitted.
type SubmissionKind string

const (
	SubmitEdit      SubmissionKind = "edit"            // the artifact, edited in the modal
	SubmitEditReply SubmissionKind = "edit-from-reply" // the artifact is a reply in the thread
	SubmitRedo      SubmissionKind = "redo"            // optional feedback for the agent
	// SubmitSaveWorkflow names the workflow a finished chain is saved as.
	SubmitSaveWorkflow SubmissionKind = "save-workflow"
)

var submissionKinds = map[string]SubmissionKind{
	ModalEdit:         SubmitEdit,
	ModalEditReply:    SubmitEditReply,
	ModalRedo:         SubmitRedo,
	ModalSaveWorkflow: SubmitSaveWorkflow,
}

// Submission is a submitted gonogo modal. Its private_metadata is the
// StepRef of the attempt the modal was opened for.
type Submission struct {
	Kind     SubmissionKind
	Ref      StepRef
	Artifact string   // SubmitEdit: the new artifact, as typed (never empty)
	Feedback string   // SubmitRedo: trimmed; "" when none was given
	Reply    ReplyRef // SubmitEditReply: the reply in the thread that replaces the artifact
	Name     string   // SubmitSaveWorkflow: the workflow's name, checked with CheckWorkflowName

	User, Team string // as for Action
	ViewID     string
	ViewHash   string
}

// Key is the idempotency key of the submission: a modal is submitted once,
// and a redelivered envelope carries the same view.
func (s Submission) Key() string {
	return "slack-view:" + s.ViewID + ":" + s.ViewHash
}

// ReplyRef names a reply in a run's thread offered as a replacement
// artifact: the reply message, and the file attached to it when the
// artifact is that file rather than the message's text.
type ReplyRef struct {
	TS   string
	File string // "" when the message text is the artifact
}

const replyTag = "reply"

// Value encodes a ReplyRef as the value of the edit-reply modal's option.
func (r ReplyRef) Value() string {
	return valueVersion + "|" + replyTag + "|" + r.TS + "|" + r.File
}

// ParseReplyRef reads a value written by ReplyRef.Value; anything else is
// an error.
func ParseReplyRef(v string) (ReplyRef, error) {
	parts := strings.Split(v, "|")
	if len(parts) != 4 || parts[0] != valueVersion || parts[1] != replyTag {
		return ReplyRef{}, fmt.Errorf("not a gonogo reply reference: %q", clipValue(v))
	}
	r := ReplyRef{TS: parts[2], File: parts[3]}
	if !validTS(r.TS) || (r.File != "" && !validID(r.File)) {
		return ReplyRef{}, fmt.Errorf("not a gonogo reply reference: %q", clipValue(v))
	}
	return r, nil
}

// ParseSubmission reads a view_submission of one of gonogo's modals, by
// its callback id. A payload gonogo did not build (an unknown callback id,
// private_metadata that ParseStepRef refuses, an input block missing) is an
// error wrapping ErrBadPayload; what the person typed that cannot be used
// (an empty or oversized artifact, control characters) is an *InputError
// whose Block names the input, for a field error in the modal.
func ParseSubmission(cb slack.InteractionCallback) (Submission, error) {
	s, err := submissionOf(cb)
	if err != nil {
		return Submission{}, err
	}
	what := string(s.Kind) + " modal"
	if cb.View.State == nil {
		return Submission{}, badPayload("the %s carries no input values", what)
	}
	if err := readSubmissionInputs(cb.View.State.Values, what, &s); err != nil {
		return Submission{}, err
	}
	return s, nil
}

// submissionOf reads what every gonogo modal's submission carries: which
// modal it is, the step it is for, and who submitted which view.
func submissionOf(cb slack.InteractionCallback) (Submission, error) {
	kind, err := modalKind(cb)
	if err != nil {
		return Submission{}, err
	}
	v := cb.View
	if v.PrivateMetadata == "" {
		return Submission{}, badPayload("the %s modal carries no private_metadata (the step it is for)", kind)
	}
	ref, err := ParseStepRef(v.PrivateMetadata)
	if err != nil {
		return Submission{}, fmt.Errorf("%w: %s modal: %w", ErrBadPayload, kind, err)
	}
	s := Submission{
		Kind:     kind,
		Ref:      ref,
		User:     cb.User.ID,
		Team:     firstNonEmpty(cb.User.TeamID, cb.Team.ID, v.TeamID),
		ViewID:   v.ID,
		ViewHash: v.Hash,
	}
	if err := checkIDs(string(kind)+" modal", "user id", s.User, "team id", s.Team, "view id", s.ViewID); err != nil {
		return Submission{}, err
	}
	return s, nil
}

// modalKind is which of gonogo's modals a view_submission submits.
func modalKind(cb slack.InteractionCallback) (SubmissionKind, error) {
	if cb.Type != slack.InteractionTypeViewSubmission {
		return "", badPayload("expected a view_submission interaction, got %q", clip(string(cb.Type), 40))
	}
	v := cb.View
	if v.Type != "" && v.Type != slack.VTModal {
		return "", badPayload("view %q is a %q, not a modal", clip(v.CallbackID, 60), clip(string(v.Type), 40))
	}
	kind, ok := submissionKinds[v.CallbackID]
	if !ok {
		return "", badPayload("unknown modal callback id %q: not one of gonogo's modals", clip(v.CallbackID, 60))
	}
	return kind, nil
}

// modalValues are a submitted view's input values, by block and action id.
type modalValues = map[string]map[string]slack.BlockAction

// readSubmissionInputs reads the inputs of the modal s.Kind names into s;
// what names the modal in messages.
func readSubmissionInputs(vals modalValues, what string, s *Submission) error {
	switch s.Kind {
	case SubmitEdit:
		return readEditInput(vals, what, s)
	case SubmitEditReply:
		return readEditReplyInput(vals, what, s)
	case SubmitRedo:
		return readRedoInput(vals, s)
	case SubmitSaveWorkflow:
		return readSaveWorkflowInput(vals, what, s)
	}
	return nil
}

// readEditInput reads the artifact typed into the edit modal.
func readEditInput(vals modalValues, what string, s *Submission) error {
	in, ok := vals[BlockArtifact][InputArtifact]
	if !ok {
		return badPayload("the %s has no %s input", what, BlockArtifact)
	}
	if err := checkModalArtifact(in.Value); err != nil {
		return err
	}
	s.Artifact = in.Value
	return nil
}

// readEditReplyInput reads the thread reply chosen to replace the artifact.
func readEditReplyInput(vals modalValues, what string, s *Submission) error {
	in, ok := vals[BlockReply][InputReply]
	if !ok {
		return badPayload("the %s has no %s input", what, BlockReply)
	}
	if in.SelectedOption.Value == "" {
		return &InputError{Block: BlockReply, Problem: "choose the reply that replaces the artifact"}
	}
	r, err := ParseReplyRef(in.SelectedOption.Value)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrBadPayload, what, err)
	}
	s.Reply = r
	return nil
}

// readRedoInput reads the redo modal's feedback, which is optional: Slack
// leaves an untouched optional input's value null, and an absent block
// means the same.
func readRedoInput(vals modalValues, s *Submission) error {
	fb := vals[BlockFeedback][InputFeedback].Value
	if err := checkText("the feedback", fb, maxModalInputText); err != nil {
		return &InputError{Block: BlockFeedback, Problem: err.Error()}
	}
	s.Feedback = trimSpace(fb)
	return nil
}

// readSaveWorkflowInput reads the name a chain is saved under.
func readSaveWorkflowInput(vals modalValues, what string, s *Submission) error {
	in, ok := vals[BlockWorkflowName][InputWorkflowName]
	if !ok {
		return badPayload("the %s has no %s input", what, BlockWorkflowName)
	}
	name := trimSpace(in.Value)
	if err := CheckWorkflowName(name); err != nil {
		return err
	}
	s.Name = name
	return nil
}

// MaxWorkflowName is the longest name a workflow is saved under (the
// limit intake.ChainWorkflow keeps to); a workflow file written by hand may
// have a name up to 128 characters.
const MaxWorkflowName = intake.MaxSavedName

// CheckWorkflowName checks the name a chain is to be saved under: lower-case
// letters, digits and dashes, starting with a letter or digit, at most
// MaxWorkflowName characters. A problem is an *InputError for the name's
// input (Block is BlockWorkflowName), so the modal shows it by the field.
func CheckWorkflowName(name string) error {
	var problem string
	switch {
	case name == "":
		problem = "give the workflow a name"
	case utf8.RuneCountInString(name) > MaxWorkflowName:
		problem = fmt.Sprintf("the name is %d characters; use at most %d", utf8.RuneCountInString(name), MaxWorkflowName)
	default:
		if err := checkRunWorkflowName(name); err != nil {
			problem = strings.TrimPrefix(err.Error(), fmt.Sprintf("invalid workflow name %q: ", clip(name, 40)))
		}
	}
	if problem == "" {
		return nil
	}
	return &InputError{Block: BlockWorkflowName, Problem: problem}
}

func checkModalArtifact(body string) error {
	if utf8.ValidString(body) {
		if n := utf8.RuneCountInString(body); n > maxModalInputText {
			return &InputError{Block: BlockArtifact, Problem: fmt.Sprintf(
				"the edited artifact is %d characters; this box holds %d: reply in the thread with the whole artifact "+
					"(as a file or as text) and press Edit again", n, maxModalInputText)}
		}
	}
	if err := CheckArtifact(body, MaxEditBytes); err != nil {
		var ie *InputError
		if errors.As(err, &ie) {
			ie.Block = BlockArtifact
		}
		return err
	}
	return nil
}

// CheckArtifact checks an edited artifact, from the edit modal or from a
// reply in the thread: text (valid UTF-8, no control characters but tab
// and line breaks), not blank, at most maxBytes bytes. Problems are
// *InputError.
func CheckArtifact(body string, maxBytes int) error {
	if len(body) > maxBytes {
		return &InputError{Problem: fmt.Sprintf("the edited artifact is %s; the limit is %s",
			sizeText(int64(len(body))), sizeText(int64(maxBytes)))}
	}
	if err := checkText("the edited artifact", body, -1); err != nil {
		return &InputError{Problem: err.Error()}
	}
	if trimSpace(body) == "" {
		return &InputError{Problem: "the edited artifact is empty: to go on without an artifact, press Skip"}
	}
	return nil
}
