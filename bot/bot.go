package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
	"golang.org/x/sync/errgroup"

	"github.com/gonogo/gonogo/engine"
)

// Runs is the slice of the engine that starts runs and takes decisions.
type Runs interface {
	Start(ctx context.Context, p engine.Plan, opt engine.StartOptions) (*engine.Run, error)
	Abort(ctx context.Context, id engine.RunID, actor string) (*engine.Run, error)
	Decide(ctx context.Context, id engine.RunID, d engine.Decision, body []byte) (*engine.Run, error)
	Cancel(ctx context.Context, id engine.RunID, step, attempt int, actor string) error
	Pause(ctx context.Context, id engine.RunID, actor string) (*engine.Run, error)
	Unpause(ctx context.Context, id engine.RunID, actor string, m engine.Mode) (*engine.Run, error)
	Resume(ctx context.Context, id engine.RunID, mode engine.Mode) (*engine.Run, error)
	// StartAwaited and CancelAwaited start, or drop, a run recorded to
	// await Start (engine.StartOptions.AwaitStart): a preview's buttons.
	StartAwaited(ctx context.Context, id engine.RunID, actor, key string) (*engine.Run, error)
	CancelAwaited(ctx context.Context, id engine.RunID, actor string) (*engine.Run, error)
	// MayDecide refuses, with an error wrapping engine.ErrForbidden, a
	// person who may not decide on r.
	MayDecide(ctx context.Context, r *engine.Run, user string) error
}

// Reader is the slice of the engine that reads runs back.
type Reader interface {
	Load(ctx context.Context, id engine.RunID) (*engine.Run, error)
	Artifact(ctx context.Context, id engine.RunID, step, attempt int) ([]byte, error)
	List(ctx context.Context) ([]engine.RunSummary, error)
	// Stats computes gonogo stats over every run (engine.ReadStats).
	Stats(ctx context.Context, q engine.StatsQuery) (engine.Stats, error)
}

// History is the slice of the engine a run's audit trail is built from:
// its journal and every version of each artifact.
type History interface {
	Journal(ctx context.Context, id engine.RunID) ([]engine.Event, error)
	ArtifactVersions(ctx context.Context, id engine.RunID, step, attempt int) ([][]byte, error)
}

// Engine is everything the bot asks of the engine: runs, reading them and
// their history, and the notes it keeps with a run (where its messages
// are).
type Engine interface {
	Runs
	Reader
	History
	Notes(ctx context.Context, id engine.RunID) (map[string]string, error)
	SetNotes(ctx context.Context, id engine.RunID, set map[string]string) error
}

// Bot is the Slack front end. It acknowledges every Socket Mode envelope
// at once, once it is kept in the inbox (Config.Inbox; what the inbox
// cannot keep, see arrive), and hands the work
// to a queue, so Slack never waits on gonogo and nothing acknowledged is
// lost; it keeps each run's thread in step with the run (the journal is
// its outbox: what the thread does not show yet is posted, with retries,
// until Slack accepts it, also after a restart).
type Bot struct {
	cfg   Config
	eng   Engine
	api   *slack.Client
	links atomic.Int64 // Socket Mode connections open or opening (see links.go)
	open  linkSet      // the same links, for choosing where to acknowledge
	send  *sender

	work     *queue[envelope]
	finished *queue[uint64] // inbox ids of envelopes carried out, to mark done
	syncs    *queue[engine.RunID]
	replies  *queue[func(context.Context)] // messages to one person: never in a decision's way

	mu       sync.Mutex
	syncing  map[engine.RunID]*syncState
	progress map[engine.RunID]map[int]engine.Progress // each running step's latest live progress
	statuses map[engine.RunID]shownStatus             // the loading status each run's thread shows
	// sessionsOff is set once the workspace refused agent sessions,
	// streamsOff once it refused streaming.
	sessionsOff, streamsOff bool
	streams                 map[engine.RunID]map[int]liveStream // each running step's stream
	rendered                map[string]string                   // message key -> what was last sent, to skip identical updates
	seen                    *recent                             // envelope ids already handled
	groups                  map[string]groupCache
	botUser                 string
	team                    string // the workspace the bot is installed in
	conn                    conn   // the state of the connection to Slack, for health checks
	// replyURLs holds the response_url of each person's latest slash
	// command, by channel: it answers them where the bot cannot post.
	replyURLs map[string]string
	// clickReplies holds the response_url of the latest click on each
	// message, by channel/ts, while Slack lets it change the message
	// (sync_reply.go).
	clickReplies map[string]clickReply
	ready        chan struct{} // closed once the bot knows who it is in Slack (Ready)
}

type envelope struct {
	evt      socketmode.Event
	received time.Time
	kept     uint64 // its id in the inbox; 0 when not kept
	replayed bool   // kept before a restart, carried out after it
	// answered is set when the person was answered in full as the
	// envelope arrived (a refusal or help in a command's ack, a field
	// error in a submission's, a refusal of a mention): there is nothing
	// more to carry out or tell.
	answered bool
	// opened is set when the modal a click asks for was opened as it
	// arrived; view is that modal's id, "" when Slack did not open it.
	opened bool
	view   string
	// tries counts the times an envelope the inbox does not hold was
	// carried out and asked to be carried out again (carryAgain).
	tries int
}

type syncState struct {
	queued, running, dirty bool
	retry                  time.Duration // wait before syncing again after a failure
	lastProgress           time.Time
	progressTimer          *time.Timer
	wake                   *time.Timer // syncs the run again once a rate limit allows
	wakeAt                 time.Time
}

type groupCache struct {
	members []string
	fetched time.Time
}

// New checks the configuration and returns a bot; nothing connects until
// Run. A missing or malformed token is an error wrapping ErrToken.
func New(cfg Config, eng Engine) (*Bot, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	// A hung connection must not hold every update behind it.
	opts := []slack.Option{slack.OptionAppLevelToken(cfg.AppToken), slack.OptionHTTPClient(&http.Client{Timeout: 30 * time.Second})}
	if cfg.APIURL != "" {
		opts = append(opts, slack.OptionAPIURL(cfg.APIURL))
	}
	api := slack.New(cfg.BotToken, opts...)
	updates := newUpdateBudget(cfg.UpdateLimit, cfg.UpdateBurst, cfg.UpdateWindow, cfg.MessageUpdateInterval)
	// A run's next sync on a cluster may be made by another replica: a
	// turn kept here for one of its messages would only hold this
	// replica's other updates until it was abandoned.
	updates.keepTurns = !cfg.ScheduledSyncs
	b := &Bot{
		cfg: cfg, eng: eng, api: api,
		send:     newSender(api, cfg.Metrics, cfg.PostInterval, updates),
		work:     newQueue[envelope](),
		finished: newQueue[uint64](),
		syncs:    newQueue[engine.RunID](),
		replies:  newQueue[func(context.Context)](),
		syncing:  map[engine.RunID]*syncState{}, progress: map[engine.RunID]map[int]engine.Progress{},
		statuses: map[engine.RunID]shownStatus{},
		rendered: map[string]string{}, seen: newRecent(10000), groups: map[string]groupCache{},
		replyURLs: map[string]string{}, clickReplies: map[string]clickReply{},
		ready: make(chan struct{}),
	}
	return b, nil
}

// Ready is closed once Run has asked Slack who the bot is and in which
// workspace: what it carries out for others (SyncThread, CarryOut) must
// wait for it, as the envelopes it receives do.
func (b *Bot) Ready() <-chan struct{} { return b.ready }

// Metrics returns the bot's metrics.
func (b *Bot) Metrics() *Metrics { return b.cfg.Metrics }

// Run connects to Slack and serves until ctx ends. The engine's store must
// be open (and recovered) before Run is called, so a click that arrives the
// instant the bot connects finds its run.
func (b *Bot) Run(ctx context.Context) error {
	if err := b.authenticate(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	close(b.ready)
	// What was acknowledged before a restart and not carried out comes
	// first, ahead of anything Slack sends on the new connection.
	b.replay(ctx)
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return b.connections(ctx) })
	for range 4 {
		g.Go(func() error { b.handleLoop(ctx); return nil })
		g.Go(func() error { b.syncLoop(ctx); return nil })
	}
	for range 2 {
		g.Go(func() error { b.replyLoop(ctx); return nil })
	}
	if !b.cfg.ScheduledSyncs {
		g.Go(func() error { return b.catchUp(ctx) })
	}
	if b.cfg.Inbox != nil {
		g.Go(func() error { b.doneLoop(ctx); return nil })
	}
	err := g.Wait()
	if b.cfg.Inbox != nil {
		// What the handlers finished while stopping.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
		b.markDone(fctx, b.finished.drain())
		cancel()
	}
	return err
}

// refusedToken are the errors with which Slack refuses a token, and after
// which slack-go's Socket Mode client stops for good.
var refusedToken = map[string]bool{
	"invalid_auth": true, "not_authed": true, "account_inactive": true, "token_revoked": true,
}

// consume is the Socket Mode loop: it acknowledges each envelope before
// anything else, then hands it off. An envelope that asks for work is
// handed to arrive, in a goroutine of its own, so that envelopes arriving
// together share the inbox's fsync rather than queue for one each, and a
// modal opened for one click never waits for another. It never blocks on
// Slack or the runs.
//
// It reads the link's events until the link's client has stopped
// (stopped), then takes in what the client had read and not yet handed
// over: Slack may retire the link between the reading of an envelope and
// its acknowledgement, and an interaction or a slash command read and left
// unacknowledged is lost for good. ctx is the bot's: it ends only when the
// bot stops.
func (b *Bot) consume(ctx context.Context, l *link, stopped <-chan struct{}) error {
	var keeping sync.WaitGroup
	defer keeping.Wait()
	take := func(evt socketmode.Event) {
		now := time.Now()
		if worthKeeping(evt) {
			b.work.expect()
			keeping.Go(func() { b.arrive(ctx, l, evt, now) })
			return
		}
		b.ack(ctx, l, evt, now)
		b.linkChanged(l, evt)
	}
	for {
		select {
		case <-stopped:
			for {
				select {
				case evt := <-l.sm.Events:
					take(evt)
				default:
					return nil
				}
			}
		case evt := <-l.sm.Events:
			take(evt)
		}
	}
}

// ackOn acknowledges envelope id, which came on link from, with payload
// (nil for none) on the link that will write it (ackLink).
func (b *Bot) ackOn(ctx context.Context, from *link, id string, payload any) error {
	return b.open.ackLink(from).sm.AckCtx(ctx, id, payload)
}

// ack acknowledges an envelope that asks for no work, received at now.
func (b *Bot) ack(ctx context.Context, l *link, evt socketmode.Event, now time.Time) {
	switch {
	case evt.Request != nil && evt.Request.EnvelopeID != "":
		_ = b.ackOn(ctx, l, evt.Request.EnvelopeID, nil)
		b.cfg.Metrics.acked(time.Since(now))
	case evt.Type == socketmode.EventTypeErrorBadMessage:
		if bad, ok := evt.Data.(*socketmode.ErrorBadMessage); ok {
			b.ackUnreadable(ctx, l, bad, now)
		}
	}
}

// ackUnreadable acknowledges an envelope slack-go could not parse, from
// its raw envelope_id, or Slack redelivers it.
func (b *Bot) ackUnreadable(ctx context.Context, l *link, bad *socketmode.ErrorBadMessage, now time.Time) {
	var raw struct {
		EnvelopeID string `json:"envelope_id"`
	}
	if json.Unmarshal(bad.Message, &raw) == nil && raw.EnvelopeID != "" {
		_ = b.ackOn(ctx, l, raw.EnvelopeID, nil)
		b.cfg.Metrics.acked(time.Since(now))
	}
	b.cfg.Log.Warn("Slack sent an envelope gonogo cannot read", "err", bad.Cause)
}

// linkChanged follows the events slack-go sends about the link itself:
// hello, connected, and the ways it is lost. A stopped link's client has
// nothing more to say about Slack (a failed reconnection is only its
// stopping).
func (b *Bot) linkChanged(l *link, evt socketmode.Event) {
	select {
	case <-l.ended:
		l.up.Store(false)
		return
	default:
	}
	switch evt.Type {
	case socketmode.EventTypeHello:
		l.up.Store(true)
		b.hello(evt.Request)
		l.sayHello(evt.Request)
	case socketmode.EventTypeConnected:
		b.cfg.Metrics.setConnected(true)
		b.conn.succeeded()
		b.cfg.Log.Info("connected to Slack")
	case socketmode.EventTypeConnectionError:
		l.up.Store(false)
		if l.retired.Load() {
			l.cancel()
			return
		}
		b.cfg.Metrics.setConnected(false)
		if ce, ok := evt.Data.(*slack.ConnectionErrorEvent); ok && ce.ErrorObj != nil {
			b.noteFailure("apps.connections.open", ce.ErrorObj, ce.Backoff)
		}
	case socketmode.EventTypeConnecting, socketmode.EventTypeDisconnect:
		l.up.Store(false)
		if l.retired.Load() {
			// Slack dropped a link the next one has replaced:
			// it ends here instead of reconnecting.
			l.cancel()
			return
		}
		b.cfg.Metrics.setConnected(false)
	case socketmode.EventTypeInvalidAuth:
		// slack-go sends this for an HTTP 404 from
		// apps.connections.open, then gives up; socketMode logs
		// that and tries again.
		l.up.Store(false)
		b.cfg.Metrics.setConnected(false)
	}
}

// handleLoop carries out acknowledged envelopes. Slack never redelivers an
// envelope once it is acknowledged, so when the bot is told to stop, what
// is still queued is carried out, within shutdownGrace, rather than lost;
// what is cut off stays in the inbox for the next start. An envelope is
// marked done in the inbox only once it was carried out in full.
func (b *Bot) handleLoop(ctx context.Context) {
	work, done := lingering(ctx, shutdownGrace)
	defer done()
	for {
		env, ok := b.work.pop(ctx) // queued envelopes come out even after ctx ends
		if !ok || work.Err() != nil {
			return
		}
		switch {
		case env.evt.Request != nil && !b.seen.add(env.evt.Request.EnvelopeID):
			// A redelivery of an envelope already handled.
		case b.carriedOut(work, env):
			// Kept before a restart, or sent again by Slack, and applied
			// already: it is not applied twice, and nobody is told twice.
		default:
			hctx, c := withCarrying(work, env.replayed)
			hctx, cancel := b.handleLimit(hctx)
			b.handleSafely(hctx, env)
			cancel()
			b.logHandled(env, c)
			if c.again {
				// Left in the inbox, to be carried out again (on a
				// cluster, by whichever replica takes it); one the
				// inbox does not hold, by this replica.
				if env.evt.Request != nil {
					b.seen.forget(env.evt.Request.EnvelopeID)
				}
				if env.kept == 0 {
					b.carryAgain(env)
				}
				continue
			}
		}
		if work.Err() == nil {
			b.done(env)
		}
	}
}

// logHandled says, at debug level, that an envelope was handled.
func (b *Bot) logHandled(env envelope, c *carrying) {
	if env.evt.Request != nil {
		b.cfg.Log.Debug("envelope handled", "envelope", env.evt.Request.EnvelopeID, "type", env.evt.Request.Type,
			"again", c.again, "since", time.Since(env.received).Round(time.Millisecond))
	}
}

// handleSafely carries out one envelope; a handler that panics is logged
// (never the payload) and the envelope counts as carried out, so a kept
// envelope that cannot be handled does not stop every later start.
func (b *Bot) handleSafely(ctx context.Context, env envelope) {
	defer func() {
		if p := recover(); p != nil {
			b.cfg.Log.Error("handling an envelope failed; it is dropped", "type", env.evt.Type, "panic", fmt.Sprint(p))
		}
	}()
	b.handle(ctx, env)
}

// replyLoop sends the messages meant for one person (refusals, help,
// "this step has moved on"), apart from the handlers, so a person's
// decision never waits behind a reply that Slack is rate-limiting.
func (b *Bot) replyLoop(ctx context.Context) {
	for {
		send, ok := b.replies.pop(ctx)
		if !ok || ctx.Err() != nil {
			return
		}
		send(ctx)
	}
}

// Notify is the engine's notifier: every committed change of a Slack run
// brings its thread up to date; live progress, which the thread's loading
// status shows, is coalesced to one sync a ProgressInterval for each run.
func (b *Bot) Notify(n engine.Notice) {
	if n.Run == nil || n.Run.Origin.Channel == "" {
		return
	}
	id := n.Run.ID
	if n.Progress != nil {
		b.mu.Lock()
		steps := b.progress[id]
		if steps == nil {
			steps = map[int]engine.Progress{}
			b.progress[id] = steps
		}
		steps[n.Event.Step] = *n.Progress
		st := b.state(id)
		wait := time.Until(st.lastProgress.Add(b.cfg.ProgressInterval))
		if st.progressTimer == nil {
			if wait <= 0 {
				st.lastProgress = time.Now()
				b.mu.Unlock()
				b.schedule(id)
				return
			}
			st.progressTimer = time.AfterFunc(wait, func() {
				b.mu.Lock()
				st.progressTimer, st.lastProgress = nil, time.Now()
				b.mu.Unlock()
				b.schedule(id)
			})
		}
		b.mu.Unlock()
		return
	}
	switch n.Event.Type {
	case engine.EvStepFinished, engine.EvStepInterrupted:
		b.mu.Lock()
		delete(b.progress[id], n.Event.Step)
		b.mu.Unlock()
	case engine.EvRunFinished:
		b.mu.Lock()
		delete(b.progress, id)
		b.mu.Unlock()
	}
	b.schedule(id)
}

func (b *Bot) state(id engine.RunID) *syncState {
	st, ok := b.syncing[id]
	if !ok {
		st = &syncState{}
		b.syncing[id] = st
	}
	return st
}

// schedule asks for a run's thread to be brought up to date. A run is
// synced by one goroutine at a time; a change meanwhile syncs it again.
func (b *Bot) schedule(id engine.RunID) {
	if b.cfg.ScheduledSyncs {
		return // the backend schedules every sync
	}
	b.mu.Lock()
	st := b.state(id)
	switch {
	case st.running:
		st.dirty = true
	case !st.queued:
		st.queued = true
		b.mu.Unlock()
		b.syncs.push(id)
		return
	}
	b.mu.Unlock()
}

func (b *Bot) syncLoop(ctx context.Context) {
	for {
		id, ok := b.syncs.pop(ctx)
		if !ok {
			return
		}
		b.mu.Lock()
		st := b.state(id)
		st.queued, st.running, st.dirty = false, true, false
		b.mu.Unlock()
		sctx, done := lingering(ctx, shutdownGrace)
		err := b.sync(sctx, id)
		var later *laterError
		if errors.As(err, &later) {
			// A post to the channel or an update is rate-limited: sync
			// again when that allows, leaving this worker to the other
			// runs meanwhile.
			b.wakeAt(ctx, id, later.until)
			err = nil
		}
		if err != nil && sctx.Err() == nil {
			b.cfg.Log.Error("update the run's thread", "run", id, "err", err)
		}
		done()
		b.retryLater(ctx, id, err)
		b.mu.Lock()
		st.running = false
		again := st.dirty
		if again {
			st.dirty, st.queued = false, true
		}
		b.mu.Unlock()
		if again {
			b.syncs.push(id)
		}
	}
}

// wakeAt syncs a run again at until (or earlier, when a sync is already
// set for an earlier time): one timer a run, however often its syncs are
// put off.
func (b *Bot) wakeAt(ctx context.Context, id engine.RunID, until time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := b.state(id)
	if st.wake != nil {
		if !st.wakeAt.After(until) {
			return
		}
		st.wake.Stop()
	}
	st.wakeAt = until
	var t *time.Timer
	t = time.AfterFunc(time.Until(until), func() {
		b.mu.Lock()
		if st.wake == t {
			st.wake = nil
		}
		b.mu.Unlock()
		if ctx.Err() == nil {
			b.schedule(id)
		}
	})
	st.wake = t
}

// retryLater syncs a run again after a failure, waiting longer each time
// (up to a minute), so a thread that Slack refused an update for catches
// up without waiting for the run's next change; a success resets the wait.
func (b *Bot) retryLater(ctx context.Context, id engine.RunID, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := b.state(id)
	if err == nil || ctx.Err() != nil {
		st.retry = 0
		return
	}
	st.retry = min(max(2*st.retry, time.Second), time.Minute)
	time.AfterFunc(st.retry, func() {
		if ctx.Err() == nil {
			b.schedule(id)
		}
	})
}

// shutdownGrace is how long a thread update under way may go on once the
// bot is told to stop.
const shutdownGrace = 5 * time.Second

// lingering returns a context that ends grace after ctx does (or when done
// is called). A thread update runs under it, so that stopping the bot lets
// a post Slack is accepting finish and be noted with the run; cut off
// between the two, the post would be made again after the restart.
func lingering(ctx context.Context, grace time.Duration) (_ context.Context, done func()) {
	c, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(grace, cancel)
		context.AfterFunc(c, func() { t.Stop() })
	})
	return c, func() { stop(); cancel() }
}

// catchUp brings every unfinished Slack run's thread up to date after a
// start: steps found interrupted are announced, queued steps resume.
func (b *Bot) catchUp(ctx context.Context) error {
	list, err := b.eng.List(ctx)
	if err != nil {
		return fmt.Errorf("list runs: %w", err)
	}
	for _, s := range list {
		if s.Origin.Channel == "" {
			continue
		}
		notes, err := b.eng.Notes(ctx, s.ID)
		if err != nil {
			continue
		}
		finished := s.State == engine.RunCompleted || s.State == engine.RunAborted
		if finished && threadDone(notes) {
			continue
		}
		if !finished {
			if _, err := b.eng.Resume(ctx, s.ID, ""); err != nil {
				b.cfg.Log.Error("resume run", "run", s.ID, "err", err)
			}
		}
		b.schedule(s.ID)
	}
	return nil
}

// recent remembers the last n keys added.
type recent struct {
	mu    sync.Mutex
	set   map[string]bool
	order []string
	n     int
}

func newRecent(n int) *recent { return &recent{set: map[string]bool{}, n: n} }

// has reports whether key was added (and not forgotten since).
func (r *recent) has(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.set[key]
}

// add reports whether key is new.
func (r *recent) add(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.set[key] {
		return false
	}
	r.set[key] = true
	r.order = append(r.order, key)
	if len(r.order) > r.n {
		delete(r.set, r.order[0])
		r.order = r.order[1:]
	}
	return true
}

// forget drops key, so that it is new again (an envelope to be carried
// out again); its place in the order stays until it comes round.
func (r *recent) forget(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.set, key)
}
