package web

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// Reader is what the pages read of the runs. The readers gonogo show
// opens (internal/datadir's, a cluster's) satisfy it. It is an
// engine.StatsSource, so the stats page reads what gonogo stats reads; a
// Reader that is also an engine.StatsComputer (a cluster's) computes them
// itself (engine.StatsOf).
type Reader interface {
	// List is every run, newest first.
	List(ctx context.Context) ([]engine.RunSummary, error)
	Load(ctx context.Context, id engine.RunID) (*engine.Run, error)
	RunWithJournal(ctx context.Context, id engine.RunID) (*engine.Run, []engine.Event, error)
	Artifact(ctx context.Context, id engine.RunID, step, attempt int) ([]byte, error)
	// ArtifactVersions is every version of an attempt's artifact, the
	// agent's original first, then each edit (for the audit trail).
	ArtifactVersions(ctx context.Context, id engine.RunID, step, attempt int) ([][]byte, error)
}

// Source is a Reader opened for one request, closed after it.
type Source interface {
	Reader
	io.Closer
}

// Open opens the runs for one request. Each request opens and closes its
// own, so that serving the pages never holds a data directory's store
// between requests (a gonogo run started meanwhile takes its lock).
type Open func(ctx context.Context) (Source, error)

// Options tune a Server; the zero value serves the pages read-only.
type Options struct {
	// Decide opens where the page's decisions, pauses and resumes go;
	// nil: the pages offer none.
	Decide OpenDecider
	// Actor is the person the page's decisions are recorded as, in a
	// session whose link named no Person.
	Actor string
	// Data is the data directory the runs are in, as gonogo export is
	// given it: the audit trail says when an artifact's file is gone from
	// it. "": the runs have no data directory of files to look in.
	Data string
	// Keeper keeps the sign-in links and sessions; nil: in memory, so
	// they end with the process.
	Keeper Keeper
	// SecureCookie marks the session cookie Secure: the pages are reached
	// over https.
	SecureCookie bool
	// Again says where a sign-in link comes from; "" is gonogo web's
	// ("Open the sign-in link gonogo web printed; ...").
	Again string
	// MaxEdit caps an edited artifact in bytes; 0 is 1 MiB.
	MaxEdit int64
	// PollEvery is how often a page's event stream looks for a change
	// of its run made elsewhere (gonogo decide, Slack, the agent); 0 is
	// a second. A change made by this server's forms reaches every page
	// following the run at once.
	PollEvery time.Duration
	// Now is the clock sign-in links and sessions expire by, and the
	// audit trail is stamped with; nil is time.Now.
	Now func() time.Time
	Log *slog.Logger
}

// Server serves the pages. It is safe for concurrent use.
type Server struct {
	open    Open
	decider OpenDecider
	actor   string
	data    string
	now     func() time.Time
	maxEdit int64
	poll    time.Duration
	log     *slog.Logger
	auth    *sessions
	follow  followers
	secure  bool
	again   string
	pages   *template.Template
	mux     *http.ServeMux
}

//go:embed assets
var assets embed.FS

// New returns the pages over the runs open reads.
func New(open Open, opt Options) *Server {
	if opt.PollEvery <= 0 {
		opt.PollEvery = time.Second
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.MaxEdit <= 0 {
		opt.MaxEdit = 1 << 20
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.Again == "" {
		opt.Again = "Open the sign-in link gonogo web printed; each link works once, so run gonogo web again for a new one."
	}
	s := &Server{open: open, decider: opt.Decide, actor: opt.Actor, data: opt.Data, now: opt.Now, maxEdit: opt.MaxEdit, poll: opt.PollEvery, log: opt.Log,
		auth: newSessions(opt.Now, opt.Keeper, opt.Log), secure: opt.SecureCookie, again: opt.Again}
	s.pages = template.Must(template.New("").Funcs(funcs).ParseFS(assets, "assets/*.html"))
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/runs", http.StatusSeeOther)
	})
	m.HandleFunc("GET /runs", s.list)
	m.HandleFunc("GET /runs/{id}", s.run)
	m.HandleFunc("GET /runs/{id}/events", s.events)
	m.HandleFunc("GET /runs/{id}/steps/{n}/attempts/{a}/raw", s.raw)
	m.HandleFunc("GET /runs/{id}/steps/{n}/diff", s.diff)
	m.HandleFunc("GET /runs/{id}/audit", s.audit)
	m.HandleFunc("GET /stats", s.stats)
	if s.decider != nil {
		m.HandleFunc("POST /runs/{id}/decide", s.decide)
		m.HandleFunc("POST /runs/{id}/pause", s.pauseOrResume(true))
		m.HandleFunc("POST /runs/{id}/resume", s.pauseOrResume(false))
	}
	m.HandleFunc("GET /static/style.css", s.static("assets/style.css", "text/css; charset=utf-8"))
	m.HandleFunc("GET /static/live.js", s.static("assets/live.js", "text/javascript; charset=utf-8"))
	s.mux = m
	return s
}

// ServeHTTP answers a request: the sign-in link anywhere, everything
// else only within a session.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if r.URL.Path == "/signin" {
		s.signIn(w, r)
		return
	}
	ss, cookie := s.auth.lookup(r)
	switch {
	case ss == nil && cookie:
		http.Error(w, "Your session has ended (it expired, or is not known here). Nothing is shown without a session. "+s.again, http.StatusUnauthorized)
		return
	case ss == nil:
		http.Error(w, "Not signed in: nothing is shown without a session, which a one-time sign-in link starts. "+s.again, http.StatusUnauthorized)
		return
	}
	ctx := context.WithValue(r.Context(), sessionKey{}, ss)
	if ss.User != "" {
		ctx = context.WithValue(ctx, personKey{}, ss.Person)
	}
	s.mux.ServeHTTP(w, r.WithContext(ctx))
}

// actorOf is who r's decisions are recorded as: its session's person, or
// Options.Actor.
func (s *Server) actorOf(r *http.Request) string {
	if p, ok := PersonOf(r.Context()); ok {
		return p.User
	}
	return s.actor
}

// SignInURL is a new one-time sign-in link under base (the server's own
// address, such as http://127.0.0.1:8080).
func (s *Server) SignInURL(base string) (string, error) {
	return s.SignInFor(context.Background(), base, Person{}, "")
}

// SignInFor is a new one-time sign-in link under base for p: the session
// it starts decides as p. It lands on run's page ("" the run list).
func (s *Server) SignInFor(ctx context.Context, base string, p Person, run engine.RunID) (string, error) {
	page := ""
	if run != "" {
		if !run.WellFormed() {
			return "", fmt.Errorf("sign-in link: %q is no run id", run)
		}
		page = "/runs/" + string(run)
	}
	tok, err := s.auth.newToken(ctx, p, page)
	if err != nil {
		return "", err
	}
	return base + "/signin?token=" + tok, nil
}

// Run serves the pages on ln until ctx ends, then stops: open event
// streams end with it.
func (s *Server) Run(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	stop, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := hs.Shutdown(stop)
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

func (s *Server) static(name, ctype string) http.HandlerFunc {
	body, err := assets.ReadFile(name)
	if err != nil {
		panic(err) // an asset missing from the binary is a build error
	}
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ctype)
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(body)
	}
}
