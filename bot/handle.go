package bot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/engine/intake"
)

// handle carries out one acknowledged envelope.
func (b *Bot) handle(ctx context.Context, env envelope) {
	id := ""
	if env.evt.Request != nil {
		id = env.evt.Request.EnvelopeID
	}
	switch env.evt.Type {
	case socketmode.EventTypeSlashCommand:
		if sc, ok := env.evt.Data.(slack.SlashCommand); ok {
			b.onCommand(ctx, sc, id)
		}
	case socketmode.EventTypeInteractive:
		cb, ok := env.evt.Data.(slack.InteractionCallback)
		if !ok {
			return
		}
		switch cb.Type {
		case slack.InteractionTypeBlockActions:
			b.onAction(ctx, cb)
		case slack.InteractionTypeViewSubmission:
			b.onSubmit(ctx, cb, env.received)
		}
	case socketmode.EventTypeEventsAPI:
		ev, ok := env.evt.Data.(slackevents.EventsAPIEvent)
		if !ok {
			return
		}
		if m, ok := ev.InnerEvent.Data.(*slackevents.AppMentionEvent); ok {
			b.onMention(ctx, m, ev.TeamID)
		}
	}
}

// tell shows a person a message only they see; failures are logged, as
// there is no one else to tell.
func (b *Bot) tell(_ context.Context, channel, thread, user, text string, blocks []slack.Block) {
	b.replies.push(func(ctx context.Context) { b.tellNow(ctx, channel, thread, user, text, blocks) })
}

func (b *Bot) tellNow(ctx context.Context, channel, thread, user, text string, blocks []slack.Block) {
	err := b.send.ephemeral(ctx, channel, thread, user, text, blocks)
	if err != nil && unreachable(err) {
		// The bot is not in the channel: answer through the person's
		// latest slash command there, which needs no membership.
		b.mu.Lock()
		url := b.replyURLs[channel+"/"+user]
		b.mu.Unlock()
		if url != "" {
			msg := &slack.WebhookMessage{Text: text, ResponseType: slack.ResponseTypeEphemeral}
			if len(blocks) > 0 {
				msg.Blocks = &slack.Blocks{BlockSet: blocks}
			}
			err = b.send.do(ctx, "response_url", func() error { return slack.PostWebhookContext(ctx, url, msg) })
		}
	}
	if err != nil {
		b.cfg.Log.Error("ephemeral message", "channel", channel, "err", err)
	}
}

// unreachableErrors say the bot cannot post in a channel at all.
var unreachableErrors = map[string]bool{"not_in_channel": true, "channel_not_found": true, "is_archived": true}

func unreachable(err error) bool {
	var se slack.SlackErrorResponse
	return errors.As(err, &se) && unreachableErrors[se.Err]
}

func (b *Bot) onCommand(ctx context.Context, sc slack.SlashCommand, envelopeID string) {
	if sc.ResponseURL != "" && sc.ChannelID != "" && sc.UserID != "" {
		b.mu.Lock()
		b.replyURLs[sc.ChannelID+"/"+sc.UserID] = sc.ResponseURL
		b.mu.Unlock()
	}
	cmd, err := ParseCommand(sc)
	if err != nil {
		b.refuse(ctx, sc.ChannelID, "", sc.UserID, engine.InputChain, err, Usage(sc.Command, CmdChain))
		return
	}
	if (cmd.Kind == CmdChain || cmd.Kind == CmdRun || cmd.Kind == CmdCheck) && b.outsider(cmd.User, cmd.Team) {
		b.tell(ctx, cmd.Channel, "", cmd.User, "gonogo starts runs only for people of its own workspace (or listed approvers).", nil)
		return
	}
	switch cmd.Kind {
	case CmdHelp:
		blocks := HelpBlocks(cmd.Slash)
		b.tell(ctx, cmd.Channel, "", cmd.User, FallbackText(blocks), blocks)
	case CmdRuns:
		b.listRuns(ctx, cmd)
	case CmdRun:
		b.runWorkflow(ctx, cmd, envelopeID)
	case CmdCheck:
		if cmd.Checks == CmdRun {
			b.runWorkflow(ctx, cmd, envelopeID)
			return
		}
		b.runChain(ctx, cmd, envelopeID)
	case CmdChain:
		b.runChain(ctx, cmd, envelopeID)
	}
}

// runChain answers "/gonogo chain EXPR" (and "check EXPR"): the chain
// starts in a new thread, or the person is told why it cannot. The chain
// was read to refuse a bad command at once; the intake reads its text
// again, as it reads every chain.
func (b *Bot) runChain(ctx context.Context, cmd Command, envelopeID string) {
	plan, opt, err := intake.Take(b.intakeConfig(), intake.Request{
		Input: engine.InputChain, Chain: cmd.Chain.Source, Flags: cmd.Flags,
		StartedBy: cmd.User, Origin: engine.Origin{Channel: cmd.Channel}, Key: "slack-command:" + envelopeID,
	})
	if err != nil {
		b.refuse(ctx, cmd.Channel, "", cmd.User, engine.InputChain, err, "")
		return
	}
	b.startCommand(ctx, cmd, plan, opt)
}

// startCommand starts what a slash command asked for, at once or at a
// preview that waits for Start (GONOGO_CONFIRM_START); a check shows the
// person the preview only, and how to start it.
func (b *Bot) startCommand(ctx context.Context, cmd Command, plan engine.Plan, opt engine.StartOptions) {
	if cmd.Kind != CmdCheck {
		opt.AwaitStart = b.cfg.ConfirmStart
		_ = b.start(ctx, plan, opt) // a refusal is told
		return
	}
	// What follows "check" is what starts the run: the same words after
	// "chain" (or "run").
	_, what := firstWord(cmd.Text)
	if cmd.Checks == CmdChain {
		if w, after := firstWord(what); strings.EqualFold(w, string(CmdChain)) {
			what = after
		}
		what = "chain " + trimSpace(what)
	}
	how := "To run it: `" + mdLine(cmd.Slash+" "+trimSpace(what), 600) + "`"
	if b.cfg.ConfirmStart {
		how += " (it waits for *Start* first)"
	}
	blocks := CheckPreview(plan, how+".")
	b.tell(ctx, cmd.Channel, "", cmd.User, FallbackText(blocks), blocks)
}

// refuse tells the person why their input starts nothing.
func (b *Bot) refuse(ctx context.Context, channel, thread, user string, kind engine.InputKind, err error, usage string) {
	var ref *engine.Refusal
	var in *InputError
	switch {
	case errors.As(err, &ref):
		blocks := Refusal(ref, kind)
		b.tell(ctx, channel, thread, user, FallbackText(blocks), blocks)
	case errors.As(err, &in):
		blocks := InputProblem(in)
		b.tell(ctx, channel, thread, user, FallbackText(blocks), blocks)
	case errors.Is(err, ErrBadPayload):
		b.cfg.Log.Warn("a Slack payload gonogo cannot use", "err", err)
	default:
		b.cfg.Log.Error("a request could not be carried out", "err", err)
		b.tell(ctx, channel, thread, user, "gonogo could not do that; nothing was started. The operator can find why in gonogo's log.", nil)
	}
}

// intakeConfig is what the bot reads requests to start a run with, and
// the defaults of the runs it starts.
func (b *Bot) intakeConfig() intake.Config {
	return intake.Config{
		Catalog: func() (engine.Catalog, error) { return b.cfg.Catalog, nil },
		Policy:  b.cfg.Policy, Workflows: intake.Dir(b.cfg.WorkflowsDir), MaxPlanBytes: b.cfg.MaxPlanBytes,
		BudgetUSD: b.cfg.BudgetUSD, Quorum: b.cfg.Quorum, ExcludeStarter: b.cfg.ExcludeStarter,
		Oversight: b.cfg.oversight(),
	}
}

// start starts a run the intake accepted, and tells the person when the
// engine refuses it; it returns the refusal. A start whose key was seen
// (a redelivered request, whose run is already going) is refused with
// engine.ErrDuplicate, and nobody is told.
func (b *Bot) start(ctx context.Context, p engine.Plan, opt engine.StartOptions) error {
	_, err := b.eng.Start(ctx, p, opt)
	if err != nil && !errors.Is(err, engine.ErrDuplicate) {
		b.refuse(ctx, opt.Origin.Channel, opt.Origin.Thread, opt.StartedBy, p.Input, err, "")
	}
	return err
}

func (b *Bot) listRuns(ctx context.Context, cmd Command) {
	all, err := b.eng.List(ctx)
	if err != nil {
		b.cfg.Log.Error("list runs", "err", err)
		b.tell(ctx, cmd.Channel, "", cmd.User, "gonogo could not list the runs; the operator can find why in gonogo's log.", nil)
		return
	}
	var here []engine.RunSummary
	links := map[engine.RunID]string{}
	for _, s := range all {
		if s.Origin.Channel != cmd.Channel {
			continue
		}
		here = append(here, s)
		// Only the runs the list shows get a link: a channel's older runs
		// are counted, and reading where each one's thread is would cost a
		// read per run in the store.
		if len(here) > runsListMax {
			continue
		}
		if notes, err := b.eng.Notes(ctx, s.ID); err == nil && notes[noteThread] != "" {
			links[s.ID] = permalink(s.Origin.Channel, notes[noteThread])
		}
	}
	blocks := RunsList(here, links)
	b.tell(ctx, cmd.Channel, "", cmd.User, FallbackText(blocks), blocks)
}

// permalink is a link to a message that Slack resolves in any workspace.
func permalink(channel, ts string) string {
	p := make([]byte, 0, len(ts))
	for i := 0; i < len(ts); i++ {
		if ts[i] != '.' {
			p = append(p, ts[i])
		}
	}
	return "https://slack.com/archives/" + channel + "/p" + string(p)
}

func (b *Bot) onAction(ctx context.Context, cb slack.InteractionCallback) {
	a, err := ParseAction(cb)
	if err != nil {
		b.refuse(ctx, cb.Channel.ID, "", cb.User.ID, "", err, "")
		return
	}
	ctx = asPerson(ctx, a.Team)
	if a.Kind == ActStart || a.Kind == ActCancelStart || a.Kind == ActPickPlan {
		b.onPreviewAction(ctx, a) // the engine says who may start or cancel; a pick, the mention's author
		return
	}
	r, err := b.eng.Load(ctx, a.Ref.Run)
	if err != nil {
		b.tell(ctx, a.Channel, a.ThreadTS, a.User, "This run is not in gonogo's store.", nil)
		return
	}
	if !b.mayDecide(ctx, r, a.User) {
		what := "decide on it. Nothing changed."
		switch a.Kind {
		case ActSaveWorkflow:
			what = "save it as a workflow. Nothing was saved."
		case ActPause:
			what = "pause it. Nothing changed."
		case ActResume, ActResumeCheckp:
			what = "resume it. Nothing changed."
		}
		b.tell(ctx, a.Channel, a.ThreadTS, a.User, fmt.Sprintf("Only <@%s>, who started this run, and the approvers can %s", r.StartedBy, what), nil)
		return
	}
	switch a.Kind {
	case ActSaveWorkflow:
		b.openSaveWorkflow(ctx, r, a)
	case ActCancel:
		if err := b.eng.Cancel(ctx, a.Ref.Run, a.Ref.Step, a.Ref.Attempt, a.User); err != nil {
			b.decisionFailed(ctx, a.Channel, a.ThreadTS, a.User, err)
		}
	case ActPause, ActResume, ActResumeCheckp:
		b.pauseOrResume(ctx, a)
	case ActEdit:
		b.openEdit(ctx, r, a)
	case ActRedo:
		s := r.Step(a.Ref.Step)
		if s == nil || s.Latest() == nil || s.Latest().N != a.Ref.Attempt || !slices.Contains(engine.Allowed(s), engine.DecideRedo) {
			b.decisionFailed(ctx, a.Channel, a.ThreadTS, a.User, engine.ErrStale)
			return
		}
		if err := b.send.openView(ctx, a.TriggerID, RedoModal(a.Ref, s.Skill)); err != nil {
			b.cfg.Log.Error("open the redo modal", "err", err)
		}
	default:
		kind, _ := a.Kind.Decision()
		b.decide(ctx, r, a.Channel, a.ThreadTS, engine.Decision{
			Kind: kind, Actor: a.User, Step: a.Ref.Step, Attempt: a.Ref.Attempt, Key: a.Key(),
		}, nil)
	}
}

// pauseOrResume pauses a run or resumes it on a click, and tells the
// person when that changed nothing.
func (b *Bot) pauseOrResume(ctx context.Context, a Action) {
	var err error
	switch a.Kind {
	case ActPause:
		_, err = b.eng.Pause(ctx, a.Ref.Run, a.User)
	case ActResume:
		_, err = b.eng.Unpause(ctx, a.Ref.Run, a.User, "")
	case ActResumeCheckp:
		_, err = b.eng.Unpause(ctx, a.Ref.Run, a.User, engine.ModeCheckpointed)
	}
	var msg string
	switch {
	case err == nil:
		return
	case errors.Is(err, engine.ErrPaused):
		msg = "This run is paused already. Nothing changed."
	case errors.Is(err, engine.ErrNotMoving):
		msg = "Nothing to pause: no step of this run is running or about to start (it waits for a decision, or has finished). Nothing changed."
	case errors.Is(err, engine.ErrNotPaused):
		msg = "This run is not paused. Nothing changed."
	default:
		b.cfg.Log.Error("pause or resume a run", "run", a.Ref.Run, "err", err)
		msg = "gonogo could not record that; nothing changed. The operator can find why in gonogo's log."
	}
	b.tell(ctx, a.Channel, a.ThreadTS, a.User, msg, nil)
}

// decide applies a decision and tells the person when it was refused.
func (b *Bot) decide(ctx context.Context, r *engine.Run, channel, thread string, d engine.Decision, body []byte) {
	if _, err := b.eng.Decide(ctx, r.ID, d, body); err != nil {
		b.decisionFailed(ctx, channel, thread, d.Actor, err)
		return
	}
	if s := r.Step(d.Step); s != nil {
		if l := s.Latest(); l != nil && !l.Finished.IsZero() {
			b.cfg.Metrics.decided(time.Since(l.Finished))
		}
	}
}

func (b *Bot) decisionFailed(ctx context.Context, channel, thread, user string, err error) {
	var msg string
	switch {
	case errors.Is(err, engine.ErrStale), errors.Is(err, engine.ErrNotWaiting):
		msg = "This step has moved on: the buttons you clicked were for an earlier moment. Nothing changed."
	case errors.Is(err, engine.ErrDuplicate):
		msg = "Already done: " + err.Error()
	case errors.Is(err, engine.ErrForbidden):
		msg = "Not counted: " + err.Error()
	default:
		// The details (paths, store errors) go to the log, not to Slack.
		b.cfg.Log.Error("a decision could not be recorded", "err", err)
		msg = "gonogo could not record that decision; nothing changed. The operator can find why in gonogo's log."
	}
	b.tell(ctx, channel, thread, user, msg, nil)
}

// openEdit opens the edit modal: the artifact in an input when it fits
// Slack's 3,000 characters, else an offer of the person's latest reply in
// the thread, else how to give the new artifact as a reply.
func (b *Bot) openEdit(ctx context.Context, r *engine.Run, a Action) {
	s := r.Step(a.Ref.Step)
	if s == nil || s.Latest() == nil || s.Latest().N != a.Ref.Attempt || !slices.Contains(engine.Allowed(s), engine.DecideEdit) {
		b.decisionFailed(ctx, a.Channel, a.ThreadTS, a.User, engine.ErrStale)
		return
	}
	// A FAILED attempt (on_error: gate) may have no artifact: the team
	// writes the step's output from nothing.
	var body []byte
	if s.Latest().Artifact {
		var err error
		if body, err = b.eng.Artifact(ctx, r.ID, s.N, a.Ref.Attempt); err != nil {
			b.cfg.Log.Error("read the artifact to edit", "run", r.ID, "step", s.N, "err", err)
			body = nil
		}
	}
	var view slack.ModalViewRequest
	if n := utf8.RuneCount(body); n <= maxModalInputText {
		view = EditModal(a.Ref, s.Skill, string(body))
	} else if reply, ok := b.findReply(ctx, r, s, a.User); ok {
		view = EditFromReplyModal(a.Ref, s.Skill, reply)
	} else {
		view = EditTooLongModal(a.Ref, s.Skill, n)
	}
	if err := b.send.openView(ctx, a.TriggerID, view); err != nil {
		b.cfg.Log.Error("open the edit modal", "err", err)
	}
}

// findReply finds user's latest reply in the run's thread after the step's
// message: a file, or text.
func (b *Bot) findReply(ctx context.Context, r *engine.Run, s *engine.Step, user string) (Reply, bool) {
	notes, err := b.eng.Notes(ctx, r.ID)
	if err != nil || notes[noteThread] == "" {
		return Reply{}, false
	}
	var msgs []slack.Message
	err = b.send.do(ctx, "conversations.replies", func() error {
		var err error
		msgs, _, _, err = b.api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
			ChannelID: r.Origin.Channel, Timestamp: notes[noteThread], Limit: 1000,
		})
		return err
	})
	if err != nil {
		b.cfg.Log.Error("read the run's thread", "run", r.ID, "err", err)
		return Reply{}, false
	}
	after := notes[noteStep(s.N)]
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.User != user || m.BotID != "" || tsBefore(m.Timestamp, after) {
			continue
		}
		rep := Reply{User: user, TS: m.Timestamp, Time: tsTime(m.Timestamp)}
		if len(m.Files) > 0 {
			rep.File, rep.FileID, rep.Chars = m.Files[0].Name, m.Files[0].ID, m.Files[0].Size
			return rep, true
		}
		if m.Text != "" {
			rep.Chars = utf8.RuneCountInString(slackText(m.Text, false))
			return rep, true
		}
	}
	return Reply{}, false
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

func (b *Bot) onSubmit(ctx context.Context, cb slack.InteractionCallback, received time.Time) {
	sub, err := ParseSubmission(cb)
	if err != nil {
		var in *InputError
		if !errors.As(err, &in) {
			b.cfg.Log.Warn("a modal submission gonogo cannot use", "err", err)
			return
		}
		if in.Block == BlockWorkflowName {
			return // the acknowledgement showed it by the field, and the modal stayed open
		}
		// The modal is closed by the time gonogo reads it (every envelope
		// is acknowledged first), so the person is told in the thread.
		if ref, rerr := ParseStepRef(cb.View.PrivateMetadata); rerr == nil {
			if r, lerr := b.eng.Load(ctx, ref.Run); lerr == nil {
				notes, _ := b.eng.Notes(ctx, r.ID)
				blocks := InputProblem(in)
				b.tell(ctx, r.Origin.Channel, notes[noteThread], cb.User.ID, "Nothing changed: "+FallbackText(blocks), blocks)
			}
		}
		return
	}
	ctx = asPerson(ctx, sub.Team)
	r, err := b.eng.Load(ctx, sub.Ref.Run)
	if err != nil {
		return
	}
	notes, _ := b.eng.Notes(ctx, r.ID)
	channel, thread := r.Origin.Channel, notes[noteThread]
	if !b.mayDecide(ctx, r, sub.User) {
		b.tell(ctx, channel, thread, sub.User, fmt.Sprintf("Only <@%s>, who started this run, and the approvers can decide on it. Nothing changed.", r.StartedBy), nil)
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
		body, err := b.replyBody(ctx, channel, thread, sub.Reply)
		if err != nil {
			msg := "gonogo could not read your reply; nothing changed."
			var in *InputError
			if errors.As(err, &in) {
				msg = "Your reply cannot replace the artifact: " + in.Problem
			} else {
				b.cfg.Log.Error("read a reply in a run's thread", "run", r.ID, "err", err)
			}
			b.tell(ctx, channel, thread, sub.User, msg, nil)
			return
		}
		d.Kind = engine.DecideEdit
		b.decide(ctx, r, channel, thread, d, body)
	}
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
	var msgs []slack.Message
	err := b.send.do(ctx, "conversations.replies", func() error {
		var err error
		msgs, _, _, err = b.api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
			ChannelID: channel, Timestamp: thread, Limit: 1000,
		})
		return err
	})
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

// download fetches a user's file with the bot token, up to max bytes.
func (b *Bot) download(ctx context.Context, f FileRef, max int64) ([]byte, error) {
	if f.NeedsInfo {
		var err error
		if f, err = b.fileInfo(ctx, f.ID); err != nil {
			return nil, err
		}
	}
	if err := CheckPlanFile(f, max); err != nil {
		return nil, err
	}
	url := f.URLPrivateDownload
	if url == "" {
		url = f.URLPrivate
	}
	var buf bytes.Buffer
	w := &limitWriter{w: &buf, n: max + 1}
	err := b.send.do(ctx, "files.download", func() error {
		buf.Reset()
		w.n = max + 1
		return b.api.GetFileContext(ctx, url, w)
	})
	if err != nil && !errors.Is(err, errTooLarge) {
		return nil, fmt.Errorf("download %s: %w", f.label(), err)
	}
	if int64(buf.Len()) > max || errors.Is(err, errTooLarge) {
		return nil, &InputError{Problem: fmt.Sprintf("%s is larger than %d bytes", f.label(), max)}
	}
	if err := CheckPlanContent(f, buf.Bytes(), max); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// fileInfo describes a file Slack sent by its id alone.
func (b *Bot) fileInfo(ctx context.Context, id string) (FileRef, error) {
	var info *slack.File
	err := b.send.do(ctx, "files.info", func() error {
		var err error
		info, _, _, err = b.api.GetFileInfoContext(ctx, id, 0, 0)
		return err
	})
	if err != nil {
		return FileRef{}, fmt.Errorf("files.info %s: %w", id, err)
	}
	return FileRefFrom(*info), nil
}

var errTooLarge = errors.New("too large")

type limitWriter struct {
	w io.Writer
	n int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.n {
		return 0, errTooLarge
	}
	l.n -= int64(len(p))
	return l.w.Write(p)
}

func (b *Bot) onMention(ctx context.Context, ev *slackevents.AppMentionEvent, team string) {
	m, err := ParseMention(ev)
	if err != nil {
		b.refuse(ctx, ev.Channel, threadOf(ev), ev.User, engine.InputPlan, err, "")
		return
	}
	if userTeam := m.Team; b.outsider(m.User, userTeam) || (userTeam == "" && b.outsider(m.User, team)) {
		b.tell(ctx, m.Channel, m.ThreadTS, m.User, "gonogo starts runs only for people of its own workspace (or listed approvers).", nil)
		return
	}
	f, body, err := b.planOf(ctx, m)
	switch {
	case errors.Is(err, errAsked):
		return
	case err != nil:
		b.refuse(ctx, m.Channel, m.ThreadTS, m.User, engine.InputPlan, err, "")
		return
	}
	_ = b.takePlan(ctx, m.Pick(f.ID), m.Channel, m.ThreadTS, f, body) // a refusal is told
}

// takePlan starts the plan file f of a mention (what pick says its
// message asked for) in thread: at a preview that waits for Start, at once
// with --yes (unless GONOGO_CONFIRM_START), or, for a check, shows the
// preview only. The person is told of a refusal, which is returned; the
// run's key is the mention's, so one message starts one run (a second
// start is refused with engine.ErrDuplicate, told to nobody).
func (b *Bot) takePlan(ctx context.Context, pick PlanPick, channel, thread string, f FileRef, body []byte) error {
	name := f.Name
	if name == "" {
		name = f.ID
	}
	plan, opt, err := intake.Take(b.intakeConfig(), intake.Request{
		Input: engine.InputPlan, Plan: body, PlanName: name, Flags: pick.Flags,
		StartedBy: pick.User, Origin: engine.Origin{Channel: channel, Thread: thread}, Key: "slack-mention:" + channel + ":" + pick.MentionTS,
	})
	if err != nil {
		b.refuse(ctx, channel, thread, pick.User, engine.InputPlan, err, "")
		return err
	}
	if pick.Check {
		how := "To run it, mention gonogo with the plan attached again, without `check`; it waits for *Start* first"
		if !b.cfg.ConfirmStart {
			how += " (add `--yes` to start it at once)"
		}
		b.showCheck(ctx, channel, thread, pick.User, CheckPreview(plan, how+"."))
		return nil
	}
	opt.AwaitStart = b.cfg.ConfirmStart || !pick.Yes
	if pick.Yes && b.cfg.ConfirmStart {
		b.tell(ctx, channel, thread, pick.User, "`--yes` does not skip the preview here: this gonogo asks for Start before every run (GONOGO_CONFIRM_START).", nil)
	}
	return b.start(ctx, plan, opt)
}

func threadOf(ev *slackevents.AppMentionEvent) string {
	if ev.ThreadTimeStamp != "" {
		return ev.ThreadTimeStamp
	}
	return ev.TimeStamp
}
