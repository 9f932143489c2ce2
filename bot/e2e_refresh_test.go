package bot_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/internal/fakeslack"
	"github.com/gonogo/gonogo/internal/hangguard"
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
