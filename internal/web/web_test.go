package web

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/storage"
)

// waitLimit bounds every wait for the service; no test asserts how long
// anything took.
const waitLimit = 2 * time.Minute

var skills = []string{"draft-brief", "write-stories"}

// evil is step 1's first artifact: a script, a javascript: link, raw
// HTML and an event handler, none of which may come alive on the page.
const evil = "# Brief\n\nThe plan, at length.\n\n<script>alert(1)</script>\n\n" +
	"[click me](javascript:alert(2)) and [docs](https://example.com/docs) and [rel](notes.md)\n\n" +
	"<img src=x onerror=alert(3)>\n\n<iframe src=\"https://evil.example\"></iframe>\n\n" +
	"![pic](JaVaScRiPt:alert(4)) <javascript:alert(5)> [mail](mailto:ana@example.com) [ftp](ftp://example.com/f) [v](vbscript:x)\n"

type catalog map[string]engine.Skill

func (c catalog) Skill(name string) (engine.Skill, error) {
	if s, ok := c[name]; ok {
		return s, nil
	}
	return engine.Skill{}, fmt.Errorf("skill %q: %w", name, engine.ErrNotFound)
}
func (c catalog) Names() []string { return slices.Sorted(maps.Keys(c)) }
func (c catalog) Agent(name string) (string, error) {
	return "", fmt.Errorf("agent %q: %w", name, engine.ErrNotFound)
}

// runner is the agent: step 1's first attempt writes evil, every other
// attempt a short document naming its skill and attempt.
type runner struct {
	hold  chan struct{} // non-nil: step 2 runs until it is closed
	first string        // step 1's first artifact when not "": instead of evil
}

func (rn runner) Run(_ context.Context, job engine.Job, _ func(engine.Progress)) engine.Outcome {
	if job.Step == 2 && rn.hold != nil {
		<-rn.hold
	}
	if job.Step == 1 && job.Attempt == 1 {
		if rn.first != "" {
			return engine.Outcome{Artifact: []byte(rn.first)}
		}
		return engine.Outcome{Artifact: []byte(evil)}
	}
	if strings.Contains(job.Prompt, "make it long") {
		b := []byte("# Brief\n\nThe plan, at length.\n\n")
		for i := range 2100 {
			b = fmt.Appendf(b, "Line %d of attempt %d.\n", i, job.Attempt)
		}
		return engine.Outcome{Artifact: b}
	}
	return engine.Outcome{Artifact: fmt.Appendf(nil, "# Brief\n\nThe plan, at length.\n\nAttempt %d of %s.\n", job.Attempt, job.Skill)}
}

// notices wakes whoever waits on any change.
type notices struct {
	mu sync.Mutex
	ch chan struct{}
}

func (n *notices) Notify(engine.Notice) {
	n.mu.Lock()
	defer n.mu.Unlock()
	close(n.next())
	n.ch = make(chan struct{})
}

func (n *notices) next() chan struct{} {
	if n.ch == nil {
		n.ch = make(chan struct{})
	}
	return n.ch
}

func (n *notices) after() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.next()
}

// fixture is a bbolt store with one run made through engine.Service,
// served by a Server.
type fixture struct {
	t     *testing.T
	db    *storage.DB
	svc   *engine.Service
	notes *notices
	srv   *Server
	ts    *httptest.Server
	id    engine.RunID
}

// held is the store as the pages read it: held by this process, so
// Close leaves it open.
type held struct{ *storage.DB }

func (held) Close() error { return nil }

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureWith(t, runner{})
}

func newFixtureWith(t *testing.T, rn runner) *fixture {
	t.Helper()
	cat := catalog{}
	for _, n := range skills {
		cat[n] = engine.Skill{Name: n, Instructions: "Instructions of " + n + ".", Path: "skills/" + n + "/SKILL.md"}
	}
	p, err := engine.PreflightChain(engine.ChainExpr{Source: strings.Join(skills, " -> "), Names: skills, Context: "saved searches"},
		cat, engine.DefaultPolicy())
	if err != nil {
		t.Fatal(err)
	}
	return startFixture(t, cat, rn, p, engine.StartOptions{StartedBy: "ana"})
}

// startFixture starts plan p as a run of an engine.Service over a bbolt
// store, and serves it once its step 1 waits for a decision.
func startFixture(t *testing.T, cat engine.Catalog, rn engine.Runner, p engine.Plan, opts engine.StartOptions) *fixture {
	t.Helper()
	db, err := storage.Open(t.TempDir(), storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, db: db, notes: &notices{}}
	f.svc = engine.NewService(engine.ServiceConfig{Store: db, Catalog: cat, Runner: rn, Notifier: f.notes, MaxParallel: 1})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.svc.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		_ = db.Close()
	})
	r, err := f.svc.Start(t.Context(), p, opts)
	if err != nil {
		t.Fatal(err)
	}
	f.id = r.ID
	// A best-of step waits once its last candidate has ended.
	f.waiting(1, max(1, len(p.Steps[0].Rules.BestOf)))
	f.srv = New(func(context.Context) (Source, error) { return held{db}, nil }, Options{PollEvery: 5 * time.Millisecond})
	f.ts = httptest.NewServer(f.srv)
	t.Cleanup(f.ts.Close)
	return f
}

// waiting waits for step n's attempt a to wait for a decision.
func (f *fixture) waiting(n, a int) *engine.Run {
	f.t.Helper()
	limit := time.NewTimer(waitLimit)
	defer limit.Stop()
	for {
		changed := f.notes.after()
		r, err := f.db.Load(f.t.Context(), f.id)
		if err != nil {
			f.t.Fatal(err)
		}
		if st := r.Step(n); st != nil && st.Status == engine.StepWaiting && st.Latest() != nil && st.Latest().N == a {
			return r
		}
		select {
		case <-changed:
		case <-limit.C:
			f.t.Fatalf("step %d attempt %d never waited", n, a)
		}
	}
}

func (f *fixture) decide(kind engine.DecisionKind, n, a int, feedback string) {
	f.t.Helper()
	d := engine.Decision{Kind: kind, Actor: "ana", Step: n, Attempt: a, Key: fmt.Sprintf("%s-%d-%d", kind, n, a), Feedback: feedback}
	if _, err := f.svc.Decide(f.t.Context(), f.id, d, nil); err != nil {
		f.t.Fatalf("%s step %d: %v", kind, n, err)
	}
}

// client is a browser signed in through a one-time link.
func (f *fixture) client() *http.Client {
	f.t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	link, err := f.srv.SignInURL(f.ts.URL)
	if err != nil {
		f.t.Fatal(err)
	}
	if res := pressSignIn(f.t, c, link); res.code != http.StatusOK || !strings.Contains(res.body, "Runs") {
		f.t.Fatalf("sign in: %d %s", res.code, res.body)
	}
	return c
}

type response struct {
	code   int
	body   string
	header http.Header
}

func get(t *testing.T, c *http.Client, u string) response {
	t.Helper()
	return answered(t)(c.Get(u))
}

// answered reads a request's answer whole, failing t when it failed.
func answered(t *testing.T) func(*http.Response, error) response {
	return func(res *http.Response, err error) response {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return response{res.StatusCode, string(b), res.Header}
	}
}

func mustContain(t *testing.T, what, body string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, body)
		}
	}
}

func mustLack(t *testing.T, what, body string, bad ...string) {
	t.Helper()
	for _, b := range bad {
		if strings.Contains(body, b) {
			t.Errorf("%s has %q:\n%s", what, b, body)
		}
	}
}

// The list and the run page show the run, its steps and where it
// stands, in the engine's words.
func TestListAndRunPage(t *testing.T) {
	f := newFixture(t)
	c := f.client()
	list := get(t, c, f.ts.URL+"/runs")
	if list.code != http.StatusOK {
		t.Fatalf("list: %d", list.code)
	}
	waitingAt := strings.Index(list.body, "Waiting on people")
	runAt := strings.Index(list.body, string(f.id))
	if waitingAt < 0 || runAt < waitingAt || runAt > strings.Index(list.body, "Running") {
		t.Errorf("the run is not listed under Waiting on people:\n%s", list.body)
	}
	page := get(t, c, f.ts.URL+"/runs/"+string(f.id))
	r, err := f.db.Load(t.Context(), f.id)
	if err != nil {
		t.Fatal(err)
	}
	stand := engine.StandingOf(r).Stand
	if stand != engine.StandWaiting {
		t.Fatalf("the fixture's run stands %s", stand)
	}
	mustContain(t, "run page", page.body, `<span class="state state-waiting">waiting</span>`,
		"Step 1 of 2: draft-brief", "Step 2 of 2: write-stories", "run-started", "Attempt 1")
	if ct := page.header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("run page Content-Type %q", ct)
	}

	f.decide(engine.DecideApprove, 1, 1, "")
	f.waiting(2, 1)
	page = get(t, c, f.ts.URL+"/runs/"+string(f.id))
	mustContain(t, "run page after approval", page.body, "<b>approve</b> by ana", "decision")
}

// An agent's script, raw HTML and javascript: links reach the page as
// text or not at all; safe links stay links.
func TestArtifactRendersNothingLive(t *testing.T) {
	f := newFixture(t)
	page := get(t, f.client(), f.ts.URL+"/runs/"+string(f.id))
	if page.code != http.StatusOK {
		t.Fatalf("run page: %d", page.code)
	}
	artifact := page.body[strings.Index(page.body, `<div class="artifact">`):]
	artifact = artifact[:strings.Index(artifact, "</div>")]
	mustLack(t, "rendered artifact", strings.ToLower(artifact), "<script", "<img", "onerror", "<iframe", `href="javascript`, `src="javascript`, `href="ftp`, `href="vbscript`, `href=""`)
	mustContain(t, "rendered artifact", artifact, `<a href="https://example.com/docs">docs</a>`, `<a href="notes.md">rel</a>`,
		`<a href="mailto:ana@example.com">mail</a>`, "click me", "ftp", "<h1>Brief</h1>")
	mustLack(t, "whole page", page.body, "<script>alert", "<img src=x", "<iframe")
	mustContain(t, "raw text", page.body, "&lt;script&gt;alert(1)&lt;/script&gt;")
	// The one script is the page's own.
	if n := strings.Count(page.body, "<script"); n != 1 || !strings.Contains(page.body, `<script src="/static/live.js"></script>`) {
		t.Errorf("%d scripts on the page", n)
	}
	if csp := page.header.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'self'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	if page.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Error("no nosniff")
	}
}

func TestRawDownloadIsTheExactBytes(t *testing.T) {
	f := newFixture(t)
	res := get(t, f.client(), f.ts.URL+"/runs/"+string(f.id)+"/steps/1/attempts/1/raw")
	if res.code != http.StatusOK || res.body != evil {
		t.Fatalf("raw: %d %q", res.code, res.body)
	}
	if ct := res.header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if cd := res.header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment;") {
		t.Errorf("Content-Disposition %q", cd)
	}
	if res.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Error("no nosniff")
	}
}

// A redone step's attempts are compared line by line.
func TestDiffOfTwoAttempts(t *testing.T) {
	f := newFixture(t)
	f.decide(engine.DecideRedo, 1, 1, "shorter, please")
	f.waiting(1, 2)
	c := f.client()
	page := get(t, c, f.ts.URL+"/runs/"+string(f.id))
	mustContain(t, "run page", page.body, `/steps/1/diff?a=1&amp;b=2`, "Redone with feedback: shorter, please")
	d := get(t, c, f.ts.URL+"/runs/"+string(f.id)+"/steps/1/diff?a=1&b=2")
	if d.code != http.StatusOK {
		t.Fatalf("diff: %d %s", d.code, d.body)
	}
	mustContain(t, "diff", d.body, "<span>  # Brief</span>", "<ins>+ Attempt 2 of draft-brief.</ins>",
		"<del>- &lt;script&gt;alert(1)&lt;/script&gt;</del>")
	mustLack(t, "diff", d.body, "<ins>+ # Brief", "<del>- # Brief")
}

func TestMalformedPathsAreNotFound(t *testing.T) {
	f := newFixture(t)
	c := f.client()
	id := string(f.id)
	for _, p := range []string{
		"/runs/nope", "/runs/20260101-000000-abc", "/runs/" + id + "x",
		"/runs/" + id + "/steps/0/attempts/1/raw", "/runs/" + id + "/steps/01/attempts/1/raw",
		"/runs/" + id + "/steps/-1/attempts/1/raw", "/runs/" + id + "/steps/+1/attempts/1/raw",
		"/runs/" + id + "/steps/1/attempts/99999999999999999999/raw", "/runs/" + id + "/steps/9/attempts/1/raw",
		"/runs/" + id + "/steps/1/attempts/7/raw", "/runs/" + id + "/steps/1/diff?a=1",
		"/runs/" + id + "/steps/1/diff?a=1&b=x", "/runs/" + id + "/steps/1/diff?a=1&b=9",
		"/runs/" + id + "/events", "/runs/" + id + "/events?after=z", "/runs/20260101-000000-abc/events?after=0",
		"/runs/%2e%2e/etc", "/elsewhere",
	} {
		if res := get(t, c, f.ts.URL+p); res.code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, res.code)
		}
	}
}

// Without a session every page is refused, saying where the link is; a
// sign-in link works once.
func TestSignIn(t *testing.T) {
	f := newFixture(t)
	for _, p := range []string{"/runs", "/runs/" + string(f.id), "/static/style.css", "/runs/nope"} {
		res := get(t, http.DefaultClient, f.ts.URL+p)
		if res.code != http.StatusUnauthorized || !strings.Contains(res.body, "gonogo web printed") {
			t.Errorf("GET %s without a session: %d %q", p, res.code, res.body)
		}
		if res.header.Get("Content-Security-Policy") == "" {
			t.Errorf("GET %s: no Content-Security-Policy", p)
		}
	}
	link, err := f.srv.SignInURL(f.ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	if res := pressSignIn(t, c, link); res.code != http.StatusOK {
		t.Fatalf("first use: %d %s", res.code, res.body)
	}
	u, _ := url.Parse(f.ts.URL)
	cookies := jar.Cookies(u)
	if len(cookies) != 1 {
		t.Fatalf("cookies %v", cookies)
	}
	jar2, _ := cookiejar.New(nil)
	other := &http.Client{Jar: jar2}
	if res := post(t, other, f.ts.URL+"/signin", url.Values{"token": {link[strings.Index(link, "token=")+len("token="):]}}); res.code != http.StatusUnauthorized {
		t.Fatalf("second use: %d", res.code)
	}
	if res := get(t, other, f.ts.URL+"/runs"); res.code != http.StatusUnauthorized {
		t.Fatalf("after a refused second use: %d", res.code)
	}
	if res := get(t, c, f.ts.URL+"/runs"); res.code != http.StatusOK {
		t.Fatalf("the first session: %d", res.code)
	}
}

// The session cookie is HttpOnly, SameSite=Lax, for 12 hours.
func TestSessionCookie(t *testing.T) {
	srv := New(func(context.Context) (Source, error) { return nil, engine.ErrNotFound }, Options{})
	link, err := srv.SignInURL("")
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, signInPress(link))
	cookies := w.Result().Cookies()
	if w.Code != http.StatusSeeOther || len(cookies) != 1 {
		t.Fatalf("sign in: %d, cookies %v", w.Code, cookies)
	}
	ck := cookies[0]
	if !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.MaxAge != 12*60*60 || len(ck.Value) < 43 {
		t.Errorf("cookie %+v", ck)
	}
}

// A decision made through the engine reaches a page following the run.
func TestEventsAfterADecision(t *testing.T) {
	f := newFixture(t)
	c := f.client()
	r, err := f.db.Load(t.Context(), f.id)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/runs/%s/events?after=%d", f.ts.URL, f.id, r.Seq), nil)
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	f.decide(engine.DecideApprove, 1, 1, "")
	lines := bufio.NewScanner(res.Body)
	var got []string
	for lines.Scan() {
		if lines.Text() == "" {
			break
		}
		got = append(got, lines.Text())
	}
	after, err := f.db.Load(t.Context(), f.id)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != "event: change" || !strings.HasPrefix(got[1], "data: ") {
		t.Fatalf("event %q", got)
	}
	var seq uint64
	if _, err := fmt.Sscanf(got[1], "data: %d", &seq); err != nil || seq <= r.Seq || seq > after.Seq {
		t.Fatalf("event seq %d, want past %d up to %d", seq, r.Seq, after.Seq)
	}
	if d := after.Step(1).LastDecision(); d == nil || d.Kind != engine.DecideApprove {
		t.Fatalf("step 1's decision: %+v", d)
	}
}

// Two long attempts that differ throughout are not compared: the page
// says why and what to do instead.
func TestDiffOverTheLimitIsRefused(t *testing.T) {
	f := newFixture(t)
	f.decide(engine.DecideRedo, 1, 1, "make it long")
	f.waiting(1, 2)
	f.decide(engine.DecideRedo, 1, 2, "make it long")
	f.waiting(1, 3)
	d := get(t, f.client(), f.ts.URL+"/runs/"+string(f.id)+"/steps/1/diff?a=2&b=3")
	if d.code != http.StatusUnprocessableEntity {
		t.Fatalf("diff: %d", d.code)
	}
	mustContain(t, "refused diff", d.body, "Not compared: the attempts differ on 2100 and 2100 lines", "over the limit of 4000000",
		"compare them with diff")
	mustLack(t, "refused diff", d.body, "<ins>", "<del>")
}

// A sign-in link older than TokenTTL is refused; a session older than
// SessionTTL ends. The clock is the test's.
func TestSignInAndSessionExpire(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	srv := New(func(context.Context) (Source, error) { return nil, engine.ErrNotFound }, Options{Now: clock})
	signIn := func(link string) *http.Cookie {
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, signInPress(link))
		if cs := w.Result().Cookies(); w.Code == http.StatusSeeOther && len(cs) == 1 {
			return cs[0]
		}
		return nil
	}
	late, _ := srv.SignInURL("")
	advance(TokenTTL)
	if signIn(late) != nil {
		t.Fatal("a link as old as TokenTTL signed in")
	}
	link, _ := srv.SignInURL("")
	advance(TokenTTL - time.Second)
	ck := signIn(link)
	if ck == nil {
		t.Fatal("a link just under TokenTTL old was refused")
	}
	status := func() int {
		r := httptest.NewRequest(http.MethodGet, "/static/style.css", nil)
		r.AddCookie(ck)
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, r)
		return w.Code
	}
	advance(SessionTTL - time.Second)
	if c := status(); c != http.StatusOK {
		t.Fatalf("a session just under SessionTTL old: %d", c)
	}
	advance(time.Second)
	if c := status(); c != http.StatusUnauthorized {
		t.Fatalf("a session SessionTTL old: %d", c)
	}
}
