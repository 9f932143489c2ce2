package bot_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/internal/fakeslack"
)

// TestRefreshUnderAStreamOfCommandsLosesNone: Slack retires each Socket
// Mode connection after its announced lifetime, and a new connection takes
// it a moment to open. gonogo opens the next connection before the current
// one is due, so commands sent across two refreshes are all acknowledged
// at once: none waits for a reconnection, none is lost, and gonogo does not
// mistake its own second connection for another program's.
func TestRefreshUnderAStreamOfCommandsLosesNone(t *testing.T) {
	srv := newSlack(t, fakeslack.WithConnectionLifetime(3*time.Second), fakeslack.WithConnectDelay(500*time.Millisecond))
	logs := &ldLog{}
	start(t, srv, t.TempDir(), &scriptedRunner{}, withLog(slog.New(slog.NewTextHandler(logs, nil))))

	var sent []string
	until := time.Now().Add(7 * time.Second)
	for time.Now().Before(until) {
		sent = append(sent, srv.SendSlashCommand(slack.SlashCommand{Command: "/gonogo", UserID: starter,
			ChannelID: channel, TeamID: fakeslack.TeamID, Text: "help"}))
		time.Sleep(25 * time.Millisecond)
	}
	for _, env := range sent {
		ack(t, srv, env)
	}
	var delays map[string]time.Duration
	refreshes := 0
	_ = srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool {
		delays, refreshes = st.AckDelays(), st.Refreshes()
		return true
	})
	if refreshes < 2 {
		t.Fatalf("Slack refreshed %d connections, want at least 2", refreshes)
	}
	var worst time.Duration
	for _, env := range sent {
		worst = max(worst, delays[env])
	}
	if worst > 400*time.Millisecond {
		t.Errorf("a command waited %v for its ack across a refresh; a new connection takes 500ms to open, so one was not ready in time", worst)
	}
	if strings.Contains(logs.String(), "another program uses the same app token") {
		t.Errorf("gonogo warned about its own second connection:\n%s", logs.String())
	}
	t.Logf("%d commands across %d refreshes, slowest ack %v", len(sent), refreshes, worst)
}
