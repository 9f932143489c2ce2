package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/slack-go/slack"
)

// A click's response_url can change the message that was clicked: up to
// five times within 30 minutes of the click (Slack's documented limit),
// outside chat.update's rate tier. The update that shows a person's
// decision is made through it, so a decision never waits behind the
// app-wide chat.update budget and spends none of it; any other change of
// that message within the limits goes the same way (the step's next
// attempt after a Redo, its checkpoint). The url is held in memory only,
// as the inbox stores no interaction response_url: after a restart, past
// the limits, or when Slack refuses it, the update is a chat.update as
// before.
const (
	clickReplyLife = 25 * time.Minute // Slack's 30, less a margin for clocks and queues
	clickReplyUses = 5
)

// clickReply is the response_url of the latest click on a message.
type clickReply struct {
	url  string
	at   time.Time // when the click arrived
	uses int
}

// keepClickReply keeps the response_url of a click on one of the bot's
// messages, received at received.
func (b *Bot) keepClickReply(a Action, received time.Time) {
	if a.ResponseURL == "" || a.Channel == "" || a.MessageTS == "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for k, c := range b.clickReplies {
		if time.Since(c.at) > clickReplyLife {
			delete(b.clickReplies, k)
		}
	}
	b.clickReplies[a.Channel+"/"+a.MessageTS] = clickReply{url: a.ResponseURL, at: received}
}

// takeClickReply returns the response_url that may change the message
// channel/ts now, and counts the use; ok is false when there is none.
func (b *Bot) takeClickReply(channel, ts string, now time.Time) (url string, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := channel + "/" + ts
	c, ok := b.clickReplies[k]
	if !ok {
		return "", false
	}
	if now.Sub(c.at) > clickReplyLife || c.uses >= clickReplyUses {
		delete(b.clickReplies, k)
		return "", false
	}
	c.uses++
	b.clickReplies[k] = c
	return c.url, true
}

// dropClickReply forgets the response_url of the message channel/ts.
func (b *Bot) dropClickReply(channel, ts string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.clickReplies, channel+"/"+ts)
}

// replaceViaClick shows text and blocks in the message channel/ts through
// the response_url of a click on it, and reports whether it did; when it
// did not (no click to answer, or Slack refused), the caller updates the
// message with chat.update.
func (b *Bot) replaceViaClick(ctx context.Context, channel, ts, text string, blocks []slack.Block) bool {
	url, ok := b.takeClickReply(channel, ts, time.Now())
	if !ok {
		return false
	}
	if err := b.send.replace(ctx, url, text, blocks); err != nil {
		// The url itself is never logged: it can change the message.
		b.cfg.Log.Debug("a click's response_url refused an update; using chat.update", "channel", channel, "ts", ts, "err", err)
		b.dropClickReply(channel, ts)
		return false
	}
	return true
}

// responseURLMethod names the posts to response_urls in the metrics.
const responseURLMethod = "response_url"

// replace replaces the message a response_url belongs to with text and
// blocks: one try, as the caller has chat.update to fall back on. Slack
// answers a refusal with a status other than 200, or with a JSON body
// whose ok is false.
func (s *sender) replace(ctx context.Context, hook, text string, blocks []slack.Block) error {
	msg := slack.WebhookMessage{Text: text, ReplaceOriginal: true}
	if len(blocks) > 0 {
		msg.Blocks = &slack.Blocks{BlockSet: blocks}
	}
	raw, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hook, bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("response_url: %w", redactURL(err))
	}
	req.Header.Set("Content-Type", "application/json")
	s.metrics.call(responseURLMethod)
	res, err := s.hooks.Do(req)
	if err != nil {
		return fmt.Errorf("response_url: %w", redactURL(err))
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	var answer struct {
		OK    *bool  `json:"ok"`
		Error string `json:"error"`
	}
	_ = json.Unmarshal(body, &answer)
	switch {
	case res.StatusCode != http.StatusOK:
		return fmt.Errorf("response_url: HTTP %d %s", res.StatusCode, clip(string(bytes.TrimSpace(body)), 80))
	case answer.OK != nil && !*answer.OK:
		return fmt.Errorf("response_url: %s", clip(answer.Error, 80))
	}
	return nil
}

// redactURL leaves the url out of an HTTP client's error: a response_url
// is a credential for the message it belongs to.
func redactURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}
