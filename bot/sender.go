package bot

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/slack-go/slack"
)

// sender makes the bot's Slack Web API calls. A 429 is waited out
// (Retry-After) and the call made again; a server error or a network
// failure is retried with backoff; nothing is dropped while ctx lives.
// Posts to one channel are paced to Slack's one a second.
type sender struct {
	api      *slack.Client
	metrics  *Metrics
	interval time.Duration

	mu       sync.Mutex
	channels map[string]*channelPace
}

type channelPace struct {
	mu   sync.Mutex
	last time.Time
}

func newSender(api *slack.Client, m *Metrics, interval time.Duration) *sender {
	return &sender{api: api, metrics: m, interval: interval, channels: map[string]*channelPace{}}
}

// do calls fn until it succeeds, fails for good, or ctx ends.
func (s *sender) do(ctx context.Context, method string, fn func() error) error {
	backoff := 500 * time.Millisecond
	for {
		s.metrics.call(method)
		err := fn()
		if err == nil {
			return nil
		}
		var wait time.Duration
		var rl *slack.RateLimitedError
		var sc slack.StatusCodeError
		var ne net.Error
		switch {
		case errors.As(err, &rl):
			s.metrics.rateLimited(method)
			wait = max(rl.RetryAfter, 100*time.Millisecond)
		case errors.As(err, &sc) && sc.Code >= 500, errors.As(err, &ne):
			wait, backoff = backoff, min(backoff*2, 30*time.Second)
		default:
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(ctx.Err(), err)
		case <-t.C:
		}
	}
}

// paced runs fn no sooner than the pacing interval after the last post to
// the same channel.
func (s *sender) paced(ctx context.Context, channel string, fn func() error) error {
	s.mu.Lock()
	p, ok := s.channels[channel]
	if !ok {
		p = &channelPace{}
		s.channels[channel] = p
	}
	s.mu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	if wait := time.Until(p.last.Add(s.interval)); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	err := fn()
	p.last = time.Now()
	return err
}

// post posts a message (in a thread when thread is set) and returns its ts.
func (s *sender) post(ctx context.Context, channel, thread, text string, blocks []slack.Block) (string, error) {
	opts := []slack.MsgOption{slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...)}
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	var ts string
	err := s.paced(ctx, channel, func() error {
		return s.do(ctx, "chat.postMessage", func() error {
			var err error
			_, ts, err = s.api.PostMessageContext(ctx, channel, opts...)
			return err
		})
	})
	return ts, err
}

// update replaces a message's text and blocks.
func (s *sender) update(ctx context.Context, channel, ts, text string, blocks []slack.Block) error {
	return s.do(ctx, "chat.update", func() error {
		_, _, _, err := s.api.UpdateMessageContext(ctx, channel, ts, slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...))
		return err
	})
}

// ephemeral shows a message to one user only.
func (s *sender) ephemeral(ctx context.Context, channel, thread, user, text string, blocks []slack.Block) error {
	opts := []slack.MsgOption{slack.MsgOptionText(text, false)}
	if len(blocks) > 0 {
		opts = append(opts, slack.MsgOptionBlocks(blocks...))
	}
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	return s.do(ctx, "chat.postEphemeral", func() error {
		_, err := s.api.PostEphemeralContext(ctx, channel, user, opts...)
		return err
	})
}

// upload attaches a file to a thread.
func (s *sender) upload(ctx context.Context, channel, thread, name string, body []byte) error {
	return s.paced(ctx, channel, func() error {
		return s.do(ctx, "files.upload", func() error {
			_, err := s.api.UploadFileContext(ctx, slack.UploadFileParameters{
				Filename: name, Title: name, FileSize: len(body), Content: string(body),
				Channel: channel, ThreadTimestamp: thread,
			})
			return err
		})
	})
}

// openView opens a modal for a trigger.
func (s *sender) openView(ctx context.Context, trigger string, view slack.ModalViewRequest) error {
	return s.do(ctx, "views.open", func() error {
		_, err := s.api.OpenViewContext(ctx, trigger, view)
		return err
	})
}
