package bot

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
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
	note := func(k, v string) error {
		notes[k] = v
		return b.eng.SetNotes(ctx, id, map[string]string{k: v})
	}
	if notes[noteUnreachable] != "" {
		return nil
	}
	channel := r.Origin.Channel
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
		b.remember(channel, ts, hdr)
		if err := b.eng.SetNotes(ctx, id, map[string]string{noteHeader: ts, noteThread: thread}); err != nil {
			return err
		}
		notes[noteHeader], notes[noteThread] = ts, thread
	} else if err := b.updateIfChanged(ctx, channel, notes[noteHeader], hdr); gone(err) {
		// The header was deleted: post it again, in the run's thread.
		ts, err := b.send.post(ctx, channel, notes[noteThread], FallbackText(hdr), hdr)
		if err != nil {
			return fmt.Errorf("post the run's header again: %w", err)
		}
		b.remember(channel, ts, hdr)
		if err := note(noteHeader, ts); err != nil {
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
		if ts := notes[noteStep(s.N)]; ts == "" {
			ts, err := b.send.post(ctx, channel, thread, FallbackText(blocks), blocks)
			if err != nil {
				return fmt.Errorf("post step %d: %w", s.N, err)
			}
			b.remember(channel, ts, blocks)
			if err := note(noteStep(s.N), ts); err != nil {
				return err
			}
		} else if err := b.updateIfChanged(ctx, channel, ts, blocks); gone(err) {
			// The step's message was deleted: post it again.
			ts, err := b.send.post(ctx, channel, thread, FallbackText(blocks), blocks)
			if err != nil {
				return fmt.Errorf("post step %d again: %w", s.N, err)
			}
			b.remember(channel, ts, blocks)
			if err := note(noteStep(s.N), ts); err != nil {
				return err
			}
		} else if err != nil {
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
				b.remember(channel, ts, msg)
				if err := note(key, ts); err != nil {
					return err
				}
			case ts != "" && ts != "1": // "1": noted without its ts by an earlier version
				if err := b.updateIfChanged(ctx, channel, ts, Interrupted(r, s.N, av)); err != nil {
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
				msg := Halt(r, v)
				ts, err := b.send.post(ctx, channel, thread, FallbackText(msg), msg)
				if err != nil {
					return fmt.Errorf("post the halt of step %d: %w", s.N, err)
				}
				b.remember(channel, ts, msg)
				if err := note(key, ts); err != nil {
					return err
				}
			case ts != "" && ts != "1":
				msg := Halt(r, v)
				if a.N != s.Latest().N || s.Status != engine.StepWaiting || r.Finished() {
					// Acted on: the notice keeps what failed and gives
					// way, and never becomes a second end of the run.
					msg = HaltHandled(r, s.N, a.N)
				}
				if err := b.updateIfChanged(ctx, channel, ts, msg); err != nil && !gone(err) {
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
	}
	if st, ok := b.syncing[id]; ok && !st.queued && st.progressTimer == nil {
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
	v := View{Now: time.Now()}
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

// updateIfChanged updates a message unless it already shows blocks.
func (b *Bot) updateIfChanged(ctx context.Context, channel, ts string, blocks []slack.Block) error {
	key, sum := channel+"/"+ts, digest(blocks)
	b.mu.Lock()
	same := b.rendered[key] == sum
	b.mu.Unlock()
	if same {
		return nil
	}
	if err := b.send.update(ctx, channel, ts, FallbackText(blocks), blocks); err != nil {
		return err
	}
	b.mu.Lock()
	b.rendered[key] = sum
	b.mu.Unlock()
	return nil
}

func (b *Bot) remember(channel, ts string, blocks []slack.Block) {
	b.mu.Lock()
	b.rendered[channel+"/"+ts] = digest(blocks)
	b.mu.Unlock()
}

func digest(blocks []slack.Block) string {
	raw, _ := json.Marshal(blocks)
	sum := sha256.Sum256(raw)
	return string(sum[:])
}
