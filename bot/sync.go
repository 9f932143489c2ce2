package bot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/engine/audit"
)

// Keys of the notes the bot keeps with a run: where its messages are and
// what it has already posted, so that after a restart it updates them
// rather than posting again.
const (
	noteThread = "thread" // the thread's root ts
	noteHeader = "header" // the header message
	noteFinal  = "final"  // the completion or abort message
	// noteAudit is the run's audit trail attached as a file: auditPending
	// from the end of the run until it is, then "1".
	noteAudit    = "audit"
	auditPending = "pending"
	// noteUnreachable marks a run whose channel the bot cannot post in.
	noteUnreachable = "unreachable"
	// noteAbortedBy is who ended a run that no step decision records: a
	// preview's Cancel.
	noteAbortedBy = "aborted-by"
)

// noteStepPrefix starts the key of every step message's note.
const noteStepPrefix = "step/"

func noteStep(n int) string { return fmt.Sprintf("%s%d", noteStepPrefix, n) }

// noteShown keys the digest of what the message ts shows.
func noteShown(ts string) string { return "shown/" + ts }
func noteFile(n, a int, edited bool) string {
	if edited {
		return fmt.Sprintf("file/%d/%d/edited", n, a)
	}
	return fmt.Sprintf("file/%d/%d", n, a)
}

// A file's note is pendingPrefix and its id while it is uploaded and not
// yet attached to its step's message, then the bare id; "1" is a file an
// earlier gonogo shared in the thread with a message of its own.
const pendingPrefix = "pending:"

// fileDeferred is a file's note while its upload waits for room in Slack's
// tier and its step's message went out without it: a checkpoint's buttons
// never wait for its artifact. Once the message is out, the file is shared
// in the thread with a message of its own ("1"), which spends none of the
// chat.update budget that attaching it to the message would.
const fileDeferred = "deferred"

func noteInterrupted(n, a int) string { return fmt.Sprintf("interrupted/%d/%d", n, a) }
func noteHalt(n, a int) string        { return fmt.Sprintf("halt/%d/%d", n, a) }

// noteRemind and noteTimeout key the ts of a checkpoint's reminder and of
// the note that its decision timed out; an earlier gonogo noted the time
// of the reminder, and "1" for the note.
func noteRemind(n, a int) string  { return fmt.Sprintf("remind/%d/%d", n, a) }
func noteTimeout(n, a int) string { return fmt.Sprintf("timeout/%d/%d", n, a) }

// sync brings a run's thread up to date with the run: the header (posted
// once, then updated), one message per started step, every artifact
// attached as a file, the announcement of an interrupted step, the halt
// message of a FAILED step, the reminder and the timeout of a checkpoint
// left waiting, the final message and the run's audit trail; then the
// thread's loading status says what runs. Every post is noted with the run
// at once, so a crash between two posts repeats nothing that Slack
// accepted (except, at worst, the one post in flight).
func (b *Bot) sync(ctx context.Context, id engine.RunID) error {
	_, err := b.syncRun(ctx, id, false)
	return err
}

// syncRun is sync; done says the thread shows the run's end in full (or
// can never show anything: the bot cannot post in its channel). A sync
// that reconciles first looks in Slack for what an earlier sync of the run
// that was cut off may have posted without noting it (see lookup), and
// notes it instead of posting it again. A scheduled sync (on a cluster)
// keeps its notes until it ends and writes them in one update: one that
// is cut off is retried as a reconciling sync, which finds its posts.
func (b *Bot) syncRun(ctx context.Context, id engine.RunID, reconcile bool) (done bool, err error) {
	r, err := b.eng.Load(ctx, id)
	if err != nil {
		return false, err
	}
	notes, err := b.eng.Notes(ctx, id)
	if err != nil {
		return false, err
	}
	if notes[noteUnreachable] != "" {
		return true, nil // before the views, which read artifacts
	}
	views := threadViews{run: b.view(ctx, r, 0, notes), steps: map[int]View{}}
	for _, s := range r.Steps {
		if len(s.Attempts) > 0 {
			views.steps[s.N] = b.view(ctx, r, s.N, notes)
		}
	}
	t := &threadSync{b: b, r: r, channel: r.Origin.Channel, notes: notes, reconcile: reconcile}
	if b.cfg.ScheduledSyncs {
		t.pending = map[string]string{}
	}
	done, err = t.carryOut(ctx, views)
	if ferr := t.flush(ctx); ferr != nil {
		return false, ferr
	}
	return done, err
}

// carryOut brings the thread up to date with the run, and says whether it
// shows the run's end in full.
func (t *threadSync) carryOut(ctx context.Context, views threadViews) (done bool, err error) {
	b, r, notes := t.b, t.r, t.notes
	opt := planOptions{audit: !b.cfg.NoAuditTrail, quietStart: b.cfg.QuietStart}
	for _, op := range planThread(r, views, notes, opt) {
		if stop, err := t.do(ctx, op); stop || err != nil {
			return stop, err
		}
	}
	t.inSession = t.session(ctx)
	t.progress, t.live = t.liveProgress(ctx)
	t.streaming = t.stream(ctx)
	if err := t.status(ctx); err != nil {
		return false, err
	}
	// An update the budget put off did not hold the rest of the thread (a
	// new step's message was posted at once): the run is synced again when
	// the earliest of them may be made, showing its state by then. So is
	// a run whose status is due for a refresh.
	if !t.later.IsZero() {
		return false, &laterError{t.later}
	}
	if r.Finished() && threadDone(notes) {
		b.forgetRun(r.ID, t.channel, notes)
		return true, nil
	}
	return false, nil
}

// threadSync carries out a thread's plan for one sync.
type threadSync struct {
	b       *Bot
	r       *engine.Run
	channel string
	notes   map[string]string // kept current with every note set
	later   time.Time         // when to sync again: the earliest update the budget put off, or a status due
	// inSession says the thread is an agent session, whose status says
	// that a step runs: the loading status waits for its quiet start.
	inSession bool
	// streaming says every running step's progress is streamed: the
	// thread needs no loading status.
	streaming bool
	// progress is the live progress of the run's running steps for this
	// sync, read once (from the engine's replica on a cluster: live), and
	// shown by the stream and the loading status alike.
	progress map[int]engine.Progress
	live     bool
	// reconcile makes every post and upload first look for the same one
	// in Slack (found, read once by lookup).
	reconcile bool
	found     map[string]string
	// pending holds the notes set during a scheduled sync, written in one
	// go when it ends (flush): a sync cut off before then is retried as
	// a reconciling one, which finds in Slack what it posted.
	pending map[string]string
}

// flush writes the notes a scheduled sync set.
func (t *threadSync) flush(ctx context.Context) error {
	if len(t.pending) == 0 {
		return nil
	}
	err := t.b.eng.SetNotes(context.WithoutCancel(ctx), t.r.ID, t.pending)
	clear(t.pending)
	return err
}

// turn is what a post or share of this sync does when it is not its
// channel's turn: the bot's own sync workers hand it back (turnLater,
// turnFirst for a checkpoint) to serve other runs meanwhile; a sync a
// backend schedules (ScheduledSyncs) waits for it, as the backend runs
// each sync on its own.
func (t *threadSync) turn(checkpoint bool) postTurn {
	switch {
	case t.b.cfg.ScheduledSyncs:
		return turnWait
	case checkpoint:
		return turnFirst
	}
	return turnLater
}

// syncAt has the run synced again at when, or earlier.
func (t *threadSync) syncAt(when time.Time) {
	if t.later.IsZero() || when.Before(t.later) {
		t.later = when
	}
}

// do carries out op. stop says the thread is given up: the bot cannot
// post in the run's channel.
func (t *threadSync) do(ctx context.Context, op threadOp) (stop bool, err error) {
	switch op.kind {
	case opPost:
		return t.post(ctx, op)
	case opUpdate:
		return false, t.update(ctx, op)
	case opUpload:
		return false, t.upload(ctx, op)
	case opAudit:
		return false, t.attachAudit(ctx, op)
	case opRevisit:
		t.syncAt(op.at)
		return false, nil
	case opRemove:
		return false, t.remove(ctx, op)
	}
	return false, fmt.Errorf("thread operation %d on %s: unknown", op.kind, op.what)
}

func (t *threadSync) post(ctx context.Context, op threadOp) (stop bool, err error) {
	thread := t.notes[noteThread]
	if op.opensThread {
		thread = t.r.Origin.Thread
	}
	text := FallbackText(op.blocks)
	if op.text != "" {
		text = op.text
	}
	if ts, err := t.earlier(ctx, op.key); err != nil || ts != "" {
		if err != nil {
			return false, err
		}
		return false, t.adopt(ctx, op, ts, thread)
	}
	files, fileNotes := t.pendingFiles(op)
	ts, err := t.b.send.postInTurn(ctx, t.turn(op.checkpoint), t.channel, thread, text, op.blocks, slack.MsgOptionMetadata(postMetadata(t.r.ID, op.key)),
		slack.MsgOptionFileIDs(files))
	if op.opensThread && unreachable(err) {
		note := func(k, v string) error { return t.note(ctx, k, v) }
		return true, t.b.giveUp(ctx, t.r, note, err)
	}
	if err != nil {
		return false, fmt.Errorf("post %s: %w", op.what, err)
	}
	if thread != "" {
		t.b.replied(t.r.ID)
	}
	if len(fileNotes) > 0 {
		op.also = maps.Clone(op.also)
		if op.also == nil {
			op.also = map[string]string{}
		}
		maps.Copy(op.also, fileNotes) // noted with the post, in one write
	}
	return false, t.posted(ctx, op, ts, thread)
}

// pendingFiles are the files op's message is to carry: for a step's own
// message, its artifacts uploaded and not attached yet. fileNotes are the
// notes that say they are attached, to set once Slack took the message.
func (t *threadSync) pendingFiles(op threadOp) (files []string, fileNotes map[string]string) {
	if !op.attach {
		return nil, nil
	}
	prefix := fmt.Sprintf("file/%d/", op.step)
	var keys []string
	for k, v := range t.notes {
		if strings.HasPrefix(k, prefix) && strings.HasPrefix(v, pendingPrefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	fileNotes = map[string]string{}
	for _, k := range keys {
		id := strings.TrimPrefix(t.notes[k], pendingPrefix)
		files = append(files, id)
		fileNotes[k] = id
	}
	return files, fileNotes
}

// posted notes a posted message with the run: its ts and a digest of what
// it shows, so that after a restart only the messages whose content
// changed are updated.
func (t *threadSync) posted(ctx context.Context, op threadOp, ts, thread string) error {
	set := map[string]string{op.key: ts}
	maps.Copy(set, op.also)
	if op.tsOnly {
		return t.notePairs(ctx, set)
	}
	if op.opensThread {
		if thread == "" {
			thread = ts
		}
		set[noteThread] = thread
		t.b.send.updates.posted(t.channel+"/"+ts, time.Now())
	}
	sum := digest(op.blocks)
	t.b.remember(t.channel, ts, sum)
	set[noteShown(ts)] = sum
	if op.asked != "" {
		set[op.asked] = ts
	}
	return t.notePairs(ctx, set)
}

// update makes op's message show its blocks, unless it already does or
// the budget puts the update off.
func (t *threadSync) update(ctx context.Context, op threadOp) error {
	_, err := t.updateShown(ctx, op)
	var le *laterError
	switch {
	case errors.As(err, &le):
		return t.overtake(ctx, op, le.until)
	case gone(err) && op.ifGone == goneRepost:
		// The message was deleted: post it again, in the run's thread.
		thread := t.notes[noteThread]
		files, fileNotes := t.pendingFiles(op)
		ts, err := t.b.send.postInTurn(ctx, t.turn(false), t.channel, thread, FallbackText(op.blocks), op.blocks,
			slack.MsgOptionMetadata(postMetadata(t.r.ID, op.key)), slack.MsgOptionFileIDs(files))
		if err != nil {
			return fmt.Errorf("post %s again: %w", op.what, err)
		}
		t.b.replied(t.r.ID)
		if err := t.notePairs(ctx, fileNotes); err != nil {
			return err
		}
		return t.posted(ctx, op, ts, thread)
	case gone(err) && op.ifGone == goneIgnore:
		return nil
	case err != nil:
		return fmt.Errorf("update %s: %w", op.what, err)
	}
	return nil
}

// updateShown reports whether the message shows op's blocks now. A
// checkpoint that may overtake its message (op.overtake) and that the
// budget puts off past op.due gets the budget's *laterError.
func (t *threadSync) updateShown(ctx context.Context, op threadOp) (bool, error) {
	sum := digest(op.blocks)
	// Files to attach need a chat.update (file_ids), whatever the message
	// shows, and a click's response_url cannot carry them.
	files, fileNotes := t.pendingFiles(op)
	if len(files) == 0 {
		if t.b.shows(t.channel, op.ts, sum) || t.notes[noteShown(op.ts)] == sum {
			t.b.remember(t.channel, op.ts, sum)
			t.b.send.updates.settled(t.channel + "/" + op.ts)
			return true, t.notePairs(ctx, t.asked(op, nil))
		}
		if t.b.replaceViaClick(ctx, t.channel, op.ts, FallbackText(op.blocks), op.blocks) {
			t.b.remember(t.channel, op.ts, sum)
			t.b.send.updates.settled(t.channel + "/" + op.ts)
			return true, t.notePairs(ctx, t.asked(op, map[string]string{noteShown(op.ts): sum}))
		}
	}
	err := t.b.send.update(ctx, t.channel, op.ts, FallbackText(op.blocks), op.blocks, op.prio, slack.MsgOptionFileIDs(files))
	var le *laterError
	if errors.As(err, &le) {
		if op.overtake && le.until.After(op.due) {
			return false, err // posted as a new message instead
		}
		t.b.cfg.Log.Debug("a thread update waits for the chat.update budget", "run", t.r.ID, "ts", op.ts, "priority", int(op.prio), "until", le.until)
		t.syncAt(le.until)
		return false, nil
	}
	if err != nil {
		return false, err
	}
	t.b.remember(t.channel, op.ts, sum)
	set := map[string]string{noteShown(op.ts): sum}
	maps.Copy(set, fileNotes)
	return true, t.notePairs(ctx, t.asked(op, set))
}

// upload uploads an attempt's artifact for its step's message to carry.
func (t *threadSync) upload(ctx context.Context, op threadOp) error {
	body, err := t.artifactBody(ctx, op)
	if err != nil {
		return fmt.Errorf("read the artifact of step %d attempt %d: %w", op.step, op.attempt, err)
	}
	if ts, err := t.earlier(ctx, fileKey(op.file)); err != nil || ts != "" {
		if err != nil {
			return err
		}
		return t.note(ctx, op.key, "1")
	}
	if op.late && noted(t.notes[noteStep(op.step)]) {
		return t.shareLate(ctx, op, body)
	}
	id, err := t.b.send.uploadPrivate(ctx, op.file, body)
	if le := (*laterError)(nil); errors.As(err, &le) {
		t.syncAt(le.until)
		if op.late {
			return nil
		}
		return t.note(ctx, op.key, fileDeferred)
	}
	if err != nil {
		return fmt.Errorf("upload %s: %w", op.file, err)
	}
	return t.note(ctx, op.key, pendingPrefix+id)
}

// artifactBody is what op uploads: the attempt's artifact as it stands,
// or for agentText the agent's own version, the first kept.
func (t *threadSync) artifactBody(ctx context.Context, op threadOp) ([]byte, error) {
	if !op.agentText {
		return t.b.eng.Artifact(ctx, t.r.ID, op.step, op.attempt)
	}
	vs, err := t.b.eng.ArtifactVersions(ctx, t.r.ID, op.step, op.attempt)
	if err != nil {
		return nil, err
	}
	if len(vs) == 0 {
		return nil, fmt.Errorf("no version kept: %w", engine.ErrNotFound)
	}
	return vs[0], nil
}

// shareLate shares in the thread an artifact whose upload waited for its
// tier while its step's message went out without it (fileDeferred).
func (t *threadSync) shareLate(ctx context.Context, op threadOp, body []byte) error {
	err := t.b.send.upload(ctx, t.turn(false), t.channel, t.notes[noteThread], op.file, body)
	if le := (*laterError)(nil); errors.As(err, &le) {
		t.syncAt(le.until)
		return nil
	}
	if err != nil {
		return fmt.Errorf("share %s: %w", op.file, err)
	}
	t.b.replied(t.r.ID)
	return t.note(ctx, op.key, "1")
}

// attachAudit attaches the run's audit trail to its thread, in Markdown: the
// trail `gonogo export RUN --format md` writes, built from the journal and
// every version of each artifact the engine hands on.
func (t *threadSync) attachAudit(ctx context.Context, op threadOp) error {
	journal, err := t.b.eng.Journal(ctx, t.r.ID)
	if err != nil {
		return fmt.Errorf("read the journal for %s: %w", op.what, err)
	}
	trail, err := audit.Build(audit.Source{Run: t.r, Journal: journal, Versions: func(step, attempt int) ([][]byte, error) {
		return t.b.eng.ArtifactVersions(ctx, t.r.ID, step, attempt)
	}}, time.Now())
	if err != nil {
		return fmt.Errorf("build %s: %w", op.what, err)
	}
	if ts, err := t.earlier(ctx, fileKey(op.file)); err != nil || ts != "" {
		if err != nil {
			return err
		}
		return t.note(ctx, op.key, "1")
	}
	err = t.b.send.upload(ctx, t.turn(false), t.channel, t.notes[noteThread], op.file, trail.Markdown())
	if le := (*laterError)(nil); errors.As(err, &le) {
		t.syncAt(le.until) // still pending: the thread is not done
		return nil
	}
	if err != nil {
		return fmt.Errorf("attach %s: %w", op.what, err)
	}
	t.b.replied(t.r.ID)
	return t.note(ctx, op.key, "1")
}

// notePairs notes set with the run, and keeps the notes at hand current.
func (t *threadSync) notePairs(ctx context.Context, set map[string]string) error {
	if len(set) == 0 {
		return nil
	}
	maps.Copy(t.notes, set)
	if t.pending != nil {
		maps.Copy(t.pending, set)
		return nil
	}
	return t.b.eng.SetNotes(ctx, t.r.ID, set)
}

func (t *threadSync) note(ctx context.Context, k, v string) error {
	return t.notePairs(ctx, map[string]string{k: v})
}

// forgetRun drops what the bot keeps in memory for a run whose thread is
// final: a long-lived bot does not grow with every run it has shown.
func (b *Bot) forgetRun(id engine.RunID, channel string, notes map[string]string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.progress, id)
	delete(b.statuses, id)
	delete(b.streams, id)
	for _, ts := range notes {
		delete(b.rendered, channel+"/"+ts)
		delete(b.clickReplies, channel+"/"+ts)
	}
	if st, ok := b.syncing[id]; ok && !st.queued && st.progressTimer == nil && st.wake == nil {
		delete(b.syncing, id)
	}
}

// giveUp aborts a run whose thread cannot be posted at all (the bot is not
// in the channel): a run nobody can see or decide must not go on spending.
// The starter is told through their slash command's response_url.
func (b *Bot) giveUp(ctx context.Context, r *engine.Run, note func(k, v string) error, cause error) error {
	b.cfg.Log.Warn("cannot post in the run's channel; aborting the run", "run", r.ID, "channel", r.Origin.Channel, "err", cause)
	if err := note(noteUnreachable, "1"); err != nil {
		return err
	}
	if !r.Finished() {
		if _, err := b.eng.Abort(ctx, r.ID, "gonogo (cannot post in this channel)"); err != nil {
			return fmt.Errorf("abort the run: %w", err)
		}
	}
	b.tell(ctx, r.Origin.Channel, "", r.StartedBy, fmt.Sprintf(
		"gonogo cannot post in this channel, so run %s was stopped. Invite the bot (/invite @gonogo) and start it again.", r.ID), nil)
	return nil
}

// view gathers what a message shows beyond the run: the artifact's
// preview, reminder and deadline.
func (b *Bot) view(ctx context.Context, r *engine.Run, n int, notes map[string]string) View {
	v := View{Now: time.Now(), OfferSaveWorkflow: b.cfg.WorkflowsDir != "", AbortedBy: notes[noteAbortedBy], Open: b.cfg.SignIn != nil}
	s := r.Step(n)
	if s == nil {
		return v
	}
	l := s.Latest()
	if l == nil {
		return v
	}
	if l.Artifact {
		if body, err := b.eng.Artifact(ctx, r.ID, s.N, l.N); err == nil {
			v.Preview = previewOf(body)
		}
	}
	for _, a := range engine.Candidates(s) {
		if a.Artifact {
			if body, err := b.eng.Artifact(ctx, r.ID, s.N, a.N); err == nil {
				if v.Candidates == nil {
					v.Candidates = map[int]string{}
				}
				v.Candidates[a.N] = previewOf(body)
			}
		}
	}
	if _, timeout := engine.Deadlines(r, s); !timeout.IsZero() {
		v.Deadline = timeout
		v.AbortAtDeadline = r.Oversight.OnTimeout == engine.TimeoutAbort
	}
	v.RemindedAt = l.Reminded
	if at, err := time.Parse(time.RFC3339, notes[noteRemind(s.N, l.N)]); err == nil && v.RemindedAt.IsZero() {
		// A reminder an earlier gonogo made, and noted with its time.
		v.RemindedAt = at
	}
	return v
}

// previewOf keeps the beginning of an artifact, enough for a preview.
func previewOf(body []byte) string {
	const keep = 4000
	if len(body) <= keep {
		return string(body)
	}
	cut := keep
	for cut > 0 && !utf8.RuneStart(body[cut]) {
		cut--
	}
	return string(body[:cut])
}

// shows reports whether the message was last sent showing sum.
//
// With scheduled syncs, another replica may have changed the message
// since: only the run's notes say what it shows, and nothing is kept here.
func (b *Bot) shows(channel, ts, sum string) bool {
	if b.cfg.ScheduledSyncs {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.rendered[channel+"/"+ts] == sum
}

func (b *Bot) remember(channel, ts, sum string) {
	if b.cfg.ScheduledSyncs {
		return
	}
	b.mu.Lock()
	b.rendered[channel+"/"+ts] = sum
	b.mu.Unlock()
}

// digest sums what a message shows, short enough to note with the run.
func digest(blocks []slack.Block) string {
	raw, _ := json.Marshal(blocks)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:16])
}
