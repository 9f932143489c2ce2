package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// Config is what the bot needs besides the engine.
type Config struct {
	AppToken string // xapp-..., scope connections:write
	BotToken string // xoxb-...
	APIURL   string // a Slack-compatible Web API base URL ending in "/"; "" is Slack's

	SlashCommand string // "/gonogo"
	// Runners are the runner names "chain ... --best-of" may name; none
	// refuses every --best-of.
	Runners   []string
	Approvers []string // user (U…, W…) and user group (S…) ids who may decide besides a run's starter
	Quorum    int      // distinct approvals a checkpoint needs
	// ExcludeStarter keeps a run's starter's approval from counting toward
	// the quorum.
	ExcludeStarter bool

	// The deadlines of the checkpoints of the runs the bot starts,
	// recorded with each run (engine.Oversight); the engine keeps them.
	RemindAfter     time.Duration // remind the thread of a waiting checkpoint; 0: never
	DecisionTimeout time.Duration // act on a checkpoint left waiting this long; 0: never
	TimeoutAction   string        // "abort" or "wait" (post a note and leave it waiting)

	Catalog      engine.Catalog
	Policy       engine.Policy
	MaxPlanBytes int64 // largest plan file accepted from an upload
	BudgetUSD    float64
	// WorkflowsDir holds the named workflows /gonogo run starts and "Save
	// as workflow" writes; "" turns both off.
	WorkflowsDir string
	// ConfirmStart (GONOGO_CONFIRM_START) makes every run started from
	// Slack wait at a preview until someone who may decide presses Start.
	// A plan a mention uploads waits there anyway, unless its message says
	// --yes (which ConfirmStart overrules).
	ConfirmStart bool

	// PostInterval paces posts to one channel (Slack allows about one a
	// second); ProgressInterval is the least time between two live
	// progress updates of a run's thread (its loading status). Zero means
	// the defaults.
	PostInterval     time.Duration
	ProgressInterval time.Duration

	// StatusRefresh is how long a thread's loading status is left before
	// it is set again while a step runs: Slack drops a status two minutes
	// after it was set. Zero means the default.
	StatusRefresh time.Duration

	// QuietStart is how long a step runs before its message is posted:
	// a step that ends sooner gets one message, posted as it ends with
	// its result, preview and buttons; one still running then gets its
	// running message with Cancel, and its progress stream. Until then
	// the thread's agent session, or its loading status, says it runs. Most steps of a quick chain cost one post rather than
	// a post and two updates. Zero means the default; a negative value
	// posts every step's message as it starts.
	QuietStart time.Duration

	// NoAuditTrail stops the bot attaching a run's audit trail (the
	// Markdown of gonogo export) to its thread when the run ends.
	NoAuditTrail bool

	// UpdateLimit is how many chat.update calls the bot makes at most in
	// any UpdateWindow, across the whole app
	// (Slack's Tier 3: about 50 a minute). UpdateBurst of them may follow
	// one another at once; the rest are spread evenly over the window.
	// MessageUpdateInterval is the least time between two updates of one
	// message that only refresh it: the run's header, the overview at the
	// top of its thread (a pause or a resume shows at once; the run's end
	// is said at once by the end message); a checkpoint or a decision
	// shows at once in its step's message, budget allowing.
	// Changes that come faster are shown together, in one update of the
	// run's current state. Posting new messages is not held by any of
	// these. Zero means the defaults.
	UpdateLimit           int
	UpdateBurst           int
	UpdateWindow          time.Duration
	MessageUpdateInterval time.Duration

	// Inbox keeps every acknowledged envelope until it has been carried
	// out, so that one acknowledged just before the process dies is
	// carried out after the restart (Slack never sends it again). Nil
	// keeps them in memory only.
	Inbox engine.Inbox

	// ScheduledSyncs says the backend schedules every sync of a run's
	// thread itself, one at a time for each run across every replica of
	// the bot (temporalbackend's SyncThread activity calls SyncThread):
	// the bot then never syncs a thread on its own, nor catches up on the
	// runs it finds as it starts.
	ScheduledSyncs bool

	// SignIn makes a one-time sign-in link to the web pages of run for a
	// Slack user of team (whose session decides as them). Set (gonogo
	// serve with GONOGO_PUBLIC_URL), step messages and the run's header
	// offer Open, and pressing it shows the person alone a new link; nil,
	// there is no Open.
	SignIn func(ctx context.Context, user, team string, run engine.RunID) (string, error)

	Log     *slog.Logger
	Metrics *Metrics
}

// Defaults of Config's zero values.
const (
	DefaultPostInterval     = time.Second
	DefaultProgressInterval = 15 * time.Second
	DefaultStatusRefresh    = 90 * time.Second
	DefaultQuietStart       = 3 * time.Second

	DefaultUpdateLimit           = 50
	DefaultUpdateBurst           = 5
	DefaultUpdateWindow          = time.Minute
	DefaultMessageUpdateInterval = 10 * time.Second
)

// ErrToken is wrapped by New for a missing or malformed token.
var ErrToken = errors.New("missing or malformed Slack token")

// CheckTokens checks the tokens' presence and shape only, for a front end
// that must refuse bad ones before it opens anything.
func CheckTokens(c Config) error {
	return c.checkTokens()
}

func (c *Config) validate() error {
	if err := c.checkTokens(); err != nil {
		return err
	}
	return c.validateRest()
}

// checkTokens names every token that is missing or malformed, both at
// once: fixing one to be told of the other next is a wasted round.
func (c *Config) checkTokens() error {
	var problems []string
	switch {
	case c.AppToken == "":
		problems = append(problems, "SLACK_APP_TOKEN is not set (an app-level token, xapp-..., with connections:write)")
	case !strings.HasPrefix(c.AppToken, "xapp-"):
		problems = append(problems, "SLACK_APP_TOKEN does not look like an app-level token (it should start with xapp-)")
	}
	switch {
	case c.BotToken == "":
		problems = append(problems, "SLACK_BOT_TOKEN is not set (the bot token, xoxb-...)")
	case !strings.HasPrefix(c.BotToken, "xoxb-"):
		problems = append(problems, "SLACK_BOT_TOKEN does not look like a bot token (it should start with xoxb-)")
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrToken, strings.Join(problems, "; "))
}

// validateRest checks what is not a token and fills in the defaults of
// the fields left zero.
func (c *Config) validateRest() error {
	if err := c.checkSettings(); err != nil {
		return err
	}
	c.setPacingDefaults()
	if err := c.checkUpdateBudget(); err != nil {
		return err
	}
	if c.MaxPlanBytes <= 0 {
		c.MaxPlanBytes = 1 << 20
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.Metrics == nil {
		c.Metrics = NewMetrics()
	}
	return nil
}

// checkSettings checks the settings a person writes that have no default.
func (c *Config) checkSettings() error {
	if c.APIURL != "" && !strings.HasSuffix(c.APIURL, "/") {
		return fmt.Errorf("SLACK_API_URL must end with \"/\" (got %q)", c.APIURL)
	}
	for _, a := range c.Approvers {
		if !validSlackID(a) {
			return fmt.Errorf("GONOGO_APPROVERS: %q is not a Slack user (U…) or user group (S…) id", a)
		}
	}
	if _, err := engine.ParseTimeoutAction(c.TimeoutAction); err != nil {
		return fmt.Errorf("GONOGO_DECISION_TIMEOUT_ACTION must be abort or wait, got %q", c.TimeoutAction)
	}
	if c.Catalog == nil {
		return errors.New("bot: no skill catalog")
	}
	return nil
}

// setPacingDefaults fills in the command name, the quorum and the
// intervals and chat.update budget the bot paces Slack with.
func (c *Config) setPacingDefaults() {
	setDefault(&c.SlashCommand, "/gonogo")
	c.Quorum = max(c.Quorum, 1)
	setDefault(&c.PostInterval, DefaultPostInterval)
	setDefault(&c.ProgressInterval, DefaultProgressInterval)
	setDefault(&c.StatusRefresh, DefaultStatusRefresh)
	setDefault(&c.QuietStart, DefaultQuietStart)
	setDefault(&c.UpdateLimit, DefaultUpdateLimit)
	// A burst must stay below the limit, which may have been set low.
	setDefault(&c.UpdateBurst, max(1, min(DefaultUpdateBurst, c.UpdateLimit-1)))
	setDefault(&c.UpdateWindow, DefaultUpdateWindow)
	setDefault(&c.MessageUpdateInterval, DefaultMessageUpdateInterval)
}

// checkUpdateBudget refuses a chat.update budget that cannot be kept.
func (c *Config) checkUpdateBudget() error {
	switch {
	case c.UpdateLimit < 2:
		return fmt.Errorf("GONOGO_SLACK_UPDATES_PER_MINUTE must be at least 2, got %d", c.UpdateLimit)
	case c.UpdateBurst < 1 || c.UpdateBurst >= c.UpdateLimit:
		return fmt.Errorf("chat.update budget: bursts of %d updates: want at least 1 and fewer than the %d a window", c.UpdateBurst, c.UpdateLimit)
	case c.UpdateWindow < 0 || c.MessageUpdateInterval < 0:
		return fmt.Errorf("chat.update budget: the window (%s) and the interval between two updates of a message (%s) cannot be negative",
			c.UpdateWindow, c.MessageUpdateInterval)
	}
	return nil
}

// setDefault sets *v to def when it is the zero value.
func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

func validSlackID(s string) bool {
	if len(s) < 2 || len(s) > 32 || !strings.ContainsRune("UWS", rune(s[0])) {
		return false
	}
	for _, r := range s[1:] {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// oversight is what the runs the bot starts record for their checkpoints:
// who may decide besides the starter, and the deadlines.
func (c *Config) oversight() engine.Oversight {
	action, _ := engine.ParseTimeoutAction(c.TimeoutAction) // validate checked it
	return engine.Oversight{Approvers: c.Approvers, RemindAfter: c.RemindAfter,
		DecisionTimeout: c.DecisionTimeout, OnTimeout: action}
}
