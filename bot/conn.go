package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
)

// ConnState is the bot's connection to Slack, for health checks.
type ConnState struct {
	Connected bool
	// LastError is the last failed attempt to connect; nil when none
	// failed since the bot started.
	LastError *ConnError
}

// ConnError is one failed attempt to connect to Slack.
type ConnError struct {
	Time time.Time
	// Call is the Slack call that failed: auth.test (the bot token) or
	// apps.connections.open (the app-level token, Socket Mode).
	Call string
	// Err is Slack's own error (missing_scope, invalid_auth, ...) or the
	// network's (a refused connection, a name that does not resolve).
	// It never holds a token.
	Err string
	// Refused is set only when Slack itself refused the token
	// (invalid_auth, not_authed, account_inactive, token_revoked).
	Refused bool
	// Failures counts the attempts that failed in a row.
	Failures int
}

// conn keeps the state of the connection to Slack.
type conn struct {
	mu       sync.Mutex
	last     *ConnError
	failures int
	// warnedConns is the connection count last warned about, so a crowd
	// of connections is logged when it appears or grows, not at every
	// refresh.
	warnedConns int
}

// hello notes how many Socket Mode connections Slack counts for the app
// (its hello says). More than this process keeps open means another
// program (a second gonogo, a test, a forgotten deploy) uses the same app
// token; Slack spreads envelopes across every open connection, so the
// clicks and commands that reach the other one are lost to this one.
func (b *Bot) hello(req *socketmode.Request) {
	if req == nil {
		return
	}
	n := req.NumConnections
	own := int(b.links.Load()) // two for a moment while one replaces the other
	b.cfg.Metrics.setSlackConnections(n)
	b.conn.mu.Lock()
	warn := n > own && n > b.conn.warnedConns
	if warn || n <= own {
		b.conn.warnedConns = n
	}
	b.conn.mu.Unlock()
	if warn {
		b.cfg.Log.Warn("Slack counts more Socket Mode connections for this app than this gonogo opened: "+
			"another program uses the same app token, and the clicks and commands Slack sends it never reach this gonogo; "+
			"run one gonogo per Slack app", "connections", n, "own", own)
	}
}

func (c *conn) failed(call, text string, refused bool) ConnError {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failures++
	e := ConnError{Time: time.Now().UTC(), Call: call, Err: text, Refused: refused, Failures: c.failures}
	c.last = &e
	return e
}

func (c *conn) succeeded() {
	c.mu.Lock()
	c.failures = 0
	c.mu.Unlock()
}

func (c *conn) lastError() *ConnError {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		return nil
	}
	e := *c.last
	return &e
}

// Connection reports whether the bot is connected to Slack and how its
// last failed attempt to connect failed.
func (b *Bot) Connection() ConnState {
	return ConnState{Connected: b.cfg.Metrics.Connected(), LastError: b.conn.lastError()}
}

// refusedBySlack reports whether err is Slack refusing a token, and its
// error code. Anything else (a network error, an outage, another error
// code such as missing_scope) is not a refusal of the token.
func refusedBySlack(err error) (string, bool) {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		return se.Err, refusedToken[se.Err]
	}
	return "", false
}

// connErrorText renders a failed connection attempt's error: Slack's own
// error code with its scope details, or the network error, without any
// token in it.
func (b *Bot) connErrorText(err error) string {
	var se slack.SlackErrorResponse
	text := err.Error()
	if errors.As(err, &se) {
		text = se.Err
		if se.Needed != "" {
			text += fmt.Sprintf(" (needed: %s; provided: %s)", se.Needed, se.Provided)
		}
	}
	for _, tok := range []string{b.cfg.AppToken, b.cfg.BotToken} {
		if tok != "" {
			text = strings.ReplaceAll(text, tok, "[token]")
		}
	}
	return text
}

// noteFailure records and logs a failed connection attempt; wait is how
// long until the next one (0: none, the bot stops).
func (b *Bot) noteFailure(call string, err error, wait time.Duration) ConnError {
	_, refused := refusedBySlack(err)
	e := b.conn.failed(call, b.connErrorText(err), refused)
	b.cfg.Metrics.connFailed(call)
	args := []any{"call", call, "err", e.Err, "failures", e.Failures}
	if wait > 0 {
		args = append(args, "retry_in", wait.Round(time.Millisecond).String())
	}
	b.cfg.Log.Warn("connecting to Slack failed", args...)
	return e
}

// Backoff between connection attempts gonogo makes itself (auth.test, and
// Socket Mode when its client gives up): doubling from connRetryMin up to
// connRetryMax. The Socket Mode client retries apps.connections.open with
// a backoff of its own (from 100ms up to 5 minutes).
const (
	connRetryMin = time.Second
	connRetryMax = time.Minute
)

// backoff is a doubling wait, capped.
type backoff struct{ next time.Duration }

func (bo *backoff) wait() time.Duration {
	if bo.next <= 0 {
		bo.next = connRetryMin
	}
	w := bo.next
	bo.next = min(2*bo.next, connRetryMax)
	return w
}

func (bo *backoff) reset() { bo.next = 0 }

// sleep waits d or until ctx ends, reporting whether the wait was whole.
func sleep(ctx context.Context, d time.Duration) bool { return sleepOr(ctx, d, nil) }

// authenticate calls auth.test until it answers: a network error or an
// outage is logged and retried with a capped backoff; Slack refusing the
// bot token stops the bot. It returns ctx's error when ctx ends first.
func (b *Bot) authenticate(ctx context.Context) error {
	var bo backoff
	for {
		resp, err := b.api.AuthTestContext(ctx)
		if err == nil {
			b.conn.succeeded()
			b.botUser, b.team = resp.UserID, resp.TeamID
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if code, refused := refusedBySlack(err); refused {
			b.noteFailure("auth.test", err, 0)
			return fmt.Errorf("SLACK_BOT_TOKEN refused by Slack (auth.test: %s): check the bot token (xoxb-...)", code)
		}
		wait := bo.wait()
		b.noteFailure("auth.test", err, wait)
		if !sleep(ctx, wait) {
			return ctx.Err()
		}
	}
}

// socketMode runs the Socket Mode client until ctx ends. Its client
// retries failed connections itself (each failure reaches consume as a
// connection error event) but gives up on a few answers; gonogo tries
// again after them, except when Slack refused the app-level token.
func (b *Bot) socketMode(ctx context.Context, l *link) error {
	var bo backoff
	for {
		started := time.Now()
		err := l.sm.RunContext(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if code, refused := refusedBySlack(err); refused {
			b.noteFailure("apps.connections.open", err, 0)
			return fmt.Errorf("SLACK_APP_TOKEN refused by Slack (apps.connections.open: %s): check the app-level token (xapp-...) and its connections:write scope", code)
		}
		if time.Since(started) > connRetryMax {
			bo.reset() // it ran a good while: not a failure in a row
		}
		wait := bo.wait()
		b.noteFailure("apps.connections.open", err, wait)
		if !sleep(ctx, wait) {
			return nil
		}
	}
}
