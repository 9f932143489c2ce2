package bot_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/parse"
)

// New refuses a configuration it cannot work with, naming the setting, and
// fills in the defaults of what was left zero so that they fit together.
func TestNewChecksConfig(t *testing.T) {
	base := func() bot.Config {
		return bot.Config{AppToken: "xapp-1", BotToken: "xoxb-1", Catalog: parse.NewCatalog(nil), Policy: engine.DefaultPolicy()}
	}
	tests := []struct {
		name string
		set  func(*bot.Config)
		want string // "" accepts the configuration
	}{
		{"API URL without its slash", func(c *bot.Config) { c.APIURL = "http://127.0.0.1:1/api" }, `SLACK_API_URL must end with "/"`},
		{"approver that is not an id", func(c *bot.Config) { c.Approvers = []string{"U123", "alice"} }, `GONOGO_APPROVERS: "alice" is not a Slack user`},
		{"unknown timeout action", func(c *bot.Config) { c.TimeoutAction = "explode" }, `GONOGO_DECISION_TIMEOUT_ACTION must be abort or wait, got "explode"`},
		{"no catalog", func(c *bot.Config) { c.Catalog = nil }, "no skill catalog"},
		{"one update a minute", func(c *bot.Config) { c.UpdateLimit = 1 }, "GONOGO_SLACK_UPDATES_PER_MINUTE must be at least 2, got 1"},
		{"burst as large as the limit", func(c *bot.Config) { c.UpdateLimit, c.UpdateBurst = 10, 10 }, "bursts of 10 updates: want at least 1 and fewer than the 10 a window"},
		{"negative window", func(c *bot.Config) { c.UpdateWindow = -time.Second }, "cannot be negative"},
		{"negative update interval", func(c *bot.Config) { c.MessageUpdateInterval = -time.Second }, "cannot be negative"},
		// The default burst (5) would not fit under a limit of 2: it
		// shrinks to fit.
		{"low limit, default burst", func(c *bot.Config) { c.UpdateLimit = 2 }, ""},
		{"defaults", func(*bot.Config) {}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base()
			tt.set(&c)
			_, err := bot.New(c, nil)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("New = %v, want it accepted", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("New = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
