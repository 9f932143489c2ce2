package web

import (
	"context"
	"html"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/engine/statstest"
	"github.com/gonogo/gonogo/storage"
)

var (
	statsTableRE = regexp.MustCompile(`(?s)<table class="stats" id="([a-z-]+)">(.*?)</table>`)
	statsRowRE   = regexp.MustCompile(`(?s)<tr>(.*?)</tr>`)
	statsCellRE  = regexp.MustCompile(`(?s)<t[hd][^>]*>(.*?)</t[hd]>`)
	statsBarRE   = regexp.MustCompile(`<span class="produced w(\d+)"></span><span class="empty w(\d+)"></span><span class="failed w(\d+)"></span>`)
)

// statsTables are the stats page's tables by id, each row as its cells'
// text (the header row first) and the bar's three widths.
func statsTables(t *testing.T, page string) (map[string][][]string, map[string][][3]int) {
	t.Helper()
	cells, bars := map[string][][]string{}, map[string][][3]int{}
	for _, tb := range statsTableRE.FindAllStringSubmatch(page, -1) {
		for _, row := range statsRowRE.FindAllStringSubmatch(tb[2], -1) {
			var line []string
			for _, c := range statsCellRE.FindAllStringSubmatch(row[1], -1) {
				line = append(line, html.UnescapeString(c[1]))
			}
			if b := statsBarRE.FindStringSubmatch(row[1]); b != nil {
				line = slices.Delete(line, len(line)-len(engine.StatsCountsHeader())-1, len(line)-len(engine.StatsCountsHeader())) // the bar's cell
				var w [3]int
				for i := range w {
					w[i], _ = strconv.Atoi(b[i+1])
				}
				bars[tb[1]] = append(bars[tb[1]], w)
			}
			cells[tb[1]] = append(cells[tb[1]], line)
		}
	}
	return cells, bars
}

// The stats page shows, for the default 30 days, all time, and a date
// with one skill, the figures gonogo stats --json gives over the same
// store: engine.ComputeStats's, cell for cell in engine.StatsCells's
// words, each skill-and-agent row, the total and each week; every bar's
// width has its class in the stylesheet. A period it cannot read is a 400
// page naming it.
func TestStatsPageShowsTheStatsFigures(t *testing.T) {
	rec := statstest.Generate(200) // 50 days of runs
	db, err := storage.Open(t.TempDir(), storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	for _, r := range rec.Runs {
		for _, c := range r.Commits {
			if err := db.Commit(t.Context(), c); err != nil {
				t.Fatal(err)
			}
		}
	}
	srv := New(func(context.Context) (Source, error) { return held{db}, nil }, Options{Now: func() time.Time { return rec.Now }})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	link, err := srv.SignInURL(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	if list := pressSignIn(t, c, link); !strings.Contains(list.body, `<a href="/stats">`) {
		t.Fatalf("the run list links no stats page:\n%s", list.body)
	}
	css := get(t, c, ts.URL+"/static/style.css").body

	for _, tc := range []struct {
		query string
		q     engine.StatsQuery
	}{
		{"", engine.StatsQuery{Now: rec.Now, Since: rec.Now.Add(-30 * 24 * time.Hour)}},
		{"?since=all", engine.StatsQuery{Now: rec.Now}},
		{"?since=2026-03-23&skill=" + statstest.Skills[1], engine.StatsQuery{Now: rec.Now,
			Since: time.Date(2026, 3, 23, 0, 0, 0, 0, time.UTC), Skill: statstest.Skills[1]}},
	} {
		want := engine.ComputeStats(rec.StatsRuns(), tc.q)
		page := get(t, c, ts.URL+"/stats"+tc.query)
		if page.code != http.StatusOK || !strings.Contains(page.body, ": "+strconv.Itoa(want.Runs)+" runs.") {
			t.Fatalf("/stats%s: %d, want %d runs:\n%s", tc.query, page.code, want.Runs, page.body)
		}
		checkStatsPage(t, "/stats"+tc.query, page.body, want, css)
	}

	bad := get(t, c, ts.URL+"/stats?since=yesterday")
	if bad.code != http.StatusBadRequest || !strings.Contains(html.UnescapeString(bad.body), `since "yesterday": give hours, days or weeks back`) ||
		strings.Contains(bad.body, "<table") {
		t.Fatalf("/stats?since=yesterday: %d\n%s", bad.code, bad.body)
	}
}

// checkStatsPage checks that the stats page at path shows want, cell for
// cell, with bars whose widths have their class in css.
func checkStatsPage(t *testing.T, path, page string, want engine.Stats, css string) {
	t.Helper()
	got, bars := statsTables(t, page)
	{
		wantSkill := [][]string{append([]string{"SKILL", "AGENT", "ATTEMPTS BY RESULT"}, engine.StatsCountsHeader()...)}
		for _, r := range want.Rows {
			wantSkill = append(wantSkill, engine.StatsRowCells(r))
		}
		wantSkill = append(wantSkill, append([]string{"TOTAL", ""}, engine.StatsCells(want.Total)...))
		wantWeek := [][]string{append([]string{"WEEK", "ATTEMPTS BY RESULT"}, engine.StatsCountsHeader()...)}
		for _, w := range want.Weeks {
			wantWeek = append(wantWeek, append([]string{w.Week.Format(time.DateOnly)}, engine.StatsCells(w.StatsCounts)...))
		}
		if len(want.Rows) < 2 || len(want.Weeks) < 2 {
			t.Fatalf("%s: the store gives %d rows and %d weeks, too few to compare", path, len(want.Rows), len(want.Weeks))
		}
		for id, w := range map[string][][]string{"by-skill": wantSkill, "by-week": wantWeek} {
			if !slices.EqualFunc(got[id], w, slices.Equal) {
				t.Errorf("%s table %s:\n got %q\nwant %q", path, id, got[id], w)
			}
		}
	}
	if len(bars["by-skill"]) != len(want.Rows)+1 || len(bars["by-week"]) != len(want.Weeks) {
		t.Errorf("%s: %d and %d bars, want one a row", path, len(bars["by-skill"]), len(bars["by-week"]))
	}
	for _, b := range append(bars["by-skill"], bars["by-week"]...) {
		for _, x := range b {
			if !strings.Contains(css, ".w"+strconv.Itoa(x)+" { width: "+strconv.Itoa(x)+"%; }") {
				t.Errorf("%s: a bar %d%% wide has no class in the stylesheet", path, x)
			}
		}
	}
}

// A row's bar is its attempts PRODUCED, EMPTY and FAILED against the
// table's row of most attempts, in steps of 2%: each segment's end is
// rounded, so the segments add up to the whole bar.
func TestStatsBar(t *testing.T) {
	c := func(p, e, f int) engine.StatsCounts {
		return engine.StatsCounts{Attempts: p + e + f, Produced: p, Empty: e, Failed: f}
	}
	for _, tc := range []struct {
		c    engine.StatsCounts
		most int
		want [3]int
	}{
		{c(5, 3, 2), 10, [3]int{50, 30, 20}},
		{c(5, 3, 2), 20, [3]int{26, 14, 10}},
		{c(1, 1, 1), 3, [3]int{34, 32, 34}},
		{c(0, 0, 0), 0, [3]int{0, 0, 0}},
		{c(1, 0, 0), 1000, [3]int{0, 0, 0}},
	} {
		b := barOf(tc.c, tc.most)
		if got := [3]int{b.Produced, b.Empty, b.Failed}; got != tc.want {
			t.Errorf("bar of %+v against %d: %v, want %v", tc.c, tc.most, got, tc.want)
		}
	}
}
