package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
)

// Carrying out plan before apply: finding the plan among a mention's
// files (or asking which), showing a check, and the buttons of a preview
// and of a choice between plan files. The rules of who may start or
// cancel a run, and that a Start applies once, are the engine's
// (Service.StartAwaited, Service.CancelAwaited).

// errAsked says the person was asked which of their files to run; nothing
// more happens until they pick one.
var errAsked = errors.New("asked which plan to run")

// maxPlanFiles is how many Markdown or text files of one message gonogo
// reads to find the plan among them.
const maxPlanFiles = 10

// planOf finds the plan among a mention's files and reads it. The one file
// attached is the plan. Of several, the plan is the one Slack says is
// Markdown or plain text (PlanTyped); of several of those, the one whose
// content has a Section 7 (HasSection7). When several have one, planOf
// asks in the thread which to run (PlanChoice) and returns errAsked. A
// problem the person can correct is an *InputError.
func (b *Bot) planOf(ctx context.Context, m Mention) (FileRef, []byte, error) {
	if len(m.Files) == 1 {
		body, err := b.download(ctx, m.Files[0], b.cfg.MaxPlanBytes)
		return m.Files[0], body, err
	}
	files, err := b.describedFiles(ctx, m.Files)
	if err != nil {
		return FileRef{}, nil, err
	}
	typed, _ := PlanTyped(files)
	switch {
	case len(typed) == 0:
		return FileRef{}, nil, &InputError{Problem: fmt.Sprintf("none of the %d files attached (%s) is a plan: "+
			"attach the plan as a Markdown (.md) or plain-text (.txt) file", len(files), fileLabels(files))}
	case len(typed) == 1:
		body, err := b.download(ctx, typed[0], b.cfg.MaxPlanBytes)
		return typed[0], body, err
	case len(typed) > maxPlanFiles:
		return FileRef{}, nil, &InputError{Problem: fmt.Sprintf("%d Markdown or text files attached: gonogo looks for the plan "+
			"among at most %d; attach the plan alone", len(typed), maxPlanFiles)}
	}
	plans, bodies, problems, err := b.section7Plans(ctx, typed)
	if err != nil {
		return FileRef{}, nil, err
	}
	switch len(plans) {
	case 1:
		return plans[0], bodies[plans[0].ID], nil
	case 0:
		return FileRef{}, nil, noSection7(typed, problems)
	}
	return FileRef{}, nil, b.askWhichPlan(ctx, m, plans)
}

// describedFiles are a message's files, those Slack sent as bare ids
// looked up with files.info.
func (b *Bot) describedFiles(ctx context.Context, refs []FileRef) ([]FileRef, error) {
	files := make([]FileRef, 0, len(refs))
	for _, f := range refs {
		if f.NeedsInfo {
			var err error
			if f, err = b.fileInfo(ctx, f.ID); err != nil {
				return nil, err
			}
		}
		files = append(files, f)
	}
	return files, nil
}

// section7Plans downloads the Markdown or text files of a message and
// keeps those with a Section 7, with their bodies by file id; what the
// person can correct about a file is a problem, not an error.
func (b *Bot) section7Plans(ctx context.Context, typed []FileRef) (plans []FileRef, bodies map[string][]byte, problems []string, err error) {
	bodies = map[string][]byte{}
	for _, f := range typed {
		body, err := b.download(ctx, f, b.cfg.MaxPlanBytes)
		var in *InputError
		switch {
		case errors.As(err, &in):
			problems = append(problems, in.Problem)
			continue
		case err != nil:
			return nil, nil, nil, err
		}
		if HasSection7(body, f.Name) {
			plans = append(plans, f)
			bodies[f.ID] = body
		}
	}
	return plans, bodies, problems, nil
}

// noSection7 refuses a message none of whose files is a plan with a
// Section 7, with what was wrong with the files that could not be read.
func noSection7(typed []FileRef, problems []string) error {
	msg := fmt.Sprintf("none of the %d Markdown or text files attached (%s) has a Section 7: gonogo runs the plan's "+
		"`#### To execute ...` blocks under a `## Section 7` heading", len(typed), fileLabels(typed))
	if len(problems) > 0 {
		msg += "; " + strings.Join(problems, "; ")
	}
	return &InputError{Problem: msg}
}

// askWhichPlan asks in the mention's thread which of several plans to
// run; errAsked when it did.
func (b *Bot) askWhichPlan(ctx context.Context, m Mention, plans []FileRef) error {
	blocks := PlanChoice(m, plans)
	if _, err := b.send.post(ctx, m.Channel, m.ThreadTS, FallbackText(blocks), blocks); err != nil {
		return fmt.Errorf("ask which plan to run: %w", err)
	}
	return errAsked
}

// fileLabels names files for a message.
func fileLabels(files []FileRef) string {
	names := make([]string, 0, len(files))
	for _, f := range files {
		names = append(names, f.label())
	}
	return strings.Join(names, ", ")
}

// showCheck posts a check's preview in the thread of the mention that
// asked for it, where the team sees it; when it cannot be posted there,
// the person is shown it alone.
func (b *Bot) showCheck(ctx context.Context, channel, thread, user string, blocks []slack.Block) {
	if _, err := b.send.post(ctx, channel, thread, FallbackText(blocks), blocks); err != nil {
		b.cfg.Log.Warn("post a check in the thread", "channel", channel, "err", err)
		b.tell(ctx, channel, thread, user, FallbackText(blocks), blocks)
	}
}

// onPreviewAction carries out a preview's Start or Cancel, or the pick
// of one of several plan files; ctx carries who clicked (asPerson).
func (b *Bot) onPreviewAction(ctx context.Context, a Action) {
	switch a.Kind {
	case ActPickPlan:
		b.pickPlan(ctx, a)
	case ActStart:
		_, err := b.eng.StartAwaited(ctx, a.Ref.Run, a.User, a.Key())
		b.previewRefused(ctx, a, err)
	case ActCancelStart:
		b.cancelAwaited(ctx, a)
	}
}

// cancelAwaited drops a run awaiting Start. Who cancels is noted with the
// run first, so that its thread names them from its first update; the
// note is taken back when the engine refuses.
func (b *Bot) cancelAwaited(ctx context.Context, a Action) {
	r, err := b.mayCancel(ctx, a)
	if err != nil {
		b.previewRefused(ctx, a, err)
		return
	}
	if err := b.eng.SetNotes(ctx, r.ID, map[string]string{noteAbortedBy: a.User}); err != nil {
		b.cfg.Log.Warn("note who cancelled a run", "run", r.ID, "err", err)
	}
	if _, err := b.eng.CancelAwaited(ctx, r.ID, a.User); err != nil {
		if err := b.eng.SetNotes(ctx, r.ID, map[string]string{noteAbortedBy: ""}); err != nil {
			b.cfg.Log.Warn("take back who cancelled a run", "run", r.ID, "err", err)
		}
		b.previewRefused(ctx, a, err)
	}
}

// mayCancel is the run a preview's Cancel is for, when it still awaits
// Start and the person who clicked may decide on it.
func (b *Bot) mayCancel(ctx context.Context, a Action) (*engine.Run, error) {
	r, err := b.eng.Load(ctx, a.Ref.Run)
	if err != nil {
		return nil, err
	}
	if !engine.AwaitingStart(r) {
		return nil, engine.ErrNotAwaitingStart
	}
	may, err := b.mayDecide(ctx, r, a.User)
	if err != nil {
		return nil, err
	}
	if !may {
		return nil, engine.ErrNotApprover
	}
	return r, nil
}

// previewRefused tells the person who pressed a preview's Start or Cancel
// why it changed nothing (nil: it did; a repeated click: nothing to say).
func (b *Bot) previewRefused(ctx context.Context, a Action, err error) {
	var msg string
	switch {
	case err == nil, errors.Is(err, engine.ErrDuplicate):
		return
	case errors.Is(err, engine.ErrForbidden):
		msg = b.onlyAskerOrApprovers(ctx, a)
	case errors.Is(err, engine.ErrNotAwaitingStart):
		msg = "This run no longer waits for Start: it has started, or was cancelled. Nothing changed."
	case errors.Is(err, engine.ErrNotFound):
		msg = notInStore
	case b.cfg.ScheduledSyncs:
		// Not recorded yet on a busy or unreachable cluster: carried out
		// again (Start and Cancel are carried out once).
		b.cfg.Log.Warn("start or cancel a run at its preview: not recorded yet; it is tried again", "run", a.Ref.Run, "err", err)
		if !retry(ctx) {
			return
		}
		msg = "gonogo could not record that yet (the cluster is slow to answer); it tries again."
	default:
		b.cfg.Log.Error("start or cancel a run at its preview", "run", a.Ref.Run, "err", err)
		msg = "gonogo could not record that; nothing changed. The operator can find why in gonogo's log."
	}
	b.tell(ctx, a.Channel, a.ThreadTS, a.User, msg, nil)
}

// onlyAskerOrApprovers says who may press a preview's Start or Cancel:
// the person who asked for the run (named when the run can be read) and
// the approvers.
func (b *Bot) onlyAskerOrApprovers(ctx context.Context, a Action) string {
	what, nothing := "start it", "Nothing ran."
	if a.Kind == ActCancelStart {
		what, nothing = "cancel it", "Nothing changed."
	}
	asker := "the person who asked for this run"
	if r, err := b.eng.Load(ctx, a.Ref.Run); err == nil {
		asker = "<@" + r.StartedBy + ">, who asked for this run,"
	}
	return fmt.Sprintf("Only %s and the approvers can %s. %s", asker, what, nothing)
}

// pickPlan takes the plan file the mention's author picked, as the mention
// would have had it been the only plan; the choice then says who picked
// what (a check's choice stays, to check another).
func (b *Bot) pickPlan(ctx context.Context, a Action) {
	p := a.Pick
	if a.User != p.User {
		b.tell(ctx, a.Channel, a.ThreadTS, a.User, fmt.Sprintf("Only <@%s>, who sent these files, can pick the plan. Nothing changed.", p.User), nil)
		return
	}
	thread := firstNonEmpty(a.ThreadTS, p.MentionTS)
	f, body, err := b.fileByID(ctx, p.File)
	if err != nil {
		b.refuse(ctx, a.Channel, thread, a.User, engine.InputPlan, err, "")
		return
	}
	err = b.takePlan(ctx, p, a.Channel, thread, f, body)
	switch {
	case errors.Is(err, engine.ErrDuplicate):
		b.tell(ctx, a.Channel, thread, a.User, "A plan from this message was started already: one message starts one run. Nothing changed.", nil)
	case err == nil && !p.Check:
		blocks := PlanPicked(a.User, f)
		if err := b.send.update(ctx, a.Channel, a.MessageTS, FallbackText(blocks), blocks, updateState); err != nil {
			b.cfg.Log.Warn("show the plan picked", "channel", a.Channel, "err", err)
		}
	}
}

// fileByID looks a plan file up by its id and downloads it.
func (b *Bot) fileByID(ctx context.Context, id string) (FileRef, []byte, error) {
	f, err := b.fileInfo(ctx, id)
	if err != nil {
		return FileRef{}, nil, err
	}
	body, err := b.download(ctx, f, b.cfg.MaxPlanBytes)
	return f, body, err
}
