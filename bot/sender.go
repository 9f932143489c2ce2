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
// as it is by that time, in one update however much changed meanwhile.
type sender struct {
	api      *slack.Client
	hooks    *http.Client // posts to response_urls
	metrics  *Metrics
	interval time.Duration
	updates  *updateBudget

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
}

func newSender(api *slack.Client, m *Metrics, interval time.Duration, updates *updateBudget) *sender {
	return &sender{api: api, hooks: &http.Client{Timeout: 10 * time.Second}, metrics: m, interval: interval, updates: updates, channels: map[string]*channelPace{},
		blocked: map[string]time.Time{}, serial: map[string]*sync.Mutex{}}
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
	one := s.serialLock(method, key)
	backoff, limitBackoff := 500*time.Millisecond, time.Second
	for {
		if err := s.waitLimit(ctx, key); err != nil {
			return err
		}
		if !s.takeTurn(one, key) {
			continue
		}
		if err := admitted(admit); err != nil {
			giveTurn(one)
			return err
		}
		limited, err := s.call(method, key, fn, &limitBackoff)
		giveTurn(one)
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

// serialLock is the lock that makes the calls of method under key one at
// a time (see serialMethods); nil for a method called in parallel.
func (s *sender) serialLock(method, key string) *sync.Mutex {
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

// takeTurn waits for one (when there is one) and reports whether the call
// may go ahead: false, with one given back, when a 429 arrived while the
// call waited its turn.
func (s *sender) takeTurn(one *sync.Mutex, key string) bool {
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

// giveTurn gives back a turn takeTurn took.
func giveTurn(one *sync.Mutex) {
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
	if wait := time.Until(p.last.Add(s.interval)); wait > 0 && !sleep(ctx, wait) {
		return ctx.Err()
	}
	err := fn()
	p.last = time.Now()
	return err
}

// post posts a message (in a thread when thread is set) and returns its ts.
func (s *sender) post(ctx context.Context, channel, thread, text string, blocks []slack.Block, extra ...slack.MsgOption) (string, error) {
	opts := append([]slack.MsgOption{slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...)}, extra...)
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	key := "chat.postMessage " + channel
	var ts string
	err := s.paced(ctx, channel, func() error {
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
func (s *sender) update(ctx context.Context, channel, ts, text string, blocks []slack.Block, prio updatePriority) error {
	msg := channel + "/" + ts
	admit := func(now time.Time) time.Time {
		until := s.updates.take(msg, prio, now)
		if !until.IsZero() {
			s.metrics.updateDeferred()
		}
		return until
	}
	return s.limited(ctx, "chat.update", "chat.update", admit, func() error {
		_, _, _, err := s.api.UpdateMessageContext(ctx, channel, ts, slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...))
		return err
	})
}

// updatePriority orders the updates that wait for the budget.
type updatePriority int

const (
	// updateCheckpoint shows a step waiting for a decision: its buttons.
	updateCheckpoint updatePriority = iota
	// updateDecision shows a decision a person just took: whoever
	// clicked is looking at the message for it.
	updateDecision
	// updateState shows another change of state: a step started, a
	// notice that has moved on.
	updateState
	// updateMinor refreshes a message: the run's header.
	updateMinor
)

// updateBudget is the app-wide budget of chat.update calls: a token
// bucket holding up to burst tokens, refilled at (limit-burst)/window, so
// that no window-long span sees more than limit updates, whatever the load.
//
// When it runs low, a checkpoint goes first, then a person's decision: a
// change of state leaves one token in the bucket and a minor update two
// (reserve), and an update waits behind the updates of its own priority or
// higher that were turned away before it. A minor
// update also waits interval after the last update of the same message,
// so that a burst of changes is shown in one update; the others are never
// held back that way, as each comes from a person's click or a step's end.
type updateBudget struct {
	mu       sync.Mutex
	rate     float64 // tokens a second
	burst    float64
	interval time.Duration
	tokens   float64
	at       time.Time            // when tokens was counted
	last     map[string]time.Time // message -> its last update
	told     map[string]turn      // message turned away -> when it was told to come back
	// keepTurns says that a message turned away keeps its turn: true
	// when the same bot asks again for it (see New).
	keepTurns bool
}

// reserve is how many tokens an update of p leaves in the bucket for the
// updates above it: none for a checkpoint or a decision, which people
// wait for.
func (p updatePriority) reserve() float64 {
	return float64(max(0, p-updateDecision))
}

// abandoned is how long past its turn a message turned away keeps its
// place: one that never came back (its run ended) stops holding others.
const abandoned = 30 * time.Second

// turn is when an update turned away was told to come back.
type turn struct {
	at   time.Time
	prio updatePriority
}

func newUpdateBudget(limit, burst int, window, interval time.Duration) *updateBudget {
	return &updateBudget{
		rate: float64(limit-burst) / window.Seconds(), burst: float64(burst), interval: interval,
		tokens: float64(burst), last: map[string]time.Time{}, told: map[string]turn{}, keepTurns: true,
	}
}

// take spends a token on an update of msg at now and returns the zero
// time, or, when the update may not be made yet, returns when to try again.
func (u *updateBudget) take(msg string, prio updatePriority, now time.Time) time.Time {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.at.IsZero() {
		u.tokens = min(u.burst, u.tokens+now.Sub(u.at).Seconds()*u.rate)
	}
	u.at = now
	need := 1 + min(prio.reserve(), u.burst-1)
	earliest := now
	if last, ok := u.last[msg]; ok && prio == updateMinor && now.Before(last.Add(u.interval)) {
		earliest = last.Add(u.interval)
	}
	// Updates turned away earlier go first: a request takes a token only
	// when no other message of its priority or higher holds an earlier
	// turn (a fresh request holds none), so under a long overload a
	// checkpoint waits its turn instead of losing it to newer ones.
	mine, waiting := u.told[msg]
	ahead := u.turnAhead(msg, prio, now)
	if u.tokens >= need && !earliest.After(now) && !ahead {
		u.tokens--
		u.last[msg] = now
		delete(u.told, msg)
		u.prune(now)
		return time.Time{}
	}
	if u.tokens >= need && !ahead {
		return earliest
	}
	// A message asked about again keeps its turn (also when it comes back
	// a little late), unless it has become more urgent.
	if waiting && mine.prio <= prio {
		if mine.at.After(now) {
			return mine.at
		}
		return now.Add(time.Duration(float64(time.Second) / u.rate))
	}
	at := u.comeBack(msg, prio, need, earliest, now)
	if u.keepTurns {
		u.told[msg] = turn{at, prio}
	}
	return at
}

// turnAhead reports whether another message of prio or higher holds a
// turn before msg's (any turn, when msg holds none) that is not
// abandoned.
func (u *updateBudget) turnAhead(msg string, prio updatePriority, now time.Time) bool {
	mine, waiting := u.told[msg]
	for m, t := range u.told {
		if m != msg && t.prio <= prio && (!waiting || t.at.Before(mine.at)) && now.Sub(t.at) < abandoned {
			return true
		}
	}
	return false
}

// comeBack is when an update of msg turned away at now is told to come
// back: updates turned away together are told to come back one token
// apart, behind those of their priority or higher still waiting, rather
// than all at once for the same token; never before earliest.
func (u *updateBudget) comeBack(msg string, prio updatePriority, need float64, earliest, now time.Time) time.Time {
	queued := 0
	for m, t := range u.told {
		if m != msg && t.at.After(now) && t.prio <= prio {
			queued++
		}
	}
	at := now.Add(time.Duration((need - u.tokens + float64(queued)) / u.rate * float64(time.Second)))
	if tick := now.Add(time.Duration(float64(time.Second) / u.rate)); at.Before(tick) {
		at = tick // never sooner than a token can come back
	}
	if at.Before(earliest) {
		at = earliest
	}
	return at
}

// settled gives up msg's turn: the message shows what it should without
// a chat.update (an earlier update or a click's response_url showed it).
// A turn left behind would hold every update of its priority or lower
// until it is abandoned.
func (u *updateBudget) settled(msg string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.told, msg)
}

// posted counts a message's post as its last update, so that a minor
// update of a message just posted (the run's header, whose first step
// started as it was posted) waits the interval like any other and shows
// the changes of that second at once.
func (u *updateBudget) posted(msg string, now time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.last[msg] = now
	u.prune(now)
}

// prune forgets messages whose interval is long over, so that a bot that
// runs for months does not keep every message it ever updated.
func (u *updateBudget) prune(now time.Time) {
	if len(u.last)+len(u.told) < 1024 {
		return
	}
	for k, t := range u.last {
		if now.Sub(t) > u.interval {
			delete(u.last, k)
		}
	}
	for k, t := range u.told {
		if now.Sub(t.at) > abandoned {
			delete(u.told, k)
		}
	}
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
// never uploads the bytes again.
func (s *sender) upload(ctx context.Context, channel, thread, name string, body []byte) error {
	return s.paced(ctx, channel, func() error {
		var u *slack.GetUploadURLExternalResponse
		err := s.do(ctx, "files.getUploadURLExternal", func() error {
			var err error
			u, err = s.api.GetUploadURLExternalContext(ctx, slack.GetUploadURLExternalParameters{FileName: name, FileSize: len(body)})
			return err
		})
		if err != nil {
			return err
		}
		err = s.do(ctx, "upload_url", func() error {
			return s.api.UploadToURL(ctx, slack.UploadToURLParameters{UploadURL: u.UploadURL, Content: string(body), Filename: name})
		})
		if err != nil {
			return err
		}
		tried := false
		return s.do(ctx, "files.completeUploadExternal", func() error {
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

// sharedIn reports whether a file is shared in a channel.
func (s *sender) sharedIn(ctx context.Context, file, channel string) (bool, error) {
	s.metrics.call("files.info")
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
