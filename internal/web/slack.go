package web

import (
	"context"
	"errors"
	"net/http"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
)

// The run pages gonogo serve answers beside its Slack bot decide as the
// Slack person a session is for, through the engine serve runs, as their
// click would.

// WithHealth answers /healthz and /metrics with h, open to anyone as
// before, and every other path with pages (nil: none).
func WithHealth(h http.Handler, pages *Server) http.Handler {
	if pages == nil {
		return h
	}
	mux := http.NewServeMux()
	mux.Handle("/healthz", h)
	mux.Handle("/metrics", h)
	mux.Handle("/", pages)
	return mux
}

// KeptOpen is a reader serve holds for its whole life: a page's request
// does not close it.
type KeptOpen struct{ Reader }

// Close leaves the held reader open.
func (KeptOpen) Close() error { return nil }

// Stats keeps the held reader's own way of computing the stats page's
// figures: a cluster's counts every run, not the newest its List shows.
func (k KeptOpen) Stats(ctx context.Context, q engine.StatsQuery) (engine.Stats, error) {
	return engine.StatsOf(ctx, k.Reader, q)
}

// errNoPerson refuses a change from a session no Slack person started:
// serve makes links only for the person who pressed Open.
var errNoPerson = errors.New("this session was started by no Slack person, so it may not decide")

// SlackActs takes the page's changes to the engine serve runs, as the
// Slack person the session is for: the engine judges them as it judges
// their click (bot.AsPerson), records them under their Slack user id, and
// the run's thread shows the change as it shows a click.
type SlackActs struct{ Runs bot.Runs }

func (SlackActs) as(ctx context.Context) (context.Context, error) {
	p, ok := PersonOf(ctx)
	if !ok {
		return ctx, errNoPerson
	}
	return bot.AsPerson(ctx, p.Team), nil
}

// Decide applies d as the session's person.
func (a SlackActs) Decide(ctx context.Context, id engine.RunID, d engine.Decision, body []byte) (*engine.Run, bool, error) {
	ctx, err := a.as(ctx)
	if err != nil {
		return nil, false, err
	}
	r, err := a.Runs.Decide(ctx, id, d, body)
	return r, true, err
}

// Pause pauses run id as the session's person.
func (a SlackActs) Pause(ctx context.Context, id engine.RunID, actor string) (*engine.Run, bool, error) {
	ctx, err := a.as(ctx)
	if err != nil {
		return nil, false, err
	}
	r, err := a.Runs.Pause(ctx, id, actor)
	return r, true, err
}

// Unpause resumes run id in its own mode as the session's person.
func (a SlackActs) Unpause(ctx context.Context, id engine.RunID, actor string) (*engine.Run, bool, error) {
	ctx, err := a.as(ctx)
	if err != nil {
		return nil, false, err
	}
	r, err := a.Runs.Unpause(ctx, id, actor, "")
	return r, true, err
}

// Close leaves the engine running: serve owns it.
func (SlackActs) Close() error { return nil }
