package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"sync"
	"time"
)

// Sign-in links and sessions are kept in memory only: a restart of gonogo
// web ends every session and voids every link it printed.
const (
	TokenTTL    = 10 * time.Minute // how long a sign-in link works, once
	SessionTTL  = 12 * time.Hour   // how long a session lasts
	cookieName  = "gonogo_session"
	secretBytes = 32
)

// sessions are the sign-in tokens not yet used and the sessions they
// started, each with its expiry.
type sessions struct {
	now    func() time.Time
	mu     sync.Mutex
	tokens map[string]time.Time
	live   map[string]*session
}

// session is one signed-in browser: when it ends, the token its forms
// carry (CSRF) and the one-line result of its last form, shown once.
type session struct {
	exp     time.Time
	csrf    string
	said    string
	saidFor string // the run said is about
}

func newSessions(now func() time.Time) *sessions {
	return &sessions{now: now, tokens: map[string]time.Time{}, live: map[string]*session{}}
}

func secret() (string, error) {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func (s *sessions) newToken() (string, error) {
	tok, err := secret()
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[tok] = s.now().Add(TokenTTL)
	return tok, nil
}

// redeem uses up tok, and reports whether it was a live token.
func (s *sessions) redeem(tok string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.tokens[tok]
	delete(s.tokens, tok)
	return ok && s.now().Before(exp)
}

func (s *sessions) start() (string, error) {
	id, err := secret()
	if err != nil {
		return "", err
	}
	csrf, err := secret()
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for k, ss := range s.live { // forget the expired, so the map stays small
		if !now.Before(ss.exp) {
			delete(s.live, k)
		}
	}
	s.live[id] = &session{exp: now.Add(SessionTTL), csrf: csrf}
	return id, nil
}

// valid reports whether r carries a live session's cookie.
func (s *sessions) valid(r *http.Request) bool {
	return s.with(r, func(*session) {})
}

// with calls f with r's live session under the lock; false when r has
// none.
func (s *sessions) with(r *http.Request, f func(*session)) bool {
	c, err := r.Cookie(cookieName)
	if err != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.live[c.Value]
	if !ok || !s.now().Before(ss.exp) {
		return false
	}
	f(ss)
	return true
}

// csrf is the token r's session's forms carry.
func (s *sessions) csrf(r *http.Request) string {
	var tok string
	s.with(r, func(ss *session) { tok = ss.csrf })
	return tok
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
	s.with(r, func(ss *session) { ss.said, ss.saidFor = line, run })
}

// said is the result say kept for run, once.
func (s *sessions) said(r *http.Request, run string) string {
	var line string
	s.with(r, func(ss *session) {
		if ss.saidFor == run {
			line, ss.said, ss.saidFor = ss.said, "", ""
		}
	})
	return line
}

// signIn turns a live one-time token into a session and sends the browser
// to the run list.
func (s *Server) signIn(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || !s.auth.redeem(r.URL.Query().Get("token")) {
		http.Error(w, "This sign-in link is used up, expired or wrong: each link works once, for 10 minutes. Run gonogo web again for a new one.", http.StatusUnauthorized)
		return
	}
	id, err := s.auth.start()
	if err != nil {
		http.Error(w, "could not start a session", http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: id, Path: "/", MaxAge: int(SessionTTL / time.Second),
		HttpOnly: true, SameSite: http.SameSiteLaxMode,
	})
	http.Redirect(w, r, "/runs", http.StatusSeeOther)
}
