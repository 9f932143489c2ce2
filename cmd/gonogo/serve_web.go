package main

import (
	"context"
	"log/slog"
	"strings"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
	settings "github.com/gonogo/gonogo/internal/config"
	"github.com/gonogo/gonogo/internal/web"
)

// The run pages gonogo serve answers on GONOGO_HTTP_ADDR, beside /healthz
// and /metrics, once GONOGO_PUBLIC_URL says where people reach them: a
// session starts from the link Open shows a person in Slack, and decides
// as that person, through the engine serve runs, as their click would.

// runPages are the pages over read, deciding through runs, with links and
// sessions kept by keep (nil: in memory); it sets bcfg.SignIn, which puts
// Open on the bot's messages. Nil when GONOGO_PUBLIC_URL is unset: then
// nothing changes.
func runPages(sc settings.Slack, cfg config, read web.Reader, runs bot.Runs, keep web.Keeper, log *slog.Logger, bcfg *bot.Config) *web.Server {
	if sc.PublicURL == "" {
		return nil
	}
	srv := web.New(func(context.Context) (web.Source, error) { return web.KeptOpen{Reader: read}, nil }, web.Options{
		Decide:       func(context.Context) (web.Decider, error) { return web.SlackActs{Runs: runs}, nil },
		MaxEdit:      int64(cfg.MaxArtifact),
		Keeper:       keep,
		SecureCookie: strings.HasPrefix(sc.PublicURL, "https:"),
		Again:        "Press Open on the run's message in Slack for a new sign-in link.",
		Log:          log,
	})
	base := sc.PublicBase()
	bcfg.SignIn = func(ctx context.Context, user, team string, run engine.RunID) (string, error) {
		return srv.SignInFor(ctx, base, web.Person{User: user, Team: team}, run)
	}
	return srv
}
