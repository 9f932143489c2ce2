package web

import (
	"crypto/rand"
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
	live   map[string]time.Time
}

func newSessions(now func() time.Time) *sessions {
	return &sessions{now: now, tokens: map[string]time.Time{}, live: map[string]time.Time{}}
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
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for k, exp := range s.live { // forget the expired, so the map stays small
		if !now.Before(exp) {
			delete(s.live, k)
		}
	}
	s.live[id] = now.Add(SessionTTL)
	return id, nil
}

// valid reports whether r carries a live session's cookie.
func (s *sessions) valid(r *http.Request) bool {
	c, err := r.Cookie(cookieName)
	if err != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.live[c.Value]
	return ok && s.now().Before(exp)
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
