package config

import (
	"errors"
	"fmt"
	"net/url"
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
	// PublicURL is where people reach the pages GONOGO_HTTP_ADDR serves
	// (behind a proxy, its address there): set, step messages and the
	// run's header offer Open, which answers with a sign-in link under it.
	PublicURL string `env:"GONOGO_PUBLIC_URL" example:"https://gonogo.example.com"`
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

// Check refuses a GONOGO_PUBLIC_URL that is no absolute http or https
// address of the pages' origin. A value carrying a user or password is
// not repeated in the refusal, so a secret never reaches a log.
func (s Slack) Check() error {
	if s.PublicURL == "" {
		return nil
	}
	const eg = "; for example GONOGO_PUBLIC_URL=https://gonogo.example.com"
	u, err := url.Parse(s.PublicURL)
	switch {
	case err == nil && u.User != nil:
		return errors.New("configuration: GONOGO_PUBLIC_URL must not carry a user or password (the sign-in links gonogo posts would show it)" + eg)
	case err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.Opaque != "":
		return fmt.Errorf("configuration: GONOGO_PUBLIC_URL=%q is not an absolute http or https URL%s", s.PublicURL, eg)
	case strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("configuration: GONOGO_PUBLIC_URL=%q has a path, query or fragment: it must be the address the pages are served at, scheme and host only (the pages live at /runs under it)%s", s.PublicURL, eg)
	case s.HTTPAddr == "":
		return errors.New("configuration: GONOGO_PUBLIC_URL is set but GONOGO_HTTP_ADDR is not: the pages it links to are served on GONOGO_HTTP_ADDR; set it too (for example GONOGO_HTTP_ADDR=:9090)")
	}
	return nil
}

// PublicBase is GONOGO_PUBLIC_URL without its trailing slash: sign-in
// links are made under it.
func (s Slack) PublicBase() string { return strings.TrimRight(s.PublicURL, "/") }
