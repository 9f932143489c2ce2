package bot_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/internal/hangguard"
)

// TestSecondGonogoOnOneAppIsWarnedAbout: Slack spreads envelopes across
// every connection open for an app, so a second gonogo on the same app
// token loses the first one's clicks. The second one's hello counts two
// connections: it warns, once, and exports the count.
func TestSecondGonogoOnOneAppIsWarnedAbout(t *testing.T) {
	srv := newSlack(t)
	first := &ldLog{}
	h1 := start(t, srv, t.TempDir(), &scriptedRunner{}, withLog(slog.New(slog.NewTextHandler(first, nil))))
	second := &ldLog{}
	h2 := start(t, srv, t.TempDir(), &scriptedRunner{}, withLog(slog.New(slog.NewTextHandler(second, nil))))

	metric := func(h *harness) string {
		var b bytes.Buffer
		h.bot.Metrics().Write(&b, nil, nil)
		for _, line := range strings.Split(b.String(), "\n") {
			if strings.HasPrefix(line, "gonogo_slack_connections ") {
				return line
			}
		}
		return ""
	}
	deadline := hangguard.Deadline(t)
	for metric(h2) != "gonogo_slack_connections 2" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := metric(h2); got != "gonogo_slack_connections 2" {
		t.Fatalf("the second gonogo exports %q", got)
	}
	if got := metric(h1); got != "gonogo_slack_connections 1" {
		t.Errorf("the first gonogo exports %q", got)
	}
	if n := strings.Count(second.String(), "another program uses the same app token"); n != 1 {
		t.Errorf("the second gonogo warned %d times, want once:\n%s", n, second.String())
	}
	if strings.Contains(first.String(), "another program uses the same app token") {
		t.Errorf("the first gonogo, alone when it connected, warned:\n%s", first.String())
	}
}
