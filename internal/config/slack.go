package config

import (
	"strings"
	"time"
)

// Slack is the environment of gonogo serve, besides Config.
type Slack struct {
	AppToken        string        `env:"SLACK_APP_TOKEN"`
	BotToken        string        `env:"SLACK_BOT_TOKEN"`
	APIURL          string        `env:"SLACK_API_URL"`
	SlashCommand    string        `env:"GONOGO_SLASH_COMMAND, default=/gonogo"`
	Approvers       []string      `env:"GONOGO_APPROVERS"`
	Quorum          int           `env:"GONOGO_QUORUM, default=1"`
	ExcludeStarter  bool          `env:"GONOGO_QUORUM_EXCLUDE_STARTER, default=false" example:"true"`
	RemindAfter     time.Duration `env:"GONOGO_REMIND_AFTER" example:"2h"`
	DecisionTimeout time.Duration `env:"GONOGO_DECISION_TIMEOUT" example:"24h"`
	TimeoutAction   string        `env:"GONOGO_DECISION_TIMEOUT_ACTION, default=wait"`
	HTTPAddr        string        `env:"GONOGO_HTTP_ADDR"`
	// ConfirmStart makes every run started from Slack wait at a preview
	// until someone who may decide presses Start.
	ConfirmStart bool `env:"GONOGO_CONFIRM_START, default=false" example:"true"`
	// UpdatesPerMinute is the app-wide chat.update budget: Slack's Tier 3
	// allows about 50 a minute for an app in a workspace; instances that
	// share one Slack app share it.
	UpdatesPerMinute int `env:"GONOGO_SLACK_UPDATES_PER_MINUTE, default=50"`
	// AuditTrail attaches a run's audit trail (gonogo export's Markdown)
	// to its thread when the run ends.
	AuditTrail bool `env:"GONOGO_SLACK_AUDIT_TRAIL, default=true" example:"false"`
}

// ApproversNamed is GONOGO_APPROVERS without the blanks a list may hold
// ("a, ,b").
func (s Slack) ApproversNamed() []string {
	var out []string
	for _, a := range s.Approvers {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}
