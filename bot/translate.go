package bot

// The translate layer: what Slack delivers (a slash command, a button click,
// a modal submission, a mention with a file) becomes a gonogo request, or a
// clear error. Nothing here does I/O or keeps state, so every rule about
// what people may type is a table test away.
//
// Slack rewrites what people type before gonogo sees it, and the rules
// below undo that the same way for commands and mentions:
//
//   - Markup first, entities second. Slack encodes a typed "<", ">" and "&"
//     as "&lt;", "&gt;" and "&amp;", so every real "<" in the text opens
//     Slack markup: "<https://x|label>" becomes the label (or "label (url)"
//     when the label is not the address itself), "<@U123|ana>" becomes
//     "@ana" ("@U123" without a label), "<#C123|general>" becomes
//     "#general", "<!here>" becomes "@here" and "<!subteam^S1|@team>"
//     "@team". Only then are the three entities decoded, in one pass, so a
//     typed "&lt;" stays text and never turns into markup.
//   - Any Unicode space (NBSP included) and the zero-width characters chat
//     clients leave in pasted text separate words; curly quotes work like
//     straight ones; "—" and "–" (a "--" that a keyboard turned into a dash)
//     are read as "--" in front of a flag name and, alone, as the "--" that
//     starts the context.
//   - Text that is not valid UTF-8, or that carries a control character
//     other than tab and line breaks, or an invisible text-direction
//     override, is refused with its position: what a person sees must be
//     what runs.
//   - Subcommands are matched ignoring letter case, because phones
//     capitalize the first word ("Chain a -> b").
//
// Unexported names here start with "tr": the package's other files (render,
// transport) keep their own small text functions.

import (
	"errors"
	"fmt"
	"mime"
	"path"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/parse"
)

// Limits on what people send.
const (
	// MaxCommandChars caps a slash command's text. A context longer than
	// this belongs in a plan file.
	MaxCommandChars = 12000
	// MaxMentionChars is Slack's own limit for a message's text.
	MaxMentionChars = 40000
	// MaxEditBytes caps an edited artifact given as a reply in the thread
	// (a file or a message); the edit modal holds at most maxModalInputText
	// characters. It matches the default artifact cap of the runners.
	MaxEditBytes = 1 << 20
)

// The edit-reply modal offers the replies found in the thread as options
// of one input; the selected option's value is a ReplyRef.
const (
	BlockReply = "gonogo_reply"
	InputReply = "gonogo_reply_input"
)

// ErrBadPayload marks a payload gonogo cannot act on and did not expect
// from a person: another app's action id or modal, a forged or truncated
// button value or private_metadata, a payload with fields missing, a bot's
// message. The bot logs it and changes nothing.
var ErrBadPayload = errors.New("not a payload gonogo can act on")

// ErrNeedsFileInfo is returned by CheckPlanFile for a file Slack described
// by its id only (files in channels shared with other organizations arrive
// as {"id", "file_access": "check_file_info"}): look it up with files.info,
// convert it with FileRefFrom and check again.
var ErrNeedsFileInfo = errors.New("only the file's id was sent: its details must be looked up with files.info")

// InputError is input a person can correct. Problem says what is wrong and
// where, in words for the person who typed it; Usage, when set, is the
// usage of the command concerned, shown with it; Block, when set, is the
// modal input block the problem is about, so a view_submission can be
// answered with a field error next to the input.
type InputError struct {
	Problem string
	Usage   string
	Block   string
}

func (e *InputError) Error() string {
	if e.Usage == "" {
		return e.Problem
	}
	return e.Problem + "\nusage:\n" + e.Usage
}

func trBadPayload(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadPayload, fmt.Sprintf(format, args...))
}

// ---------------------------------------------------------------------------
// Slash commands

// CommandKind is what a slash command asks for.
type CommandKind string

const (
	CmdChain CommandKind = "chain" // run skills in a row
	CmdRun   CommandKind = "run"   // run a named workflow
	CmdRuns  CommandKind = "runs"  // list the runs in this channel
	CmdHelp  CommandKind = "help"
)

var trCommandKinds = []CommandKind{CmdChain, CmdRun, CmdRuns, CmdHelp}

// Command is a slash command, read.
type Command struct {
	Kind  CommandKind
	Slash string // the command as Slack names it ("/gonogo"), for messages
	Text  string // the command's text with Slack's markup and entities decoded

	Chain    engine.ChainExpr  // CmdChain: the parsed chain (flags and context included)
	Workflow string            // CmdRun: the workflow's name
	Args     map[string]string // CmdRun: --arg k=v; nil when none
	Flags    engine.Flags      // CmdChain and CmdRun
	Context  string            // CmdChain and CmdRun: the shared context, "" when none

	// Who and where. Team is the workspace Slack sent the command from
	// (team_id); a front end that serves one team compares it.
	User, Team, Channel string
	ResponseURL         string
	TriggerID           string
}

const trDefaultSlash = "/gonogo"

var trCommandUsage = map[CommandKind]string{
	CmdChain: "%s chain EXPR [flags] [-- context]         skills in a row: a -> b, c then d",
	CmdRun:   "%s run WORKFLOW [flags] [--arg k=v ...] [-- context]",
	CmdRuns:  "%s runs                                     the runs in this channel",
	CmdHelp:  "%s help",
}

// Usage returns the usage line of one subcommand of the slash command
// slash ("" means /gonogo).
func Usage(slash string, kind CommandKind) string {
	if slash == "" {
		slash = trDefaultSlash
	}
	u, ok := trCommandUsage[kind]
	if !ok {
		return Help(slash)
	}
	return fmt.Sprintf(u, slash)
}

// Help is the text of "/gonogo help": every subcommand, the flags, and how
// to start a run from a plan file.
func Help(slash string) string {
	if slash == "" {
		slash = trDefaultSlash
	}
	var b strings.Builder
	for _, k := range trCommandKinds {
		b.WriteString(Usage(slash, k))
		b.WriteByte('\n')
	}
	b.WriteString("flags: --auto (advance without pausing; a FAILED step halts, an EMPTY step pauses), " +
		"--force-auto, --dry-run, --thread (each step gets the previous step's artifact)\n")
	b.WriteString("or mention the bot in a message with a Markdown (.md) or text (.txt) plan attached; " +
		"flags go in the message text")
	return b.String()
}

// ParseCommand reads a slash command: "chain EXPR [flags] [-- context]",
// "run WORKFLOW [flags] [--arg k=v ...] [-- context]", "runs" and "help"
// (also empty text, "-h", "--help" and "?"). Bad input is an *InputError
// with the usage of the subcommand concerned, except the refusals of the
// chain parser (a trailing separator, an invalid skill name, an unknown
// flag, an empty chain), which are returned as they are: *engine.Refusal,
// shown with Usage(slash, CmdChain).
func ParseCommand(sc slack.SlashCommand) (Command, error) {
	cmd := Command{
		Slash:       sc.Command,
		User:        sc.UserID,
		Team:        sc.TeamID,
		Channel:     sc.ChannelID,
		ResponseURL: sc.ResponseURL,
		TriggerID:   sc.TriggerID,
	}
	if cmd.Slash == "" {
		cmd.Slash = trDefaultSlash
	}
	if err := trCheckIDs("slash command", "user_id", sc.UserID, "channel_id", sc.ChannelID, "team_id", sc.TeamID); err != nil {
		return Command{}, err
	}
	if err := trCheckText("the command text", sc.Text, MaxCommandChars); err != nil {
		return Command{}, &InputError{Problem: err.Error() + trLongTextHint(sc.Text), Usage: Help(cmd.Slash)}
	}
	text := trSlackText(sc.Text, false)
	cmd.Text = text

	word, rest := trFirstWord(text)
	switch strings.ToLower(word) {
	case "", "help", "-h", "--help", "—help", "–help", "?":
		cmd.Kind = CmdHelp
		return cmd, nil
	case string(CmdRuns):
		cmd.Kind = CmdRuns
		if extra := trTrimSpace(rest); extra != "" {
			return Command{}, &InputError{
				Problem: fmt.Sprintf("%s runs takes nothing after it (got %q)", cmd.Slash, trClip(extra, 40)),
				Usage:   Usage(cmd.Slash, CmdRuns),
			}
		}
		return cmd, nil
	case string(CmdChain):
		cmd.Kind = CmdChain
		ce, err := parse.Chain(trChainText(rest))
		if err != nil {
			return Command{}, err
		}
		cmd.Chain, cmd.Flags, cmd.Context = ce, ce.Flags, ce.Context
		return cmd, nil
	case string(CmdRun):
		cmd.Kind = CmdRun
		if err := trParseRun(&cmd, rest); err != nil {
			return Command{}, &InputError{Problem: err.Error(), Usage: Usage(cmd.Slash, CmdRun)}
		}
		return cmd, nil
	default:
		return Command{}, &InputError{Problem: trUnknownSubcommand(cmd.Slash, word, rest), Usage: Help(cmd.Slash)}
	}
}

func trUnknownSubcommand(slash, word, rest string) string {
	msg := fmt.Sprintf("unknown subcommand %q: %s takes chain, run, runs or help", trClip(word, 40), slash)
	var names []string
	for _, k := range trCommandKinds {
		names = append(names, string(k))
	}
	if len(word) <= 32 {
		if s := engine.Suggest(strings.ToLower(word), names); len(s) > 0 {
			return msg + fmt.Sprintf(" (did you mean %q?)", s[0])
		}
	}
	// "/gonogo deliver-prd -> deliver-stories" forgot the subcommand.
	if engine.ValidSkillName(word) && (strings.ContainsAny(rest, ",→>") || strings.Contains(strings.ToLower(rest), " then ")) {
		return msg + fmt.Sprintf(" (to run skills in a row: %s chain %s ...)", slash, word)
	}
	return msg
}

func trLongTextHint(text string) string {
	if utf8.ValidString(text) && utf8.RuneCountInString(text) > MaxCommandChars {
		return ": put a long context in a plan file and mention the bot with it attached"
	}
	return ""
}

// trChainText is the chain expression of "chain EXPR": trimmed, and with the
// first lone dash ("—" or "–", a "--" a keyboard rewrote) made "--" again,
// so that what follows it is context as written, flags included, exactly
// as after a typed "--".
func trChainText(rest string) string {
	rest = trTrimSpace(rest)
	words, _ := trSplitWords(rest, false)
	for _, w := range words {
		if w.isDashDash() {
			if w.text != "--" {
				rest = rest[:w.start] + "--" + rest[w.end:]
			}
			break
		}
	}
	return rest
}

// trRunFlagNames are the flags of "run" besides --arg.
var trRunFlagNames = map[string]func(*engine.Flags){
	"auto":       func(f *engine.Flags) { f.Auto = true },
	"force-auto": func(f *engine.Flags) { f.ForceAuto = true },
	"dry-run":    func(f *engine.Flags) { f.DryRun = true },
	"thread":     func(f *engine.Flags) { f.Thread = true },
}

const trKnownRunFlags = "--auto, --force-auto, --dry-run, --thread, --arg k=v"
const trKnownMentionFlags = "--auto, --force-auto, --dry-run, --thread"

var trArgKeyRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// trParseRun reads "WORKFLOW [flags] [--arg k=v ...] [-- context]". Unlike a
// chain, run has no implicit context: a stray word is an error (a typo in a
// flag or a forgotten "--"), never silently part of the prompt.
func trParseRun(cmd *Command, rest string) error {
	rest = trTrimSpace(rest) // columns count from the workflow name, as a chain's from its first name
	words, err := trSplitWords(rest, true)
	if err != nil {
		return err
	}
	for k := 0; k < len(words); k++ {
		w := words[k]
		if w.isDashDash() {
			cmd.Context = trTrimSpace(rest[w.end:])
			break
		}
		if name, ok := w.flag(); ok {
			name, value, hasValue := strings.Cut(name, "=")
			if set, ok := trRunFlagNames[name]; ok {
				if hasValue {
					return fmt.Errorf("flag %q at column %d takes no value", w.raw, w.col)
				}
				set(&cmd.Flags)
				continue
			}
			if name != "arg" {
				return trUnknownFlag(w, trKnownRunFlags)
			}
			if !hasValue {
				if k+1 == len(words) {
					return fmt.Errorf("flag %q at column %d needs a name=value pair after it", w.raw, w.col)
				}
				k++
				value = words[k].text
			}
			if err := trAddArg(cmd, value, w); err != nil {
				return err
			}
			continue
		}
		if cmd.Workflow != "" {
			return fmt.Errorf("unexpected %q at column %d after the workflow name %q: one workflow at a time, "+
				"and the context goes after a lone \"--\"", trClip(w.text, 40), w.col, cmd.Workflow)
		}
		if err := trCheckWorkflowName(w.text); err != nil {
			return fmt.Errorf("%w (at column %d)", err, w.col)
		}
		cmd.Workflow = w.text
	}
	if cmd.Workflow == "" {
		return errors.New("name the workflow to run")
	}
	return nil
}

func trAddArg(cmd *Command, pair string, at trWord) error {
	key, value, ok := strings.Cut(pair, "=")
	switch {
	case !ok:
		return fmt.Errorf("--arg at column %d needs name=value, got %q", at.col, trClip(pair, 40))
	case !trArgKeyRE.MatchString(key) || len(key) > 64:
		return fmt.Errorf("--arg at column %d: %q is not an argument name (letters, digits, '_' and '-', "+
			"starting with a letter or '_', at most 64)", at.col, trClip(key, 40))
	}
	if _, dup := cmd.Args[key]; dup {
		return fmt.Errorf("--arg at column %d gives %q a second time", at.col, key)
	}
	if cmd.Args == nil {
		cmd.Args = map[string]string{}
	}
	cmd.Args[key] = value
	return nil
}

// trCheckWorkflowName holds a workflow name to the rule parse.LoadWorkflow
// applies (engine.ValidSkillName: lower-case letters, digits and dashes,
// starting with a letter or digit, at most 128), since the name picks a file
// in the workflows directory. A near miss (capitals, underscores) is offered
// in its valid form, never taken for it.
func trCheckWorkflowName(name string) error {
	switch {
	case name == "":
		return errors.New("the workflow name is empty")
	case strings.ContainsAny(name, `/\`) || strings.Contains(name, ".."):
		return fmt.Errorf("invalid workflow name %q: a workflow name is a plain name, not a path", trClip(name, 40))
	case strings.HasSuffix(strings.ToLower(name), ".yaml") || strings.HasSuffix(strings.ToLower(name), ".yml"):
		return fmt.Errorf("invalid workflow name %q: name the workflow without .yaml", trClip(name, 40))
	case len(name) > 128:
		return fmt.Errorf("invalid workflow name %q: at most 128 characters", trClip(name, 40))
	case engine.ValidSkillName(name):
		return nil
	}
	msg := fmt.Sprintf("invalid workflow name %q: workflow names are lower-case letters, digits and dashes, starting with a letter or digit",
		trClip(name, 40))
	if near := strings.ReplaceAll(strings.ToLower(name), "_", "-"); engine.ValidSkillName(near) {
		msg += fmt.Sprintf(" (did you mean %q?)", near)
	}
	return errors.New(msg)
}

func trUnknownFlag(w trWord, known string) error {
	return fmt.Errorf("unknown flag %q at column %d: the flags are %s (text that starts with \"--\" goes after a lone \"--\")",
		trClip(w.raw, 40), w.col, known)
}

// ---------------------------------------------------------------------------
// Button clicks

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

// ---------------------------------------------------------------------------
// Modal submissions

// SubmissionKind is which of gonogo's modals was submitted.
type SubmissionKind string

const (
	SubmitEdit      SubmissionKind = "edit"            // the artifact, edited in the modal
	SubmitEditReply SubmissionKind = "edit-from-reply" // the artifact is a reply in the thread
	SubmitRedo      SubmissionKind = "redo"            // optional feedback for the agent
	// SubmitSaveWorkflow names the workflow a finished chain is saved as.
	SubmitSaveWorkflow SubmissionKind = "save-workflow"
)

var trSubmissionKinds = map[string]SubmissionKind{
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

const trReplyTag = "reply"

// Value encodes a ReplyRef as the value of the edit-reply modal's option.
func (r ReplyRef) Value() string {
	return valueVersion + "|" + trReplyTag + "|" + r.TS + "|" + r.File
}

// ParseReplyRef reads a value written by ReplyRef.Value; anything else is
// an error.
func ParseReplyRef(v string) (ReplyRef, error) {
	parts := strings.Split(v, "|")
	if len(parts) != 4 || parts[0] != valueVersion || parts[1] != trReplyTag {
		return ReplyRef{}, fmt.Errorf("not a gonogo reply reference: %q", clipValue(v))
	}
	r := ReplyRef{TS: parts[2], File: parts[3]}
	if !trValidTS(r.TS) || (r.File != "" && !trValidID(r.File)) {
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
	if cb.Type != slack.InteractionTypeViewSubmission {
		return Submission{}, trBadPayload("expected a view_submission interaction, got %q", trClip(string(cb.Type), 40))
	}
	v := cb.View
	if v.Type != "" && v.Type != slack.VTModal {
		return Submission{}, trBadPayload("view %q is a %q, not a modal", trClip(v.CallbackID, 60), trClip(string(v.Type), 40))
	}
	kind, ok := trSubmissionKinds[v.CallbackID]
	if !ok {
		return Submission{}, trBadPayload("unknown modal callback id %q: not one of gonogo's modals", trClip(v.CallbackID, 60))
	}
	if v.PrivateMetadata == "" {
		return Submission{}, trBadPayload("the %s modal carries no private_metadata (the step it is for)", kind)
	}
	ref, err := ParseStepRef(v.PrivateMetadata)
	if err != nil {
		return Submission{}, fmt.Errorf("%w: %s modal: %w", ErrBadPayload, kind, err)
	}
	s := Submission{
		Kind:     kind,
		Ref:      ref,
		User:     cb.User.ID,
		Team:     trFirstNonEmpty(cb.User.TeamID, cb.Team.ID, v.TeamID),
		ViewID:   v.ID,
		ViewHash: v.Hash,
	}
	what := string(kind) + " modal"
	if err := trCheckIDs(what, "user id", s.User, "team id", s.Team, "view id", s.ViewID); err != nil {
		return Submission{}, err
	}
	if v.State == nil {
		return Submission{}, trBadPayload("the %s carries no input values", what)
	}
	switch kind {
	case SubmitEdit:
		in, ok := v.State.Values[BlockArtifact][InputArtifact]
		if !ok {
			return Submission{}, trBadPayload("the %s has no %s input", what, BlockArtifact)
		}
		if err := trCheckModalArtifact(in.Value); err != nil {
			return Submission{}, err
		}
		s.Artifact = in.Value
	case SubmitEditReply:
		in, ok := v.State.Values[BlockReply][InputReply]
		if !ok {
			return Submission{}, trBadPayload("the %s has no %s input", what, BlockReply)
		}
		if in.SelectedOption.Value == "" {
			return Submission{}, &InputError{Block: BlockReply, Problem: "choose the reply that replaces the artifact"}
		}
		r, err := ParseReplyRef(in.SelectedOption.Value)
		if err != nil {
			return Submission{}, fmt.Errorf("%w: %s: %w", ErrBadPayload, what, err)
		}
		s.Reply = r
	case SubmitRedo:
		// Feedback is optional; Slack leaves an untouched optional input's
		// value null, and an absent block means the same.
		fb := v.State.Values[BlockFeedback][InputFeedback].Value
		if err := trCheckText("the feedback", fb, maxModalInputText); err != nil {
			return Submission{}, &InputError{Block: BlockFeedback, Problem: err.Error()}
		}
		s.Feedback = trTrimSpace(fb)
	case SubmitSaveWorkflow:
		in, ok := v.State.Values[BlockWorkflowName][InputWorkflowName]
		if !ok {
			return Submission{}, trBadPayload("the %s has no %s input", what, BlockWorkflowName)
		}
		name := trTrimSpace(in.Value)
		if err := CheckWorkflowName(name); err != nil {
			return Submission{}, err
		}
		s.Name = name
	}
	return s, nil
}

// MaxWorkflowName is the longest name a workflow is saved under (the
// limit parse.ChainWorkflow keeps to); a workflow file written by hand may
// have a name up to 128 characters.
const MaxWorkflowName = 64

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
		if err := trCheckWorkflowName(name); err != nil {
			problem = strings.TrimPrefix(err.Error(), fmt.Sprintf("invalid workflow name %q: ", trClip(name, 40)))
		}
	}
	if problem == "" {
		return nil
	}
	return &InputError{Block: BlockWorkflowName, Problem: problem}
}

func trCheckModalArtifact(body string) error {
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
			trSizeText(int64(len(body))), trSizeText(int64(maxBytes)))}
	}
	if err := trCheckText("the edited artifact", body, -1); err != nil {
		return &InputError{Problem: err.Error()}
	}
	if trTrimSpace(body) == "" {
		return &InputError{Problem: "the edited artifact is empty: to go on without an artifact, press Skip"}
	}
	return nil
}

// ---------------------------------------------------------------------------
// Mentions with a plan file

// FileRef is a file attached to a message, as Slack described it.
type FileRef struct {
	ID                 string
	Name               string
	Title              string
	Mimetype           string
	Filetype           string // Slack's file type: "markdown", "text", "png", "pdf", ...
	Size               int64
	URLPrivate         string
	URLPrivateDownload string
	External           bool // a link to a file kept outside Slack (Google Drive, ...)
	// NeedsInfo is set when Slack sent the id only (a file in a channel
	// shared with another organization): look it up with files.info.
	NeedsInfo bool
}

// FileRefFrom converts slack-go's file, from an event or from files.info.
func FileRefFrom(f slack.File) FileRef {
	return FileRef{
		ID:                 f.ID,
		Name:               f.Name,
		Title:              f.Title,
		Mimetype:           f.Mimetype,
		Filetype:           f.Filetype,
		Size:               int64(f.Size),
		URLPrivate:         f.URLPrivate,
		URLPrivateDownload: f.URLPrivateDownload,
		External:           f.IsExternal,
		NeedsInfo: f.FileAccess == "check_file_info" ||
			(f.Name == "" && f.Mimetype == "" && f.Filetype == "") ||
			(f.URLPrivate == "" && f.URLPrivateDownload == "" && !f.IsExternal),
	}
}

// label is how a message names the file.
func (f FileRef) label() string {
	switch {
	case f.Name != "":
		return fmt.Sprintf("%q", trClip(f.Name, 80))
	case f.Title != "":
		return fmt.Sprintf("%q", trClip(f.Title, 80))
	}
	return "file " + trClip(f.ID, 40)
}

// Mention is a message that mentions the bot, read: the flags in its text
// and the files attached to it. A run started from it runs in ThreadTS.
type Mention struct {
	Flags engine.Flags
	Files []FileRef
	// Text is what the message says besides mentions and flags, decoded as
	// for commands.
	Text string

	// User is the author. Team is the author's team when Slack says
	// (user_team, set in shared channels); otherwise "", and the bot takes
	// the envelope's team_id.
	User, Team string
	Channel    string
	TS         string // the mention itself
	ThreadTS   string // where the run goes: the mention's thread, or a new thread under the mention
}

// ParseMention reads an app_mention event. Flags (--auto, --force-auto,
// --dry-run, --thread, or the same after "—" or "–") are taken from the
// text, every user mention stripped; any other word starting with "--" is
// refused, and after a lone "--" nothing is a flag (a lone dash is prose
// here). Other words are free text. slack-go v0.35.0's
// AppMentionEvent carries the message's files, so the plan is found
// without fetching the message; entries Slack sent as bare ids come back
// with NeedsInfo set. A message with no file is an *InputError telling the
// person to attach a plan; a bot's message, an edit, or missing fields are
// errors wrapping ErrBadPayload.
func ParseMention(ev *slackevents.AppMentionEvent) (Mention, error) {
	if ev == nil {
		return Mention{}, trBadPayload("no app_mention event")
	}
	if ev.BotID != "" {
		return Mention{}, trBadPayload("a message from bot %s does not start a run", trClip(ev.BotID, 40))
	}
	if ev.Edited != nil {
		return Mention{}, &InputError{Problem: "an edited message does not start a run: post a new message that mentions the bot, with the plan attached"}
	}
	m := Mention{User: ev.User, Team: trFirstNonEmpty(ev.UserTeam, ev.SourceTeam), Channel: ev.Channel, TS: ev.TimeStamp}
	m.ThreadTS = trFirstNonEmpty(ev.ThreadTimeStamp, ev.TimeStamp)
	if err := trCheckIDs("mention", "user", m.User, "channel", m.Channel); err != nil {
		return Mention{}, err
	}
	if m.Team != "" && !trValidID(m.Team) {
		return Mention{}, trBadPayload("mention: invalid user_team %q", trClip(m.Team, 40))
	}
	if err := trCheckTSs("mention", "ts", m.TS, "thread_ts", m.ThreadTS); err != nil {
		return Mention{}, err
	}
	if err := trCheckText("the message", ev.Text, MaxMentionChars); err != nil {
		return Mention{}, &InputError{Problem: err.Error()}
	}
	text := trSlackText(ev.Text, true)
	words, _ := trSplitWords(text, false)
	var cut []trWord
	for _, w := range words {
		// Only a typed "--" ends the flags here: in a message a lone dash
		// is prose, and must not turn the flags after it into text.
		if w.text == "--" {
			cut = append(cut, w)
			break
		}
		name, ok := w.flag()
		if !ok {
			continue
		}
		set, known := trRunFlagNames[name]
		if !known {
			if !strings.HasPrefix(w.raw, "--") {
				continue // "—like this" is prose; only a typed "--" is surely a flag
			}
			return Mention{}, &InputError{Problem: trUnknownFlag(w, trKnownMentionFlags).Error()}
		}
		set(&m.Flags)
		cut = append(cut, w)
	}
	m.Text = trCutWords(text, cut)
	for _, f := range ev.Files {
		m.Files = append(m.Files, FileRefFrom(f))
	}
	if len(m.Files) == 0 {
		return Mention{}, &InputError{Problem: "no plan attached: attach a Markdown (.md) or text (.txt) plan to the message " +
			"that mentions the bot, or start a chain of skills with /gonogo chain"}
	}
	return m, nil
}

// PlanFile returns the one plan attached to the mention, checked with
// CheckPlanFile. Several files are refused rather than guessed between.
func (m Mention) PlanFile(maxBytes int64) (FileRef, error) {
	switch len(m.Files) {
	case 0:
		return FileRef{}, &InputError{Problem: "no plan attached: attach a Markdown (.md) or text (.txt) plan"}
	case 1:
		return m.Files[0], CheckPlanFile(m.Files[0], maxBytes)
	}
	var names []string
	for _, f := range m.Files {
		names = append(names, f.label())
	}
	return FileRef{}, &InputError{Problem: fmt.Sprintf("%d files attached (%s): attach one plan per message",
		len(m.Files), strings.Join(names, ", "))}
}

var (
	trPlanFiletypes = map[string]bool{"markdown": true, "text": true}
	trPlanMimetypes = map[string]bool{"text/plain": true, "text/markdown": true, "text/x-markdown": true}
	trPlanExts      = map[string]bool{".md": true, ".markdown": true, ".txt": true, ".text": true}
)

// CheckPlanFile accepts a Markdown or plain-text file of at most maxBytes
// (no limit when maxBytes <= 0), judged by what Slack says about it: the
// MIME type, when present, must be text/plain or text/markdown, and Slack's
// file type, when present, markdown or text (Slack sniffs both, so "Q3.plan"
// typed as text passes); when Slack gives neither, the name's extension
// must be .md, .markdown, .txt or .text. Images, PDFs,
// archives, other code snippets and external links are refused, with a
// message naming the file. A file sent as a bare id is an error wrapping
// ErrNeedsFileInfo. CheckPlanContent checks the bytes once downloaded.
func CheckPlanFile(f FileRef, maxBytes int64) error {
	if f.ID == "" {
		return trBadPayload("an attached file has no id")
	}
	if f.NeedsInfo {
		return fmt.Errorf("%s: %w", f.label(), ErrNeedsFileInfo)
	}
	const want = "attach the plan as a Markdown (.md) or plain-text (.txt) file"
	if f.External {
		return &InputError{Problem: fmt.Sprintf("%s is a link to a file kept outside Slack: %s", f.label(), want)}
	}
	mt := ""
	if f.Mimetype != "" {
		if m, _, err := mime.ParseMediaType(f.Mimetype); err == nil {
			mt = m
		} else {
			mt = strings.ToLower(f.Mimetype)
		}
	}
	ft := strings.ToLower(f.Filetype)
	ext := strings.ToLower(path.Ext(f.Name))
	switch {
	case mt != "" && !trPlanMimetypes[mt]:
		return &InputError{Problem: fmt.Sprintf("%s is %s, not a plan: %s", f.label(), trDescribeType(mt, ft), want)}
	case ft != "" && !trPlanFiletypes[ft]:
		return &InputError{Problem: fmt.Sprintf("%s is %s, not a plan: %s", f.label(), trDescribeType(mt, ft), want)}
	case mt == "" && ft == "" && ext != "" && !trPlanExts[ext]:
		return &InputError{Problem: fmt.Sprintf("%s is a %s file, not a plan: %s", f.label(), trClip(ext, 20), want)}
	case mt == "" && ft == "" && ext == "":
		return &InputError{Problem: fmt.Sprintf("Slack says nothing about the type of %s: %s", f.label(), want)}
	case f.Size < 0:
		return trBadPayload("%s has a negative size", f.label())
	case f.Size == 0:
		return &InputError{Problem: fmt.Sprintf("%s is empty: attach the plan itself", f.label())}
	case maxBytes > 0 && f.Size > maxBytes:
		return &InputError{Problem: fmt.Sprintf("%s is %s; gonogo reads plans up to %s", f.label(), trSizeText(f.Size), trSizeText(maxBytes))}
	}
	return nil
}

// CheckPlanContent checks a plan file's bytes once downloaded: a file can
// say it is Markdown and be something else. The body must be at most
// maxBytes (no limit when maxBytes <= 0), not blank, and UTF-8 text
// without NUL bytes. Problems are *InputError naming the file.
func CheckPlanContent(f FileRef, body []byte, maxBytes int64) error {
	n := int64(len(body))
	switch {
	case maxBytes > 0 && n > maxBytes:
		return &InputError{Problem: fmt.Sprintf("%s is %s; gonogo reads plans up to %s", f.label(), trSizeText(n), trSizeText(maxBytes))}
	case len(body) >= 2 && (body[0] == 0xff && body[1] == 0xfe || body[0] == 0xfe && body[1] == 0xff):
		return &InputError{Problem: fmt.Sprintf("%s is UTF-16 text: save it as UTF-8 and attach it again", f.label())}
	}
	for i := 0; i < len(body); {
		r, w := utf8.DecodeRune(body[i:])
		if r == 0 || (r == utf8.RuneError && w == 1) {
			return &InputError{Problem: fmt.Sprintf("%s is not text (binary content at byte %d): attach the plan as Markdown or plain text",
				f.label(), i)}
		}
		i += w
	}
	if trTrimSpace(strings.TrimPrefix(string(body), "\ufeff")) == "" {
		return &InputError{Problem: fmt.Sprintf("%s is empty: attach the plan itself", f.label())}
	}
	return nil
}

func trDescribeType(mt, ft string) string {
	switch {
	case strings.HasPrefix(mt, "image/"):
		return fmt.Sprintf("an image (%s)", mt)
	case mt == "application/pdf" || ft == "pdf":
		return "a PDF"
	case strings.HasPrefix(mt, "video/"):
		return fmt.Sprintf("a video (%s)", mt)
	case strings.HasPrefix(mt, "audio/"):
		return fmt.Sprintf("audio (%s)", mt)
	case strings.HasPrefix(mt, "text/"):
		return fmt.Sprintf("%s text", trClip(mt, 40))
	case mt != "":
		return fmt.Sprintf("a binary file (%s)", trClip(mt, 40))
	}
	return fmt.Sprintf("a %q file", trClip(ft, 20))
}

func trSizeText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// ---------------------------------------------------------------------------
// Text

// trCheckText refuses text that is not valid UTF-8, is longer than maxChars
// characters (no limit when maxChars < 0), or holds a control character
// other than tab and line breaks or a text-direction override.
func trCheckText(what, s string, maxChars int) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s is not valid UTF-8 text", what)
	}
	if maxChars >= 0 {
		if n := utf8.RuneCountInString(s); n > maxChars {
			return fmt.Errorf("%s is %d characters long; the limit is %d", what, n, maxChars)
		}
	}
	line, col := 1, 0
	for _, r := range s {
		col++
		switch {
		case r == '\n':
			line, col = line+1, 0
		case r == '\t' || r == '\r':
		case unicode.IsControl(r):
			return fmt.Errorf("%s has a control character (U+%04X) at line %d, column %d: remove it", what, r, line, col)
		case r >= '\u202a' && r <= '\u202e' || r >= '\u2066' && r <= '\u2069':
			return fmt.Errorf("%s has an invisible text-direction character (U+%04X) at line %d, column %d: remove it",
				what, r, line, col)
		}
	}
	return nil
}

var trSlackEntities = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&")

// trSlackText undoes Slack's formatting of typed text (see the top of this
// file). With dropMentions, user mentions are removed instead of written
// as "@name".
func trSlackText(s string, dropMentions bool) string {
	var b strings.Builder
	b.Grow(len(s))
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		j := strings.IndexAny(s[i+1:], "<>")
		if j < 0 || s[i+1+j] == '<' {
			b.WriteByte('<') // not markup: Slack never leaves a bare "<"
			s = s[i+1:]
			continue
		}
		inner := s[i+1 : i+1+j]
		if !trIsMarkup(inner) {
			b.WriteByte('<')
			s = s[i+1:]
			continue
		}
		b.WriteString(trSlackMarkup(inner, dropMentions))
		s = s[i+1+j+1:]
	}
	return trSlackEntities.Replace(b.String())
}

// trIsMarkup reports whether the text between "<" and ">" is markup Slack
// writes: a mention, a channel, a special command, or an address with a
// scheme ("https:", "mailto:"), none with spaces before the label.
func trIsMarkup(inner string) bool {
	target, _, _ := strings.Cut(inner, "|")
	if target == "" || strings.IndexFunc(target, trIsSpace) >= 0 {
		return false
	}
	switch target[0] {
	case '@', '#', '!':
		return len(target) > 1
	}
	scheme, _, ok := strings.Cut(target, ":")
	if !ok || scheme == "" {
		return false
	}
	for i, r := range scheme {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return false
		}
	}
	return true
}

func trSlackMarkup(inner string, dropMentions bool) string {
	target, label, hasLabel := strings.Cut(inner, "|")
	switch {
	case strings.HasPrefix(target, "@"):
		if dropMentions {
			return ""
		}
		if hasLabel && label != "" {
			return "@" + strings.TrimPrefix(label, "@")
		}
		return target
	case strings.HasPrefix(target, "#"):
		if hasLabel && label != "" {
			return "#" + strings.TrimPrefix(label, "#")
		}
		return target
	case strings.HasPrefix(target, "!"):
		if hasLabel && label != "" {
			return label
		}
		name, _, _ := strings.Cut(target[1:], "^")
		if id, ok := strings.CutPrefix(target[1:], "subteam^"); ok {
			return "@" + id
		}
		return "@" + name
	}
	if !hasLabel || label == "" || label == target {
		return target
	}
	bare := target
	for _, scheme := range []string{"https://", "http://", "mailto:", "tel:"} {
		bare = strings.TrimPrefix(bare, scheme)
	}
	if label == bare || label == strings.TrimSuffix(bare, "/") {
		return label // an address Slack linked as it was typed
	}
	return label + " (" + target + ")"
}

// trIsSpace is unicode.IsSpace plus the invisible characters chat clients
// leave in pasted text; it agrees with the chain parser.
func trIsSpace(r rune) bool {
	switch r {
	case '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff':
		return true
	}
	return unicode.IsSpace(r)
}

func trTrimSpace(s string) string { return strings.TrimFunc(s, trIsSpace) }

// trFirstWord splits off the first word of s; rest starts right after it.
func trFirstWord(s string) (word, rest string) {
	s = strings.TrimLeftFunc(s, trIsSpace)
	if i := strings.IndexFunc(s, trIsSpace); i >= 0 {
		return s[:i], s[i:]
	}
	return s, ""
}

// trWord is one word of a command or message.
type trWord struct {
	raw        string // as written
	text       string // quotes removed
	quoted     bool
	start, end int // byte offsets
	col        int // 1-based character column of start
}

// isDashDash reports a lone "--" (or the dash a keyboard made of it).
func (w trWord) isDashDash() bool {
	return !w.quoted && (w.text == "--" || w.text == "—" || w.text == "–")
}

// flag returns a flag's name (after "--", "—", "–" or a single "-") when
// the word is written as a flag.
func (w trWord) flag() (string, bool) {
	if w.quoted {
		return "", false
	}
	for _, p := range []string{"--", "—", "–", "-"} {
		if name, ok := strings.CutPrefix(w.text, p); ok {
			if name == "" || !unicode.IsLetter([]rune(name)[0]) {
				return "", false
			}
			if p == "-" {
				return "-" + name, true // "-auto": never a known flag, so refused by name
			}
			return name, true
		}
	}
	return "", false
}

var trClosingQuotes = map[rune]string{
	'"': `"“”`, '“': `”“"`, '”': `”“"`, '„': `“”"`,
	'\'': `'`, '‘': `’‘'`, '’': `’'`, '«': `»`, '‹': `›`,
}

// trSplitWords splits s into words at spaces. With quotes, a quote mark at
// the start of a word or right after "=" opens a quoted run that ends at
// its closing mark and may hold spaces; an unclosed one is an error.
// Without quotes, quote marks are plain characters.
func trSplitWords(s string, quotes bool) ([]trWord, error) {
	var words []trWord
	col := 1 // column of byte offset i
	i := 0
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		if trIsSpace(r) {
			i += w
			col++
			continue
		}
		wd := trWord{start: i, col: col}
		var b strings.Builder
		prev := rune(-1)
		for i < len(s) {
			r, w := utf8.DecodeRuneInString(s[i:])
			if trIsSpace(r) {
				break
			}
			closers, opens := trClosingQuotes[r]
			if quotes && opens && (prev == -1 || prev == '=') {
				j := strings.IndexFunc(s[i+w:], func(c rune) bool { return strings.ContainsRune(closers, c) })
				if j < 0 {
					return nil, fmt.Errorf("quote %q at column %d is never closed", string(r), col)
				}
				inner := s[i+w : i+w+j]
				_, cw := utf8.DecodeRuneInString(s[i+w+j:])
				b.WriteString(inner)
				col += 2 + utf8.RuneCountInString(inner)
				i += w + j + cw
				wd.quoted = wd.quoted || prev == -1
				prev = 'q'
				continue
			}
			b.WriteRune(r)
			prev = r
			i += w
			col++
		}
		wd.end = i
		wd.raw = s[wd.start:wd.end]
		wd.text = b.String()
		words = append(words, wd)
	}
	return words, nil
}

// trCutWords returns s without the given words (in order) and the spaces
// before each, trimmed.
func trCutWords(s string, cut []trWord) string {
	var b strings.Builder
	pos := 0
	for _, w := range cut {
		end := w.start
		for end > pos {
			r, n := utf8.DecodeLastRuneInString(s[:end])
			if !trIsSpace(r) {
				break
			}
			end -= n
		}
		b.WriteString(s[pos:end])
		pos = w.end
	}
	b.WriteString(s[pos:])
	return trTrimSpace(b.String())
}

// ---------------------------------------------------------------------------
// Identifiers

// trValidID accepts Slack ids (U…, W…, T…, C…, F…, views' V…), which are
// letters and digits; the check keeps junk out of keys and logs.
func trValidID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// trValidTS accepts a Slack message timestamp: digits, a dot, digits.
func trValidTS(s string) bool {
	sec, frac, ok := strings.Cut(s, ".")
	return ok && len(s) <= 32 && sec != "" && frac != "" && trAllDigits(sec) && trAllDigits(frac)
}

func trAllDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// trCheckIDs checks name/value pairs of required ids.
func trCheckIDs(what string, pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		name, v := pairs[i], pairs[i+1]
		if v == "" {
			return trBadPayload("%s: no %s", what, name)
		}
		if !trValidID(v) {
			return trBadPayload("%s: invalid %s %q", what, name, trClip(v, 40))
		}
	}
	return nil
}

// trCheckTSs checks name/value pairs of required message timestamps.
func trCheckTSs(what string, pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		name, v := pairs[i], pairs[i+1]
		if v == "" {
			return trBadPayload("%s: no %s", what, name)
		}
		if !trValidTS(v) {
			return trBadPayload("%s: invalid %s %q", what, name, trClip(v, 40))
		}
	}
	return nil
}

func trFirstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// trClip shortens s to at most n characters for a message.
func trClip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "..."
}
