package bot

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gonogo/gonogo/engine"
)

// Identifiers gonogo puts in Block Kit payloads, and reads back from the
// interactions Slack delivers. A button's value names the run, the step
// and the attempt it was rendered for, so a click after a restart (or on a
// message from an earlier attempt) finds everything it needs in the store.
const (
	ActionApprove = "gonogo_approve"
	ActionEdit    = "gonogo_edit"
	ActionSkip    = "gonogo_skip"
	ActionRedo    = "gonogo_redo"
	ActionAbort   = "gonogo_abort"
	ActionCancel  = "gonogo_cancel"
	// ActionPick is a best-of step candidate's "Pick this"; its value
	// names the candidate's attempt.
	ActionPick = "gonogo_pick"
	// ActionPause is on a moving run's header; ActionResume (the run's
	// mode) and ActionResumeCheckpointed on a paused run's checkpoint and
	// header.
	ActionPause              = "gonogo_pause"
	ActionResume             = "gonogo_resume"
	ActionResumeCheckpointed = "gonogo_resume_checkpointed"
	// ActionSaveWorkflow is offered on a chain's completion message.
	ActionSaveWorkflow = "gonogo_save_workflow"
	// ActionOpen is on step messages and the run's header when the web
	// pages are served (Config.SignIn): a button, not a link, so that
	// gonogo learns who pressed it and answers them alone with a sign-in
	// link.
	ActionOpen = "gonogo_open"

	// Modals: callback ids, and the input blocks inside them.
	ModalEdit         = "gonogo_edit_modal"       // the artifact in a multiline input
	ModalEditReply    = "gonogo_edit_reply_modal" // the artifact is too long: use a reply in the thread
	ModalRedo         = "gonogo_redo_modal"       // optional feedback for the agent
	ModalLoading      = "gonogo_loading_modal"    // opened on the click, filled once its content is read
	BlockArtifact     = "gonogo_artifact"
	InputArtifact     = "gonogo_artifact_input"
	BlockFeedback     = "gonogo_feedback"
	InputFeedback     = "gonogo_feedback_input"
	valueVersion      = "v1"
	maxModalInputText = 3000 // Slack's limit for a plain_text_input's value
)

// StepRef names one step attempt of one run.
type StepRef struct {
	Run     engine.RunID
	Step    int
	Attempt int
}

// Value encodes a StepRef as a button value or a modal's private_metadata.
func (r StepRef) Value() string {
	return fmt.Sprintf("%s|%s|%d|%d", valueVersion, r.Run, r.Step, r.Attempt)
}

// ParseStepRef reads a value written by StepRef.Value. Anything else (a
// forged or truncated value, another app's button) is an error, never a
// guess.
func ParseStepRef(v string) (StepRef, error) {
	parts := strings.Split(v, "|")
	if len(parts) != 4 || parts[0] != valueVersion {
		return StepRef{}, fmt.Errorf("not a gonogo button value: %q", clipValue(v))
	}
	id := parts[1]
	if !valueRunID(id) {
		return StepRef{}, fmt.Errorf("not a gonogo run id: %q", clipValue(id))
	}
	step, stepOK := boundedInt(parts[2], 1, 10000)
	attempt, attemptOK := boundedInt(parts[3], 0, 100000)
	if !stepOK || !attemptOK {
		return StepRef{}, fmt.Errorf("not a gonogo step reference: %q", clipValue(v))
	}
	return StepRef{Run: engine.RunID(id), Step: step, Attempt: attempt}, nil
}

// valueRunID accepts the run ids a button's value may carry: at most 64
// lower-case letters, digits and dashes.
func valueRunID(id string) bool {
	return id != "" && len(id) <= 64 && only(id, digits+lowerLetters+"-")
}

// boundedInt reads a decimal number from lo to hi.
func boundedInt(s string, lo, hi int) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= lo && n <= hi
}

func clipValue(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
