package main

import (
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/fakeslack"
	"github.com/gonogo/gonogo/internal/terminal"
)

const publicURL = "http://gonogo.test"

var (
	openLinkRE  = regexp.MustCompile(`<(` + regexp.QuoteMeta(publicURL) + `/signin\?token=[A-Za-z0-9_-]+)\|`)
	webFormRE   = regexp.MustCompile(`(?s)<form method="post" action="([^"]+)"[^>]*>(.*?)</form>`)
	webHiddenRE = regexp.MustCompile(`<input type="hidden" name="([a-z]+)" value="([^"]*)">`)
)

// pressOpen presses Open on m as user and returns the sign-in link gonogo
// showed them alone, pointed at addr, where serve listens (the public
// address would be a proxy's).
func pressOpen(t *testing.T, srv *fakeslack.Server, s *serving, m fakeslack.Message, user, addr string) string {
	t.Helper()
	ctx := s.connected(t, srv)
	env, err := srv.Click(user, m.Channel, m.TS, "Open")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.WaitAck(ctx, env); err != nil {
		t.Fatal(err)
	}
	var link string
	err = srv.WaitFor(ctx, func(st *fakeslack.State) bool {
		for _, e := range st.Ephemerals(user) {
			if mm := openLinkRE.FindStringSubmatch(e.Text); mm != nil && e.Via == "chat.postEphemeral" {
				link = mm[1]
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("%s was shown no sign-in link: %v\n%s", user, err, s.stderr.String())
	}
	return strings.Replace(link, publicURL, "http://"+addr, 1)
}

// approveOnPage posts the run page's Approve form as browser c and
// returns the page it comes back to.
func approveOnPage(t *testing.T, c *http.Client, addr string, id engine.RunID) string {
	t.Helper()
	page := webGet(t, c, "http://"+addr+"/runs/"+string(id))
	for _, m := range webFormRE.FindAllStringSubmatch(page, -1) {
		v := url.Values{}
		for _, h := range webHiddenRE.FindAllStringSubmatch(m[2], -1) {
			v.Set(h[1], html.UnescapeString(h[2]))
		}
		if strings.HasSuffix(m[1], "/decide") && v.Get("kind") == "approve" {
			res, err := c.PostForm("http://"+addr+m[1], v)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			return string(b)
		}
	}
	t.Fatalf("no approve form on the run page:\n%s", page)
	return ""
}

// signInWith opens link as browser c and presses its Sign in button:
// opening alone uses nothing up (a link preview may open it first). It
// returns the page the press lands on.
func signInWith(t *testing.T, c *http.Client, link string) string {
	t.Helper()
	page := webGet(t, c, link)
	for _, m := range webFormRE.FindAllStringSubmatch(page, -1) {
		v := url.Values{}
		for _, h := range webHiddenRE.FindAllStringSubmatch(m[2], -1) {
			v.Set(h[1], html.UnescapeString(h[2]))
		}
		if m[1] != "/signin" || v.Get("token") == "" {
			continue
		}
		res, err := c.PostForm(link[:strings.Index(link, "/signin")]+m[1], v)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("sign in: %d %s", res.StatusCode, b)
		}
		return string(b)
	}
	t.Fatalf("no Sign in button at the link:\n%s", page)
	return ""
}

func webGet(t *testing.T, c *http.Client, u string) string {
	t.Helper()
	res, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", u, res.StatusCode, b)
	}
	return string(b)
}

// readerIsRefused: a person who may not decide presses Open on step1 and
// alone is shown a link, which works once; their approval on the page is
// refused in the engine's words.
func readerIsRefused(t *testing.T, srv *fakeslack.Server, s *serving, step1 fakeslack.Message, addr string, id engine.RunID) {
	t.Helper()
	const reader = "U0READER"
	link := pressOpen(t, srv, s, step1, reader, addr)
	for _, e := range srv.Ephemerals("") {
		if e.User != reader && openLinkRE.MatchString(e.Text) {
			t.Errorf("%s was shown the reader's link: %q", e.User, e.Text)
		}
	}
	jar, _ := cookiejar.New(nil)
	rc := &http.Client{Jar: jar}
	signInWith(t, rc, link)
	if code, _ := get(t, link); code != http.StatusUnauthorized {
		t.Errorf("the link's second use: %d, want 401", code)
	}
	refused := approveOnPage(t, rc, addr, id)
	want := "Refused: " + reader + " on run " + string(id) + ": " + engine.ErrNotApprover.Error()
	if !strings.Contains(html.UnescapeString(refused), want) {
		t.Errorf("the reader's approval: the page does not say %q:\n%s", want, refused)
	}
}

// With GONOGO_PUBLIC_URL, gonogo serve answers the run pages on
// GONOGO_HTTP_ADDR beside /healthz, which stays open while the pages need
// a session. Open in Slack shows a person a link that works once; the
// session decides as them through the engine serve runs: a person who may
// not decide is refused in the engine's words, the starter's approval is
// recorded as theirs and shows in the thread, and the session outlives a
// restart of serve over the same data directory.
func TestServeRunPagesFromOpen(t *testing.T) {
	srv := fakeslack.New()
	defer srv.Close()
	vars := serveVars(t, srv)
	vars["GONOGO_PUBLIC_URL"] = publicURL
	s := startServe(vars)
	defer s.cancel()
	addr := s.httpAddr(t)
	ctx := s.connected(t, srv)

	if code, body := get(t, "http://"+addr+"/healthz"); code == http.StatusUnauthorized || !strings.Contains(body, `"status"`) {
		t.Errorf("/healthz without a session: %d %q", code, body)
	}
	for _, p := range []string{"/runs", "/runs/20260101-000000-abcdef"} {
		if code, body := get(t, "http://"+addr+p); code != http.StatusUnauthorized || !strings.Contains(body, "Press Open") {
			t.Errorf("%s without a session: %d %q", p, code, body)
		}
	}

	const ch, starter = "C0WEB", "U0SERVE"
	env := srv.SendSlashCommand(slack.SlashCommand{UserID: starter, ChannelID: ch, Text: "chain deliver-prd -> measure-experiment-design"})
	if _, err := srv.WaitAck(ctx, env); err != nil {
		t.Fatal(err)
	}
	step1, err := srv.WaitMessage(ctx, ch, func(m fakeslack.Message) bool {
		return strings.HasPrefix(m.Text, "*Step 1 of 2") && strings.Contains(m.Rendered, "Approve") && strings.Contains(m.Rendered, "Open")
	})
	if err != nil {
		t.Fatalf("no step 1 message with Open: %v\n%s", err, s.stderr.String())
	}
	id := engine.RunID(regexp.MustCompile(`\d{8}-\d{6}-[0-9a-f]+`).FindString(step1.Buttons()[0].Value))

	readerIsRefused(t, srv, s, step1, addr, id)

	jar2, _ := cookiejar.New(nil)
	sc := &http.Client{Jar: jar2}
	signInWith(t, sc, pressOpen(t, srv, s, step1, starter, addr))
	if after := approveOnPage(t, sc, addr, id); !strings.Contains(after, "Approved step 1.") {
		t.Errorf("the starter's approval: the page says\n%s", after)
	}
	if _, err := srv.WaitMessage(ctx, ch, func(m fakeslack.Message) bool {
		return m.TS == step1.TS && strings.Contains(m.Rendered, "Approved") && strings.Contains(m.Rendered, starter)
	}); err != nil {
		t.Fatalf("the thread does not show the starter's approval from the page: %v", err)
	}
	if code := s.stop(t); code != terminal.ExitOK {
		t.Fatalf("serve exited %d:\n%s", code, s.stderr.String())
	}

	again := startServe(vars) // a restart over the same data directory
	defer again.cancel()
	addr = again.httpAddr(t)
	page := webGet(t, sc, "http://"+addr+"/runs/"+string(id))
	if !strings.Contains(page, starter) {
		t.Errorf("the run page after a restart does not show the starter's decision:\n%s", page)
	}
	if code := again.stop(t); code != terminal.ExitOK {
		t.Errorf("serve exited %d:\n%s", code, again.stderr.String())
	}
}

// Without GONOGO_PUBLIC_URL serve answers no pages and offers no Open.
func TestServeWithoutPublicURLServesNoPages(t *testing.T) {
	srv := fakeslack.New()
	defer srv.Close()
	s := startServe(serveVars(t, srv))
	defer s.cancel()
	addr := s.httpAddr(t)
	ctx := s.connected(t, srv)
	if code, _ := get(t, "http://"+addr+"/runs"); code != http.StatusNotFound {
		t.Errorf("/runs without GONOGO_PUBLIC_URL: %d, want 404", code)
	}
	env := srv.SendSlashCommand(slack.SlashCommand{UserID: "U0SERVE", ChannelID: "C0NOWEB", Text: "chain deliver-prd"})
	if _, err := srv.WaitAck(ctx, env); err != nil {
		t.Fatal(err)
	}
	m, err := srv.WaitMessage(ctx, "C0NOWEB", func(m fakeslack.Message) bool {
		return strings.HasPrefix(m.Text, "*Step 1 of 1") && strings.Contains(m.Rendered, "Approve")
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range m.Buttons() {
		if b.Text == "Open" {
			t.Errorf("Open offered without GONOGO_PUBLIC_URL: %v", m.Buttons())
		}
	}
	if code := s.stop(t); code != terminal.ExitOK {
		t.Errorf("serve exited %d:\n%s", code, s.stderr.String())
	}
}

// A GONOGO_PUBLIC_URL that is no http or https origin stops serve at
// once, naming the variable, with the usage exit code.
func TestServeRefusesABadPublicURL(t *testing.T) {
	srv := fakeslack.New()
	defer srv.Close()
	vars := serveVars(t, srv)
	vars["GONOGO_PUBLIC_URL"] = "gonogo.example.com"
	s := startServe(vars)
	defer s.cancel()
	if code := <-s.code; code != terminal.ExitUsage || !strings.Contains(s.stderr.String(), "GONOGO_PUBLIC_URL") {
		t.Errorf("exit %d:\n%s", code, s.stderr.String())
	}
}
