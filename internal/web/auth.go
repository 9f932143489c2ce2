package web

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// A sign-in link works once, for TokenTTL, and starts a session of
// SessionTTL. Both are kept in a Keeper by the SHA-256 of their secret
// (the link's token, the session's cookie), never by the secret itself:
// gonogo serve keeps them in its store, so a session outlives a restart;
// gonogo web keeps them in memory, so stopping it ends every session.
const (
	TokenTTL    = 10 * time.Minute // how long a sign-in link works, once
	SessionTTL  = 12 * time.Hour   // how long a session lasts
	cookieName  = "gonogo_session"
	secretBytes = 32
)

// Keeper keeps sign-in links and sessions: value under key until expires
// (storage.DB is one). SignIn reads what key holds, nil when nothing or
// expired at now; TakeSignIn reads it and drops it at once, so that one
// link starts one session.
type Keeper interface {
	KeepSignIn(ctx context.Context, key string, value []byte, expires, now time.Time) error
	SignIn(ctx context.Context, key string, now time.Time) ([]byte, error)
	TakeSignIn(ctx context.Context, key string, now time.Time) ([]byte, error)
}

// Person is the Slack user a sign-in link was made for: the session it
// starts decides as them. The zero Person is gonogo web's own user
// (Options.Actor).
type Person struct {
	User string `json:"user,omitempty"`
	Team string `json:"team,omitempty"` // the user's own team, which tells the engine whether they are of another organization
}

// PersonOf is the person a request of the pages is made for (Person),
// as the Decider is given it in its context; false for none.
func PersonOf(ctx context.Context) (Person, bool) {
	p, ok := ctx.Value(personKey{}).(Person)
	return p, ok && p.User != ""
}

type personKey struct{}

// grant is what a link or a session is kept as.
type grant struct {
	Person
	CSRF    string    `json:"csrf,omitempty"` // a session's forms carry it
	Page    string    `json:"page,omitempty"` // where a link lands
	Expires time.Time `json:"expires"`
}

// sessions are the sign-in links not yet used and the sessions they
// started; live caches the sessions read from the keeper.
type sessions struct {
	now  func() time.Time
	keep Keeper
	log  *slog.Logger
	mu   sync.Mutex
	live map[string]*session
}

// session is one signed-in browser: who it is, when it ends, the token
// its forms carry (CSRF) and the one-line result of its last form, shown
// once (kept in memory only: a restart loses no more than that line).
type session struct {
	grant
	said    string
	saidFor string // the run said is about
}

type sessionKey struct{}

func newSessions(now func() time.Time, keep Keeper, log *slog.Logger) *sessions {
	if keep == nil {
		keep = &memKeeper{m: map[string]memEntry{}}
	}
	return &sessions{now: now, keep: keep, log: log, live: map[string]*session{}}
}

func secret() (string, error) {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// keyOf is where a secret is kept: its hash, so that what is kept lets
// nobody sign in.
func keyOf(kind, secret string) string {
	h := sha256.Sum256([]byte(secret))
	return kind + ":" + hex.EncodeToString(h[:])
}

func (s *sessions) put(ctx context.Context, key string, g grant) error {
	b, err := json.Marshal(g)
	if err != nil {
		return err
	}
	return s.keep.KeepSignIn(ctx, key, b, g.Expires, s.now())
}

// newToken is a new one-time link's secret, for p, landing on page.
func (s *sessions) newToken(ctx context.Context, p Person, page string) (string, error) {
	tok, err := secret()
	if err != nil {
		return "", err
	}
	return tok, s.put(ctx, keyOf("link", tok), grant{Person: p, Page: page, Expires: s.now().Add(TokenTTL)})
}

// redeem uses up tok: the link's grant, or false when it was no live
// link.
func (s *sessions) redeem(ctx context.Context, tok string) (grant, bool) {
	return s.link(ctx, tok, s.keep.TakeSignIn)
}

// usable reports whether tok is a live link, leaving it so.
func (s *sessions) usable(ctx context.Context, tok string) bool {
	_, ok := s.link(ctx, tok, s.keep.SignIn)
	return ok
}

// link is tok's live grant as read reads it from the keeper.
func (s *sessions) link(ctx context.Context, tok string, read func(context.Context, string, time.Time) ([]byte, error)) (grant, bool) {
	var g grant
	if tok == "" {
		return g, false
	}
	v, err := read(ctx, keyOf("link", tok), s.now())
	if err != nil {
		s.log.Error("read a sign-in link", "err", err)
		return g, false
	}
	if v == nil || json.Unmarshal(v, &g) != nil || !s.now().Before(g.Expires) {
		return g, false
	}
	return g, true
}

// start starts a session for the person link was made for, and returns
// its cookie's secret.
func (s *sessions) start(ctx context.Context, link grant) (string, error) {
	id, err := secret()
	if err != nil {
		return "", err
	}
	csrf, err := secret()
	if err != nil {
		return "", err
	}
	g := grant{Person: link.Person, CSRF: csrf, Expires: s.now().Add(SessionTTL)}
	key := keyOf("session", id)
	if err := s.put(ctx, key, g); err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for k, ss := range s.live { // forget the expired, so the cache stays small
		if !now.Before(ss.Expires) {
			delete(s.live, k)
		}
	}
	s.live[key] = &session{grant: g}
	return id, nil
}

// lookup is r's live session, read from the keeper the first time; nil
// when r has none. cookie reports whether r carried a session cookie.
func (s *sessions) lookup(r *http.Request) (ss *session, cookie bool) {
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		return nil, false
	}
	key := keyOf("session", c.Value)
	now := s.now()
	s.mu.Lock()
	ss, ok := s.live[key]
	s.mu.Unlock()
	if !ok {
		v, err := s.keep.SignIn(r.Context(), key, now)
		if err != nil {
			s.log.Error("read a session", "err", err)
			return nil, true
		}
		var g grant
		if v == nil || json.Unmarshal(v, &g) != nil {
			return nil, true
		}
		ss = &session{grant: g}
		s.mu.Lock()
		if kept, ok := s.live[key]; ok {
			ss = kept
		} else {
			s.live[key] = ss
		}
		s.mu.Unlock()
	}
	if !now.Before(ss.Expires) {
		return nil, true
	}
	return ss, true
}

// sessionOf is the session ServeHTTP found for r.
func sessionOf(r *http.Request) *session {
	ss, _ := r.Context().Value(sessionKey{}).(*session)
	return ss
}

// csrf is the token r's session's forms carry.
func (s *sessions) csrf(r *http.Request) string {
	if ss := sessionOf(r); ss != nil {
		return ss.CSRF
	}
	return ""
}

// checkCSRF reports whether the form of r carries its session's token.
func (s *sessions) checkCSRF(r *http.Request) bool {
	got := r.PostForm.Get("csrf")
	want := s.csrf(r)
	return got != "" && want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// say keeps the one-line result of a form on run for the session's next
// page of that run.
func (s *sessions) say(r *http.Request, run, line string) {
	if ss := sessionOf(r); ss != nil {
		s.mu.Lock()
		ss.said, ss.saidFor = line, run
		s.mu.Unlock()
	}
}

// said is the result say kept for run, once.
func (s *sessions) said(r *http.Request, run string) string {
	ss := sessionOf(r)
	if ss == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss.saidFor != run {
		return ""
	}
	line := ss.said
	ss.said, ss.saidFor = "", ""
	return line
}

// signIn answers the sign-in link. A GET only shows a page whose one
// button POSTs the token: link previewers, mail scanners and browser
// prefetches fetch a link before its person does, and a GET that used the
// token up would leave them "link used". Only the POST redeems the token,
// starts the session and sends the browser to the page the link was made
// for (the run list when none).
func (s *Server) signIn(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		tok := r.URL.Query().Get("token")
		if !s.auth.usable(r.Context(), tok) {
			s.linkRefused(w)
			return
		}
		if err := s.render(w, http.StatusOK, "signin.html", tok); err != nil {
			s.fail(w, err)
		}
	case http.MethodPost:
		s.redeem(w, r)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "A sign-in link is opened (GET) and its button pressed (POST).", http.StatusMethodNotAllowed)
	}
}

func (s *Server) linkRefused(w http.ResponseWriter) {
	http.Error(w, "This sign-in link is used up, expired or wrong: each link works once, for 10 minutes. "+s.again, http.StatusUnauthorized)
}

// redeem uses up the token the sign-in page's form carries and starts
// its session.
func (s *Server) redeem(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "The sign-in form could not be read: "+err.Error(), http.StatusBadRequest)
		return
	}
	link, ok := s.auth.redeem(r.Context(), r.PostForm.Get("token"))
	if !ok {
		s.linkRefused(w)
		return
	}
	id, err := s.auth.start(r.Context(), link)
	if err != nil {
		s.log.Error("start a session", "err", err)
		http.Error(w, "could not start a session", http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: id, Path: "/", MaxAge: int(SessionTTL / time.Second),
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.secure,
	})
	page := "/runs"
	if link.Page != "" {
		page = link.Page
	}
	http.Redirect(w, r, page, http.StatusSeeOther)
}

// memKeeper keeps links and sessions in memory: gonogo web's.
type memKeeper struct {
	mu sync.Mutex
	m  map[string]memEntry
}

type memEntry struct {
	exp   time.Time
	value []byte
}

func (k *memKeeper) KeepSignIn(_ context.Context, key string, value []byte, expires, now time.Time) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	for x, e := range k.m {
		if !now.Before(e.exp) {
			delete(k.m, x)
		}
	}
	k.m[key] = memEntry{exp: expires, value: value}
	return nil
}

func (k *memKeeper) SignIn(_ context.Context, key string, now time.Time) ([]byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if e, ok := k.m[key]; ok && now.Before(e.exp) {
		return e.value, nil
	}
	return nil, nil
}

func (k *memKeeper) TakeSignIn(ctx context.Context, key string, now time.Time) ([]byte, error) {
	v, _ := k.SignIn(ctx, key, now)
	k.mu.Lock()
	delete(k.m, key)
	k.mu.Unlock()
	return v, nil
}
