package bot

import (
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/gonogo/gonogo/internal/fakeslack"
	"github.com/gonogo/gonogo/internal/hangguard"
)

// A retired link's client, left to itself, reconnects the moment Slack
// drops its connection; gonogo stops the link when it reads that, and a
// connection opened meanwhile would take envelopes only to be closed. The
// retired link opens none.
func TestRetiredLinkOpensNoConnection(t *testing.T) {
	srv := fakeslack.New()
	t.Cleanup(srv.Close)
	b := &Bot{api: slack.New(srv.BotToken(), slack.OptionAPIURL(srv.APIURL()), slack.OptionAppLevelToken(srv.AppToken()))}
	l, lctx := b.newLink(hangguard.Context(t))
	defer l.cancel()
	l.retired.Store(true)
	go func() { _ = l.sm.RunContext(lctx) }()
	for {
		select {
		case <-lctx.Done():
			t.Fatal("the link's client never tried to connect")
		case evt := <-l.sm.Events:
			switch evt.Type {
			case socketmode.EventTypeConnected, socketmode.EventTypeHello:
				t.Fatalf("a retired link opened a connection (%s)", evt.Type)
			case socketmode.EventTypeConnectionError:
				ce, _ := evt.Data.(*slack.ConnectionErrorEvent)
				if ce == nil || !errors.Is(ce.ErrorObj, errRetired) {
					t.Fatalf("connection error %+v; want the link refusing to connect", evt.Data)
				}
				if n := srv.Connections(); n != 0 {
					t.Errorf("Slack saw %d connections", n)
				}
				return
			}
		}
	}
}

// A link whose client reconnected after Slack dropped it, then was
// retired when the next link came up, runs on a connection Slack just
// opened and will serve for its announced life: gonogo does not close it
// meanwhile (envelopes on their way to it would be lost), only once it is
// overdue.
func TestRetiredLinkIsNotCutShortAfterAReconnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var stopped atomic.Bool
		l := &link{cancel: func() { stopped.Store(true) }, hello: make(chan time.Duration, 1)}
		l.sayHello(&socketmode.Request{DebugInfo: socketmode.DebugInfo{ApproximateConnectionTime: 3600}})
		const grace = time.Minute
		l.retire(grace)

		time.Sleep(59 * time.Minute)
		synctest.Wait()
		if stopped.Load() {
			t.Fatal("the link was stopped 59 minutes into the hour its connection was announced to live")
		}
		time.Sleep(time.Minute + grace + 11*time.Second)
		synctest.Wait()
		if !stopped.Load() {
			t.Fatal("the link was not stopped once overdue")
		}
	})
}
