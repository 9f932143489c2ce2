package web

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// clock is a settable clock for links and sessions.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// personDecider is serviceDecider that records the person each change was
// asked for in (PersonOf).
type personDecider struct {
	serviceDecider
	mu   sync.Mutex
	seen []Person
}

func (d *personDecider) Decide(ctx context.Context, id engine.RunID, dc engine.Decision, body []byte) (*engine.Run, bool, error) {
	p, _ := PersonOf(ctx)
	d.mu.Lock()
	d.seen = append(d.seen, p)
	d.mu.Unlock()
	return d.serviceDecider.Decide(ctx, id, dc, body)
}

// serveKept is f's run served with sessions kept in f's store, as gonogo
// serve keeps them, on clk; each call is a new server over the same
// store: a restart.
func (f *fixture) serveKept(clk *clock, dc *personDecider) {
	f.t.Helper()
	f.srv = New(func(context.Context) (Source, error) { return held{f.db}, nil }, Options{
		PollEvery: 5 * time.Millisecond, Actor: operator, Keeper: f.db, Now: clk.now, SecureCookie: true,
		Again:  "Press Open on the run's message in Slack for a new link.",
		Decide: func(context.Context) (Decider, error) { return dc, nil },
	})
	if f.ts != nil {
		f.ts.Close()
	}
	f.ts = httptest.NewTLSServer(f.srv)
	f.t.Cleanup(f.ts.Close)
}

// browser is a client of the https test servers, whichever certificate
// each restart makes, keeping its cookies in jar (nil: none).
func browser(jar http.CookieJar) *http.Client {
	return &http.Client{Jar: jar, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
}

func (r response) cookies() []*http.Cookie { return (&http.Response{Header: r.header}).Cookies() }

// signInOnce signs in with link into jar: it lands on the run's page
// with a Secure, HttpOnly, SameSite=Lax cookie, works no second time, and
// neither its token nor the cookie is what the store keeps.
func (f *fixture) signInOnce(jar http.CookieJar, link string, clk *clock) {
	t := f.t
	t.Helper()
	tok := link[strings.Index(link, "token=")+len("token="):]
	res := pressSignIn(t, noFollow(browser(jar)), link)
	if res.code != http.StatusSeeOther || res.header.Get("Location") != "/runs/"+string(f.id) {
		t.Fatalf("sign in: %d to %q", res.code, res.header.Get("Location"))
	}
	ck := res.cookies()
	if len(ck) != 1 || !ck[0].Secure || !ck[0].HttpOnly || ck[0].SameSite != http.SameSiteLaxMode {
		t.Fatalf("session cookie %+v", ck)
	}
	u, _ := url.Parse(f.ts.URL)
	jar.SetCookies(u, ck)
	if res := get(t, browser(nil), link); res.code != http.StatusUnauthorized {
		t.Fatalf("the link opened after its use: %d", res.code)
	}
	if res := post(t, browser(nil), f.ts.URL+"/signin", url.Values{"token": {tok}}); res.code != http.StatusUnauthorized || !strings.Contains(res.body, "Press Open") {
		t.Fatalf("the link's second use: %d %q", res.code, res.body)
	}
	for _, secret := range []string{tok, ck[0].Value} {
		for _, kind := range []string{"link", "session"} {
			if v, _ := f.db.SignIn(t.Context(), kind+":"+secret, clk.now()); v != nil {
				t.Errorf("the store keeps a raw secret under %s:", kind)
			}
		}
	}
}

// A link made for a Slack person lands on its run's page, works once and
// only within 10 minutes; the session it starts is kept in the store (by
// hash), outlives a restart, decides as that person (the journal records
// them and the decider is told who they are) and ends after 12 hours.
func TestPersonsSessionOutlivesARestart(t *testing.T) {
	f := newFixture(t)
	clk := &clock{t: time.Now()}
	dc := &personDecider{serviceDecider: serviceDecider{f.svc}}
	f.serveKept(clk, dc)
	ana := Person{User: "ana", Team: "T1"}

	late, err := f.srv.SignInFor(t.Context(), f.ts.URL, ana, f.id)
	if err != nil {
		t.Fatal(err)
	}
	clk.add(TokenTTL)
	jar, _ := cookiejar.New(nil)
	c := browser(jar)
	if res := get(t, c, late); res.code != http.StatusUnauthorized || !strings.Contains(res.body, "Press Open") {
		t.Fatalf("a link 10 minutes old: %d %q", res.code, res.body)
	}

	link, err := f.srv.SignInFor(t.Context(), f.ts.URL, ana, f.id)
	if err != nil {
		t.Fatal(err)
	}
	f.signInOnce(jar, link, clk)

	f.serveKept(clk, dc) // a restart over the same store
	page := get(t, c, f.ts.URL+"/runs/"+string(f.id))
	if page.code != http.StatusOK {
		t.Fatalf("the session after a restart: %d %s", page.code, page.body)
	}
	action, form := pageForm(t, page.body, "/decide", "approve")
	after := f.send(c, action, form)
	mustContain(t, "the page after approving", after.body, "Approved step 1.")
	if evs := f.decisionEvents(1); len(evs) != 1 || evs[0].Actor != "ana" {
		t.Fatalf("step 1's decisions: %+v, want one by ana", evs)
	}
	if len(dc.seen) != 1 || dc.seen[0] != ana {
		t.Fatalf("the decider was asked for %+v, want ana of T1", dc.seen)
	}

	clk.add(SessionTTL)
	if res := get(t, c, f.ts.URL+"/runs"); res.code != http.StatusUnauthorized || !strings.Contains(res.body, "session has ended") {
		t.Fatalf("a session 12 hours old: %d %q", res.code, res.body)
	}
}

// Sessions kept in memory (gonogo web's) end with the server: the next
// one refuses the cookie, saying the session has ended and how to get a
// new link.
func TestMemorySessionEndsWithTheServer(t *testing.T) {
	f := newFixture(t)
	c := f.client()
	f.srv = New(func(context.Context) (Source, error) { return held{f.db}, nil }, Options{})
	f.ts.Config.Handler = f.srv
	res := get(t, c, f.ts.URL+"/runs")
	if res.code != http.StatusUnauthorized || !strings.Contains(res.body, "session has ended") || !strings.Contains(res.body, "run gonogo web again") {
		t.Fatalf("after a restart: %d %q", res.code, res.body)
	}
}
