package bot

import (
	"context"
	"sync/atomic"
	"time"

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
		lctx, cancel := context.WithCancel(ctx)
		l := &link{sm: socketmode.New(b.api), cancel: cancel, hello: make(chan time.Duration, 1)}
		b.links.Add(1)
		g.Go(func() error {
			defer b.links.Add(-1)
			defer cancel()
			return b.socketMode(lctx, l)
		})
		g.Go(func() error { return b.consume(lctx, l) })
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
			cur = next
		}
	})
	return g.Wait()
}

// retire lets Slack end the link: it is stopped when Slack drops it, or
// after grace past when it was due, whichever comes first.
func (l *link) retire(grace time.Duration) {
	l.retired.Store(true)
	time.AfterFunc(2*grace+10*time.Second, l.cancel)
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
