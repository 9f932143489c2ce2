package health

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/engine/statstest"
	"github.com/gonogo/gonogo/storage"
)

// stored is a bbolt store as /metrics reads it.
type stored struct{ *storage.DB }

func (s stored) StatsSource() engine.StatsSource { return s.DB }

// BenchmarkMetricsScrape10000Runs scrapes /metrics over a bbolt store of
// 10,000 recorded runs, 10 of which change between scrapes (each is
// paused, or resumed), against the full recompute /metrics did before
// (engine.ReadStats over every journal, written as the stats counters),
// measured in the same iterations. It reports both times and their ratio
// (x-full/scrape); ns/op is the two together.
func BenchmarkMetricsScrape10000Runs(b *testing.B) {
	ctx := context.Background()
	rec := statstest.Generate(10000)
	db, err := storage.Open(b.TempDir(), storage.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var moving []*engine.Run // left after their first commit: running, not finished
	for i, r := range rec.Runs {
		commits := r.Commits
		if i%1000 == 0 {
			commits = commits[:1]
			moving = append(moving, commits[0].Run)
		}
		for _, c := range commits {
			if err := db.Commit(ctx, c); err != nil {
				b.Fatal(err)
			}
		}
	}
	now := rec.Now
	change := func() {
		for i, r := range moving {
			now = now.Add(time.Second)
			evs, err := engine.Pause(r, "U-ana", "", now)
			if r.Paused {
				evs, err = engine.Unpause(r, "U-ana", "", nil, now)
			}
			if err != nil {
				b.Fatal(err)
			}
			next, err := engine.Fold(r, evs)
			if err != nil {
				b.Fatal(err)
			}
			if err := db.Commit(ctx, engine.Commit{Run: next.Clone(), Events: evs, After: r.Seq}); err != nil {
				b.Fatal(err)
			}
			moving[i] = next
		}
	}
	h := handler(fakeBot{bot.NewMetrics()}, stored{db}, func() time.Time { return now })
	scrape := func() string {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
		if w.Code != 200 {
			b.Fatalf("/metrics: %d %s", w.Code, w.Body)
		}
		return w.Body.String()
	}
	full := func(out io.Writer) {
		s, err := engine.ReadStats(ctx, db, engine.StatsQuery{Now: now})
		if err != nil || s.Runs != len(rec.Runs)-len(moving) {
			b.Fatalf("%d runs counted, %v", s.Runs, err)
		}
		bot.WriteStats(out, s)
	}
	scrape() // the first scrape reads every run
	var scraping, recomputing time.Duration
	for b.Loop() {
		b.StopTimer()
		change()
		b.StartTimer()
		t0 := time.Now()
		scrape()
		t1 := time.Now()
		full(io.Discard)
		scraping, recomputing = scraping+t1.Sub(t0), recomputing+time.Since(t1)
	}
	var want strings.Builder
	full(&want)
	if body := scrape(); !strings.Contains(body, want.String()) {
		b.Fatalf("the scrape's stats counters are not the full recompute's:\n%s\nwant\n%s", body, want.String())
	}
	n := float64(b.N)
	b.ReportMetric(float64(scraping.Milliseconds())/n, "scrape-ms")
	b.ReportMetric(float64(recomputing.Milliseconds())/n, "full-ms")
	b.ReportMetric(float64(recomputing)/float64(scraping), "x-full/scrape")
}
