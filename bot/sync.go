package bot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
)

// Keys of the notes the bot keeps with a run: where its messages are and
// what it has already posted, so that after a restart it updates them
// rather than posting again.
const (
	noteThread = "thread" // the thread's root ts
	noteHeader = "header" // the header message
	noteFinal  = "final"  // the completion or abort message
	// noteUnreachable marks a run whose channel the bot cannot post in.
	noteUnreachable = "unreachable"
)

func noteStep(n int) string { return fmt.Sprintf("step/%d", n) }

// noteShown keys the digest of what the message ts shows.
func noteShown(ts string) string { return "shown/" + ts }
func noteFile(n, a int, edited bool) string {
	if edited {
		return fmt.Sprintf("file/%d/%d/edited", n, a)
	}
	return fmt.Sprintf("file/%d/%d", n, a)
}
func noteInterrupted(n, a int) string { return fmt.Sprintf("interrupted/%d/%d", n, a) }
func noteHalt(n, a int) string        { return fmt.Sprintf("halt/%d/%d", n, a) }
func noteRemind(n, a int) string      { return fmt.Sprintf("remind/%d/%d", n, a) }
func noteTimeout(n, a int) string     { return fmt.Sprintf("timeout/%d/%d", n, a) }

// sync brings a run's thread up to date with the run: the header (posted
// once, then updated), one message per started step, every artifact
// attached as a file, the announcement of an interrupted step, the halt
// message of a FAILED step, and the final message. Every post is noted
// with the run at once, so a crash between two posts repeats nothing that
// Slack accepted (except, at worst, the one post in flight).
func (b *Bot) sync(ctx context.Context, id engine.RunID) error {
	r, err := b.eng.Load(ctx, id)
	if err != nil {
		return err
	}
	notes, err := b.eng.Notes(ctx, id)
	if err != nil {
		return err
	}
	channel := r.Origin.Channel
	notePairs := func(set map[string]string) error {
		maps.Copy(notes, set)
		return b.eng.SetNotes(ctx, id, set)
	}
	note := func(k, v string) error { return notePairs(map[string]string{k: v}) }
	// A message's noted digest says what it shows, so that after a restart
	// only the messages whose content changed are updated.
	posted := func(set map[string]string, ts string, blocks []slack.Block) error {
		sum := digest(blocks)
		b.remember(channel, ts, sum)
		set[noteShown(ts)] = sum
		return notePairs(set)
	}
	// An update the budget puts off does not hold the rest of the thread
	// (a new step's message is posted at once): the run is synced again
	// when the earliest of them may be made, showing its state by then.
	var later time.Time
	// updateShown reports whether the message shows blocks now.
	updateShown := func(ts string, blocks []slack.Block, prio updatePriority) (bool, error) {
		sum := digest(blocks)
		if b.shows(channel, ts, sum) || notes[noteShown(ts)] == sum {
			b.remember(channel, ts, sum)
			return true, nil
		}
		err := b.send.update(ctx, channel, ts, FallbackText(blocks), blocks, prio)
		var le *laterError
		if errors.As(err, &le) {
			b.cfg.Log.Debug("a thread update waits for the chat.update budget", "run", id, "ts", ts, "priority", int(prio), "until", le.until)
			if later.IsZero() || le.until.Before(later) {
				later = le.until
			}
			return false, nil
		}
		if err != nil {
			return false, err
		}
		b.remember(channel, ts, sum)
		return true, note(noteShown(ts), sum)
	}
	update := func(ts string, blocks []slack.Block, prio updatePriority) error {
		_, err := updateShown(ts, blocks, prio)
		return err
	}
	if notes[noteUnreachable] != "" {
		return nil
	}
	v := b.view(ctx, r, 0, notes)
	// The header changes with the run, not with the clock: its elapsed
	// time is measured to the run's last change, so progress alone never
	// spends an update on it.
	hv := v
	hv.Now = r.Updated
	if r.Finished() || hv.Now.IsZero() {
		hv.Now = v.Now
	}

	hdr := Header(r, hv)
	if notes[noteHeader] == "" {
		ts, err := b.send.post(ctx, channel, r.Origin.Thread, FallbackText(hdr), hdr)
		if unreachable(err) {
			return b.giveUp(ctx, r, note, err)
		}
		if err != nil {
			return fmt.Errorf("post the run's header: %w", err)
		}
		thread := r.Origin.Thread
		if thread == "" {
			thread = ts
		}
		if err := posted(map[string]string{noteHeader: ts, noteThread: thread}, ts, hdr); err != nil {
			return err
		}
	} else if err := update(notes[noteHeader], hdr, updateMinor); gone(err) {
		// The header was deleted: post it again, in the run's thread.
		ts, err := b.send.post(ctx, channel, notes[noteThread], FallbackText(hdr), hdr)
		if err != nil {
			return fmt.Errorf("post the run's header again: %w", err)
		}
		if err := posted(map[string]string{noteHeader: ts}, ts, hdr); err != nil {
			return err
		}
	} else if err != nil {
		return fmt.Errorf("update the run's header: %w", err)
	}
	thread := notes[noteThread]

	for i := range r.Steps {
		s := &r.Steps[i]
		if len(s.Attempts) == 0 {
			continue
		}
		sv := b.view(ctx, r, s.N, notes)
		blocks := StepMessage(r, s.N, sv)
		// A step waiting for a decision shows its buttons first of all. A
		// running step's message that already shows the same attempt
		// running changes only with live progress: a minor update.
		phase := fmt.Sprintf("%d %s", s.Latest().N, s.Status)
		prio := updateState
		switch {
		case s.Status == engine.StepWaiting:
			prio = updateCheckpoint
		case s.Status == engine.StepRunning && b.phase(channel, notes[noteStep(s.N)]) == phase:
			prio = updateMinor
		}
		if ts := notes[noteStep(s.N)]; ts == "" {
			ts, err := b.send.post(ctx, channel, thread, FallbackText(blocks), blocks)
			if err != nil {
				return fmt.Errorf("post step %d: %w", s.N, err)
			}
			b.showsPhase(channel, ts, phase, s.Status == engine.StepRunning)
			if err := posted(map[string]string{noteStep(s.N): ts}, ts, blocks); err != nil {
				return err
			}
		} else if shown, err := updateShown(ts, blocks, prio); gone(err) {
			// The step's message was deleted: post it again.
			ts, err := b.send.post(ctx, channel, thread, FallbackText(blocks), blocks)
			if err != nil {
				return fmt.Errorf("post step %d again: %w", s.N, err)
			}
			b.showsPhase(channel, ts, phase, s.Status == engine.StepRunning)
			if err := posted(map[string]string{noteStep(s.N): ts}, ts, blocks); err != nil {
				return err
			}
		} else if err == nil {
			if shown {
				b.showsPhase(channel, ts, phase, s.Status == engine.StepRunning)
			}
		} else {
			return fmt.Errorf("update step %d: %w", s.N, err)
		}
		for _, a := range s.Attempts {
			if err := b.attach(ctx, r, s, a, channel, thread, notes, note); err != nil {
				return err
			}
		}
		// An interrupted attempt is announced once; the announcement is
		// noted by its ts and kept current, so that once the step is redone
		// or the run aborted its buttons give way.
		for _, a := range s.Attempts {
			key, latest := noteInterrupted(s.N, a.N), a.N == s.Latest().N
			av := sv
			av.Attempt = a.N
			switch ts := notes[key]; {
			case ts == "" && latest && s.Status == engine.StepInterrupted:
				msg := Interrupted(r, s.N, av)
				ts, err := b.send.post(ctx, channel, thread, FallbackText(msg), msg)
				if err != nil {
					return fmt.Errorf("announce the interrupted step %d: %w", s.N, err)
				}
				if err := posted(map[string]string{key: ts}, ts, msg); err != nil {
					return err
				}
			case ts != "" && ts != "1": // "1": noted without its ts by an earlier version
				if err := update(ts, Interrupted(r, s.N, av), updateState); err != nil {
					return fmt.Errorf("update the announcement of interrupted step %d: %w", s.N, err)
				}
			}
		}
		// A FAILED halt is announced once, noted by its ts and kept current,
		// so its Redo and Abort give way once the step moves on.
		for _, a := range s.Attempts {
			key := noteHalt(s.N, a.N)
			switch ts := notes[key]; {
			case ts == "" && a.N == s.Latest().N && s.Status == engine.StepWaiting && a.Result == engine.ResultFailed:
				msg := Halt(r, v.onStep(s.N))
				ts, err := b.send.post(ctx, channel, thread, FallbackText(msg), msg)
				if err != nil {
					return fmt.Errorf("post the halt of step %d: %w", s.N, err)
				}
				if err := posted(map[string]string{key: ts}, ts, msg); err != nil {
					return err
				}
			case ts != "" && ts != "1":
				msg := Halt(r, v.onStep(s.N))
				if a.N != s.Latest().N || s.Status != engine.StepWaiting || r.Finished() {
					// Acted on: the notice keeps what failed and gives
					// way, and never becomes a second end of the run.
					msg = HaltHandled(r, s.N, a.N)
				}
				if err := update(ts, msg, updateState); err != nil && !gone(err) {
					return fmt.Errorf("update the halt of step %d: %w", s.N, err)
				}
			}
		}
	}
	if r.Finished() && notes[noteFinal] == "" {
		var msg []slack.Block
		if r.State == engine.RunAborted {
			msg = Halt(r, v)
		} else {
			msg = Completion(r, v)
		}
		ts, err := b.send.post(ctx, channel, thread, FallbackText(msg), msg)
		if err != nil {
			return fmt.Errorf("post the end of the run: %w", err)
		}
		if err := note(noteFinal, ts); err != nil {
			return err
		}
	}
	if !later.IsZero() {
		return &laterError{later}
	}
	if r.Finished() && notes[noteFinal] != "" {
		b.forgetRun(r.ID, channel, notes)
	}
	return nil
}

// forgetRun drops what the bot keeps in memory for a run whose thread is
// final: a long-lived bot does not grow with every run it has shown.
func (b *Bot) forgetRun(id engine.RunID, channel string, notes map[string]string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.progress, id)
	for _, ts := range notes {
		delete(b.rendered, channel+"/"+ts)
		delete(b.phases, channel+"/"+ts)
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

// attach uploads an attempt's artifact to the thread once, and its edited
// version once more after an edit.
func (b *Bot) attach(ctx context.Context, r *engine.Run, s *engine.Step, a engine.Attempt, channel, thread string,
	notes map[string]string, note func(k, v string) error) error {
	if !a.Artifact || a.Finished.IsZero() {
		return nil
	}
	key := noteFile(s.N, a.N, a.Edited)
	if notes[key] != "" {
		return nil
	}
	body, err := b.eng.Artifact(ctx, r.ID, s.N, a.N)
	if err != nil {
		return fmt.Errorf("read the artifact of step %d attempt %d: %w", s.N, a.N, err)
	}
	name := fmt.Sprintf("%02d-%s.md", s.N, s.Skill)
	if a.N > 1 {
		name = fmt.Sprintf("%02d-%s.attempt-%d.md", s.N, s.Skill, a.N)
	}
	if a.Edited {
		name = strings.TrimSuffix(name, ".md") + ".edited.md"
	}
	if err := b.send.upload(ctx, channel, thread, name, body); err != nil {
		return fmt.Errorf("attach %s: %w", name, err)
	}
	return note(key, "1")
}

// view gathers what a message shows beyond the run: live progress, votes,
// the artifact's preview, reminder and deadline.
func (b *Bot) view(ctx context.Context, r *engine.Run, n int, notes map[string]string) View {
	v := View{Now: time.Now(), OfferSaveWorkflow: b.cfg.WorkflowsDir != ""}
	b.mu.Lock()
	if p := b.progress[r.ID]; p != nil {
		cp := *p
		v.Progress = &cp
	}
	b.mu.Unlock()
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
	if s.Status == engine.StepWaiting && b.cfg.DecisionTimeout > 0 && !l.Finished.IsZero() {
		v.Deadline = l.Finished.Add(b.cfg.DecisionTimeout)
		v.AbortAtDeadline = b.cfg.TimeoutAction == "abort"
	}
	if at, err := time.Parse(time.RFC3339, notes[noteRemind(s.N, l.N)]); err == nil {
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

// phase is the attempt and status a step message was last sent showing.
func (b *Bot) phase(channel, ts string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.phases[channel+"/"+ts]
}

// showsPhase notes the phase a step message was sent showing; only a
// running step's is kept, as only a running step's message changes with
// live progress alone.
func (b *Bot) showsPhase(channel, ts, phase string, running bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if running {
		b.phases[channel+"/"+ts] = phase
	} else {
		delete(b.phases, channel+"/"+ts)
	}
}

// shows reports whether the message was last sent showing sum.
func (b *Bot) shows(channel, ts, sum string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.rendered[channel+"/"+ts] == sum
}

func (b *Bot) remember(channel, ts, sum string) {
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
