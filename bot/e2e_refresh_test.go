package bot_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/internal/fakeslack"
	"github.com/gonogo/gonogo/internal/hangguard"
	"github.com/gonogo/gonogo/storage"
)

// TestRefreshUnderAStreamOfCommandsLosesNone: Slack retires each Socket
// Mode connection after its announced lifetime, and a new connection takes
// it a moment to open. gonogo opens the next connection before the current
// one is due, so commands sent across two refreshes all find a connection
// that takes them: none waits for a reconnection (the fake marks an
// envelope it had while no connection took envelopes), none is lost, and
// gonogo does not mistake its own second connection for another
// program's. The commands go on until Slack has refreshed twice, however
// long a loaded machine takes to get there.
func TestRefreshUnderAStreamOfCommandsLosesNone(t *testing.T) {
	srv := newSlack(t, fakeslack.WithConnectionLifetime(3*time.Second), fakeslack.WithConnectDelay(100*time.Millisecond))
	logs := &ldLog{}
	start(t, srv, t.TempDir(), &scriptedRunner{}, withLog(slog.New(slog.NewTextHandler(logs, nil))))

	var sent []string
	refreshes := func() int {
		n := 0
		_ = srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool { n = st.Refreshes(); return true })
		return n
	}
	deadline := hangguard.Deadline(t)
	for refreshes() < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("Slack refreshed %d connections, want 2", refreshes())
		}
		sent = append(sent, srv.SendSlashCommand(slack.SlashCommand{Command: "/gonogo", UserID: starter,
			ChannelID: channel, TeamID: fakeslack.TeamID, Text: "help"}))
		time.Sleep(25 * time.Millisecond)
	}
	for _, env := range sent {
		ack(t, srv, env)
	}
	mine := map[string]bool{}
	for _, env := range sent {
		mine[env] = true
	}
	var unserved []string
	for _, e := range srv.Envelopes() {
		if mine[e.ID] && e.Unserved {
			unserved = append(unserved, e.ID)
		}
	}
	if len(unserved) > 0 {
		t.Errorf("%d of %d commands came while no connection took envelopes: the next one was not open before the current one was retired (%v)",
			len(unserved), len(sent), unserved)
	}
	if strings.Contains(logs.String(), "another program uses the same app token") {
		t.Errorf("gonogo warned about its own second connection:\n%s", logs.String())
	}
	t.Logf("%d commands across %d refreshes", len(sent), refreshes())
}

// TestCommandReadAsItsConnectionIsRetiredIsCarriedOut: a slash command
// comes on the connection gonogo is replacing, and Slack ends that
// connection (disconnect, then close) while gonogo is still keeping the
// command, before its acknowledgement is written. Slack never sends a
// command again, so gonogo must still acknowledge it (on its next
// connection: Slack takes an acknowledgement on any of the app's
// connections) and carry it out. Slack holds the next connection until
// the command is being kept, so the command comes on the old one.
func TestCommandReadAsItsConnectionIsRetiredIsCarriedOut(t *testing.T) {
	// Announced this short, the next connection is opened at once.
	srv := newSlack(t, fakeslack.WithAnnouncedLifetime(time.Second))
	srv.AdmitConnections(1)
	in := &gatedInbox{Inbox: openInbox(t, t.TempDir()), entered: make(chan struct{}), release: make(chan struct{})}
	replaced := &logWatch{want: "the next Socket Mode connection is up", seen: make(chan struct{})}
	h := start(t, srv, t.TempDir(), &scriptedRunner{}, withInbox(in), withLog(slog.New(replaced)))

	env := srv.SendSlashCommand(slack.SlashCommand{Command: "/gonogo", UserID: starter, ChannelID: channel,
		TeamID: fakeslack.TeamID, Text: "chain deliver-prd -> deliver-user-stories"})
	waitClosed(t, in.entered, "gonogo to read the command and keep it")
	srv.AdmitConnections(2)
	waitClosed(t, replaced.seen, "gonogo to take its next connection and retire the first")
	if err := srv.Refresh(1); err != nil {
		t.Fatal(err)
	}
	err := srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool { return !slices.Contains(st.OpenConnections(), 1) })
	if err != nil {
		t.Fatalf("the first connection did not end: %v", err)
	}
	close(in.release)

	a := ack(t, srv, env)
	waitStep(t, srv, 1, "deliver-prd", "Approve")
	if n := h.runCount(); n != 1 {
		t.Errorf("%d runs started, want 1", n)
	}
	for _, e := range srv.Envelopes() {
		if e.ID == env && (len(e.Deliveries) != 1 || e.Deliveries[0].Conn != 1 || a.Conn != 2) {
			t.Errorf("the command went %+v and was acknowledged on connection %d; want sent once on connection 1, acknowledged on 2", e.Deliveries, a.Conn)
		}
	}
}

// gatedInbox holds the first envelope it is given to keep until release
// is closed; entered is closed when that envelope comes.
type gatedInbox struct {
	*storage.Inbox
	once             sync.Once
	entered, release chan struct{}
}

func (g *gatedInbox) Record(ctx context.Context, payload []byte) (uint64, error) {
	first := false
	g.once.Do(func() { first = true })
	if first {
		close(g.entered)
		<-g.release
	}
	return g.Inbox.Record(ctx, payload)
}

// logWatch is a log that closes seen when a record whose message starts
// with want is logged.
type logWatch struct {
	want string
	once sync.Once
	seen chan struct{}
}

func (w *logWatch) Enabled(context.Context, slog.Level) bool { return true }
func (w *logWatch) WithAttrs([]slog.Attr) slog.Handler       { return w }
func (w *logWatch) WithGroup(string) slog.Handler            { return w }
func (w *logWatch) Handle(_ context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return nil
}

// waitClosed waits for ch to be closed, guarding against a hang only.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-ctxT(t).Done():
		t.Fatalf("waiting for %s: gave up", what)
	}
}
