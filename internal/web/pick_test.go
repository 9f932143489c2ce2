package web

import (
	"context"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// candidateRunner is the agent of a best-of run: each runner name writes
// its own draft of step 1 ("broken" fails), and every other attempt a
// short document.
type candidateRunner struct{}

// drafts are step 1's candidates' artifacts by runner: a shared heading
// and closing line around a line of their own; codex's carries a script
// that must not come alive.
var drafts = map[string]string{
	"claude": "# Brief\n\nClaude's plan, in three parts.\n\nShared closing line.\n",
	"codex":  "# Brief\n\nCodex's plan, in two parts.\n\n<script>alert(1)</script>\n\nShared closing line.\n",
}

func (candidateRunner) Run(_ context.Context, job engine.Job, _ func(engine.Progress)) engine.Outcome {
	if job.Step == 1 {
		if job.Runner == "broken" {
			return engine.Outcome{AgentError: "the model is down"}
		}
		return engine.Outcome{Artifact: []byte(drafts[job.Runner])}
	}
	return engine.Outcome{Artifact: fmt.Appendf(nil, "# Stories\n\nAttempt %d of %s.\n", job.Attempt, job.Skill)}
}

// bestOfFixture is a run whose step 1 ran on runners at once and waits
// for a pick, served with the page's forms.
func bestOfFixture(t *testing.T, runners ...string) *fixture {
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
	p.Steps[0].Rules.BestOf = runners
	f := startFixture(t, cat, candidateRunner{}, p, engine.StartOptions{StartedBy: "ana"})
	if st := f.load().Step(1); !engine.Picking(st) {
		t.Fatalf("step 1 is %s, not waiting for a pick", st.Status)
	}
	f.deciding(0)
	return f
}

var articleRE = regexp.MustCompile(`(?s)<article class="candidate( picked)?" id="step-1-attempt-(\d+)">(.*?)</article>`)

// candidates are the candidate articles of step 1 on page, by attempt.
func candidates(t *testing.T, page string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, m := range articleRE.FindAllStringSubmatch(page, -1) {
		out[m[2]] = m[1] + m[3]
	}
	return out
}

// pickForm is the pick form of candidate k on page, as a browser sends
// it; ok is false when the page has none.
func pickForm(page string, k int) (string, url.Values, bool) {
	for _, m := range formRE.FindAllStringSubmatch(page, -1) {
		v := url.Values{}
		for _, h := range hiddenRE.FindAllStringSubmatch(m[2], -1) {
			v.Set(h[1], html.UnescapeString(h[2]))
		}
		if v.Get("kind") == "pick" && v.Get("candidate") == fmt.Sprint(k) {
			return m[1], v, true
		}
	}
	return "", nil, false
}

// A best-of step waiting for a pick shows each candidate with its runner,
// result, rendered artifact and raw text's link; a pick form on each one
// that may be picked and none on the FAILED one; and the diff of each
// candidate with an artifact against candidate 1.
func TestBestOfRoundShowsEachCandidate(t *testing.T) {
	f := bestOfFixture(t, "claude", "codex", "broken")
	c := f.client()
	page := get(t, c, f.ts.URL+"/runs/"+string(f.id)).body
	cs := candidates(t, page)
	if len(cs) != 3 {
		t.Fatalf("the page shows candidates %v, want attempts 1 to 3:\n%s", cs, page)
	}
	raw := func(a int) string { return fmt.Sprintf(`href="/runs/%s/steps/1/attempts/%d/raw"`, f.id, a) }
	mustContain(t, "candidate 1", cs["1"], "Candidate 1 · claude", `<p class="result result-PRODUCED">PRODUCED</p>`,
		"<h1>Brief</h1>", "<p>Claude's plan, in three parts.</p>", raw(1), "Pick this")
	mustContain(t, "candidate 2", cs["2"], "Candidate 2 · codex", `<p class="result result-PRODUCED">PRODUCED</p>`,
		"<p>Codex's plan, in two parts.</p>", "<!-- raw HTML omitted -->", raw(2), "Pick this")
	mustContain(t, "candidate 3", cs["3"], "Candidate 3 · broken", `<p class="result result-FAILED">FAILED - `, "the model is down")
	mustLack(t, "candidate 3", cs["3"], "Pick this", raw(3), `class="artifact"`)
	mustLack(t, "the page", page, "<script>alert(1)", "Compare attempts")
	for k, want := range map[int]bool{1: true, 2: true, 3: false} {
		_, v, ok := pickForm(page, k)
		if ok != want {
			t.Errorf("a pick form for candidate %d: %v, want %v", k, ok, want)
			continue
		}
		if ok && (v.Get("step") != "1" || v.Get("attempt") != fmt.Sprint(k) || !strings.HasPrefix(v.Get("key"), "web:") || v.Get("csrf") == "") {
			t.Errorf("candidate %d's pick form: %v", k, v)
		}
	}
	// One diff: candidate 2 against 1; the FAILED one has no artifact.
	if n := strings.Count(page, `<details class="candidate-diff"`); n != 1 {
		t.Errorf("%d candidate diffs, want 1", n)
	}
	mustContain(t, "the diff", page, "Diff: candidate 1 → candidate 2",
		fmt.Sprintf(`href="/runs/%s/steps/1/diff?a=1&amp;b=2"`, f.id),
		"<del>- Claude&#39;s plan, in three parts.</del>", "<ins>+ Codex&#39;s plan, in two parts.</ins>",
		"<ins>+ &lt;script&gt;alert(1)&lt;/script&gt;</ins>", "<span>  Shared closing line.</span>")
}

// A pick from the page is the engine's pick, recorded as the operator
// with the note; the page then shows the candidate picked, by whom and
// why, and offers no pick. The same form sent again applies once.
func TestPickFromThePage(t *testing.T) {
	f := bestOfFixture(t, "claude", "codex")
	c := f.client()
	page := get(t, c, f.ts.URL+"/runs/"+string(f.id)).body
	action, form, ok := pickForm(page, 2)
	if !ok {
		t.Fatalf("no pick form for candidate 2:\n%s", page)
	}
	form.Set("feedback", "tighter scope")
	after := f.send(c, action, form)
	mustContain(t, "the page after the pick", after.body, `<p class="said" role="status">Picked candidate 2 of step 1: its artifact is the step&#39;s.</p>`)
	st := f.load().Step(1)
	if l := st.Latest(); l == nil || l.N != 2 || !l.Picked || l.Runner != "codex" {
		t.Fatalf("step 1 stands on %+v, want codex's attempt 2 picked", l)
	}
	if d := engine.StepDecision(st); d == nil || d.Kind != engine.DecidePick || d.Actor != operator || d.Candidate != 2 || d.Feedback != "tighter scope" {
		t.Fatalf("step 1's decision %+v, want %s's pick of candidate 2 with the note", d, operator)
	}
	cs := candidates(t, after.body)
	mustContain(t, "the picked candidate", cs["2"], " picked", `<span class="picked-mark">Picked</span>`,
		"Picked by "+operator+" at ", ": tighter scope</p>")
	mustLack(t, "the other candidate", cs["1"], "Picked", " picked")
	mustLack(t, "the page after the pick", after.body, "Pick this")

	again := f.send(c, action, form)
	mustContain(t, "the page after the same form again", again.body,
		`Already decided with this form: pick of step 1 (candidate 2, attempt 2) by `+operator+` with note &#34;tighter scope&#34;; nothing applied twice.`)
	if evs := f.decisionEvents(1); len(evs) != 1 || evs[0].Decision != engine.DecidePick {
		t.Fatalf("step 1's journaled decisions: %+v, want the one pick", evs)
	}
}

// A pick the engine refuses is answered in its words, and nothing is
// decided: a FAILED candidate (a form the page never offers), and a pick
// made on a page from before the round was redone.
func TestPickRefusedInTheEnginesWords(t *testing.T) {
	f := bestOfFixture(t, "claude", "codex", "broken")
	c := f.client()
	page := get(t, c, f.ts.URL+"/runs/"+string(f.id)).body
	action, form, _ := pickForm(page, 2)
	failed := url.Values{}
	for k, v := range form {
		failed[k] = v
	}
	failed.Set("attempt", "3")
	failed.Set("candidate", "3")
	_, want := engine.PickDecision(f.load(), 1, 3, operator, "")
	if want == nil {
		t.Fatal("the engine picks a FAILED candidate")
	}
	res := f.send(c, action, failed)
	mustContain(t, "the page after picking the FAILED one", res.body, `<p class="said" role="status">Refused: `+html.EscapeString(want.Error())+`</p>`)

	f.decide(engine.DecideRedo, 1, 3, "again")
	r := f.waiting(1, 6)
	stale := engine.Decision{Kind: engine.DecidePick, Actor: operator, Step: 1, Attempt: 2, Candidate: 2, Key: form.Get("key")}
	if _, want = engine.Decide(r, stale, nil, time.Now()); want == nil {
		t.Fatal("the engine takes a pick of the last round")
	}
	res = f.send(c, action, form)
	mustContain(t, "the page after a pick from the last round", res.body, `<p class="said" role="status">Refused: `+html.EscapeString(want.Error())+`</p>`)
	for _, ev := range f.decisionEvents(1) {
		if ev.Decision == engine.DecidePick {
			t.Fatalf("a refused pick was recorded: %+v", ev)
		}
	}
	if !engine.Picking(f.load().Step(1)) {
		t.Fatal("the new round no longer waits for a pick")
	}
}

// A pick form without its candidate is refused before anything is
// decided.
func TestPickFormWithoutItsCandidate(t *testing.T) {
	f := bestOfFixture(t, "claude", "codex")
	c := f.client()
	action, form, _ := pickForm(get(t, c, f.ts.URL+"/runs/"+string(f.id)).body, 1)
	form.Del("candidate")
	res := post(t, noFollow(c), f.ts.URL+action, form)
	if res.code != 400 || !strings.Contains(res.body, "the pick form lacks its candidate") {
		t.Fatalf("%d %s", res.code, res.body)
	}
	if evs := f.decisionEvents(1); len(evs) != 0 {
		t.Fatalf("decided: %+v", evs)
	}
}
