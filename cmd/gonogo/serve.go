package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/intake"
	"github.com/gonogo/gonogo/internal/localapi"
	"github.com/gonogo/gonogo/internal/runner"
	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/parse"
	"github.com/gonogo/gonogo/storage"
)

// slackConfig is the environment of gonogo serve.
type slackConfig struct {
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

// lateNotifier hands the engine's notices to the bot, which is built after
// the engine it needs, and asks it who a person is.
type lateNotifier struct{ b atomic.Pointer[bot.Bot] }

func (l *lateNotifier) Notify(n engine.Notice) {
	if b := l.b.Load(); b != nil {
		b.Notify(n)
	}
}

// Member is the service's engine.Members: the bot says who a Slack person
// is, and that anyone else (the local API's operator) may decide any run.
// Before the bot is built no Slack person can act: whoever does is the
// operator.
func (l *lateNotifier) Member(ctx context.Context, user string, groups []string) (engine.Member, error) {
	if b := l.b.Load(); b != nil {
		return b.Member(ctx, user, groups)
	}
	return engine.LocalOperator(ctx, user, groups)
}

// cmdServe is the Slack bot: the store is opened and recovered first, then
// the bot connects over Socket Mode and serves until a signal.
func newServeCmd(a *cli) *cobra.Command {
	f := &runFlags{}
	c := &cobra.Command{
		Use:   "serve [flags]",
		Short: "Run the Slack bot (Socket Mode)",
		Long: `Run the Slack bot over Socket Mode until interrupted. It needs SLACK_APP_TOKEN
(xapp-) and SLACK_BOT_TOKEN (xoxb-); see the README for the Slack app and the
other variables.

With GONOGO_TEMPORAL_ADDR set, serve is a stateless Slack front end of the
Temporal cluster: runs and their steps are the cluster's (gonogo worker runs
the agents), and any number of serve replicas may share one Slack app.`,
		RunE:              a.action(f, cmdServe),
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	a.addAgentFlags(c, f, dryRunUsage)
	return c
}

func cmdServe(ctx context.Context, e env, cfg config, f *runFlags) int {
	if len(f.positional) > 0 {
		return fail(e, "serve", usagef("takes no arguments (got %q)", f.positional[0]))
	}
	var sc slackConfig
	if err := processEnv(ctx, &sc, e.lookup); err != nil {
		return fail(e, "serve", err)
	}
	log := newLogger(e, cfg)
	bcfg, skillDirs, err := slackBotConfig(cfg, f, sc, log)
	if err != nil {
		return fail(e, "serve", err)
	}
	tc, err := loadTemporalConfig(ctx, e)
	if err != nil {
		return fail(e, "serve", err)
	}
	if tc.Addr != "" {
		return serveOnTemporal(ctx, e, cfg, f, tc, bcfg, sc.HTTPAddr, skillDirs)
	}
	return serveOnStore(ctx, e, cfg, f, sc, bcfg, log, skillDirs)
}

// slackBotConfig is the Slack bot's configuration, with the skills and the
// policy it runs: its tokens are checked first, so a bad one stops serve
// at once. A skill that cannot be used is logged once, here; serve goes on
// without it, and a run naming it is refused or shows it as manual.
// skillDirs names the skills folders, for the log.
func slackBotConfig(cfg config, f *runFlags, sc slackConfig, log *slog.Logger) (bcfg bot.Config, skillDirs string, err error) {
	var approvers []string
	for _, a := range sc.Approvers {
		if a = strings.TrimSpace(a); a != "" {
			approvers = append(approvers, a)
		}
	}
	bcfg = bot.Config{
		AppToken: sc.AppToken, BotToken: sc.BotToken, APIURL: sc.APIURL, SlashCommand: sc.SlashCommand,
		Approvers: approvers, Quorum: sc.Quorum, ExcludeStarter: sc.ExcludeStarter,
		RemindAfter: sc.RemindAfter, DecisionTimeout: sc.DecisionTimeout, TimeoutAction: sc.TimeoutAction,
		MaxPlanBytes: int64(cfg.MaxPlanBytes), BudgetUSD: cfg.RunBudgetUSD, Log: log,
		WorkflowsDir: cfg.WorkflowsDir, UpdateLimit: sc.UpdatesPerMinute, UpdateWindow: time.Minute,
		ConfirmStart: sc.ConfirmStart,
		NoAuditTrail: !sc.AuditTrail,
	}
	if err := bot.CheckTokens(bcfg); err != nil {
		return bcfg, "", err
	}
	cat, err := cfg.loadSkills(f.skills)
	if err != nil {
		return bcfg, "", err
	}
	for _, w := range cat.Warnings() {
		log.Warn("skill", "problem", w)
	}
	pol, err := parse.LoadPolicy(cfg.Policy)
	if err != nil {
		return bcfg, "", fmt.Errorf("policy: %w", err)
	}
	for _, p := range leafProblems(cat, pol) {
		log.Warn("skill", "problem", p)
	}
	bcfg.Catalog, bcfg.Policy = cat, pol
	if _, err := bot.New(bcfg, nil); err != nil {
		return bcfg, "", usagef("%v", err)
	}
	return bcfg, strings.Join(cat.Dirs(), ", "), nil
}

// serveOnStore serves Slack from the bbolt store in the data directory:
// the engine's service, the bot, the local API and the HTTP listener.
func serveOnStore(ctx context.Context, e env, cfg config, f *runFlags, sc slackConfig, bcfg bot.Config, log *slog.Logger, skillDirs string) int {
	name := runnerName(f)
	rcfg, err := runnerConfig(cfg, f)
	if err != nil {
		return fail(e, "serve", err)
	}
	run, err := runner.New(name, rcfg)
	if err != nil {
		return fail(e, "serve", usagef("%v", err))
	}
	if err := requireAgent(f); err != nil {
		return fail(e, "serve", err)
	}
	db, err := openStore(ctx, f.data)
	if err != nil {
		return fail(e, "serve", err)
	}
	defer db.Close()
	warnPendingFiles(e, db)
	// The inbox is opened after the store, whose lock keeps out any other
	// gonogo on the same data directory.
	inbox, err := storage.OpenInbox(f.data, storage.Options{})
	if err != nil {
		return fail(e, "serve", fmt.Errorf("open the inbox: %w", err))
	}
	defer inbox.Close()
	bcfg.Inbox = inbox
	notifier := &lateNotifier{}
	pol := bcfg.Policy
	svc := engine.NewService(engine.ServiceConfig{Store: db, Catalog: bcfg.Catalog, Runner: run, Notifier: notifier,
		MaxParallel: cfg.MaxParallel, Log: log, Probe: runner.Probe{PassEnv: rcfg.PassEnv}, Workflows: intake.Dir(cfg.WorkflowsDir), Policy: &pol,
		RateLimit: cfg.rateLimit(), Setup: setupOf(f, cfg), Members: notifier.Member, Approvers: bcfg.Approvers})
	b, err := bot.New(bcfg, svc)
	if err != nil {
		return fail(e, "serve", err)
	}
	notifier.b.Store(b)

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return svc.Run(gctx) })
	g.Go(func() error { return b.Run(gctx) })
	// Other gonogo processes of this user read runs and decide through the
	// local API, since the store's lock keeps them out of the file.
	if ln, err := localapi.Listen(f.data); err != nil {
		log.Warn("gonogo runs, show and decide cannot reach this server", "err", err)
	} else {
		g.Go(func() error { return localapi.Serve(gctx, ln, localapi.NewServer(db, svc, log, "serve", version())) })
	}
	if sc.HTTPAddr != "" {
		addr, err := serveHTTP(gctx, g, sc.HTTPAddr, httpHandler(b, svc))
		if err != nil {
			return fail(e, "serve", err)
		}
		log.Info("serving /healthz and /metrics", "addr", addr)
	}
	log.Info("gonogo serve starting", "data", f.data, "skills", skillDirs, "runner", name)
	if err := g.Wait(); err != nil && ctx.Err() == nil {
		return fail(e, "serve", err)
	}
	return terminal.ExitOK
}

// httpHandler serves /healthz (connected to Slack, store open) and
// /metrics (Prometheus text: the bot's metrics, the Go runtime's and the
// process's).
func httpHandler(b *bot.Bot, svc runList) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		_, err := svc.List(r.Context())
		code, body := health(b.Connection(), err)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(code)
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(body)
	})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		list, err := svc.List(r.Context())
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		var active []*engine.Run
		for _, s := range list {
			if s.State == engine.RunRunning || s.State == engine.RunWaiting {
				if run, err := svc.Load(r.Context(), s.ID); err == nil {
					active = append(active, run)
				}
			}
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		b.Metrics().Write(w, list, active)
	})
	return mux
}

// healthJSON is what /healthz answers.
type healthJSON struct {
	// Status is "ok" (200) or "unavailable" (503): not connected to
	// Slack, or the store cannot be read.
	Status string    `json:"status"`
	Store  string    `json:"store"` // "ok" or why it cannot be read
	Slack  slackJSON `json:"slack"`
}

type slackJSON struct {
	Connected bool `json:"connected"`
	// LastError is the last failed attempt to connect since serve
	// started, even when a later one succeeded; null when none failed.
	LastError *connErrorJSON `json:"last_error"`
}

type connErrorJSON struct {
	Time     time.Time `json:"time"`
	Call     string    `json:"call"`  // auth.test or apps.connections.open
	Error    string    `json:"error"` // Slack's error code or the network error; never a token
	Refused  bool      `json:"token_refused"`
	Failures int       `json:"failures"` // failed attempts in a row
}

func health(c bot.ConnState, storeErr error) (int, healthJSON) {
	h := healthJSON{Status: "ok", Store: "ok", Slack: slackJSON{Connected: c.Connected}}
	if e := c.LastError; e != nil {
		h.Slack.LastError = &connErrorJSON{Time: e.Time, Call: e.Call, Error: e.Err, Refused: e.Refused, Failures: e.Failures}
	}
	if storeErr != nil {
		h.Store = storeErr.Error()
	}
	if storeErr != nil || !c.Connected {
		h.Status = "unavailable"
		return http.StatusServiceUnavailable, h
	}
	return http.StatusOK, h
}
