package bot

import (
	"fmt"
	"strings"

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
	ActPick         ActionKind = "pick"   // a best-of step's candidate becomes its artifact
	ActCancel       ActionKind = "cancel" // stop a running step
	ActPause        ActionKind = "pause"  // hold a moving run at its next checkpoint
	ActResume       ActionKind = "resume" // resume a paused run in its mode
	ActResumeCheckp ActionKind = "resume-checkpointed"
	ActSaveWorkflow ActionKind = "save-workflow" // keep a finished chain as a workflow
	ActStart        ActionKind = "start"         // start a run awaiting Start (its preview)
	ActCancelStart  ActionKind = "cancel-start"  // drop a run awaiting Start
	ActPickPlan     ActionKind = "pick-plan"     // the plan among a mention's files
	ActOpen         ActionKind = "open"          // a sign-in link to the run's web page
)

var actionKinds = map[string]ActionKind{
	ActionApprove: ActApprove,
	ActionEdit:    ActEdit,
	ActionSkip:    ActSkip,
	ActionRedo:    ActRedo,
	ActionAbort:   ActAbort,
	ActionPick:    ActPick,
	ActionCancel:  ActCancel,
	ActionPause:   ActPause,
	ActionResume:  ActResume,

	ActionResumeCheckpointed: ActResumeCheckp,
	ActionSaveWorkflow:       ActSaveWorkflow,
	ActionStart:              ActStart,
	ActionCancelStart:        ActCancelStart,
	ActionPickPlan:           ActPickPlan,
	ActionOpen:               ActOpen,
}

// Decision returns the engine decision a button stands for; Cancel and
// Save-workflow are not decisions.
func (k ActionKind) Decision() (engine.DecisionKind, bool) {
	switch k {
	case ActApprove, ActEdit, ActSkip, ActRedo, ActAbort, ActPick:
		return engine.DecisionKind(k), true
	}
	return "", false
}

// Action is one click on one of gonogo's buttons. Every gonogo button's
// value is StepRef.Value(): the step attempt it was rendered for (for
// Cancel, the running attempt; for Pick this, the candidate's attempt; for Save-workflow, the run's last step and
// its latest attempt; for a preview's Start and Cancel, the run), except
// a plan file's, which is PlanPick.Value().
type Action struct {
	Kind ActionKind
	Ref  StepRef
	// Pick is the mention and the file a plan file's button picks
	// (ActPickPlan); zero otherwise.
	Pick PlanPick

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
	ba, err := singleBlockAction(cb)
	if err != nil {
		return Action{}, err
	}
	kind, ok := actionKinds[ba.ActionID]
	if !ok {
		return Action{}, badPayload("unknown action id %q: not one of gonogo's buttons", clip(ba.ActionID, 60))
	}
	if ba.Type != "" && ba.Type != slack.ActionType("button") {
		return Action{}, badPayload("action %s is a %q element, not a button", ba.ActionID, clip(string(ba.Type), 40))
	}
	ref, pick, err := actionValue(kind, ba.Value)
	if err != nil {
		return Action{}, fmt.Errorf("%w: %s button: %w", ErrBadPayload, kind, err)
	}
	if cb.Container.Type != "" && cb.Container.Type != "message" {
		return Action{}, badPayload("%s button in a %q, not in a message", kind, clip(cb.Container.Type, 40))
	}
	a := Action{
		Kind:        kind,
		Ref:         ref,
		Pick:        pick,
		User:        cb.User.ID,
		Team:        firstNonEmpty(cb.User.TeamID, cb.Team.ID),
		Channel:     firstNonEmpty(cb.Channel.ID, cb.Container.ChannelID),
		MessageTS:   firstNonEmpty(cb.Container.MessageTs, cb.Message.Timestamp),
		ThreadTS:    firstNonEmpty(cb.Container.ThreadTs, cb.Message.ThreadTimestamp),
		ActionTS:    firstNonEmpty(ba.ActionTs, cb.ActionTs),
		TriggerID:   cb.TriggerID,
		ResponseURL: cb.ResponseURL,
	}
	if err := a.checkWhere(); err != nil {
		return Action{}, err
	}
	return a, nil
}

// singleBlockAction is the one Block Kit action a click on a gonogo
// button carries.
func singleBlockAction(cb slack.InteractionCallback) (*slack.BlockAction, error) {
	if cb.Type != slack.InteractionTypeBlockActions {
		return nil, badPayload("expected a block_actions interaction, got %q", clip(string(cb.Type), 40))
	}
	if n := len(cb.ActionCallback.AttachmentActions); n > 0 {
		return nil, badPayload("legacy attachment action %q: gonogo's buttons are Block Kit buttons",
			clip(cb.ActionCallback.AttachmentActions[0].Name, 40))
	}
	switch n := len(cb.ActionCallback.BlockActions); {
	case n == 0:
		return nil, badPayload("the block_actions payload carries no action")
	case n > 1:
		return nil, badPayload("the block_actions payload carries %d actions; a click on a gonogo button carries one", n)
	}
	ba := cb.ActionCallback.BlockActions[0]
	if ba == nil {
		return nil, badPayload("the block_actions payload carries an empty action")
	}
	return ba, nil
}

// actionValue reads a button's value: a plan file's pick for the plan
// buttons, a step reference for all others.
func actionValue(kind ActionKind, v string) (StepRef, PlanPick, error) {
	if kind == ActPickPlan {
		pick, err := ParsePlanPick(v)
		return StepRef{}, pick, err
	}
	ref, err := ParseStepRef(v)
	return ref, PlanPick{}, err
}

// checkWhere checks who clicked, where and when: the ids and timestamps
// every click carries, and the thread's when there is one.
func (a Action) checkWhere() error {
	what := string(a.Kind) + " button"
	if err := checkIDs(what, "user id", a.User, "channel id", a.Channel, "team id", a.Team); err != nil {
		return err
	}
	if err := checkTSs(what, "message ts", a.MessageTS, "action ts", a.ActionTS); err != nil {
		return err
	}
	if a.ThreadTS != "" && !validTS(a.ThreadTS) {
		return badPayload("%s: invalid thread ts %q", what, clip(a.ThreadTS, 40))
	}
	return nil
}

// PlanPick is what a plan file's button carries: the mention that sent
// several plans (its author, its ts, what its text asked for) and the
// file this button picks. The run it starts has the mention's key, so one
// mention starts one run however many buttons are pressed.
type PlanPick struct {
	User      string // the mention's author: who may pick
	MentionTS string
	File      string // the file's id
	Flags     engine.Flags
	Yes       bool // --yes: no preview
	Check     bool // "check": show what would run, run nothing
}

// pickFlags are the letters PlanPick.Value writes its flags as.
var pickFlags = []struct {
	letter byte
	on     func(p *PlanPick) *bool
}{
	{'a', func(p *PlanPick) *bool { return &p.Flags.Auto }},
	{'f', func(p *PlanPick) *bool { return &p.Flags.ForceAuto }},
	{'d', func(p *PlanPick) *bool { return &p.Flags.DryRun }},
	{'t', func(p *PlanPick) *bool { return &p.Flags.Thread }},
	{'y', func(p *PlanPick) *bool { return &p.Yes }},
	{'c', func(p *PlanPick) *bool { return &p.Check }},
}

// Value encodes a PlanPick as a button value.
func (p PlanPick) Value() string {
	var flags []byte
	for _, f := range pickFlags {
		if *f.on(&p) {
			flags = append(flags, f.letter)
		}
	}
	return strings.Join([]string{valueVersion, "pick", p.User, p.MentionTS, p.File, string(flags)}, "|")
}

// ParsePlanPick reads a value written by PlanPick.Value; anything else is
// an error, never a guess.
func ParsePlanPick(v string) (PlanPick, error) {
	parts := strings.Split(v, "|")
	if len(parts) != 6 || parts[0] != valueVersion || parts[1] != "pick" {
		return PlanPick{}, fmt.Errorf("not a gonogo plan pick: %q", clipValue(v))
	}
	p := PlanPick{User: parts[2], MentionTS: parts[3], File: parts[4]}
	if !p.wellFormed() {
		return PlanPick{}, fmt.Errorf("not a gonogo plan pick: %q", clipValue(v))
	}
	for _, c := range []byte(parts[5]) {
		if !p.setFlag(c) {
			return PlanPick{}, fmt.Errorf("not a gonogo plan pick: flag %q in %q", c, clipValue(v))
		}
	}
	return p, nil
}

// wellFormed reports whether the pick names its user, mention and file
// as Slack writes them.
func (p PlanPick) wellFormed() bool {
	return validID(p.User) && validID(p.File) && validTS(p.MentionTS)
}

// setFlag sets the flag Value writes as letter c; false for a letter it
// never writes.
func (p *PlanPick) setFlag(c byte) bool {
	for _, f := range pickFlags {
		if f.letter == c {
			*f.on(p) = true
			return true
		}
	}
	return false
}
