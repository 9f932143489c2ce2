package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A step that runs past its quiet start has a running message, and its
// checkpoint would be a chat.update of it. chat.update has one app-wide
// budget (Tier 3, updateBudget): under load it cannot show every
// checkpoint soon. A checkpoint the budget cannot carry within
// checkpointPatience is then posted as a new message in the run's thread
// (chat.postMessage, paced per channel, a budget of its own), which
// becomes the step's message; the running message it overtook is noted
// (noteStale) and removed with chat.delete, whose tier is a budget of its
// own too, at once or as soon as the tier has room. Its only button,
// Cancel, names an attempt that no longer runs, which the engine refuses
// (ErrStale); its blocks are never replaced, so the checkpoint's buttons
// show in one message only.

// checkpointPatience is how long after its step's result a checkpoint may
// still wait for the chat.update budget rather than be posted as a new
// message: a token due this soon shows it about as soon as the channel's
// turn would, and costs no removal. It counts from the result, not from
// each try, so that a checkpoint turned away twice does not wait twice.
const checkpointPatience = 500 * time.Millisecond

// noteAsked keys the ts of the message that showed the buttons of step
// n's attempt a: a message that has shown them is never overtaken.
func noteAsked(n, a int) string { return fmt.Sprintf("asked/%d/%d", n, a) }

// noteStalePrefix keys a running message a checkpoint overtook: "stale/"
// and its ts, noting its step's number until it is removed, then
// staleRemoved.
const noteStalePrefix = "stale/"

const staleRemoved = "removed"

func noteStale(ts string) string { return noteStalePrefix + ts }

// carriesFiles reports whether step n's message carries an attempt's
// artifact (attached by its post or an update: a bare file id). Removing
// it would take the file out of the thread, so its checkpoint waits for
// the chat.update budget instead of overtaking it.
func carriesFiles(notes map[string]string, n int) bool {
	prefix := fmt.Sprintf("file/%d/", n)
	for k, v := range notes {
		if strings.HasPrefix(k, prefix) && v != "" && v != "1" && v != fileDeferred && !strings.HasPrefix(v, pendingPrefix) {
			return true
		}
	}
	return false
}

// staleOps remove, once each, the running messages of step n that its
// checkpoints overtook.
func staleOps(n int, notes map[string]string) []threadOp {
	var ops []threadOp
	for k, v := range notes {
		if !strings.HasPrefix(k, noteStalePrefix) || v != strconv.Itoa(n) {
			continue
		}
		ops = append(ops, threadOp{kind: opRemove, key: k, ts: strings.TrimPrefix(k, noteStalePrefix), step: n,
			what: fmt.Sprintf("the running message of step %d a checkpoint overtook", n)})
	}
	slices.SortFunc(ops, func(a, b threadOp) int { return strings.Compare(a.key, b.key) })
	return ops
}

// staleLeft reports whether a running message a checkpoint overtook is
// still to be removed.
func staleLeft(notes map[string]string) bool {
	for k, v := range notes {
		if strings.HasPrefix(k, noteStalePrefix) && v != staleRemoved {
			return true
		}
	}
	return false
}

// overtake posts op's checkpoint, which the chat.update budget put off
// until until, as a new message in the run's thread, notes it as the
// step's message, and removes the running message it replaces. A sync
// that reconciles waits for the budget instead: the message it would find
// in Slack under the step's note may be the running one itself.
func (t *threadSync) overtake(ctx context.Context, op threadOp, until time.Time) error {
	if t.reconcile {
		t.syncAt(until)
		return nil
	}
	stale := op.ts
	post := op
	post.kind, post.ts, post.checkpoint = opPost, "", true
	post.also = map[string]string{noteStale(stale): strconv.Itoa(op.step)}
	if _, err := t.post(ctx, post); err != nil {
		return err // a *laterError when it is not the channel's turn: synced again then
	}
	// The running message no longer waits for an update: its turn would
	// hold the others'.
	t.b.send.updates.settled(t.channel + "/" + stale)
	t.b.cfg.Log.Debug("a checkpoint the chat.update budget put off was posted as a new message", "run", t.r.ID, "step", op.step, "overtook", stale)
	return t.remove(ctx, threadOp{kind: opRemove, key: noteStale(stale), ts: stale, step: op.step,
		what: fmt.Sprintf("the running message of step %d a checkpoint overtook", op.step)})
}

// remove deletes op's message, unless chat.delete's tier has no room now
// (then the thread is synced again when it has).
func (t *threadSync) remove(ctx context.Context, op threadOp) error {
	err := t.b.send.remove(ctx, t.channel, op.ts)
	if le := (*laterError)(nil); errors.As(err, &le) {
		t.syncAt(le.until)
		return nil
	}
	if err != nil && !gone(err) {
		return fmt.Errorf("remove %s: %w", op.what, err)
	}
	t.b.forgetMessage(t.channel, op.ts)
	return t.note(ctx, op.key, staleRemoved)
}

// forgetMessage drops what the bot keeps in memory for a message it
// removed.
func (b *Bot) forgetMessage(channel, ts string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.rendered, channel+"/"+ts)
	delete(b.clickReplies, channel+"/"+ts)
}

// remove deletes a message the bot posted, or returns a *laterError when
// chat.delete's tier has no room for it now.
func (s *sender) remove(ctx context.Context, channel, ts string) error {
	if err := s.reserve("chat.delete"); err != nil {
		return err
	}
	return s.limitedHeld(ctx, "chat.delete", "chat.delete", nil, true, func() error {
		_, _, err := s.api.DeleteMessageContext(ctx, channel, ts)
		return err
	})
}

// asked adds to set the note that op's message shows its attempt's
// buttons, unless it is noted already.
func (t *threadSync) asked(op threadOp, set map[string]string) map[string]string {
	if op.asked == "" || t.notes[op.asked] == op.ts {
		return set
	}
	if set == nil {
		set = map[string]string{}
	}
	set[op.asked] = op.ts
	return set
}
