// Package health is what gonogo serve answers on GONOGO_HTTP_ADDR:
// /healthz, whether serve is connected to Slack and can read its runs
// (Status, as JSON; 200 or 503), and /metrics, the bot's metrics in
// Prometheus text with the Go runtime's and the process's.
//
// It may import engine and bot (the connection and the metrics are the
// bot's). Serve listens on the address and shuts the server down when
// the command's context ends; which address is the command's.
//
//	srv := &http.Server{Handler: health.Handler(b, svc)}
package health

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
	"golang.org/x/sync/errgroup"
)

// Bot is what the handler asks the Slack bot.
type Bot interface {
	Connection() bot.ConnState
	Metrics() *bot.Metrics
}

// Runs is what /healthz and /metrics read: the runs in the store, and the
// active ones whole.
type Runs interface {
	List(ctx context.Context) ([]engine.RunSummary, error)
	Load(ctx context.Context, id engine.RunID) (*engine.Run, error)
	// StatsSource is every run as the stats counters read them: the
	// store's runs, or every run on a cluster (whose List shows people
	// only the newest).
	StatsSource() engine.StatsSource
}

// Handler serves /healthz (connected to Slack, store open) and /metrics
// (Prometheus text: the bot's metrics, the stats counters computed from
// the runs' journals, the Go runtime's and the process's).
//
// The stats counters are counted again at each scrape through an
// engine.StatsCache: only the runs not finished are read again, so a
// scrape does not read every journal of the store.
func Handler(b Bot, runs Runs) http.Handler {
	return handler(b, runs, time.Now)
}

// handler is Handler on the clock now, which ends the stats' period.
func handler(b Bot, runs Runs, now func() time.Time) http.Handler {
	stats := engine.NewStatsCache()
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		_, err := runs.List(r.Context())
		code, body := Check(b.Connection(), err)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(code)
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(body)
	})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		list, err := runs.List(r.Context())
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		var active []*engine.Run
		for _, s := range list {
			if s.State == engine.RunRunning || s.State == engine.RunWaiting {
				if run, err := runs.Load(r.Context(), s.ID); err == nil {
					active = append(active, run)
				}
			}
		}
		counts, err := stats.Read(r.Context(), runs.StatsSource(), engine.StatsQuery{Now: now()})
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		b.Metrics().Write(w, list, active)
		bot.WriteStats(w, counts)
	})
	return mux
}

// Status is what /healthz answers.
type Status struct {
	// Status is "ok" (200) or "unavailable" (503): not connected to
	// Slack, or the store cannot be read.
	Status string `json:"status"`
	Store  string `json:"store"` // "ok" or why it cannot be read
	Slack  Slack  `json:"slack"`
}

// Slack is the connection to Slack, in Status.
type Slack struct {
	Connected bool `json:"connected"`
	// LastError is the last failed attempt to connect since serve
	// started, even when a later one succeeded; null when none failed.
	LastError *ConnError `json:"last_error"`
}

// ConnError is a failed attempt to connect to Slack.
type ConnError struct {
	Time     time.Time `json:"time"`
	Call     string    `json:"call"`  // auth.test or apps.connections.open
	Error    string    `json:"error"` // Slack's error code or the network error; never a token
	Refused  bool      `json:"token_refused"`
	Failures int       `json:"failures"` // failed attempts in a row
}

// Check is the answer of /healthz, with its HTTP status, for the bot's
// connection c and the error reading the store (nil: it reads).
func Check(c bot.ConnState, storeErr error) (int, Status) {
	h := Status{Status: "ok", Store: "ok", Slack: Slack{Connected: c.Connected}}
	if e := c.LastError; e != nil {
		h.Slack.LastError = &ConnError{Time: e.Time, Call: e.Call, Error: e.Err, Refused: e.Refused, Failures: e.Failures}
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

// Serve serves h on addr until ctx ends, in g, and returns the
// address it listens on (addr may ask for any free port).
func Serve(ctx context.Context, g *errgroup.Group, addr string, h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("GONOGO_HTTP_ADDR: %w", err)
	}
	// Requests end with ctx: a page's event stream does not hold up the
	// shutdown.
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	g.Go(func() error {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	g.Go(func() error {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(sctx)
	})
	return ln.Addr().String(), nil
}
