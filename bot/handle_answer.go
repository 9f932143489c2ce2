package bot

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/gonogo/gonogo/engine"
)

// A person who types a command or mentions the bot is answered as it
// arrives, before the slower work (a run's start and its thread, a plan
// file's download): with what will start, or why nothing will. Slack lets
// the acknowledgement of a slash command carry that answer, which the
// person sees at once as an ephemeral message. The acknowledgement of an
// app_mention (an Events API envelope) carries nothing Slack would show,
// so a mention is answered with chat.postEphemeral right after its ack,
// before the plan file is fetched: one Web API call, where the download
// and the run's first posts take several. The answer is what the person's
// request alone tells (the command or the mention read, the workspace,
// the intake's verdict on a chain or a workflow), never the store's or
// Slack's state; what can only be known later (the engine refusing the
// start, a file that is not a plan) is told as before, once known.

// answer is a message for one person: text, with blocks when there are.
type answer struct {
	text   string
	blocks []slack.Block
}

// refusalAnswer is the answer to input that starts nothing, when err is
// one a person can read (a refusal, or input they can correct); nil for
// any other error.
func refusalAnswer(err error, kind engine.InputKind) *answer {
	var ref *engine.Refusal
	var in *InputError
	var blocks []slack.Block
	switch {
	case errors.As(err, &ref):
		blocks = Refusal(ref, kind)
	case errors.As(err, &in):
		blocks = InputProblem(in)
	default:
		return nil
	}
	return &answer{text: FallbackText(blocks), blocks: blocks}
}

// outsiderRefusal tells a person of another organization that runs are
// started only for the workspace's people.
const outsiderRefusal = "gonogo starts runs only for people of its own workspace (or listed approvers)."

// commandAnswer is the answer a slash command's acknowledgement carries,
// and whether it is the whole answer (a refusal, help, a check's preview:
// the handler then has nothing to tell). A command that starts a run is
// answered with what starts; `/gonogo runs` reads the store, so the
// handler answers it.
func (b *Bot) commandAnswer(sc slack.SlashCommand, envelopeID string) (*answer, bool) {
	cmd, err := ParseCommand(sc)
	if err != nil {
		no := refusalAnswer(err, engine.InputChain)
		return no, no != nil
	}
	if planCommands[cmd.Kind] && b.outsider(cmd.User, cmd.Team) {
		return &answer{text: outsiderRefusal}, true
	}
	if cmd.Kind == CmdHelp {
		blocks := HelpBlocks(cmd.Slash)
		return &answer{text: FallbackText(blocks), blocks: blocks}, true
	}
	plan, no, ok := b.commandPlan(cmd, envelopeID)
	if !ok {
		return no, no != nil
	}
	if cmd.Kind == CmdCheck {
		blocks := b.checkAnswer(cmd, plan)
		return &answer{text: FallbackText(blocks), blocks: blocks}, true
	}
	blocks := StartNotice(plan, b.cfg.ConfirmStart)
	return &answer{text: FallbackText(blocks), blocks: blocks}, false
}

// planCommands are the commands whose acknowledgement answers with the
// plan they run or check: refused there to people of another workspace.
var planCommands = map[CommandKind]bool{CmdChain: true, CmdRun: true, CmdCheck: true}

// commandPlan is the plan a command runs or checks: a workflow's, or a
// chain's. When there is none, no is the refusal to answer with (nil when
// the handler answers, or when the command runs no plan).
func (b *Bot) commandPlan(cmd Command, envelopeID string) (plan engine.Plan, no *answer, ok bool) {
	switch {
	case cmd.Kind == CmdRun || (cmd.Kind == CmdCheck && cmd.Checks == CmdRun):
		p, _, no, err := b.takeWorkflow(cmd, envelopeID)
		if no != nil || err != nil {
			return engine.Plan{}, no, false
		}
		return p, nil, true
	case cmd.Kind == CmdChain || cmd.Kind == CmdCheck:
		p, _, err := b.takeChain(cmd, envelopeID)
		if err != nil {
			return engine.Plan{}, refusalAnswer(err, engine.InputChain), false
		}
		return p, nil, true
	}
	return engine.Plan{}, nil, false
}

// commandPayload is the slash command's answer as the payload of its
// acknowledgement: an ephemeral message, and nothing else. (slack.Msg
// would also send an empty metadata object, which Slack's message types
// refuse for its missing event_type.)
func commandPayload(a *answer) any {
	return commandResponse{Text: a.text, ResponseType: slack.ResponseTypeEphemeral, Blocks: a.blocks}
}

// commandResponse is the message a slash command's acknowledgement
// carries.
type commandResponse struct {
	Text         string        `json:"text"`
	ResponseType string        `json:"response_type"`
	Blocks       []slack.Block `json:"blocks,omitempty"`
}

// maxAckPayload is the largest acknowledgement payload gonogo sends:
// Slack drops a Socket Mode response of 20 KB or more (and slack-go then
// refuses to send even the ack), so a larger answer is left to the
// handler, which posts it.
const maxAckPayload = 19 * 1024

func fitsAck(payload any) bool {
	raw, err := json.Marshal(payload)
	return err == nil && len(raw) <= maxAckPayload
}

// answerMention answers a mention as it arrives, right after its
// acknowledgement: a refusal when the message cannot start a run (no plan
// file attached, an edited message, a person of another organization),
// else which file is read. It reports whether that answered the person in
// full. A payload no person sent (a bot's message) is left to the
// handler, which logs it.
func (b *Bot) answerMention(ctx context.Context, evt socketmode.Event) bool {
	raw, team, ok := appMentionOf(evt)
	if !ok {
		return false
	}
	m, err := ParseMention(raw)
	if err != nil {
		no := refusalAnswer(err, engine.InputPlan)
		if no == nil {
			return false
		}
		b.tellNow(ctx, raw.Channel, threadOf(raw), raw.User, no.text, no.blocks)
		return true
	}
	if b.outsider(m.User, m.Team) || (m.Team == "" && b.outsider(m.User, team)) {
		b.tellNow(ctx, m.Channel, m.ThreadTS, m.User, outsiderRefusal, nil)
		return true
	}
	// The notice is worth something only before the answer it announces:
	// one Slack holds back (a 429) is given up, not let hold the run.
	ctx, cancel := context.WithTimeout(ctx, noticeWait)
	defer cancel()
	blocks := ReadingNotice(m.Files)
	b.tellNow(ctx, m.Channel, m.ThreadTS, m.User, FallbackText(blocks), blocks)
	return false
}

// appMentionOf is the app_mention an envelope carries, and the team of
// its envelope.
func appMentionOf(evt socketmode.Event) (*slackevents.AppMentionEvent, string, bool) {
	ev, ok := evt.Data.(slackevents.EventsAPIEvent)
	if !ok {
		return nil, "", false
	}
	raw, ok := ev.InnerEvent.Data.(*slackevents.AppMentionEvent)
	return raw, ev.TeamID, ok
}

// noticeWait is how long a mention's handling waits for its notice to be
// posted.
const noticeWait = 2 * time.Second
