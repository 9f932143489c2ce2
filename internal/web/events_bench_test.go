package web

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
)

var (
	csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	redoForm  = regexp.MustCompile(`name="attempt" value="(\d+)"><input type="hidden" name="key" value="([^"]+)"><input type="hidden" name="kind" value="redo">`)
	seqAttr   = regexp.MustCompile(`data-seq="(\d+)"`)
)

// follow opens the run's event stream as the page does, after seq; each
// change it reports is sent on changed with when it arrived.
func (br *benchRun) follow(ctx context.Context, tb testing.TB, c *http.Client, seq string) <-chan time.Time {
	tb.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/runs/%s/events?after=%s", br.ts.URL, br.id, seq), nil)
	res, err := c.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		tb.Fatalf("events: %d", res.StatusCode)
	}
	changed := make(chan time.Time, 16)
	go func() {
		defer res.Body.Close()
		lines := bufio.NewScanner(res.Body)
		for lines.Scan() {
			if lines.Text() == "event: change" {
				changed <- time.Now()
			}
		}
	}()
	return changed
}

// BenchmarkDecisionReachesOtherPage is two people with a run's page open
// (each following its event stream, over HTTP, the run in a bbolt store):
// one redoes the waiting step through the page's form, and the time until
// the other's stream reports the change is measured. It reports that
// time's p50 and p99 in ms; the page is fast when p99 is at most 500 ms.
func BenchmarkDecisionReachesOtherPage(b *testing.B) {
	br := newBenchRun(b, 1, runner{}, Options{})
	other := br.signIn(b)
	var took []time.Duration
	for b.Loop() {
		b.StopTimer()
		p := br.pageRedo(b, br.c, other)
		b.StartTimer()
		start := time.Now()
		p.submit(b)
		select {
		case at := <-p.theirs:
			took = append(took, at.Sub(start))
		case <-time.After(waitLimit):
			b.Fatal("the other page never heard of the decision")
		}
		b.StopTimer()
		p.cancel()
		br.waitingAttempt(b, 1, p.attempt+1)
		b.StartTimer()
	}
	slices.Sort(took)
	b.ReportMetric(ms(percentile(took, 50)), "p50-ms")
	b.ReportMetric(ms(percentile(took, 99)), "p99-ms")
}

// pageRedo is a redo of the waiting step as one person's page offers it,
// with both people's pages following the run.
type pageRedo struct {
	post    func() (*http.Response, error)
	attempt int
	theirs  <-chan time.Time // the other page's changes
	cancel  context.CancelFunc
}

func (br *benchRun) pageRedo(tb testing.TB, mine, other *http.Client) pageRedo {
	tb.Helper()
	page := fetch(tb, mine, br.ts.URL+"/runs/"+string(br.id))
	form, csrf, seq := redoForm.FindStringSubmatch(page.body), csrfField.FindStringSubmatch(page.body), seqAttr.FindStringSubmatch(page.body)
	if form == nil || csrf == nil || seq == nil {
		tb.Fatalf("the page offers no redo form:\n%s", page.body)
	}
	a, _ := number(form[1])
	ctx, cancel := context.WithCancel(context.Background())
	br.follow(ctx, tb, mine, seq[1])
	p := pageRedo{attempt: a, theirs: br.follow(ctx, tb, other, seq[1]), cancel: cancel}
	// The answer's redirect is the browser's next page, not the decision.
	noFollow := &http.Client{Jar: mine.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	p.post = func() (*http.Response, error) {
		return noFollow.PostForm(br.ts.URL+"/runs/"+string(br.id)+"/decide", url.Values{
			"csrf": {csrf[1]}, "key": {form[2]}, "kind": {"redo"}, "step": {"1"}, "attempt": {form[1]}, "feedback": {"again"},
		})
	}
	return p
}

// submit sends the form, failing tb unless it was taken.
func (p pageRedo) submit(tb testing.TB) {
	tb.Helper()
	if res := read(tb)(p.post()); res.code != http.StatusSeeOther {
		tb.Fatalf("decide: %d %s", res.code, res.body)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// percentile is the p-th percentile of sorted (nearest rank).
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[max(i-1, 0)]
}

// waitingAttempt waits for step n's attempt a to wait for a decision.
func (br *benchRun) waitingAttempt(tb testing.TB, n, a int) {
	tb.Helper()
	limit := time.NewTimer(waitLimit)
	defer limit.Stop()
	for {
		changed := br.notes.after()
		r, err := br.db.Load(context.Background(), br.id)
		if err != nil {
			tb.Fatal(err)
		}
		if st := r.Step(n); st != nil && st.Status == engine.StepWaiting && st.Latest() != nil && st.Latest().N == a {
			return
		}
		select {
		case <-changed:
		case <-limit.C:
			tb.Fatalf("step %d attempt %d never waited", n, a)
		}
	}
}

func fetch(tb testing.TB, c *http.Client, u string) response {
	tb.Helper()
	return read(tb)(c.Get(u))
}

// read reads a request's answer whole, failing tb when it failed.
func read(tb testing.TB) func(*http.Response, error) response {
	return func(res *http.Response, err error) response {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			tb.Fatal(err)
		}
		return response{res.StatusCode, string(b), res.Header}
	}
}
