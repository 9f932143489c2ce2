package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/sethvargo/go-envconfig"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/hangguard"
)

var signInRE = regexp.MustCompile(`gonogo web: sign in at (http://127\.0\.0\.1:\d+/signin\?token=[A-Za-z0-9_-]{43}) \(works once, for 10 minutes\)\n`)

// TestWebBinary runs gonogo web as a process of its own over a data
// directory with a waiting run: the link it prints signs a browser in,
// once; the run list and the run's page show the run; Ctrl-C stops it
// with exit 0.
func TestWebBinary(t *testing.T) {
	id, vars := waitingRun(t, "deliver-prd -- saved searches")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "web", "--addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "GONOGO_TEST_AS_MAIN=1", "USER=tester", "GONOGO_DATA_DIR="+vars["GONOGO_DATA_DIR"])
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	link := waitFor(t, &out, signInRE, "the sign-in link")[1]

	fetch := func(c *http.Client, u string) (int, string) {
		t.Helper()
		res, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	base := link[:strings.Index(link, "/signin")]
	if code, _ := fetch(http.DefaultClient, base+"/runs"); code != http.StatusUnauthorized {
		t.Errorf("the run list without a session: %d", code)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	list := signInWith(t, browser, link)
	if !strings.Contains(list, `href="/runs/`+id+`"`) || !strings.Contains(list, "Waiting on people") {
		t.Fatalf("signed in to the run list:\n%s", list)
	}
	if code, page := fetch(browser, base+"/runs/"+id); code != http.StatusOK || !strings.Contains(page, "deliver-prd") ||
		!strings.Contains(page, `state-waiting">waiting<`) {
		t.Errorf("the run's page: %d\n%s", code, page)
	}
	approveThroughPage(t, browser, base, id)
	jar2, _ := cookiejar.New(nil)
	if code, _ := fetch(&http.Client{Jar: jar2}, link); code != http.StatusUnauthorized {
		t.Errorf("the link's second use: %d", code)
	}

	// Another gonogo takes the data directory: the pages read through it,
	// and follow its run as a decision from a third process moves it on.
	env := append(os.Environ(), "GONOGO_TEST_AS_MAIN=1", "USER=tester")
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	h := startHolder(t, env, "run", "--chain", "define-problem-statement -> deliver-prd -- saved searches")
	held := waitFor(t, h.out, regexp.MustCompile(`gonogo run (\S+)`), "the run id")[1]
	waitFor(t, h.out, regexp.MustCompile(`Step 1 of 2: define-problem-statement[\s\S]*Result:\s+PRODUCED`), "step 1's result")
	code, page := fetch(browser, base+"/runs/"+held)
	seq := regexp.MustCompile(`data-seq="(\d+)"`).FindStringSubmatch(page)
	if code != http.StatusOK || seq == nil {
		t.Fatalf("the held run's page: %d\n%s", code, page)
	}
	ctx, cancel := context.WithTimeout(t.Context(), hangguard.Limit(t))
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/runs/"+held+"/events?after="+seq[1], nil)
	events, err := browser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer events.Body.Close()
	if res := subprocess(t, env, "", "decide", held, "approve"); res.code != 0 {
		t.Fatalf("decide: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	line, err := bufio.NewReader(events.Body).ReadString('\n')
	if err != nil || line != "event: change\n" {
		t.Fatalf("the held run's events: %q, %v", line, err)
	}

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("gonogo web after Ctrl-C: %v\n%s", err, out.String())
	}
}

// approveThroughPage sends the approve form of run id's page, as a browser
// does, and checks the run's page after it: the result line, and the
// decision recorded as the operator gonogo web runs as.
func approveThroughPage(t *testing.T, browser *http.Client, base, id string) {
	t.Helper()
	res, err := browser.Get(base + "/runs/" + id)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := regexp.MustCompile(`(?s)<form method="post" action="(/runs/[^"]+/decide)">(<input type="hidden"[^<]*>){3}<input type="hidden" name="key" value="([^"]+)"><input type="hidden" name="kind" value="approve">`).FindSubmatch(page)
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(page)
	if m == nil || csrf == nil {
		t.Fatalf("no approve form on the run's page:\n%s", page)
	}
	form := url.Values{"csrf": {string(csrf[1])}, "key": {string(m[3])}, "kind": {"approve"}, "step": {"1"}, "attempt": {"1"}}
	res, err = browser.PostForm(base+string(m[1]), form)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(after), "Approved step 1. Recorded: no gonogo holds the data directory, so the run goes on with gonogo resume "+id+".") ||
		!strings.Contains(string(after), "<b>approve</b> by tester") {
		t.Fatalf("the run's page after approving: %d\n%s", res.StatusCode, after)
	}
}

// An edit from the page, in a data directory no gonogo holds, is recorded
// in the store byte for byte, as the operator, for gonogo resume to go on
// from.
func TestWebEditRecordedInTheStore(t *testing.T) {
	id, vars := waitingRun(t, "deliver-prd -- saved searches")
	vars["USER"] = "tester"
	e := env{stdout: io.Discard, stderr: io.Discard, lookup: envconfig.MapLookuper(vars), getenv: func(k string) string { return vars[k] }}
	dc, err := webDeciders(e, vars["GONOGO_DATA_DIR"])(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	body := []byte("# Edited\n\n" + strings.Repeat("A reviewer's line.\n", 1200))
	d := engine.Decision{Kind: engine.DecideEdit, Step: 1, Attempt: 1, Key: "web:k", Actor: actor(e)}
	r, carried, err := dc.Decide(t.Context(), engine.RunID(id), d, body)
	if cerr := dc.Close(); err != nil || cerr != nil {
		t.Fatalf("edit: %v; close: %v", err, cerr)
	}
	if carried || r.Step(1).Decisions[0].Actor != "tester" {
		t.Errorf("edit carried %v, decided by %+v", carried, r.Step(1).Decisions)
	}
	rd, err := openReader(t.Context(), e, vars["GONOGO_DATA_DIR"])
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	got, err := rd.Artifact(t.Context(), engine.RunID(id), 1, 1)
	if err != nil || !bytes.Equal(got, body) {
		t.Errorf("the stored edit: %d bytes (%v), want the %d sent", len(got), err, len(body))
	}
}
