package bot

import (
	"fmt"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
)

// ActionKind is what a button asks for.
type ActionKind string

const (
	ActApprove      ActionKind = "approve"
	ActEdit         ActionKind = "edit"
	ActSkip         ActionKind = "skip"
	ActRedo         ActionKind = "redo"
	ActAbort        ActionKind = "abort"
	ActCancel       ActionKind = "cancel"        // stop a running step
	ActSaveWorkflow ActionKind = "save-workflow" // keep a finished chain as a workflow
)

var trActionKinds = map[string]ActionKind{
	ActionApprove:      ActApprove,
	ActionEdit:         ActEdit,
	ActionSkip:         ActSkip,
	ActionRedo:         ActRedo,
	ActionAbort:        ActAbort,
	ActionCancel:       ActCancel,
	ActionSaveWorkflow: ActSaveWorkflow,
}

// Decision returns the engine decision a button stands for; Cancel and
// Save-workflow are not decisions.
func (k ActionKind) Decision() (engine.DecisionKind, bool) {
	switch k {
	case ActApprove, ActEdit, ActSkip, ActRedo, ActAbort:
		return engine.DecisionKind(k), true
	}
	return "", false
}

// Action is one click on one of gonogo's buttons. Every gonogo button's
// value is StepRef.Value(): the step attempt it was rendered for (for
// Cancel, the running attempt; for Save-workflow, the run's last step and
// its latest attempt).
type Action struct {
	Kind ActionKind
	Ref  StepRef

	// User is who clicked; Team is the user's own team (user.team_id), which
	// differs from the workspace's in a channel shared with another
	// organization, and falls back to the workspace's (team.id).
	User, Team string
	// Channel and MessageTS locate the clicked message; ThreadTS is its
	// thread ("" for a message outside a thread). The run's origin in the
	// store stays the authority on where a run's messages go.
	Channel, MessageTS, ThreadTS string
	ActionTS                     string // when Slack took the click
	TriggerID                    string // opens a modal (Edit, Redo)
	ResponseURL                  string
}

// Key is the idempotency key of the click: a redelivered envelope carries
// the same one, a second click a new one.
func (a Action) Key() string {
	return "slack-action:" + a.Team + ":" + a.User + ":" + a.ActionTS
}

// ParseAction reads a block_actions payload from one of gonogo's buttons.
// Exactly one action is expected; an unknown action id, a value that
// ParseStepRef refuses, or missing user, channel, message or action time
// make an error wrapping ErrBadPayload.
func ParseAction(cb slack.InteractionCallback) (Action, error) {
	if cb.Type != slack.InteractionTypeBlockActions {
		return Action{}, trBadPayload("expected a block_actions interaction, got %q", trClip(string(cb.Type), 40))
	}
	if n := len(cb.ActionCallback.AttachmentActions); n > 0 {
		return Action{}, trBadPayload("legacy attachment action %q: gonogo's buttons are Block Kit buttons",
			trClip(cb.ActionCallback.AttachmentActions[0].Name, 40))
	}
	switch n := len(cb.ActionCallback.BlockActions); {
	case n == 0:
		return Action{}, trBadPayload("the block_actions payload carries no action")
	case n > 1:
		return Action{}, trBadPayload("the block_actions payload carries %d actions; a click on a gonogo button carries one", n)
	}
	ba := cb.ActionCallback.BlockActions[0]
	if ba == nil {
		return Action{}, trBadPayload("the block_actions payload carries an empty action")
	}
	kind, ok := trActionKinds[ba.ActionID]
	if !ok {
		return Action{}, trBadPayload("unknown action id %q: not one of gonogo's buttons", trClip(ba.ActionID, 60))
	}
	if ba.Type != "" && ba.Type != slack.ActionType("button") {
		return Action{}, trBadPayload("action %s is a %q element, not a button", ba.ActionID, trClip(string(ba.Type), 40))
	}
	ref, err := ParseStepRef(ba.Value)
	if err != nil {
		return Action{}, fmt.Errorf("%w: %s button: %w", ErrBadPayload, kind, err)
	}
	if cb.Container.Type != "" && cb.Container.Type != "message" {
		return Action{}, trBadPayload("%s button in a %q, not in a message", kind, trClip(cb.Container.Type, 40))
	}
	a := Action{
		Kind:        kind,
		Ref:         ref,
		User:        cb.User.ID,
		Team:        trFirstNonEmpty(cb.User.TeamID, cb.Team.ID),
		Channel:     trFirstNonEmpty(cb.Channel.ID, cb.Container.ChannelID),
		MessageTS:   trFirstNonEmpty(cb.Container.MessageTs, cb.Message.Timestamp),
		ThreadTS:    trFirstNonEmpty(cb.Container.ThreadTs, cb.Message.ThreadTimestamp),
		ActionTS:    trFirstNonEmpty(ba.ActionTs, cb.ActionTs),
		TriggerID:   cb.TriggerID,
		ResponseURL: cb.ResponseURL,
	}
	what := string(kind) + " button"
	if err := trCheckIDs(what, "user id", a.User, "channel id", a.Channel, "team id", a.Team); err != nil {
		return Action{}, err
	}
	if err := trCheckTSs(what, "message ts", a.MessageTS, "action ts", a.ActionTS); err != nil {
		return Action{}, err
	}
	if a.ThreadTS != "" && !trValidTS(a.ThreadTS) {
		return Action{}, trBadPayload("%s: invalid thread ts %q", what, trClip(a.ThreadTS, 40))
	}
	return a, nil
}
