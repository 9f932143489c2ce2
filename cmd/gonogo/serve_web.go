package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
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
	srv := web.New(func(context.Context) (web.Source, error) { return keptOpen{read}, nil }, web.Options{
		Decide:       func(context.Context) (web.Decider, error) { return pageActs{runs}, nil },
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

// httpHandler answers /healthz and /metrics with h, open to anyone as
// before, and every other path with pages (nil: none).
func httpHandler(h http.Handler, pages *web.Server) http.Handler {
	if pages == nil {
		return h
	}
	mux := http.NewServeMux()
	mux.Handle("/healthz", h)
	mux.Handle("/metrics", h)
	mux.Handle("/", pages)
	return mux
}

// keptOpen is a reader serve holds for its whole life: a page's request
// does not close it.
type keptOpen struct{ web.Reader }

func (keptOpen) Close() error { return nil }

// Stats keeps the held reader's own way of computing the stats page's
// figures: a cluster's counts every run, not the newest its List shows.
func (k keptOpen) Stats(ctx context.Context, q engine.StatsQuery) (engine.Stats, error) {
	return engine.StatsOf(ctx, k.Reader, q)
}

// errNoPerson refuses a change from a session no Slack person started:
// serve makes links only for the person who pressed Open.
var errNoPerson = errors.New("this session was started by no Slack person, so it may not decide")

// pageActs takes the page's changes to the engine serve runs, as the
// Slack person the session is for: the engine judges them as it judges
// their click (bot.AsPerson), records them under their Slack user id, and
// the run's thread shows the change as it shows a click.
type pageActs struct{ runs bot.Runs }

func (pageActs) as(ctx context.Context) (context.Context, error) {
	p, ok := web.PersonOf(ctx)
	if !ok {
		return ctx, errNoPerson
	}
	return bot.AsPerson(ctx, p.Team), nil
}

func (a pageActs) Decide(ctx context.Context, id engine.RunID, d engine.Decision, body []byte) (*engine.Run, bool, error) {
	ctx, err := a.as(ctx)
	if err != nil {
		return nil, false, err
	}
	r, err := a.runs.Decide(ctx, id, d, body)
	return r, true, err
}

func (a pageActs) Pause(ctx context.Context, id engine.RunID, actor string) (*engine.Run, bool, error) {
	ctx, err := a.as(ctx)
	if err != nil {
		return nil, false, err
	}
	r, err := a.runs.Pause(ctx, id, actor)
	return r, true, err
}

func (a pageActs) Unpause(ctx context.Context, id engine.RunID, actor string) (*engine.Run, bool, error) {
	ctx, err := a.as(ctx)
	if err != nil {
		return nil, false, err
	}
	r, err := a.runs.Unpause(ctx, id, actor, "")
	return r, true, err
}

func (pageActs) Close() error { return nil }
