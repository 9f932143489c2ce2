package web

import (
	"context"
	"errors"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
)

const operator = "olga"

// serviceDecider takes the page's decisions to the service carrying out
// the run, as the local API of the gonogo holding a data directory does.
type serviceDecider struct{ svc *engine.Service }

func (d serviceDecider) Decide(ctx context.Context, id engine.RunID, dc engine.Decision, body []byte) (*engine.Run, bool, error) {
	r, err := d.svc.Decide(ctx, id, dc, body)
	return r, true, err
}
func (d serviceDecider) Pause(ctx context.Context, id engine.RunID, actor string) (*engine.Run, bool, error) {
	r, err := d.svc.Pause(ctx, id, actor)
	return r, true, err
}
func (d serviceDecider) Unpause(ctx context.Context, id engine.RunID, actor string) (*engine.Run, bool, error) {
	r, err := d.svc.Unpause(ctx, id, actor, "")
	return r, true, err
}
func (serviceDecider) Close() error { return nil }

// deciding serves f's run with the page's forms, decided as operator, with
// edits capped at maxEdit bytes.
func (f *fixture) deciding(maxEdit int64) {
	f.t.Helper()
	f.srv = New(func(context.Context) (Source, error) { return held{f.db}, nil }, Options{
		PollEvery: 5 * time.Millisecond, Actor: operator, MaxEdit: maxEdit,
		Decide: func(context.Context) (Decider, error) { return serviceDecider{f.svc}, nil },
	})
	f.ts = httptest.NewServer(f.srv)
	f.t.Cleanup(f.ts.Close)
}

// noFollow is c answering redirects instead of following them.
func noFollow(c *http.Client) *http.Client {
	n := *c
	n.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &n
}

var (
	formRE   = regexp.MustCompile(`(?s)<form method="post" action="([^"]+)"[^>]*>(.*?)</form>`)
	hiddenRE = regexp.MustCompile(`<input type="hidden" name="([a-z]+)" value="([^"]*)">`)
	bodyRE   = regexp.MustCompile(`(?s)<textarea name="body" rows="24">\n(.*?)</textarea>`)
)

// pageForm is the form on page whose action ends in action and whose
// fields hold kind ("" for any), as a browser would send it.
func pageForm(t *testing.T, page, action, kind string) (string, url.Values) {
	t.Helper()
	for _, m := range formRE.FindAllStringSubmatch(page, -1) {
		if !strings.HasSuffix(m[1], action) {
			continue
		}
		v := url.Values{}
		for _, h := range hiddenRE.FindAllStringSubmatch(m[2], -1) {
			v.Set(h[1], html.UnescapeString(h[2]))
		}
		if kind == "" || v.Get("kind") == kind {
			if b := bodyRE.FindStringSubmatch(m[2]); b != nil {
				v.Set("body", html.UnescapeString(b[1]))
			}
			return m[1], v
		}
	}
	t.Fatalf("no %s form %q on the page:\n%s", kind, action, page)
	return "", nil
}

func post(t *testing.T, c *http.Client, u string, v url.Values) response {
	t.Helper()
	return answered(t)(c.PostForm(u, v))
}

// send posts v to the page's action and follows the 303 to the run page.
func (f *fixture) send(c *http.Client, action string, v url.Values) response {
	f.t.Helper()
	res := post(f.t, noFollow(c), f.ts.URL+action, v)
	if res.code != http.StatusSeeOther || res.header.Get("Location") != "/runs/"+string(f.id) {
		f.t.Fatalf("%s: %d to %q, want 303 to the run page\n%s", action, res.code, res.header.Get("Location"), res.body)
	}
	return get(f.t, c, f.ts.URL+"/runs/"+string(f.id))
}

func (f *fixture) load() *engine.Run {
	f.t.Helper()
	r, err := f.db.Load(f.t.Context(), f.id)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

// decisionEvents counts the journal's decisions on step n.
func (f *fixture) decisionEvents(n int) []engine.Event {
	f.t.Helper()
	_, evs, err := f.db.RunWithJournal(f.t.Context(), f.id)
	if err != nil {
		f.t.Fatal(err)
	}
	var out []engine.Event
	for _, ev := range evs {
		if ev.Type == engine.EvDecision && ev.Step == n {
			out = append(out, ev)
		}
	}
	return out
}

// Approve on the page moves the run on, journaled as the operator; the
// same form sent twice applies once and answers with the decision made.
func TestApproveFromThePage(t *testing.T) {
	f := newFixture(t)
	f.deciding(0)
	c := f.client()
	page := get(t, c, f.ts.URL+"/runs/"+string(f.id)).body
	action, form := pageForm(t, page, "/decide", "approve")
	if form.Get("step") != "1" || form.Get("attempt") != "1" || !strings.HasPrefix(form.Get("key"), "web:") {
		t.Fatalf("the approve form: %v", form)
	}
	after := f.send(c, action, form)
	mustContain(t, "the page after approving", after.body, `<p class="said" role="status">Approved step 1.</p>`)
	f.waiting(2, 1)
	evs := f.decisionEvents(1)
	if len(evs) != 1 || evs[0].Decision != engine.DecideApprove || evs[0].Actor != operator || evs[0].Key != form.Get("key") {
		t.Fatalf("step 1's decisions in the journal: %+v", evs)
	}

	again := f.send(c, action, form)
	mustContain(t, "the page after the second send", again.body,
		"Already decided with this form: approve of step 1 (attempt 1) by olga; nothing applied twice.")
	mustLack(t, "the page after the second send", again.body, "Refused")
	if evs := f.decisionEvents(1); len(evs) != 1 {
		t.Errorf("the second send decided again: %+v", evs)
	}
	if got := get(t, c, f.ts.URL+"/runs/"+string(f.id)).body; strings.Contains(got, "Already decided") {
		t.Errorf("the result line shows twice:\n%s", got)
	}
}

// A form without its session's token, or with another, is refused with
// 403 and decides nothing.
func TestFormWithoutItsTokenIsForbidden(t *testing.T) {
	f := newFixture(t)
	f.deciding(0)
	c := f.client()
	page := get(t, c, f.ts.URL+"/runs/"+string(f.id)).body
	action, form := pageForm(t, page, "/decide", "approve")
	other := get(t, f.client(), f.ts.URL+"/runs/"+string(f.id)).body
	_, otherForm := pageForm(t, other, "/decide", "approve")
	if otherForm.Get("csrf") == form.Get("csrf") {
		t.Fatal("two sessions share a token")
	}
	wrong := []byte(form.Get("csrf"))
	wrong[0] ^= 1 // still base64url, another token
	for name, tok := range map[string]string{"missing": "", "wrong": string(wrong), "another session's": otherForm.Get("csrf")} {
		v := url.Values{}
		for k := range form {
			v.Set(k, form.Get(k))
		}
		if tok == "" {
			v.Del("csrf")
		} else {
			v.Set("csrf", tok)
		}
		res := post(t, noFollow(c), f.ts.URL+action, v)
		if res.code != http.StatusForbidden || !strings.Contains(res.body, "security token is missing or wrong") {
			t.Errorf("%s token: %d %s", name, res.code, res.body)
		}
		pv := url.Values{"csrf": {v.Get("csrf")}}
		if res := post(t, noFollow(c), f.ts.URL+"/runs/"+string(f.id)+"/pause", pv); res.code != http.StatusForbidden {
			t.Errorf("pause with a %s token: %d %s", name, res.code, res.body)
		}
	}
	if r := f.load(); len(r.Step(1).Decisions) != 0 || r.Paused {
		t.Errorf("a refused form changed the run: %+v, paused %v", r.Step(1).Decisions, r.Paused)
	}
}

// A form for an attempt the step has moved past shows the engine's
// refusal, in its words.
func TestStaleFormShowsTheEnginesRefusal(t *testing.T) {
	f := newFixture(t)
	f.deciding(0)
	c := f.client()
	page := get(t, c, f.ts.URL+"/runs/"+string(f.id)).body
	action, form := pageForm(t, page, "/decide", "approve")
	f.decide(engine.DecideRedo, 1, 1, "again")
	r := f.waiting(1, 2)
	_, want := engine.Decide(r, engine.Decision{Kind: engine.DecideApprove, Step: 1, Attempt: 1, Actor: operator}, nil, time.Now())
	if !errors.Is(want, engine.ErrStale) {
		t.Fatalf("the engine takes the stale approve: %v", want)
	}
	after := f.send(c, action, form)
	mustContain(t, "the page after a stale form", after.body, "Refused: "+html.EscapeString(want.Error()))
	if d := f.load().Step(1).Decisions; len(d) != 1 || d[0].Kind != engine.DecideRedo {
		t.Errorf("the stale form decided: %+v", d)
	}
}

// An edit of 20,000 characters is stored whole; its preview renders
// nothing live and decides nothing; one over the limit is refused.
func TestEditFromThePage(t *testing.T) {
	f := newFixture(t)
	f.deciding(30_000)
	c := f.client()
	page := get(t, c, f.ts.URL+"/runs/"+string(f.id)).body
	action, form := pageForm(t, page, "/decide", "edit")
	if form.Get("body") != evil {
		t.Fatalf("the edit form is not prefilled with the artifact: %q", form.Get("body"))
	}
	var b strings.Builder
	b.WriteString("# Edited\n\n<script>alert('edit')</script>\n\n[x](javascript:alert(1))\n\n")
	for b.Len() < 20_000 {
		b.WriteString("A line a reviewer wrote, one of many.\n")
	}
	body := b.String()[:20_000]
	form.Set("body", body)

	preview := url.Values{"preview": {"1"}}
	for k := range form {
		preview.Set(k, form.Get(k))
	}
	res := post(t, noFollow(c), f.ts.URL+action, preview)
	if res.code != http.StatusOK {
		t.Fatalf("preview: %d %s", res.code, res.body)
	}
	mustContain(t, "the preview", res.body, `<div class="artifact">`, "<h1", "Edited")
	mustLack(t, "the preview", res.body, "<script>alert")
	rendered := res.body[strings.Index(res.body, `<div class="artifact">`):]
	rendered = rendered[:strings.Index(rendered, "</div>")]
	mustLack(t, "the rendered preview", rendered, "<script", "javascript:")
	if d := f.load().Step(1).Decisions; len(d) != 0 {
		t.Fatalf("the preview decided: %+v", d)
	}
	_, fromPreview := pageForm(t, res.body, "/decide", "edit")
	if fromPreview.Get("body") != body || fromPreview.Get("key") != form.Get("key") {
		t.Fatal("the preview's form does not carry the edit and its key on")
	}

	after := f.send(c, action, fromPreview)
	mustContain(t, "the page after the edit", after.body, "Edited step 1")
	got, err := f.db.Artifact(t.Context(), f.id, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != body {
		t.Errorf("the stored edit is %d bytes, not the %d sent", len(got), len(body))
	}
	// The run page compares the agent's text with the edit it approved.
	link := "/runs/" + string(f.id) + "/steps/1/diff?a=1&amp;edit=1"
	mustContain(t, "the run page after the edit", get(t, c, f.ts.URL+"/runs/"+string(f.id)).body, link)
	diff := get(t, c, f.ts.URL+html.UnescapeString(link))
	if diff.code != http.StatusOK {
		t.Fatalf("the edit's diff: %d %s", diff.code, diff.body)
	}
	mustContain(t, "the edit's diff", diff.body, "the agent's text → the edit", "<del>- The plan, at length.</del>",
		"<ins>+ A line a reviewer wrote, one of many.</ins>", "<del>- &lt;script&gt;alert(1)&lt;/script&gt;</del>")
	mustLack(t, "the edit's diff", diff.body, "<script>alert")

	f2 := newFixture(t)
	f2.deciding(30_000)
	c2 := f2.client()
	action, form = pageForm(t, get(t, c2, f2.ts.URL+"/runs/"+string(f2.id)).body, "/decide", "edit")
	form.Set("body", strings.Repeat("x", 30_001))
	res = post(t, noFollow(c2), f2.ts.URL+action, form)
	if res.code != http.StatusRequestEntityTooLarge || !strings.Contains(res.body, "30001 bytes, over the 30000-byte artifact limit (GONOGO_MAX_ARTIFACT)") {
		t.Errorf("an edit over the limit: %d %s", res.code, res.body)
	}
	if res := get(t, c2, f2.ts.URL+"/runs/"+string(f2.id)+"/steps/1/diff?a=1&edit=1"); res.code != http.StatusNotFound {
		t.Errorf("the edit diff of an attempt nobody edited: %d, want 404", res.code)
	}
	if d := f2.load().Step(1).Decisions; len(d) != 0 {
		t.Errorf("an edit over the limit decided: %+v", d)
	}
}

// Abort asks first; only the confirmed form aborts.
func TestAbortNeedsConfirming(t *testing.T) {
	f := newFixture(t)
	f.deciding(0)
	c := f.client()
	action, form := pageForm(t, get(t, c, f.ts.URL+"/runs/"+string(f.id)).body, "/decide", "abort")
	res := post(t, noFollow(c), f.ts.URL+action, form)
	if res.code != http.StatusOK {
		t.Fatalf("abort: %d %s", res.code, res.body)
	}
	mustContain(t, "the confirm page", res.body, "Abort run "+string(f.id)+"? This stops the run.")
	if r := f.load(); r.State == engine.RunAborted || len(r.Step(1).Decisions) != 0 {
		t.Fatalf("abort without confirming changed the run: %s", r.State)
	}
	_, confirm := pageForm(t, res.body, "/decide", "abort")
	if confirm.Get("confirm") != "yes" || confirm.Get("key") != form.Get("key") {
		t.Fatalf("the confirm form: %v", confirm)
	}
	after := f.send(c, action, confirm)
	mustContain(t, "the page after aborting", after.body, "Aborted run "+string(f.id)+".")
	if r := f.load(); r.State != engine.RunAborted {
		t.Errorf("the confirmed abort left the run %s", r.State)
	}
}

// Pause shows while the run moves and pauses it; Resume then shows and
// resumes it.
func TestPauseThenResume(t *testing.T) {
	hold := make(chan struct{})
	f := newFixtureWith(t, runner{hold: hold})
	t.Cleanup(func() { close(hold) })
	f.deciding(0)
	c := f.client()
	f.decide(engine.DecideApprove, 1, 1, "")
	page := get(t, c, f.ts.URL+"/runs/"+string(f.id)).body
	if r := f.load(); r.State != engine.RunRunning {
		t.Fatalf("the run is %s, not running", r.State)
	}
	mustLack(t, "a moving run's page", page, "/resume\"")
	action, form := pageForm(t, page, "/pause", "")
	after := f.send(c, action, form)
	mustContain(t, "the page after pausing", after.body, "Paused run "+string(f.id))
	if r := f.load(); !r.Paused || r.PausedBy != operator {
		t.Fatalf("paused %v by %q", r.Paused, r.PausedBy)
	}
	mustLack(t, "a paused run's page", after.body, "/pause\"")
	action, form = pageForm(t, after.body, "/resume", "")
	after = f.send(c, action, form)
	mustContain(t, "the page after resuming", after.body, "Resumed run "+string(f.id)+".")
	if r := f.load(); r.Paused {
		t.Error("the run is still paused")
	}
	again := f.send(c, action, form)
	mustContain(t, "resume sent twice", again.body, "Nothing changed: run "+string(f.id)+": not paused")
}

// Without a Decider the pages are read-only: no form, and a post is not
// a route.
func TestReadOnlyPagesOfferNoForms(t *testing.T) {
	f := newFixture(t)
	c := f.client()
	page := get(t, c, f.ts.URL+"/runs/"+string(f.id)).body
	mustLack(t, "a read-only run page", page, "<form", "Approve")
	res := post(t, noFollow(c), f.ts.URL+"/runs/"+string(f.id)+"/decide", url.Values{"kind": {"approve"}})
	if res.code != http.StatusNotFound {
		t.Errorf("a decision posted to read-only pages: %d %s", res.code, res.body)
	}
	if d := f.load().Step(1).Decisions; len(d) != 0 {
		t.Errorf("read-only pages decided: %+v", d)
	}
}

// The page a form was sent from may follow the run and fetch itself again
// as the form's decision lands (assets/live.js): that fetch leaves the
// form's result line to the page the browser goes to after the form.
func TestFollowingFetchLeavesTheFormsResult(t *testing.T) {
	f := newFixture(t)
	f.deciding(0)
	c := f.client()
	page := get(t, c, f.ts.URL+"/runs/"+string(f.id)).body
	action, form := pageForm(t, page, "/decide", "approve")
	if res := post(t, noFollow(c), f.ts.URL+action, form); res.code != http.StatusSeeOther {
		t.Fatalf("approve: %d %s", res.code, res.body)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, f.ts.URL+"/runs/"+string(f.id), nil)
	req.Header.Set("X-Gonogo-Follow", "1")
	followed := answered(t)(c.Do(req))
	mustContain(t, "the page fetched as it follows the run", followed.body, "<b>approve</b> by "+operator)
	mustLack(t, "the page fetched as it follows the run", followed.body, `class="said"`)
	after := get(t, c, f.ts.URL+"/runs/"+string(f.id))
	mustContain(t, "the page the form leads to", after.body, `<p class="said" role="status">Approved step 1.</p>`)
}

// failingDecider is a holder that stops answering once it has the
// decision, as the local API of a gonogo that stopped would.
type failingDecider struct{ serviceDecider }

var errHolderGone = errors.New("post http://127.0.0.1:1/v1/runs/r1/decisions: connection reset by peer")

func (failingDecider) Decide(context.Context, engine.RunID, engine.Decision, []byte) (*engine.Run, bool, error) {
	return nil, false, errHolderGone
}

// A decision the holder did not confirm is not called refused: the page
// says what it knows (not confirmed, and where to look), never that the
// run's rules said no. A refusal keeps its word (see
// TestStaleFormShowsTheEnginesRefusal).
func TestUnconfirmedDecisionIsNotCalledRefused(t *testing.T) {
	f := newFixture(t)
	f.deciding(0)
	f.srv.decider = func(context.Context) (Decider, error) { return failingDecider{serviceDecider{f.svc}}, nil }
	c := f.client()
	page := get(t, c, f.ts.URL+"/runs/"+string(f.id)).body
	action, form := pageForm(t, page, "/decide", "approve")
	after := f.send(c, action, form)
	mustContain(t, "the page after an unanswered decision", after.body,
		"Not confirmed: "+html.EscapeString(errHolderGone.Error())+". Reload the run&#39;s page to see whether the decision was recorded.")
	mustLack(t, "the page after an unanswered decision", after.body, "Refused")
}
