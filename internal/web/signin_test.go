package web

import (
	"html"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

var signInFormRE = regexp.MustCompile(`<form method="post" action="([^"]*)"><input type="hidden" name="token" value="([^"]*)">\s*<button type="submit">Sign in</button></form>`)

// signInForm is where the sign-in page at link sends its button, and the
// form it sends, read from the page as c gets it.
func signInForm(tb testing.TB, c *http.Client, link string) (string, url.Values) {
	tb.Helper()
	page := fetch(tb, c, link)
	m := signInFormRE.FindStringSubmatch(page.body)
	if page.code != http.StatusOK || m == nil {
		tb.Fatalf("the sign-in page: %d, no Sign in button:\n%s", page.code, page.body)
	}
	u, err := url.Parse(link)
	if err != nil {
		tb.Fatal(err)
	}
	action, err := u.Parse(html.UnescapeString(m[1]))
	if err != nil {
		tb.Fatal(err)
	}
	return action.String(), url.Values{"token": {html.UnescapeString(m[2])}}
}

// pressSignIn opens link as c and presses its page's Sign in button: the
// answer to the press, after c's redirect policy.
func pressSignIn(tb testing.TB, c *http.Client, link string) response {
	tb.Helper()
	action, form := signInForm(tb, c, link)
	return read(tb)(c.PostForm(action, form))
}

// signInPress is the request the Sign in button of link sends, for
// ServeHTTP.
func signInPress(link string) *http.Request {
	u, _ := url.Parse(link)
	form := url.Values{"token": {u.Query().Get("token")}}
	r, _ := http.NewRequest(http.MethodPost, "/signin", strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return r
}

// openOnly opens link as who, without pressing its button: the page
// sets no cookie, sends no referrer, and offers one Sign in button that
// posts the token, in no other URL, to /signin.
func openOnly(t *testing.T, who, link string) {
	t.Helper()
	tok := link[strings.Index(link, "token=")+len("token="):]
	page := get(t, http.DefaultClient, link)
	if page.code != http.StatusOK || len(page.header.Values("Set-Cookie")) != 0 {
		t.Fatalf("%s opens the link: %d, cookies %q", who, page.code, page.header.Values("Set-Cookie"))
	}
	if page.header.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("the sign-in page's Referrer-Policy: %q", page.header.Get("Referrer-Policy"))
	}
	m := signInFormRE.FindStringSubmatch(page.body)
	if m == nil || m[1] != "/signin" || m[2] != tok || strings.Count(page.body, tok) != 1 {
		t.Fatalf("%s: want one Sign in button posting the token, alone, to /signin:\n%s", who, page.body)
	}
}

// Opening a sign-in link uses nothing up, however often it is fetched (a
// chat's link preview, a mail scanner, a browser's prefetch, then the
// person): the page only offers a button, which posts the token to
// /signin (the token in no other URL, no referrer sent). The press starts
// the session on the link's page; a second press is refused, saying how
// to get a new link, and the link then shows that too.
func TestSignInLinkSurvivesPreviews(t *testing.T) {
	f := newFixture(t)
	link, err := f.srv.SignInFor(t.Context(), f.ts.URL, Person{}, f.id)
	if err != nil {
		t.Fatal(err)
	}
	for _, who := range []string{"a link preview", "the person"} {
		openOnly(t, who, link)
	}

	jar, _ := cookiejar.New(nil)
	c := noFollow(&http.Client{Jar: jar})
	action, form := signInForm(t, c, link)
	in := post(t, c, action, form)
	if in.code != http.StatusSeeOther || in.header.Get("Location") != "/runs/"+string(f.id) || len(in.cookies()) != 1 {
		t.Fatalf("the press: %d to %q, cookies %v", in.code, in.header.Get("Location"), in.cookies())
	}
	if res := get(t, c, f.ts.URL+"/runs/"+string(f.id)); res.code != http.StatusOK {
		t.Fatalf("the session the press started: %d", res.code)
	}

	again := post(t, http.DefaultClient, action, form)
	if again.code != http.StatusUnauthorized || len(again.cookies()) != 0 ||
		!strings.Contains(again.body, "This sign-in link is used up") || !strings.Contains(again.body, "run gonogo web again for a new one") {
		t.Fatalf("a second press: %d %q", again.code, again.body)
	}
	if res := get(t, http.DefaultClient, link); res.code != http.StatusUnauthorized || !strings.Contains(res.body, "used up") {
		t.Fatalf("the used link opened: %d %q", res.code, res.body)
	}
	if res := post(t, http.DefaultClient, f.ts.URL+"/signin", url.Values{}); res.code != http.StatusUnauthorized {
		t.Fatalf("a press without a token: %d", res.code)
	}
}
