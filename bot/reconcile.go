package bot

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
)

// postEventType is the event_type of the metadata every thread message
// carries: which run posted it and under which note, so a message posted
// by a sync that was cut off before it noted it can be found again.
const postEventType = "gonogo_message"

// lookupLimit and lookupPages bound the channel messages read to find a
// run's header that a sync cut off may have posted: the header is among
// the channel's messages since the run started.
const (
	lookupLimit = 200
	lookupPages = 10
)

func postMetadata(id engine.RunID, note string) slack.SlackMetadata {
	return slack.SlackMetadata{EventType: postEventType, EventPayload: map[string]any{"run": string(id), "note": note}}
}

// fileKey keys a file found in a run's thread by its title.
func fileKey(title string) string { return "file:" + title }

// earlier returns the ts of the message posted under key (a note key, or
// fileKey of a file) by an earlier sync of the run that was cut off after
// Slack took it and before it was noted; "" when there is none or the
// sync does not reconcile. Slack is read once a sync.
func (t *threadSync) earlier(ctx context.Context, key string) (string, error) {
	if !t.reconcile {
		return "", nil
	}
	if t.found == nil {
		found, err := t.b.lookup(ctx, t.r, t.notes[noteThread])
		if err != nil {
			return "", fmt.Errorf("look for the messages an interrupted update of the thread posted: %w", err)
		}
		t.found = found
	}
	return t.found[key], nil
}

// adopt notes a message found in Slack as op's post. What it shows is not
// known, so a message that is updated (not tsOnly) is updated by one more
// sync, asked for at once, to show the run as it is.
func (t *threadSync) adopt(ctx context.Context, op threadOp, ts, thread string) error {
	t.b.cfg.Log.Info("a message posted before an interruption was found in Slack and is not posted again", "run", t.r.ID, "note", op.key)
	set := map[string]string{op.key: ts}
	maps.Copy(set, op.also)
	if op.opensThread {
		if thread == "" {
			thread = ts
		}
		set[noteThread] = thread
	}
	if !op.tsOnly {
		set[noteShown(ts)] = "unknown"
		t.syncAt(time.Now())
	}
	return t.notePairs(ctx, set)
}

// lookup reads what the bot posted for run r in Slack: its thread when
// thread (the root's ts) is known, else the origin thread of a run started
// in one, or the channel's messages since the run was created (where its
// header is) and then the thread of the header found there. It maps each
// message's note key (from its metadata) and each file's fileKey to the
// ts of the message that holds it. Files are matched by their titles
// only in a thread the run has to itself: in a thread it shares (a run
// started by a mention in someone's thread) another run's file could
// have the same title, and a file posted twice is the lesser harm than
// one never posted.
func (b *Bot) lookup(ctx context.Context, r *engine.Run, thread string) (map[string]string, error) {
	found := map[string]string{}
	take := func(msgs []slack.Message) { notePosted(found, r, msgs) }
	if thread == "" {
		thread = r.Origin.Thread
	}
	if thread == "" {
		if err := b.channelSince(ctx, r.Origin.Channel, r.Created, func(msgs []slack.Message) bool {
			take(msgs)
			return found[noteHeader] != ""
		}); err != nil {
			return found, err
		}
		if thread = found[noteHeader]; thread == "" {
			return found, nil
		}
	}
	return found, b.threadReplies(ctx, r.Origin.Channel, thread, take)
}

// notePosted records in found what msgs show the bot posted for run r:
// each message's note key, and, in a thread r has to itself, each file's
// fileKey, mapped to the message's ts.
func notePosted(found map[string]string, r *engine.Run, msgs []slack.Message) {
	for _, m := range msgs {
		if m.Metadata.EventType == postEventType && m.Metadata.EventPayload["run"] == string(r.ID) {
			if note, ok := m.Metadata.EventPayload["note"].(string); ok && note != "" {
				found[note] = m.Timestamp
			}
		}
		if r.Origin.Thread != "" {
			continue
		}
		for _, f := range m.Files {
			found[fileKey(f.Title)] = m.Timestamp
		}
	}
}

// threadReplies reads the whole thread of the message thread in channel,
// a page at a time, handing each page to page.
func (b *Bot) threadReplies(ctx context.Context, channel, thread string, page func([]slack.Message)) error {
	cursor := ""
	for {
		var msgs []slack.Message
		var more bool
		err := b.send.do(ctx, "conversations.replies", func() error {
			var err error
			msgs, more, cursor, err = b.api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
				ChannelID: channel, Timestamp: thread, Cursor: cursor, Limit: 200, IncludeAllMetadata: true})
			return err
		})
		if err != nil {
			return err
		}
		page(msgs)
		if !more || cursor == "" {
			return nil
		}
	}
}

// channelSince reads the channel's messages posted since t, newest first,
// a page at a time (at most lookupPages of lookupLimit), until page says
// it found what it looks for.
func (b *Bot) channelSince(ctx context.Context, channel string, since time.Time, page func([]slack.Message) bool) error {
	cursor := ""
	oldest := strconv.FormatFloat(float64(since.Add(-time.Minute).UnixNano())/1e9, 'f', 6, 64)
	for range lookupPages {
		var res *slack.GetConversationHistoryResponse
		err := b.send.do(ctx, "conversations.history", func() error {
			var err error
			res, err = b.api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{
				ChannelID: channel, Oldest: oldest, Cursor: cursor, Limit: lookupLimit, IncludeAllMetadata: true})
			return err
		})
		if err != nil {
			return err
		}
		if page(res.Messages) || !res.HasMore || res.ResponseMetaData.NextCursor == "" {
			return nil
		}
		cursor = res.ResponseMetaData.NextCursor
	}
	return nil
}
