package web

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/localapi"
	"github.com/gonogo/gonogo/storage"
)

// benchSteps and benchArtifact make the run of the page benchmark: ten
// steps whose artifacts come to about 1 MiB of Markdown.
const (
	benchSteps    = 10
	benchArtifact = 100 << 10
)

// benchReport writes about size bytes of the kind of Markdown an agent hands
// back: headings, paragraphs with emphasis, code spans and links, lists,
// task lists, tables and fenced code. The same step gives the same text.
func benchReport(step, size int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Step %d: the plan in detail\n\n", step)
	for sec := 1; b.Len() < size; sec++ {
		fmt.Fprintf(&b, "## Section %d.%d\n\n", step, sec)
		fmt.Fprintf(&b, "The *service* `billing-%d` reads **%d** records a second; see [the runbook](https://example.com/runbooks/%d) "+
			"and [notes](notes/%d.md). It keeps ~~old~~ new behaviour behind a flag, and logs each retry.\n\n", sec, sec*37, sec, sec)
		for i := 1; i <= 4; i++ {
			fmt.Fprintf(&b, "- Item %d of section %d: migrate `table_%d` with care\n", i, sec, i)
		}
		b.WriteString("\n- [x] schema reviewed\n- [ ] backfill run\n\n")
		b.WriteString("| Step | Owner | Estimate | Risk |\n|------|-------|---------:|:----:|\n")
		for i := 1; i <= 5; i++ {
			fmt.Fprintf(&b, "| %d.%d | team-%d | %dh | %s |\n", sec, i, i%3, i*4, []string{"low", "medium", "high"}[i%3])
		}
		fmt.Fprintf(&b, "\n```go\nfunc migrate%d(ctx context.Context, db *sql.DB) error {\n\t_, err := db.ExecContext(ctx, \"UPDATE t SET v = v + %d\")\n\treturn err\n}\n```\n\n", sec, sec)
		fmt.Fprintf(&b, "1. First, drain queue %d.\n2. Then switch readers.\n3. Finally, drop the old column.\n\n> A note on section %d: numbers are estimates.\n\n", sec, sec)
	}
	return b.Bytes()
}

// reportRunner hands back report for every step.
type reportRunner struct{}

func (reportRunner) Run(_ context.Context, job engine.Job, _ func(engine.Progress)) engine.Outcome {
	return engine.Outcome{Artifact: benchReport(job.Step, benchArtifact)}
}

// benchRun is a run of benchSteps steps, every step's artifact a report,
// the last step waiting for a decision, in a bbolt store served by a
// Server that takes decisions; c is a browser signed in to it.
type benchRun struct {
	dir   string // the data directory
	db    *storage.DB
	svc   *engine.Service
	notes *notices
	srv   *Server
	ts    *httptest.Server
	id    engine.RunID
	c     *http.Client
}

// benchDecider takes the page's decisions in the service that carries the
// run out, as the gonogo holding the data directory does.
type benchDecider struct{ svc *engine.Service }

func (d benchDecider) Decide(ctx context.Context, id engine.RunID, dc engine.Decision, body []byte) (*engine.Run, bool, error) {
	r, err := d.svc.Decide(ctx, id, dc, body)
	return r, true, err
}
func (d benchDecider) Pause(ctx context.Context, id engine.RunID, actor string) (*engine.Run, bool, error) {
	r, err := d.svc.Pause(ctx, id, actor)
	return r, true, err
}
func (d benchDecider) Unpause(ctx context.Context, id engine.RunID, actor string) (*engine.Run, bool, error) {
	r, err := d.svc.Unpause(ctx, id, actor, "")
	return r, true, err
}
func (benchDecider) Close() error { return nil }

func newBenchRun(tb testing.TB, steps int, rn engine.Runner, opt Options) *benchRun {
	tb.Helper()
	dir := tb.TempDir()
	db, err := storage.Open(dir, storage.Options{NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	cat := catalog{}
	var names []string
	for i := 1; i <= steps; i++ {
		n := fmt.Sprintf("skill-%d", i)
		names = append(names, n)
		cat[n] = engine.Skill{Name: n, Instructions: "Instructions of " + n + ".", Path: "skills/" + n + "/SKILL.md"}
	}
	br := &benchRun{dir: dir, db: db, notes: &notices{}}
	br.svc = engine.NewService(engine.ServiceConfig{Store: db, Catalog: cat, Runner: rn, Notifier: br.notes, MaxParallel: 1})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- br.svc.Run(ctx) }()
	tb.Cleanup(func() {
		cancel()
		<-done
		_ = db.Close()
	})
	p, err := engine.PreflightChain(engine.ChainExpr{Source: strings.Join(names, " -> "), Names: names, Context: "the billing move"},
		cat, engine.DefaultPolicy())
	if err != nil {
		tb.Fatal(err)
	}
	r, err := br.svc.Start(ctx, p, engine.StartOptions{StartedBy: "ana"})
	if err != nil {
		tb.Fatal(err)
	}
	br.id = r.ID
	for n := 1; ; n++ {
		br.waiting(tb, n)
		if n == steps {
			break
		}
		d := engine.Decision{Kind: engine.DecideApprove, Actor: "ana", Step: n, Attempt: 1, Key: fmt.Sprintf("approve-%d", n)}
		if _, err := br.svc.Decide(ctx, br.id, d, nil); err != nil {
			tb.Fatal(err)
		}
	}
	if opt.Decide == nil {
		opt.Decide = func(context.Context) (Decider, error) { return benchDecider{br.svc}, nil }
	}
	opt.Actor = "ana"
	br.srv = New(func(context.Context) (Source, error) { return held{db}, nil }, opt)
	br.ts = httptest.NewServer(br.srv)
	tb.Cleanup(br.ts.Close)
	br.c = br.signIn(tb)
	return br
}

func (br *benchRun) signIn(tb testing.TB) *http.Client {
	tb.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	link, err := br.srv.SignInURL(br.ts.URL)
	if err != nil {
		tb.Fatal(err)
	}
	if res := pressSignIn(tb, c, link); res.code != http.StatusOK {
		tb.Fatalf("sign in: %d", res.code)
	}
	return c
}

// waiting waits for step n to wait for a decision.
func (br *benchRun) waiting(tb testing.TB, n int) {
	tb.Helper()
	limit := time.NewTimer(waitLimit)
	defer limit.Stop()
	for {
		changed := br.notes.after()
		r, err := br.db.Load(context.Background(), br.id)
		if err != nil {
			tb.Fatal(err)
		}
		if st := r.Step(n); st != nil && st.Status == engine.StepWaiting {
			return
		}
		select {
		case <-changed:
		case <-limit.C:
			tb.Fatalf("step %d never waited", n)
		}
	}
}

// BenchmarkRunPage renders the page of a run of 10 steps with about 1 MiB
// of Markdown artifacts, against goldmark rendering the same artifacts
// alone (the baseline, sub-benchmark goldmark). The page sub-benchmark
// renders the artifacts with goldmark too before each page, off its clock,
// so that both are measured under the same load of the machine, and
// reports x-goldmark: its time per page over goldmark's per render of all
// the artifacts. The page is fast when it stays at or under 3.
func BenchmarkRunPage(b *testing.B) {
	br := newBenchRun(b, benchSteps, reportRunner{}, Options{})
	var arts [][]byte
	total := 0
	for n := 1; n <= benchSteps; n++ {
		a, err := br.db.Artifact(context.Background(), br.id, n, 1)
		if err != nil {
			b.Fatal(err)
		}
		arts, total = append(arts, a), total+len(a)
	}
	md := goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.TaskList))
	var out bytes.Buffer
	goldmarkAll := func(b *testing.B) {
		for _, a := range arts {
			out.Reset()
			if err := md.Convert(a, &out); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("goldmark", func(b *testing.B) {
		b.SetBytes(int64(total))
		for b.Loop() {
			goldmarkAll(b)
		}
	})
	page := func(srv *Server) func(b *testing.B) {
		return func(b *testing.B) {
			b.SetBytes(int64(total))
			req := httptest.NewRequest(http.MethodGet, "/runs/"+string(br.id), nil)
			for _, ck := range br.c.Jar.Cookies(mustURL(b, br.ts.URL)) {
				req.AddCookie(ck)
			}
			var base time.Duration
			for b.Loop() {
				b.StopTimer()
				start := time.Now()
				goldmarkAll(b)
				base += time.Since(start)
				b.StartTimer()
				w := httptest.NewRecorder()
				srv.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("run page: %d %s", w.Code, w.Body.String())
				}
			}
			b.ReportMetric(float64(b.Elapsed())/float64(base), "x-goldmark")
		}
	}
	b.Run("page", page(br.srv))
	// As gonogo web serves it while another gonogo holds the data
	// directory: each page reads the run and every artifact through the
	// holder's local API.
	ln, err := localapi.Listen(br.dir)
	if err != nil {
		b.Skipf("no local API here: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- localapi.Serve(ctx, ln, localapi.NewServer(br.db, br.svc, slog.New(slog.DiscardHandler), "run", "bench", 0))
	}()
	defer func() { cancel(); <-served }()
	held := New(func(ctx context.Context) (Source, error) { return localapi.Dial(ctx, br.dir) }, Options{})
	held.auth = br.srv.auth // the same browser, signed in
	b.Run("page-held", page(held))
}

func mustURL(tb testing.TB, s string) *url.URL {
	tb.Helper()
	u, err := url.Parse(s)
	if err != nil {
		tb.Fatal(err)
	}
	return u
}
