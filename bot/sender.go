package bot

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/slack-go/slack"
)

// sender makes the bot's Slack Web API calls. A 429 is waited out
// (Retry-After) and the call made again; a server error or a network
// failure is retried with backoff; nothing is dropped while ctx lives.
// Posts to one channel are paced to Slack's one a second.
//
// A 429's Retry-After holds every call Slack would count against the same
// limit, not only the call that got it: the method (chat.update is limited
// app-wide), or the method in that channel for chat.postMessage, whose
// limit is per channel. Otherwise two threads updated at once would call
// again inside the window, get another 429, and look like a client that
// ignores Retry-After. For the same reason chat.update and chat.postMessage
// calls under one limit are made one at a time: a call already in flight
// when another gets its 429 would land inside the window too. (Both limits
// are low, about 50 updates a minute and one post a second per channel, so
// calling in parallel gains nothing.)
//
// chat.update is also kept inside Slack's limit by construction, not only
// by waiting out the 429s that going over it brings: every update spends a
// token of an app-wide budget (updateBudget), taken at the moment of the
// call, and an update that finds none is not made but handed back with the
// time to try again (a *laterError). The caller then shows the run's state
// as it is by that time, in one update however much changed meanwhile. The
// other methods of a published tier (slackTiers) are kept inside it the
// same way (tierBudget): a call waits for room in its tier, and an upload,
// which a step's message need not wait for, is handed back as a
// *laterError when the tier has none.
type sender struct {
	api      *slack.Client
	hooks    *http.Client // posts to response_urls
	metrics  *Metrics
	interval time.Duration
	updates  *updateBudget
	tiers    *tierBudget

	mu       sync.Mutex
	channels map[string]*channelPace
	blocked  map[string]time.Time // limit key -> no call before then (Retry-After)
	serial   map[string]*sync.Mutex
}

// transientErrors are the errors Slack answers with HTTP 200 and ok:false
// that a later call may not get: worth retrying, like a 5xx.
var transientErrors = map[string]bool{"internal_error": true, "fatal_error": true, "request_timeout": true,
	"service_unavailable": true}

func transient(err error) bool {
	var se slack.SlackErrorResponse
	return errors.As(err, &se) && transientErrors[se.Err]
}

// goneErrors say a message the bot posted is not there any more (deleted,
// or past the workspace's retention).
var goneErrors = map[string]bool{"message_not_found": true, "cant_update_message": true}

func gone(err error) bool {
	var se slack.SlackErrorResponse
	return errors.As(err, &se) && goneErrors[se.Err]
}

// serialMethods are the methods whose calls under one limit are made one
// at a time.
var serialMethods = map[string]bool{"chat.update": true, "chat.postMessage": true, "chat.postEphemeral": true,
	"files.getUploadURLExternal": true, "files.completeUploadExternal": true}

type channelPace struct {
	mu   sync.Mutex
	last time.Time
	// claim is until when a checkpoint turned away holds the channel's
	// next turn (turnFirst).
	claim time.Time
}

// postTurn is what a post or a share in a channel does when it is not the
// channel's turn yet.
type postTurn int

const (
	// turnWait waits for it: a person's command is being answered.
	turnWait postTurn = iota
	// turnLater returns a *laterError, so that a thread's sync never holds
	// a worker the other runs' checkpoints are waiting for.
	turnLater
	// turnFirst returns a *laterError too, and holds the channel's next
	// turn for it: a checkpoint's buttons go before the other posts and
	// files waiting for the channel.
	turnFirst
)

// claimHold is how long a checkpoint turned away holds its channel's next
// turn past its start: time for its sync to come back.
const claimHold = 500 * time.Millisecond

func newSender(api *slack.Client, m *Metrics, interval time.Duration, updates *updateBudget) *sender {
	return &sender{api: api, hooks: &http.Client{Timeout: 10 * time.Second}, metrics: m, interval: interval, updates: updates, tiers: newTierBudget(slackTiers),
		channels: map[string]*channelPace{},
		blocked:  map[string]time.Time{}, serial: map[string]*sync.Mutex{}}
}

// do calls fn until it succeeds, fails for good, or ctx ends; a 429 holds
// every call of method.
func (s *sender) do(ctx context.Context, method string, fn func() error) error {
	return s.limited(ctx, method, method, nil, fn)
}

// limited is do with the key of the rate limit a 429 applies to. When
// admit is given it is asked, just before each call and with the calls
// under key held, whether the call may be made now; when it answers a time
// instead, the call is not made and limited returns a *laterError.
func (s *sender) limited(ctx context.Context, method, key string, admit func(now time.Time) time.Time, fn func() error) error {
	return s.limitedHeld(ctx, method, key, admit, false, fn)
}

// limitedHeld is limited for a call that holds its first try's room in
// the method's tier already (held: see reserve); every other try waits
// for room, as every call of a tiered method does.
func (s *sender) limitedHeld(ctx context.Context, method, key string, admit func(now time.Time) time.Time, held bool, fn func() error) error {
	defer func() {
		if held {
			s.tiers.release(method)
		}
	}()
	one := s.serialMutex(method, key)
	backoff, limitBackoff := 500*time.Millisecond, time.Second
	for {
		if err := s.waitLimit(ctx, key); err != nil {
			return err
		}
		if !s.lockSerial(one, key) {
			continue
		}
		if err := admitted(admit); err != nil {
			unlockSerial(one)
			return err
		}
		if until := s.tierRoom(method, &held); !until.IsZero() {
			unlockSerial(one)
			if !sleep(ctx, time.Until(until)) {
				return ctx.Err()
			}
			continue
		}
		limited, err := s.call(method, key, fn, &limitBackoff)
		unlockSerial(one)
		if err == nil {
			return nil
		}
		if limited {
			if method == "chat.postMessage" {
				return err // post turns it into a *laterError
			}
			continue // the 429 holds key: waitLimit waits it out
		}
		wait, again := retryWait(err, &backoff)
		if !again {
			return err
		}
		if !sleep(ctx, wait) {
			return errors.Join(ctx.Err(), err)
		}
	}
}

// tierRoom holds room for a call of method in its tier, unless *held says
// the call holds some already (which it then spends), and returns the zero
// time; or returns when the tier has room again.
func (s *sender) tierRoom(method string, held *bool) time.Time {
	if *held {
		*held = false
		return time.Time{}
	}
	return s.tiers.take(time.Now(), method)
}

// reserve holds room for one call of each of methods in their tiers, all
// or none: the calls of one upload, which is made whole or not started.
// When one has none, it returns a *laterError.
func (s *sender) reserve(methods ...string) error {
	if until := s.tiers.take(time.Now(), methods...); !until.IsZero() {
		return &laterError{until}
	}
	return nil
}

// serialMutex is the mutex that makes the calls of method under key one at
// a time (see serialMethods); nil for a method called in parallel.
func (s *sender) serialMutex(method, key string) *sync.Mutex {
	if !serialMethods[method] {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	one := s.serial[key]
	if one == nil {
		one = &sync.Mutex{}
		s.serial[key] = one
	}
	return one
}

// lockSerial waits for one (when there is one) and reports whether the call
// may go ahead: false, with one given back, when a 429 arrived while the
// call waited its turn.
func (s *sender) lockSerial(one *sync.Mutex, key string) bool {
	if one == nil {
		return true
	}
	one.Lock()
	if s.isBlocked(key) {
		one.Unlock()
		return false
	}
	return true
}

// unlockSerial lets the next call under the same key go ahead.
func unlockSerial(one *sync.Mutex) {
	if one != nil {
		one.Unlock()
	}
}

// admitted asks admit, when given, whether the call may be made now; a
// time to try again instead is a *laterError.
func admitted(admit func(now time.Time) time.Time) error {
	if admit == nil {
		return nil
	}
	if until := admit(time.Now()); !until.IsZero() {
		return &laterError{until}
	}
	return nil
}

// call makes one call; when Slack answers 429 (limited), it holds the calls
// under key for the wait Slack asked, or, when it named none, for
// limitBackoff, which then doubles: never again at once into the same
// limit.
func (s *sender) call(method, key string, fn func() error, limitBackoff *time.Duration) (limited bool, err error) {
	s.metrics.call(method)
	s.tiers.madeAt(method, time.Now())
	err = fn()
	wait, said, ok := rateLimit(err)
	if !ok {
		return false, err
	}
	s.metrics.rateLimited(method)
	if !said {
		wait, *limitBackoff = *limitBackoff, min(2**limitBackoff, time.Minute)
	}
	s.block(key, time.Now().Add(max(wait, 100*time.Millisecond)))
	return true, err
}

// retryWait is how long to wait before calling again after err, a failure
// a later call may not get (a server error, a network failure, a transient
// Slack error); backoff then doubles. again is false for any other error.
func retryWait(err error, backoff *time.Duration) (wait time.Duration, again bool) {
	var sc slack.StatusCodeError
	var ne net.Error
	if errors.As(err, &sc) && sc.Code >= 500 || errors.As(err, &ne) || transient(err) {
		wait, *backoff = *backoff, min(*backoff*2, 30*time.Second)
		return wait, true
	}
	return 0, false
}

// rateLimit reports whether err is Slack's 429, and the wait its
// Retry-After asked for; said is false when the 429 came without one
// (slack-go then reports a plain status code error).
func rateLimit(err error) (wait time.Duration, said, ok bool) {
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		return rl.RetryAfter, true, true
	}
	var sc slack.StatusCodeError
	if errors.As(err, &sc) && sc.Code == http.StatusTooManyRequests {
		return 0, false, true
	}
	return 0, false, false
}

// block holds the calls under key until until.
func (s *sender) block(key string, until time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if until.After(s.blocked[key]) {
		s.blocked[key] = until
	}
}

func (s *sender) isBlocked(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Now().Before(s.blocked[key])
}

// waitLimit waits until no 429 holds the calls under key, or ctx ends.
func (s *sender) waitLimit(ctx context.Context, key string) error {
	for {
		s.mu.Lock()
		until, ok := s.blocked[key]
		if ok && !time.Now().Before(until) {
			delete(s.blocked, key)
		}
		s.mu.Unlock()
		wait := time.Until(until)
		if !ok || wait <= 0 {
			return nil
		}
		if !sleep(ctx, wait) {
			return ctx.Err()
		}
	}
}

// paced runs fn no sooner than the pacing interval after the last post to
// the same channel, nor inside a checkpoint's claim on the channel's turn
// unless fn posts that checkpoint; turn says whether to wait for the turn.
func (s *sender) paced(ctx context.Context, channel string, turn postTurn, fn func() error) error {
	s.mu.Lock()
	p, ok := s.channels[channel]
	if !ok {
		p = &channelPace{}
		s.channels[channel] = p
	}
	s.mu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	next := p.last.Add(s.interval)
	if turn != turnFirst && p.claim.After(next) {
		next = p.claim
	}
	if wait := time.Until(next); wait > 0 {
		switch turn {
		case turnFirst:
			p.claim = next.Add(claimHold)
			return &laterError{next}
		case turnLater:
			return &laterError{next}
		}
		if !sleep(ctx, wait) {
			return ctx.Err()
		}
	}
	if turn == turnFirst {
		p.claim = time.Time{}
	}
	err := fn()
	p.last = time.Now()
	return err
}

// post posts a message (in a thread when thread is set) and returns its ts,
// waiting for the channel's turn.
func (s *sender) post(ctx context.Context, channel, thread, text string, blocks []slack.Block, extra ...slack.MsgOption) (string, error) {
	return s.postInTurn(ctx, turnWait, channel, thread, text, blocks, extra...)
}

// postInTurn is post, with what to do when it is not the channel's turn
// yet (see paced).
func (s *sender) postInTurn(ctx context.Context, turn postTurn, channel, thread, text string, blocks []slack.Block, extra ...slack.MsgOption) (string, error) {
	opts := append([]slack.MsgOption{slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...)}, extra...)
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	key := "chat.postMessage " + channel
	var ts string
	err := s.paced(ctx, channel, turn, func() error {
		if until := s.blockedUntil(key); !until.IsZero() {
			return &laterError{until}
		}
		err := s.limited(ctx, "chat.postMessage", key, nil, func() error {
			var err error
			_, ts, err = s.api.PostMessageContext(ctx, channel, opts...)
			return err
		})
		if _, _, limited := rateLimit(err); limited {
			return &laterError{s.blockedUntil(key)}
		}
		return err
	})
	return ts, err
}

// laterError is a call not made because a rate limit holds until a time
// (Slack's for posts to a channel, the update budget for chat.update): the
// caller tries again then, and meanwhile serves other channels and
// messages instead of waiting.
type laterError struct{ until time.Time }

func (e *laterError) Error() string {
	return fmt.Sprintf("rate limited until %s", e.until.Format(time.RFC3339Nano))
}

// blockedUntil is when a 429 stops holding the calls under key; zero when
// none does.
func (s *sender) blockedUntil(key string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if until := s.blocked[key]; time.Now().Before(until) {
		return until
	}
	return time.Time{}
}

// update replaces a message's text and blocks, or returns a *laterError
// when the update budget has no room for it at its priority now.
func (s *sender) update(ctx context.Context, channel, ts, text string, blocks []slack.Block, prio updatePriority, extra ...slack.MsgOption) error {
	msg := channel + "/" + ts
	admit := func(now time.Time) time.Time {
		until := s.updates.take(msg, prio, now)
		if !until.IsZero() {
			s.metrics.updateDeferred()
		}
		return until
	}
	return s.limited(ctx, "chat.update", "chat.update", admit, func() error {
		opts := append([]slack.MsgOption{slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...)}, extra...)
		_, _, _, err := s.api.UpdateMessageContext(ctx, channel, ts, opts...)
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

// upload attaches a file to a thread, in Slack's three steps, each retried
// on its own: files.getUploadURLExternal, the bytes to the upload URL, and
// files.completeUploadExternal, which shares the file in the thread. A
// share whose answer was lost (a network error) may have happened: before
// sharing the same file again, files.info says whether it is in the
// channel already, so one artifact is never shared twice, and a retry
// never uploads the bytes again. An upload is made whole or not started:
// when either tier has no room for it, or it is not the channel's turn
// and turn says not to wait for it (paced), it returns a *laterError.
func (s *sender) upload(ctx context.Context, turn postTurn, channel, thread, name string, body []byte) error {
	if err := s.reserve(uploadMethods...); err != nil {
		return err
	}
	started := false
	defer func() {
		if !started { // not the channel's turn, or ctx ended
			s.tiers.release(uploadMethods...)
		}
	}()
	return s.paced(ctx, channel, turn, func() error {
		started = true
		u, err := s.uploadBytes(ctx, name, body)
		if err != nil {
			return err
		}
		tried := false
		return s.limitedHeld(ctx, "files.completeUploadExternal", "files.completeUploadExternal", nil, true, func() error {
			if tried {
				if shared, err := s.sharedIn(ctx, u.FileID, channel); err != nil || shared {
					return err
				}
			}
			tried = true
			_, err := s.api.CompleteUploadExternalContext(ctx, slack.CompleteUploadExternalParameters{
				Files: []slack.FileSummary{{ID: u.FileID, Title: name}}, Channel: channel, ThreadTimestamp: thread})
			return err
		})
	})
}

// uploadPrivate uploads a file without sharing it anywhere (Slack keeps
// it private to the app until a message carries it: chat.postMessage's or
// chat.update's file_ids) and returns its id. Each of the three steps is
// retried on its own; finishing an upload again shares nothing. Like
// upload, it returns a *laterError when its tiers have no room for it.
func (s *sender) uploadPrivate(ctx context.Context, name string, body []byte) (string, error) {
	if err := s.reserve(uploadMethods...); err != nil {
		return "", err
	}
	u, err := s.uploadBytes(ctx, name, body)
	if err != nil {
		return "", err
	}
	err = s.limitedHeld(ctx, "files.completeUploadExternal", "files.completeUploadExternal", nil, true, func() error {
		_, err := s.api.CompleteUploadExternalContext(ctx, slack.CompleteUploadExternalParameters{
			Files: []slack.FileSummary{{ID: u.FileID, Title: name}}})
		return err
	})
	return u.FileID, err
}

// uploadBytes makes the first two of an upload's three steps, each
// retried on its own: files.getUploadURLExternal, then the bytes to the
// URL it gave. Finishing the upload is the caller's, with the room held
// for it (reserve), which is given back when the upload stops here.
func (s *sender) uploadBytes(ctx context.Context, name string, body []byte) (u *slack.GetUploadURLExternalResponse, err error) {
	defer func() {
		if err != nil {
			s.tiers.release("files.completeUploadExternal")
		}
	}()
	err = s.limitedHeld(ctx, "files.getUploadURLExternal", "files.getUploadURLExternal", nil, true, func() error {
		var err error
		u, err = s.api.GetUploadURLExternalContext(ctx, slack.GetUploadURLExternalParameters{FileName: name, FileSize: len(body)})
		return err
	})
	if err != nil {
		return nil, err
	}
	err = s.do(ctx, "upload_url", func() error {
		return s.api.UploadToURL(ctx, slack.UploadToURLParameters{UploadURL: u.UploadURL, Content: string(body), Filename: name})
	})
	return u, err
}

// uploadMethods are the Web API calls of an upload: room for both is held
// before it starts.
var uploadMethods = []string{"files.getUploadURLExternal", "files.completeUploadExternal"}

// sharedIn reports whether a file is shared in a channel; a *laterError
// when files.info's tier has no room.
func (s *sender) sharedIn(ctx context.Context, file, channel string) (bool, error) {
	if err := s.reserve("files.info"); err != nil {
		return false, err
	}
	s.metrics.call("files.info")
	s.tiers.madeAt("files.info", time.Now())
	f, _, _, err := s.api.GetFileInfoContext(ctx, file, 0, 0)
	if err != nil {
		return false, err
	}
	return slices.Contains(f.Channels, channel) || slices.Contains(f.Groups, channel) || slices.Contains(f.IMs, channel), nil
}

// openView opens a modal on the trigger of a click that arrived at
// received, and returns the view's id. Slack takes a trigger for 3 s from
// the click: views.open is tried again (after a 429, a 5xx or a network
// failure) only while less than openCutoff has passed since then, and a
// call still waiting when the trigger dies is given up.
func (s *sender) openView(ctx context.Context, trigger string, view slack.ModalViewRequest, received time.Time) (string, error) {
	ctx, cancel := context.WithDeadline(ctx, received.Add(triggerLife))
	defer cancel()
	var id string
	err := s.do(ctx, "views.open", func() error {
		if time.Since(received) > openCutoff {
			return errTriggerSpent
		}
		resp, err := s.api.OpenViewContext(ctx, trigger, view)
		if err == nil {
			id = resp.ID
		}
		return err
	})
	return id, err
}

// openCutoff is how long after a click views.open is still tried: past
// it, a call would reach Slack too close to the end of the trigger's life.
const openCutoff = 2500 * time.Millisecond

// errTriggerSpent is a views.open not made because the click's trigger
// is (nearly) dead.
var errTriggerSpent = errors.New("the click's trigger_id is too old to open a modal")

// updateView replaces the content of an open modal.
func (s *sender) updateView(ctx context.Context, viewID string, view slack.ModalViewRequest) error {
	return s.do(ctx, "views.update", func() error {
		_, err := s.api.UpdateViewContext(ctx, view, "", "", viewID)
		return err
	})
}

// statusMethod is the Web API method of a thread's loading status.
const statusMethod = "assistant.threads.setStatus"

// setStatus shows a loading status in a thread, rotating through loading;
// an empty status clears it. Its lines come from ThreadStatus or
// shortStatus, built within Slack's limit by statusText. It is a
// courtesy, never worth holding a
// thread's messages for: it is made once, and a 429 (Retry-After, or a
// second when Slack gives none) holds the next ones, answered with a
// *laterError rather than waited out.
func (s *sender) setStatus(ctx context.Context, channel, thread, status string, loading []string) error {
	if until := s.blockedUntil(statusMethod); !until.IsZero() {
		return &laterError{until}
	}
	s.metrics.call(statusMethod)
	err := s.api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{
		ChannelID: channel, ThreadTS: thread, Status: status, LoadingMessages: loading})
	if wait, _, limited := rateLimit(err); limited {
		s.metrics.rateLimited(statusMethod)
		until := time.Now().Add(max(wait, time.Second))
		s.block(statusMethod, until)
		return &laterError{until}
	}
	return err
}

// sessionMethod is the Web API method of a thread's agent session.
const sessionMethod = "agents.sessions.setStatus"

// setSession sets the status of a thread's agent session, creating the
// session, titled title and started by initiator, if it has none. Like
// setStatus it is made once, and a 429 is answered with a *laterError.
func (s *sender) setSession(ctx context.Context, channel, thread, status, title, initiator string) error {
	if until := s.blockedUntil(sessionMethod); !until.IsZero() {
		return &laterError{until}
	}
	s.metrics.call(sessionMethod)
	p := slack.AgentSessionSetStatusParameters{Status: status, ChannelID: channel, ThreadTS: thread}
	if title != "" {
		p.Title, p.InitiatorUserID = title, initiator
	}
	_, err := s.api.SetAgentSessionStatusContext(ctx, p)
	if wait, _, limited := rateLimit(err); limited {
		s.metrics.rateLimited(sessionMethod)
		until := time.Now().Add(max(wait, time.Second))
		s.block(sessionMethod, until)
		return &laterError{until}
	}
	return err
}

// once makes a call that is a courtesy, like setStatus: made once, and a
// 429 holds the method's next calls, answered with a *laterError.
func (s *sender) once(method string, fn func() error) error {
	if until := s.blockedUntil(method); !until.IsZero() {
		return &laterError{until}
	}
	if err := s.reserve(method); err != nil {
		return err
	}
	s.metrics.call(method)
	s.tiers.madeAt(method, time.Now())
	err := fn()
	if wait, _, limited := rateLimit(err); limited {
		s.metrics.rateLimited(method)
		until := time.Now().Add(max(wait, time.Second))
		s.block(method, until)
		return &laterError{until}
	}
	return err
}

// startStream starts a streamed message in a thread, answering user of
// team, and returns its ts.
func (s *sender) startStream(ctx context.Context, channel, thread, user, team string, chunks ...slack.StreamChunk) (string, error) {
	var ts string
	err := s.once("chat.startStream", func() error {
		var err error
		_, ts, err = s.api.StartStreamContext(ctx, channel, slack.MsgOptionTS(thread),
			slack.MsgOptionRecipientUserID(user), slack.MsgOptionRecipientTeamID(team), slack.MsgOptionChunks(chunks...))
		return err
	})
	return ts, err
}

// appendStream adds chunks to a streamed message.
func (s *sender) appendStream(ctx context.Context, channel, ts string, chunks ...slack.StreamChunk) error {
	return s.once("chat.appendStream", func() error {
		_, _, err := s.api.AppendStreamContext(ctx, channel, ts, slack.MsgOptionChunks(chunks...))
		return err
	})
}

// stopStream ends a streamed message with its last chunks.
func (s *sender) stopStream(ctx context.Context, channel, ts string, chunks ...slack.StreamChunk) error {
	return s.once("chat.stopStream", func() error {
		_, _, err := s.api.StopStreamContext(ctx, channel, ts, slack.MsgOptionChunks(chunks...))
		return err
	})
}
