package bot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/intake"
)

// handle carries out one acknowledged envelope. What was answered in
// full as it arrived (env.answered: a refusal, help, a field error) asks
// for nothing more.
func (b *Bot) handle(ctx context.Context, env envelope) {
	id := ""
	if env.evt.Request != nil {
		id = env.evt.Request.EnvelopeID
	}
	switch env.evt.Type {
	case socketmode.EventTypeSlashCommand:
		sc, ok := env.evt.Data.(slack.SlashCommand)
		switch {
		case !ok:
		case env.answered:
			b.keepReplyURL(sc)
		default:
			b.onCommand(ctx, sc, id)
		}
	case socketmode.EventTypeInteractive:
		cb, ok := env.evt.Data.(slack.InteractionCallback)
		if !ok {
			return
		}
		switch {
		case cb.Type == slack.InteractionTypeBlockActions:
			b.onAction(ctx, cb, env)
		case cb.Type == slack.InteractionTypeViewSubmission && !env.answered:
			b.onSubmit(ctx, cb, env.received)
		}
	case socketmode.EventTypeEventsAPI:
		ev, ok := env.evt.Data.(slackevents.EventsAPIEvent)
		if !ok {
			return
		}
		switch d := ev.InnerEvent.Data.(type) {
		case *slackevents.AppMentionEvent:
			if !env.answered {
				b.onMention(ctx, d, ev.TeamID)
			}
		case *slackevents.AgentSessionStoppedEvent:
			b.onSessionStopped(ctx, d, ev.TeamID)
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

// keepReplyURL keeps the response_url of a person's latest slash command
// in a channel, to answer them there if the bot cannot post.
func (b *Bot) keepReplyURL(sc slack.SlashCommand) {
	if sc.ResponseURL != "" && sc.ChannelID != "" && sc.UserID != "" {
		b.mu.Lock()
		b.replyURLs[sc.ChannelID+"/"+sc.UserID] = sc.ResponseURL
		b.mu.Unlock()
	}
}

func (b *Bot) onCommand(ctx context.Context, sc slack.SlashCommand, envelopeID string) {
	b.keepReplyURL(sc)
	cmd, err := ParseCommand(sc)
	if err != nil {
		b.refuse(ctx, sc.ChannelID, "", sc.UserID, engine.InputChain, err, Usage(sc.Command, CmdChain))
		return
	}
	if (cmd.Kind == CmdChain || cmd.Kind == CmdRun || cmd.Kind == CmdCheck || cmd.Kind == CmdStats) && b.outsider(cmd.User, cmd.Team) {
		b.tell(ctx, cmd.Channel, "", cmd.User, outsiderRefusal, nil)
		return
	}
	switch cmd.Kind {
	case CmdHelp:
		blocks := HelpBlocks(cmd.Slash)
		b.tell(ctx, cmd.Channel, "", cmd.User, FallbackText(blocks), blocks)
	case CmdRuns:
		b.listRuns(ctx, cmd)
	case CmdStats:
		b.answerStats(ctx, cmd)
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
	plan, opt, err := b.takeChain(cmd, envelopeID)
	if err != nil {
		b.refuse(ctx, cmd.Channel, "", cmd.User, engine.InputChain, err, "")
		return
	}
	b.startCommand(ctx, cmd, plan, opt)
}

// takeChain reads "/gonogo chain EXPR" (or "check EXPR") into the plan and
// options of a run, or the intake's refusal.
func (b *Bot) takeChain(cmd Command, envelopeID string) (engine.Plan, engine.StartOptions, error) {
	if err := engine.CheckBestOf(cmd.BestOf, b.cfg.Runners); err != nil {
		return engine.Plan{}, engine.StartOptions{}, &InputError{Problem: err.Error(), Usage: Usage(cmd.Slash, CmdChain)}
	}
	plan, opt, err := intake.Take(b.intakeConfig(), intake.Request{
		Input: engine.InputChain, Chain: cmd.Chain.Source, Flags: cmd.Flags,
		StartedBy: cmd.User, Origin: engine.Origin{Channel: cmd.Channel}, Key: "slack-command:" + envelopeID,
	})
	return engine.BestOf(plan, cmd.BestOf), opt, err
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
	blocks := b.checkAnswer(cmd, plan)
	b.tell(ctx, cmd.Channel, "", cmd.User, FallbackText(blocks), blocks)
}

// checkAnswer answers "/gonogo check ...": what would run, and how to run
// it.
func (b *Bot) checkAnswer(cmd Command, plan engine.Plan) []slack.Block {
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
	return CheckPreview(plan, how+".")
}

// refuse tells the person why their input starts nothing.
func (b *Bot) refuse(ctx context.Context, channel, thread, user string, kind engine.InputKind, err error, usage string) {
	if no := refusalAnswer(err, kind); no != nil {
		b.tell(ctx, channel, thread, user, no.text, no.blocks)
		return
	}
	if errors.Is(err, ErrBadPayload) {
		b.cfg.Log.Warn("a Slack payload gonogo cannot use", "err", err)
		return
	}
	b.cfg.Log.Error("a request could not be carried out", "err", err)
	b.tell(ctx, channel, thread, user, "gonogo could not do that; nothing was started. The operator can find why in gonogo's log.", nil)
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
//
// On a cluster, a start the cluster did not answer in time is carried out
// again (retry; its key makes it start one run), and the person is told
// once that it is being tried again.
func (b *Bot) start(ctx context.Context, p engine.Plan, opt engine.StartOptions) error {
	_, err := b.eng.Start(ctx, p, opt)
	switch {
	case err == nil, errors.Is(err, engine.ErrDuplicate):
	case b.cfg.ScheduledSyncs && errors.Is(err, context.DeadlineExceeded):
		b.cfg.Log.Warn("a run could not be started yet; it is tried again", "err", err)
		if retry(ctx) {
			b.tell(ctx, opt.Origin.Channel, opt.Origin.Thread, opt.StartedBy,
				"gonogo could not start that run yet (the cluster is slow to answer); it tries again, and the run's thread opens once it starts.", nil)
		}
	case errors.Is(err, engine.ErrBestOfUnsupported):
		b.tell(ctx, opt.Origin.Channel, opt.Origin.Thread, opt.StartedBy, "Nothing was started: "+err.Error()+".", nil)
	default:
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

// answerStats answers "/gonogo stats": the figures of every run, per
// skill and agent and by week, computed from the journals.
func (b *Bot) answerStats(ctx context.Context, cmd Command) {
	now := time.Now()
	since, err := engine.ParseSince(cmd.Since, now)
	if err != nil { // ParseCommand read it already
		b.refuse(ctx, cmd.Channel, "", cmd.User, engine.InputChain, &InputError{Problem: err.Error(), Usage: Usage(cmd.Slash, CmdStats)}, "")
		return
	}
	s, err := b.eng.Stats(ctx, engine.StatsQuery{Since: since, Now: now, Skill: cmd.Skill})
	if err != nil {
		b.cfg.Log.Error("stats", "err", err)
		b.tell(ctx, cmd.Channel, "", cmd.User, "gonogo could not compute the stats; the operator can find why in gonogo's log.", nil)
		return
	}
	blocks := StatsAnswer(s, cmd.Since)
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

func (b *Bot) onAction(ctx context.Context, cb slack.InteractionCallback, env envelope) {
	a, err := ParseAction(cb)
	if err != nil {
		b.refuse(ctx, cb.Channel.ID, "", cb.User.ID, "", err, "")
		return
	}
	b.keepClickReply(a, env.received)
	ctx = asPerson(ctx, a.Team)
	if a.Kind == ActStart || a.Kind == ActCancelStart || a.Kind == ActPickPlan {
		b.onPreviewAction(ctx, a) // the engine says who may start or cancel; a pick, the mention's author
		return
	}
	if a.Kind == ActOpen {
		b.openPages(ctx, a) // reading needs no right to decide; the engine judges the page's decisions
		return
	}
	if opensModal(a.Kind) {
		b.fillModal(ctx, a, env)
		return
	}
	r, err := b.eng.Load(ctx, a.Ref.Run)
	if err != nil {
		b.couldNotRead(ctx, a.Channel, a.ThreadTS, a.User, err)
		return
	}
	if may, err := b.mayDecide(ctx, r, a.User); err != nil || !may {
		if err != nil {
			b.couldNotRead(ctx, a.Channel, a.ThreadTS, a.User, err)
		} else {
			b.tell(ctx, a.Channel, a.ThreadTS, a.User, mayNot(a.Kind, r.StartedBy), nil)
		}
		return
	}
	switch a.Kind {
	case ActCancel:
		if err := b.eng.Cancel(ctx, a.Ref.Run, a.Ref.Step, a.Ref.Attempt, a.User); err != nil {
			b.decisionFailed(ctx, a.Channel, a.ThreadTS, a.User, err)
		}
	case ActPause, ActResume, ActResumeCheckp:
		b.pauseOrResume(ctx, a)
	default:
		kind, _ := a.Kind.Decision()
		b.decide(ctx, r, a.Channel, a.ThreadTS, engine.Decision{
			Kind: kind, Actor: a.User, Step: a.Ref.Step, Attempt: a.Ref.Attempt, Key: a.Key(),
		}, nil)
	}
}

// notInStore answers a click on a run the store does not hold.
const notInStore = "This run is not in gonogo's store."

// couldNotRead handles a failure to read what a person's click or form
// needs (the run, who may decide) that is no answer about it: a busy or
// unreachable cluster, a disk error. Only engine.ErrNotFound says the run
// is not in the store; anything else is never taken for an answer, or a
// decision would be dropped for a slow second. On a cluster the envelope
// is carried out again (retry) and the person told once; on one machine
// the error is logged and the person told that nothing changed. channel
// empty tells nobody (a form's run could not be read to find its thread).
func (b *Bot) couldNotRead(ctx context.Context, channel, thread, user string, err error) {
	msg, tell := notInStore, true
	if !errors.Is(err, engine.ErrNotFound) {
		msg, tell = b.notYet(ctx, "read this run", "done", err)
	}
	if tell && channel != "" {
		b.tell(ctx, channel, thread, user, msg, nil)
	}
}

// notYet answers a failure that is no refusal (a busy or unreachable
// cluster, a disk error) to do what (as "gonogo could not <what>"). On a
// cluster the envelope is carried out again (retry), and the person is
// told so the first time only (tell); the step's message shows the
// outcome once it is <shown>. On one machine the failure is the disk's:
// it is logged (the details, paths and store errors, go to the log, not
// to Slack) and the person told nothing changed.
func (b *Bot) notYet(ctx context.Context, what, shown string, err error) (msg string, tell bool) {
	if b.cfg.ScheduledSyncs {
		b.cfg.Log.Warn("gonogo could not "+what+" yet; it is tried again", "err", err)
		if !retry(ctx) {
			return "", false // the person was told when it first failed
		}
		return fmt.Sprintf("gonogo could not %s yet (the cluster is slow to answer); it tries again, and the step's message shows it once it is %s.", what, shown), true
	}
	b.cfg.Log.Error("gonogo could not "+what, "err", err)
	return fmt.Sprintf("gonogo could not %s; nothing changed. The operator can find why in gonogo's log.", what), true
}

// mayNot tells a person who may not decide on a run that a click of kind
// changed nothing, and who may.
func mayNot(kind ActionKind, starter string) string {
	what := "decide on it. Nothing changed."
	switch kind {
	case ActSaveWorkflow:
		what = "save it as a workflow. Nothing was saved."
	case ActPause:
		what = "pause it. Nothing changed."
	case ActResume, ActResumeCheckp:
		what = "resume it. Nothing changed."
	}
	return fmt.Sprintf("Only <@%s>, who started this run, and the approvers can %s", starter, what)
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
	b.cfg.Log.Debug("a decision changed nothing", "channel", channel, "err", err)
	msg, tell := refusalWords(err)
	if !tell {
		msg, tell = b.notYet(ctx, "record that decision", "recorded", err)
	}
	if tell {
		b.tell(ctx, channel, thread, user, msg, nil)
	}
}

// refusalWords is what the person who sent a decision is told when the
// run's rules refused it (see engine.IsRefusal); ok is false for a
// failure to record it, which is answered as one.
func refusalWords(err error) (msg string, ok bool) {
	switch {
	case errors.Is(err, engine.ErrStale), errors.Is(err, engine.ErrNotWaiting):
		return movedOn, true
	case errors.Is(err, engine.ErrDuplicate):
		return "Already done: " + err.Error(), true
	case errors.Is(err, engine.ErrForbidden):
		return "Not counted: " + err.Error(), true
	case engine.IsRefusal(err):
		return "Refused: " + err.Error(), true
	}
	return "", false
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
		b.tell(ctx, m.Channel, m.ThreadTS, m.User, outsiderRefusal, nil)
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
