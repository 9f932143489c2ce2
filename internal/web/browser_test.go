package web

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/demo"
	"github.com/gonogo/gonogo/internal/intake"
)

// The tests named Browser drive headless Chromium (Debian's chromium
// package) through the pages as a reviewer does. Each waits on what the
// page shows, never on the clock; browserLimit only ends a hung one.
const browserLimit = 3 * time.Minute

// chromiumPath is the Chromium to drive; the test skips, saying why, when
// there is none.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium or chromium-browser on PATH: the browser tests need Chromium (Debian: apt-get install chromium; .ci/run installs it)")
	return ""
}

// newBrowser starts headless Chromium for t in a window w by h, with a
// profile of its own in a temporary folder. It stops when t ends, or at
// browserLimit.
func newBrowser(t *testing.T, w, h int) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(w, h))
	if os.Geteuid() == 0 {
		// Chromium will not start its sandbox as root (a CI container);
		// this browser only visits the test's own loopback server.
		opts = append(opts, chromedp.NoSandbox)
	}
	limit, stop := context.WithTimeout(context.Background(), browserLimit)
	alloc, cancelAlloc := chromedp.NewExecAllocator(limit, opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
		stop()
	})
	return ctx
}

// do runs the steps in ctx's tab, failing t with what when one fails.
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// eval is the value of a JavaScript expression in ctx's tab.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// signIn opens a new sign-in link in ctx's browser, presses its Sign in
// button and checks that it lands on the run list, where f's run is
// listed.
func (f *fixture) signIn(ctx context.Context) {
	f.t.Helper()
	link, err := f.srv.SignInURL(f.ts.URL)
	if err != nil {
		f.t.Fatal(err)
	}
	run := fmt.Sprintf(`a[href="/runs/%s"]`, f.id)
	button := chromedp.CSS(`form[action="/signin"] button`)
	do(f.t, ctx, "sign in", chromedp.Navigate(link), chromedp.WaitVisible(button), chromedp.Click(button), chromedp.WaitVisible(chromedp.CSS(run)))
	if at, err := chromedp.Run(ctx, chromedp.Location()); err != nil || at != f.ts.URL+"/runs" {
		f.t.Fatalf("the sign-in link led to %q (%v), want the run list", at, err)
	}
}

// openRun opens f's run page in ctx's tab, by its link on the run list.
func (f *fixture) openRun(ctx context.Context) {
	f.t.Helper()
	do(f.t, ctx, "open the run", chromedp.Navigate(f.ts.URL+"/runs"),
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`a[href="/runs/%s"]`, f.id))),
		chromedp.WaitVisible(chromedp.CSS(`#live h1`)))
}

// listed is an artifact with a heading, a list, and a script and an event
// handler that must not run.
const listed = "# Saved searches\n\nWhat buyers asked for:\n\n- alerts on new listings\n- a saved list per search\n- one-tap repeat\n\n" +
	"<script>window.scriptRan = true; document.title = 'taken'</script>\n\n<img src=x onerror=\"window.handlerRan = true\">\n"

// A reviewer signs in with the link, opens the run from the list and
// reads the artifact rendered: the heading and the list as such, the
// agent's script neither run nor in the rendered part, but in the raw
// text as text.
func TestBrowserSignInAndReadArtifact(t *testing.T) {
	f := newFixtureWith(t, runner{first: listed})
	ctx := newBrowser(t, 1280, 900)
	f.signIn(ctx)
	f.openRun(ctx)
	art := "#step-1-attempt-1 .artifact"
	do(t, ctx, "the rendered artifact", chromedp.WaitVisible(chromedp.CSS(art+" h1")))
	if h := eval[string](t, ctx, `document.querySelector("`+art+` h1").textContent`); h != "Saved searches" {
		t.Errorf("the artifact's heading reads %q", h)
	}
	items := eval[[]string](t, ctx, `Array.from(document.querySelectorAll("`+art+` ul > li"), li => li.textContent)`)
	if want := []string{"alerts on new listings", "a saved list per search", "one-tap repeat"}; !slices.Equal(items, want) {
		t.Errorf("the artifact's list items %q, want %q", items, want)
	}
	alive := eval[[]any](t, ctx, `[window.scriptRan ?? null, window.handlerRan ?? null, document.title, document.querySelectorAll("`+art+` script, `+art+` img").length]`)
	if want := []any{nil, nil, string(f.id) + " · gonogo", 0.0}; !slices.Equal(alive, want) {
		t.Errorf("script ran, handler ran, title, script and img elements in the artifact: %v, want %v", alive, want)
	}
	raw := "#step-1-attempt-1 pre.raw"
	do(t, ctx, "open the raw text", chromedp.Click(chromedp.CSS("#step-1-attempt-1 details > summary")), chromedp.WaitVisible(chromedp.CSS(raw)))
	if text := eval[string](t, ctx, `document.querySelector("`+raw+`").innerText`); !strings.Contains(text, "<script>window.scriptRan = true;") {
		t.Errorf("the raw text does not show the script as text:\n%s", text)
	}
}

// Two attempts compared from the run page's link show the first's lines
// removed and the second's added; the lines both share are neither.
func TestBrowserComparesTwoAttempts(t *testing.T) {
	f := newFixture(t)
	f.decide(engine.DecideRedo, 1, 1, "shorter, please")
	f.waiting(1, 2)
	ctx := newBrowser(t, 1280, 900)
	f.signIn(ctx)
	f.openRun(ctx)
	do(t, ctx, "compare", chromedp.Click(chromedp.CSS(`#step-1 a[href$="/steps/1/diff?a=1&b=2"]`)), chromedp.WaitVisible(chromedp.CSS("pre.diff")))
	lines := func(tag string) []string {
		return eval[[]string](t, ctx, `Array.from(document.querySelectorAll("pre.diff > `+tag+`"), e => e.textContent)`)
	}
	del, ins, same := lines("del"), lines("ins"), lines("span")
	for _, want := range []string{"- <script>alert(1)</script>", "- [click me](javascript:alert(2)) and [docs](https://example.com/docs) and [rel](notes.md)"} {
		if !slices.Contains(del, want) {
			t.Errorf("removed lines %q lack %q", del, want)
		}
	}
	if want := []string{"+ Attempt 2 of draft-brief."}; !slices.Equal(ins, want) {
		t.Errorf("added lines %q, want %q", ins, want)
	}
	if !slices.Contains(same, "  # Brief") || !slices.Contains(same, "  The plan, at length.") {
		t.Errorf("lines both share %q", same)
	}
}

// longEdit is a reviewer's whole new artifact of exactly n characters:
// a heading, indented and trailing-space lines, and text that is markup
// in HTML, each of which the form's round trip through the preview page
// must keep.
func longEdit(n int) string {
	var b strings.Builder
	b.WriteString("# Edited brief\n\n  indented <script>alert('x')</script> &amp; & < >  \n\n")
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "- line %05d of the reviewer's own text, not the agent's\n", i)
	}
	s := b.String()[:n-1] + "\n"
	return s
}

// A reviewer replaces a 20,000-character artifact in the full-length
// editor, previews it, and saves it: the edit is the step's decision
// (it approves the step with the reviewer's text). The store then holds
// exactly the text typed as the step's artifact, and the journal one
// decision.
func TestBrowserEditsALongArtifactAndApproves(t *testing.T) {
	f := newFixture(t)
	f.deciding(0)
	body := longEdit(20_000)
	if len([]rune(body)) != 20_000 {
		t.Fatalf("the edit is %d characters", len([]rune(body)))
	}
	ctx := newBrowser(t, 1280, 900)
	f.signIn(ctx)
	f.openRun(ctx)
	editor := "#step-1 form.edit textarea"
	do(t, ctx, "edit and preview",
		chromedp.Click(chromedp.CSS("#step-1 .offer details > summary")),
		chromedp.WaitVisible(chromedp.CSS(editor)),
		chromedp.SetValue(chromedp.CSS(editor), body),
		chromedp.Click(chromedp.CSS("#step-1 form.edit button[name=preview]")),
		// The preview page's own artifact (the run page's artifact is
		// inside its step, and stays visible until the preview comes).
		chromedp.WaitVisible(chromedp.CSS("main > h2 + div.artifact h1")))
	if h := eval[string](t, ctx, `document.querySelector("main > h2 + div.artifact h1").textContent`); h != "Edited brief" {
		t.Errorf("the preview's heading %q", h)
	}
	if n := len(f.decisionEvents(1)); n != 0 {
		t.Fatalf("a preview decided: %d decisions", n)
	}
	if again := eval[string](t, ctx, `document.querySelector("form.edit textarea").value`); again != body {
		t.Fatalf("the preview page's editor holds %d characters, not the %d typed (first difference at %d)", len(again), len(body), firstDiff(again, body))
	}
	// The run goes on to step 2 meanwhile, and the page follows it.
	do(t, ctx, "save the edit", chromedp.Click(chromedp.CSS("form.edit button:not([name])")), chromedp.WaitVisible(chromedp.CSS("#step-2 .offer")))
	if said := eval[string](t, ctx, `document.querySelector("p.said")?.textContent ?? "nothing"`); said != "Edited step 1: your text is its artifact." {
		t.Errorf("the page said %q", said)
	}
	got, err := f.db.Artifact(t.Context(), f.id, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != body {
		t.Errorf("step 1's artifact is %d bytes, not the %d edited (first difference at %d)", len(got), len(body), firstDiff(string(got), body))
	}
	evs := f.decisionEvents(1)
	if len(evs) != 1 || evs[0].Decision != engine.DecideEdit || evs[0].Actor != operator {
		t.Fatalf("step 1's journaled decisions: %+v", evs)
	}
	if st := f.load().Step(1); st.Status != engine.StepDone {
		t.Errorf("step 1 is %s after the edit", st.Status)
	}
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// A second window on the run's page follows it: when the first approves,
// the second shows the decision and no longer offers one, without being
// reloaded. The first, following the run to its next step, keeps the
// answer to its form.
func TestBrowserSecondWindowFollowsTheRun(t *testing.T) {
	hold := make(chan struct{})
	f := newFixtureWith(t, runner{hold: hold})
	step2 := sync.OnceFunc(func() { close(hold) })
	t.Cleanup(step2)
	f.deciding(0)
	first := newBrowser(t, 1280, 900)
	f.signIn(first)
	second, closeSecond := chromedp.NewContext(first) // a tab of the same browser and session
	defer closeSecond()
	f.openRun(first)
	f.openRun(second)
	do(t, second, "mark the second window's page", chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`))
	approve := `#step-1 .offer form:has(input[name=kind][value=approve]) button`
	do(t, first, "approve", chromedp.Click(chromedp.CSS(approve)), chromedp.WaitVisible(chromedp.CSS("p.said")))
	do(t, second, "the decision shown live", chromedp.WaitVisible(chromedp.CSS("#step-1 ul.decisions > li")))
	shown := eval[[]any](t, second, `[document.querySelector("#step-1 ul.decisions > li").textContent, document.querySelector("#step-1 .offer") === null, window.notReloaded ?? false]`)
	if d, _ := shown[0].(string); !strings.HasPrefix(d, "approve by "+operator) || shown[1] != true || shown[2] != true {
		t.Errorf("the second window shows decision %q, no offer: %v, not reloaded: %v", shown[0], shown[1], shown[2])
	}
	// Step 2 produces now, while the first window shows step 1 approved.
	step2()
	do(t, first, "the first window follows the run to step 2", chromedp.WaitVisible(chromedp.CSS("#step-2 .offer")))
	if said := eval[string](t, first, `document.querySelector("p.said")?.textContent ?? "nothing"`); said != "Approved step 1." {
		t.Errorf("the first window, at step 2, says %q", said)
	}
}

// exampleFixture is a run of gonogo demo's built-in example plan (the
// folder cmd/gonogo embeds), waiting on its first step, with the page's
// forms.
func exampleFixture(t *testing.T) *fixture {
	t.Helper()
	example := os.DirFS(filepath.Join("..", "..", "cmd", "gonogo"))
	s, cleanup, err := demo.Take(example, "", 0, intake.Request{StartedBy: "ana"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	f := startFixture(t, s.Catalog, demo.Runner{Example: example}, s.Plan, s.Options)
	f.deciding(0)
	return f
}

// The example's run page fits a desktop window and a phone's width: the
// page does not scroll sideways, and each decision's button is on screen
// across. With GONOGO_SCREENSHOTS set to a folder (relative: to the
// repository's root) the test writes the page's screenshots there, as
// docs/web.md shows them.
func TestBrowserExampleRunPageFits(t *testing.T) {
	for _, size := range []struct {
		name   string
		w, h   int
		mobile bool
	}{{"desktop", 1280, 900, false}, {"phone", 390, 844, true}} {
		t.Run(size.name, func(t *testing.T) {
			f := exampleFixture(t)
			ctx := newBrowser(t, size.w, size.h)
			if size.mobile {
				do(t, ctx, "a phone's viewport", chromedp.EmulateViewport(int64(size.w), int64(size.h), chromedp.EmulateMobile))
			}
			f.signIn(ctx)
			f.openRun(ctx)
			buttons := []string{"approve", "skip", "abort", "redo"}
			for _, k := range buttons {
				do(t, ctx, k+" button", chromedp.WaitVisible(chromedp.CSS(`#step-1 .offer form:has(input[name=kind][value=`+k+`]) button`)))
			}
			width := eval[[]float64](t, ctx, `[document.scrollingElement.scrollWidth, window.innerWidth]`)
			if width[1] != float64(size.w) || width[0] > width[1] {
				// A phone lays a page too wide for it out wider, zoomed out.
				t.Errorf("at %d pixels across the page lays out %v wide with %v of it in the window: it scrolls sideways or is zoomed out", size.w, width[0], width[1])
			}
			for _, k := range buttons {
				box := eval[[]float64](t, ctx, `(r => [r.left, r.right, r.width])(document.querySelector("#step-1 .offer form:has(input[name=kind][value=`+k+`]) button").getBoundingClientRect())`)
				if box[2] <= 0 || box[0] < 0 || box[1] > width[1] {
					t.Errorf("the %s button spans %v to %v of a window %v wide", k, box[0], box[1], width[1])
				}
			}
			screenshot(t, ctx, "run-"+size.name+".png")
		})
	}
}

// screenshot writes the tab's viewport as name into GONOGO_SCREENSHOTS,
// when it is set.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("GONOGO_SCREENSHOTS")
	if dir == "" {
		return
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join("..", "..", dir)
	}
	do(t, ctx, "scroll to the top", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A best-of step's candidates stand side by side in a desktop window and
// one above the other at a phone's width, where the page does not scroll
// sideways; the reviewer picks candidate 2 with a note and the page shows
// it picked, by them, with the note.
func TestBrowserPicksCandidateTwo(t *testing.T) {
	for _, size := range []struct {
		name   string
		w, h   int
		mobile bool
	}{{"desktop", 1280, 900, false}, {"phone", 390, 844, true}} {
		t.Run(size.name, func(t *testing.T) {
			f := bestOfFixture(t, "claude", "codex")
			ctx := newBrowser(t, size.w, size.h)
			if size.mobile {
				do(t, ctx, "a phone's viewport", chromedp.EmulateViewport(int64(size.w), int64(size.h), chromedp.EmulateMobile))
			}
			f.signIn(ctx)
			f.openRun(ctx)
			one, two := "#step-1-attempt-1.candidate", "#step-1-attempt-2.candidate"
			do(t, ctx, "the candidates", chromedp.WaitVisible(chromedp.CSS(two+" .artifact h1")))
			box := func(sel string) []float64 {
				return eval[[]float64](t, ctx, `(r => [r.left, r.top, r.right, r.bottom])(document.querySelector("`+sel+`").getBoundingClientRect())`)
			}
			a, b := box(one), box(two)
			if side := a[1] == b[1] && a[2] <= b[0]; side != !size.mobile {
				t.Errorf("candidate 1 at %v, candidate 2 at %v: side by side %v, want %v", a, b, side, !size.mobile)
			}
			if size.mobile && b[1] < a[3] {
				t.Errorf("at a phone's width candidate 2 (%v) does not stand below candidate 1 (%v)", b, a)
			}
			width := eval[[]float64](t, ctx, `[document.scrollingElement.scrollWidth, window.innerWidth]`)
			if width[1] != float64(size.w) || width[0] > width[1] {
				t.Errorf("at %d pixels across the page lays out %v wide with %v of it in the window", size.w, width[0], width[1])
			}
			pick := two + " form.pick"
			if btn := box(pick + " button"); btn[0] < 0 || btn[2] > width[1] {
				t.Errorf("candidate 2's Pick this button spans %v to %v of a window %v wide", btn[0], btn[2], width[1])
			}
			screenshot(t, ctx, "pick-"+size.name+".png")
			do(t, ctx, "pick candidate 2",
				chromedp.SetValue(chromedp.CSS(pick+" input[name=feedback]"), "tighter scope"),
				chromedp.Click(chromedp.CSS(pick+" button")),
				chromedp.WaitVisible(chromedp.CSS("#step-1-attempt-2.candidate.picked .picked-by")))
			shown := eval[[]string](t, ctx, `[document.querySelector("p.said")?.textContent ?? "nothing", document.querySelector("#step-1-attempt-2 .picked-by").textContent, String(document.querySelectorAll("form.pick").length), String(document.querySelectorAll(".candidate.picked").length)]`)
			if shown[0] != "Picked candidate 2 of step 1: its artifact is the step's." ||
				!strings.HasPrefix(shown[1], "Picked by "+operator+" at ") || !strings.HasSuffix(shown[1], ": tighter scope") ||
				shown[2] != "0" || shown[3] != "1" {
				t.Errorf("after the pick the page says %q, shows %q, %s pick forms, %s candidates picked", shown[0], shown[1], shown[2], shown[3])
			}
			if d := engine.StepDecision(f.load().Step(1)); d == nil || d.Kind != engine.DecidePick || d.Candidate != 2 || d.Actor != operator {
				t.Errorf("step 1's decision %+v, want %s's pick of candidate 2", d, operator)
			}
		})
	}
}
