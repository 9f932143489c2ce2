package bot

import (
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
)

// The render layer turns engine values into Block Kit: the run's header,
// one message per step, the interrupted notice, the end of a run, refusals,
// help, the runs list and the modals. It is pure: no Slack call, no store,
// no clock (the time comes in View). Every function returns blocks within
// Block Kit's limits whatever the run holds; user text (artifacts, skill
// names, reasons, feedback) is escaped so it can never mention, link or
// format beyond what it says. An artifact's preview is the one exception to
// formatting: it is rendered as the Markdown it is, defanged so that it can
// still neither mention nor link under a false label. This file holds what every message shares:
// View, the words for states and decisions, and the fallback text.

// View is what a message shows beyond the run itself: facts the bot knows
// and the engine does not (the run itself carries the quorum and the votes).
// The zero View is valid.
type View struct {
	// Now is the moment of rendering: a run's elapsed time and a running
	// step's elapsed time are measured to it, and a date on another day
	// than Now shows its date. Zero: the run's last update.
	Now time.Time
	// Attempt is the attempt a step message shows; 0 means the latest. A
	// message posted for an earlier attempt is rendered with its number, so
	// after a redo it keeps showing that attempt and who asked for the redo.
	Attempt int
	// Preview is the shown attempt's artifact text, or its beginning; the
	// message shows its first lines.
	Preview string
	// ArtifactName is the file name the artifact is attached as; empty means
	// the name gonogo writes it under (NN-skill.md).
	ArtifactName string
	// ArtifactLink is the attached file's permalink, when known.
	ArtifactLink string
	// Candidates are the previews of a best-of step's candidates, by
	// attempt.
	Candidates map[int]string
	// RemindedAt is when the approvers were last reminded of a waiting
	// step; zero when they were not.
	RemindedAt time.Time
	// Deadline is when a waiting step times out; zero for never.
	// AbortAtDeadline says the run is aborted then, rather than left waiting.
	Deadline        time.Time
	AbortAtDeadline bool
	// OfferSaveWorkflow adds "Save as workflow" to a chain's completion,
	// where named workflows are available.
	OfferSaveWorkflow bool
	// AbortedBy is who aborted a run that was aborted while no step was
	// waiting (no step decision records it); a Slack user id.
	AbortedBy string
	// Open adds the Open button (a sign-in link to the run's web page) to
	// step messages and the run's header.
	Open bool
	// Step is the step a halt notice (Halt) is about: in a workflow
	// several steps may fail at once, each with a notice of its own. 0
	// means the step the run is halted on.
	Step int
}

// onStep is v for a message about step n: a halt notice.
func (v View) onStep(n int) View {
	v.Step = n
	return v
}

// Reply is a message in a run's thread that EditFromReplyModal offers as a
// step's new artifact.
type Reply struct {
	User   string    // Slack user id of the author
	TS     string    // the reply's message ts
	Time   time.Time // when it was posted
	File   string    // the attached file's name; "" for a text reply
	FileID string    // the attached file's id; "" for a text reply
	Chars  int       // the replacement's length in characters
}

// Ref is the reply as the edit-reply modal's option value names it.
func (r Reply) Ref() ReplyRef { return ReplyRef{TS: r.TS, File: r.FileID} }

// The words a person sees for each state and decision.
var (
	statusEmoji = map[engine.StepStatus]string{
		engine.StepPending: "⚪", engine.StepQueued: "🕒", engine.StepRunning: "⏳", engine.StepWaiting: "✋",
		engine.StepDone: "✅", engine.StepSkipped: "⏭", engine.StepInterrupted: "⚠️", engine.StepAborted: "🛑",
	}
	runEmoji = map[engine.RunState]string{
		engine.RunRunning: "⏳", engine.RunWaiting: "✋", engine.RunCompleted: "✅", engine.RunAborted: "🛑",
	}
	resultEmoji = map[engine.Result]string{
		engine.ResultProduced: "🟢", engine.ResultEmpty: "🟡", engine.ResultFailed: "🔴",
		engine.ResultManual: "🖐", engine.ResultNotExecuted: "⚪",
	}
	decisionWords = map[engine.DecisionKind]struct{ emoji, done, short string }{
		engine.DecideApprove: {"✅", "Approved", "approved"},
		engine.DecideEdit:    {"✏️", "Edited", "edited"},
		engine.DecideSkip:    {"⏭", "Skipped", "skipped"},
		engine.DecideRedo:    {"🔁", "Redo requested", "redo requested"},
		engine.DecideAbort:   {"🛑", "Aborted", "aborted"},
		engine.DecidePick:    {"🏆", "Picked", "picked"},
	}
	buttonLabels = map[engine.DecisionKind]string{
		engine.DecideApprove: "Approve", engine.DecideEdit: "Edit", engine.DecideSkip: "Skip",
		engine.DecideRedo: "Redo", engine.DecideAbort: "Abort",
	}
	buttonActions = map[engine.DecisionKind]string{
		engine.DecideApprove: ActionApprove, engine.DecideEdit: ActionEdit, engine.DecideSkip: ActionSkip,
		engine.DecideRedo: ActionRedo, engine.DecideAbort: ActionAbort,
	}
)

// How much of a run a message shows before it summarises.
const (
	checklistMax   = 25 // header checklist lines before it shows a window
	leftoverMax    = 10 // manual or deferred blocks listed
	previewLines   = 15
	previewBudget  = 2600 // characters of the preview's code block
	runsListMax    = 40
	attemptsListed = 10
	defaultCommand = "/gonogo"
)

// FallbackText is the plain notification text for a message rendered here
// (chat.postMessage's text): its first two texts on one line. Header text,
// which is plain_text in the blocks, is escaped for it.
func FallbackText(blocks []slack.Block) string {
	var parts []string
	for _, b := range blocks {
		if len(parts) == 2 {
			break
		}
		switch x := b.(type) {
		case *slack.HeaderBlock:
			if x.Text != nil {
				parts = append(parts, escape(x.Text.Text))
			}
		case *slack.SectionBlock:
			if x.Text != nil {
				parts = append(parts, x.Text.Text)
			} else if len(x.Fields) > 0 && x.Fields[0] != nil {
				parts = append(parts, x.Fields[0].Text)
			}
		}
	}
	if len(parts) == 0 {
		return "gonogo"
	}
	return cut(oneLine(strings.Join(parts, " — "), 8000), 300)
}
