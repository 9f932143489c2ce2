package bot

import (
	"context"
	"errors"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack/socketmode"
	"golang.org/x/sync/errgroup"
)

// Socket Mode connections, make before break. Slack retires every
// connection after a few hours (its hello says about when:
// approximate_connection_time) with a disconnect message, then closes it.
// A client that opens a new connection only then leaves a gap in which
// nothing reaches gonogo, and a click that falls in it is not acknowledged
// in time: the person sees an error. So gonogo opens the next connection a
// while before the current one is due (refreshLead), and lets Slack retire
// the old one: for that while both are open, Slack spreads envelopes across
// them, and an envelope Slack sends twice is still carried out once (the
// inbox and the envelope ids already seen).
//
// An envelope belongs to the bot, not to the connection it came on: Slack
// may retire that connection while the envelope is being kept, and
// slack-go stops writing on a connection as soon as Slack's disconnect
// reaches it. Slack takes an acknowledgement on any of the app's open
// connections (its own SDKs acknowledge on whichever is current), so each
// one goes out on the newest connection that is up (ackLink), and a link's
// reader goes on until its client has stopped, taking in what it had read.

// link is one Socket Mode connection, with a slack-go client of its own.
type link struct {
	sm     *socketmode.Client
	cancel context.CancelFunc
	// hello has the connection's lifetime from each hello (the client
	// reconnects by itself after a drop); the latest wins.
	hello chan time.Duration
	// retired is set once the next link is up: when Slack drops this
	// one, it is stopped instead of reconnecting.
	retired atomic.Bool
	// up is set from Slack's hello on the link's connection until the
	// client loses it (slack-go says connected at the websocket
	// handshake, before Slack has taken the connection in).
	up atomic.Bool
	// ended is closed once the link is stopped: what its client still
	// says about its connection is no news about Slack.
	ended <-chan struct{}
	// due is when Slack said the link's connection would end (its
	// latest hello), in Unix nanoseconds; 0 until one said or the link
	// is retired.
	due atomic.Int64
}

// errRetired is a retired link refusing to open another connection.
var errRetired = errors.New("retired Socket Mode link: the next one has taken over")

// newLink makes a link that runs until parent ends or the link is
// stopped (lctx).
func (b *Bot) newLink(parent context.Context) (_ *link, lctx context.Context) {
	lctx, cancel := context.WithCancel(parent)
	l := &link{cancel: cancel, hello: make(chan time.Duration, 1), ended: lctx.Done()}
	l.sm = socketmode.New(b.api, socketmode.OptionDialer(l.dialer()))
	return l, lctx
}

// dialer is slack-go's own websocket dialer, except that a retired link
// opens no connection. slack-go reconnects as soon as Slack drops a
// connection, before gonogo has read that and stopped the link: the
// connection it would open, Slack would send envelopes to, and gonogo
// would then close, losing what was on its way.
func (l *link) dialer() *websocket.Dialer {
	return &websocket.Dialer{
		Proxy:            http.ProxyFromEnvironment,
		HandshakeTimeout: 45 * time.Second,
		WriteBufferSize:  32 << 10,
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if l.retired.Load() {
				return nil, errRetired
			}
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}
}

// linkSet is the links open or opening, oldest first.
type linkSet struct {
	mu  sync.Mutex
	all []*link
}

func (s *linkSet) add(l *link) {
	s.mu.Lock()
	s.all = append(s.all, l)
	s.mu.Unlock()
}

func (s *linkSet) remove(l *link) {
	s.mu.Lock()
	s.all = slices.DeleteFunc(s.all, func(x *link) bool { return x == l })
	s.mu.Unlock()
}

// ackLink is the link to acknowledge an envelope on, that came on from:
// the newest link that is up and not retired. slack-go queues an
// acknowledgement on its client, and writes it on the client's connection
// or, once that is lost, on the one the client opens next; a retired
// link's client opens none, so what it still held when Slack dropped its
// connection would never be written. With no link up (the only one is
// reconnecting), the newest one not retired writes it once it is back.
func (s *linkSet) ackLink(from *link) *link {
	s.mu.Lock()
	defer s.mu.Unlock()
	var fallback *link
	for _, l := range slices.Backward(s.all) {
		if l.retired.Load() {
			continue
		}
		if l.up.Load() {
			return l
		}
		if fallback == nil {
			fallback = l
		}
	}
	if fallback == nil {
		return from // stopping: every link is on its way out
	}
	return fallback
}

// refreshLead is how long before a connection's announced end the next
// one is opened: a fifth of its life, at least a second, at most a minute.
func refreshLead(life time.Duration) time.Duration {
	return min(max(life/5, time.Second), time.Minute)
}

// sayHello passes a hello's announced lifetime to the link's supervisor.
func (l *link) sayHello(req *socketmode.Request) {
	if req == nil || req.DebugInfo.ApproximateConnectionTime <= 0 {
		return
	}
	life := time.Duration(req.DebugInfo.ApproximateConnectionTime) * time.Second
	l.due.Store(time.Now().Add(life).UnixNano())
	for {
		select {
		case l.hello <- life:
			return
		default:
		}
		select { // replace a lifetime nobody read yet
		case <-l.hello:
		default:
		}
	}
}

// connections keeps gonogo connected to Slack until ctx ends: it runs a
// link, opens the next one before the current one is due, and retires the
// old one once the new one is up. A link that fails in a way gonogo must
// not retry (a refused app-level token) ends them all with its error.
func (b *Bot) connections(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	start := func() *link {
		l, lctx := b.newLink(ctx)
		b.links.Add(1)
		b.open.add(l)
		stopped := make(chan struct{})
		g.Go(func() error {
			defer close(stopped)
			defer b.open.remove(l)
			defer b.links.Add(-1)
			defer l.cancel()
			return b.socketMode(lctx, l)
		})
		// The envelopes a link brings are kept and acknowledged under
		// the bot's lifetime, not the link's: a link retired while one
		// is under way must not drop it.
		g.Go(func() error { return b.consume(ctx, l, stopped) })
		return l
	}
	g.Go(func() error {
		cur := start()
		for {
			var life time.Duration
			select {
			case <-ctx.Done():
				return nil
			case life = <-cur.hello:
			}
			if !sleepOr(ctx, life-refreshLead(life), cur.hello) {
				continue // reconnected meanwhile (a new hello), or stopping
			}
			next := start()
			select {
			case <-ctx.Done():
				return nil
			case up := <-next.hello:
				putBack(next.hello, up) // for the next round
			}
			cur.retire(refreshLead(life))
			b.cfg.Log.Debug("the next Socket Mode connection is up; the previous one ends when Slack closes it")
			cur = next
		}
	})
	return g.Wait()
}

// retire lets Slack end the link: it is stopped when Slack drops it, or
// once its connection is past the end its hello announced by grace and
// Slack has not dropped it. A connection the link's client opened again
// after a drop announced an end of its own, hours away: gonogo does not
// close it meanwhile, as Slack would go on sending envelopes to it.
func (l *link) retire(grace time.Duration) {
	l.retired.Store(true)
	l.due.CompareAndSwap(0, time.Now().UnixNano()) // no end announced: due now
	l.stopWhenOverdue(grace + 10*time.Second)
}

// stopWhenOverdue stops the link once its connection is margin past its
// announced end.
func (l *link) stopWhenOverdue(margin time.Duration) {
	time.AfterFunc(l.overdueIn(margin), func() {
		if l.overdueIn(margin) > 0 {
			l.stopWhenOverdue(margin) // a newer hello announced a later end
			return
		}
		l.cancel()
	})
}

// overdueIn is how long until the link's connection is margin past its
// announced end.
func (l *link) overdueIn(margin time.Duration) time.Duration {
	return time.Until(time.Unix(0, l.due.Load())) + margin
}

// sleepOr waits d; it reports false when ctx ends or a value arrives on
// ch first (which is then put back). A nil ch never delivers.
func sleepOr(ctx context.Context, d time.Duration, ch chan time.Duration) bool {
	t := time.NewTimer(max(d, 0))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case v := <-ch:
		putBack(ch, v)
		return false
	}
}

// putBack returns a value taken from ch, unless a newer one is there.
func putBack(ch chan time.Duration, v time.Duration) {
	select {
	case ch <- v:
	default:
	}
}
