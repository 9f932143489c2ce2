package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
	settings "github.com/gonogo/gonogo/internal/config"
	"github.com/gonogo/gonogo/internal/datadir"
	"github.com/gonogo/gonogo/internal/health"
	"github.com/gonogo/gonogo/internal/intake"
	"github.com/gonogo/gonogo/internal/localapi"
	"github.com/gonogo/gonogo/internal/runner"
	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/internal/web"
	"github.com/gonogo/gonogo/parse"
	"github.com/gonogo/gonogo/storage"
)

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

GONOGO_HTTP_ADDR serves /healthz and /metrics; with GONOGO_PUBLIC_URL (where
people reach that address) it also serves the run pages of gonogo web, and
each step's message and the run's header in Slack get an Open button that
shows the person alone a one-time sign-in link (10 minutes); the session (12
hours) decides as them.

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
	var sc settings.Slack
	if err := processEnv(ctx, &sc, e.lookup); err != nil {
		return fail(e, "serve", err)
	}
	if err := sc.Check(); err != nil {
		return fail(e, "serve", usagef("%v", err))
	}
	log := newLogger(e, cfg)
	bcfg, skillDirs, err := slackBotConfig(cfg, f, sc, log)
	if err != nil {
		return fail(e, "serve", err)
	}
	tc, err := settings.LoadTemporal(ctx, e.lookup)
	if err != nil {
		return fail(e, "serve", err)
	}
	if tc.Addr != "" {
		return serveOnTemporal(ctx, e, cfg, f, tc, bcfg, sc, skillDirs)
	}
	return serveOnStore(ctx, e, cfg, f, sc, bcfg, log, skillDirs)
}

// slackBotConfig is the Slack bot's configuration, with the skills and the
// policy it runs: its tokens are checked first, so a bad one stops serve
// at once. A skill that cannot be used is logged once, here; serve goes on
// without it, and a run naming it is refused or shows it as manual.
// skillDirs names the skills folders, for the log.
func slackBotConfig(cfg config, f *runFlags, sc settings.Slack, log *slog.Logger) (bcfg bot.Config, skillDirs string, err error) {
	bcfg = bot.Config{
		AppToken: sc.AppToken, BotToken: sc.BotToken, APIURL: sc.APIURL, SlashCommand: sc.SlashCommand, Runners: runner.Names(),
		Approvers: sc.ApproversNamed(), Quorum: sc.Quorum, ExcludeStarter: sc.ExcludeStarter,
		RemindAfter: sc.RemindAfter, DecisionTimeout: sc.DecisionTimeout, TimeoutAction: sc.TimeoutAction,
		MaxPlanBytes: int64(cfg.MaxPlanBytes), BudgetUSD: cfg.RunBudgetUSD, Log: log,
		WorkflowsDir: cfg.WorkflowsDir, UpdateLimit: sc.UpdatesPerMinute, UpdateWindow: time.Minute,
		ConfirmStart: sc.ConfirmStart,
		NoAuditTrail: !sc.AuditTrail,
	}
	if err := bot.CheckTokens(bcfg); err != nil {
		return bcfg, "", err
	}
	cat, err := cfg.LoadSkills(f.skills)
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
	for _, p := range engine.LeafMissing(cat.Skills(), cat, pol) {
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
func serveOnStore(ctx context.Context, e env, cfg config, f *runFlags, sc settings.Slack, bcfg bot.Config, log *slog.Logger, skillDirs string) int {
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
	db, err := datadir.Open(ctx, f.data)
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
	notifier := &bot.Late{}
	pol := bcfg.Policy
	svc := engine.NewService(engine.ServiceConfig{Store: db, Catalog: bcfg.Catalog, Runner: run, Notifier: notifier,
		MaxParallel: cfg.MaxParallel, Log: log, Probe: runner.Probe{PassEnv: rcfg.PassEnv}, Workflows: intake.Dir(cfg.WorkflowsDir), Policy: &pol,
		RateLimit: cfg.rateLimit(), Setup: setupOf(f, cfg), Members: notifier.Member, Approvers: bcfg.Approvers})
	// Sessions are kept in the store, so they outlive a restart.
	pages := runPages(sc, cfg, db, svc, db, log, &bcfg)
	b, err := bot.New(bcfg, svc)
	if err != nil {
		return fail(e, "serve", err)
	}
	notifier.Set(b)

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return svc.Run(gctx) })
	g.Go(func() error { return b.Run(gctx) })
	// Other gonogo processes of this user read runs and decide through the
	// local API, since the store's lock keeps them out of the file.
	if ln, err := localapi.Listen(f.data); err != nil {
		log.Warn("gonogo runs, show and decide cannot reach this server", "err", err)
	} else {
		g.Go(func() error {
			return localapi.Serve(gctx, ln, localapi.NewServer(db, svc, log, "serve", version(), int64(cfg.MaxArtifact)))
		})
	}
	if sc.HTTPAddr != "" {
		addr, err := health.Serve(gctx, g, sc.HTTPAddr, web.WithHealth(health.Handler(b, svc), pages))
		if err != nil {
			return fail(e, "serve", err)
		}
		log.Info("serving /healthz and /metrics", "addr", addr)
		if pages != nil {
			log.Info("serving the run pages under /runs", "addr", addr, "public_url", sc.PublicBase())
		}
	}
	log.Info("gonogo serve starting", "data", f.data, "skills", skillDirs, "runner", name)
	if err := g.Wait(); err != nil && ctx.Err() == nil {
		return fail(e, "serve", err)
	}
	return terminal.ExitOK
}
