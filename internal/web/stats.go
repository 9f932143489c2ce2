package web

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// The stats page draws what gonogo stats prints: the figures are
// engine.StatsOf's (the computation every front end calls) and the cells
// engine.StatsCells's words; the page only adds a bar per row.

// statsView is the stats page: the table of skills and agents with its
// total, and the table by week.
type statsView struct {
	Since, Skill string // as asked (?since=, ?skill=)
	Period       string // the period in words
	Runs         int
	RunsCounted  string   // "1 run", "3 runs"
	Header       []string // the figures' columns, engine.StatsCountsHeader
	Rows         []statsLine
	Total        statsLine
	Weeks        []statsLine
	Refused      string // why the period was refused: a 400 page
}

// statsLine is one row: its names, its cells and its bar.
type statsLine struct {
	Names []string
	Cells []string
	Bar   bar
}

// bar is a row's attempts PRODUCED, EMPTY and FAILED as widths in
// percent of the widest row of its table, in steps of barStep so that the
// stylesheet has a class for each (the pages' CSP allows no inline
// style).
type bar struct {
	Produced, Empty, Failed int
	Title                   string
}

const barStep = 2

// barOf is c's bar in a table whose most attempts are most. Each
// segment's end is rounded, not its width, so the segments add up to the
// rounded whole.
func barOf(c engine.StatsCounts, most int) bar {
	cells := engine.StatsCells(c) // ATTEMPTS, PRODUCED, EMPTY, FAILED are cells 1 to 4
	b := bar{Title: cells[1] + " attempts: " + cells[2] + " produced, " + cells[3] + " empty, " + cells[4] + " failed"}
	if most <= 0 {
		return b
	}
	end := func(n int) int { return (n*100/most + barStep/2) / barStep * barStep }
	p, e, f := end(c.Produced), end(c.Produced+c.Empty), end(c.Produced+c.Empty+c.Failed)
	b.Produced, b.Empty, b.Failed = p, e-p, f-e
	return b
}

func (s *Server) stats(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := statsView{Since: q.Get("since"), Skill: q.Get("skill"), Header: engine.StatsCountsHeader()}
	if !q.Has("since") {
		v.Since = engine.DefaultStatsSince
	}
	now := s.now()
	since, err := engine.ParseSince(v.Since, now)
	if err != nil {
		// ParseSince speaks of the command's flag; here the period is the
		// page's since parameter.
		v.Refused = "The since parameter is no period: " + strings.TrimPrefix(err.Error(), "--")
		s.fail(w, s.render(w, http.StatusBadRequest, "stats.html", v))
		return
	}
	s.withReader(w, r, func(ctx context.Context, rd Reader) error {
		st, err := engine.StatsOf(ctx, rd, engine.StatsQuery{Since: since, Now: now, Skill: v.Skill})
		if err != nil {
			return err
		}
		fillStats(&v, st)
		return s.render(w, http.StatusOK, "stats.html", v)
	})
}

// fillStats puts st into v, in engine.StatsCells's words.
func fillStats(v *statsView, st engine.Stats) {
	what := "all skills"
	if st.Skill != "" {
		what = "skill " + st.Skill
	}
	v.Period = what + ", all time"
	if st.Since != nil {
		v.Period = what + ", since " + st.Since.UTC().Format("2006-01-02 15:04 UTC") + " (" + v.Since + ")"
	}
	v.Runs, v.RunsCounted = st.Runs, st.RunsCounted()
	most := 0
	for _, row := range st.Rows {
		most = max(most, row.Attempts)
	}
	for _, row := range st.Rows {
		v.Rows = append(v.Rows, statsLine{Names: []string{row.Skill, row.Agent}, Cells: engine.StatsCells(row.StatsCounts), Bar: barOf(row.StatsCounts, most)})
	}
	v.Total = statsLine{Names: []string{"TOTAL", ""}, Cells: engine.StatsCells(st.Total), Bar: barOf(st.Total, st.Total.Attempts)}
	most = 0
	for _, wk := range st.Weeks {
		most = max(most, wk.Attempts)
	}
	for _, wk := range st.Weeks {
		v.Weeks = append(v.Weeks, statsLine{Names: []string{wk.Week.Format(time.DateOnly)}, Cells: engine.StatsCells(wk.StatsCounts), Bar: barOf(wk.StatsCounts, most)})
	}
}

// The stats page reads what engine.ReadStats reads.
var _ engine.StatsSource = Reader(nil)
