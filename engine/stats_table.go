package engine

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The stats as a table, in the words every front end shows (gonogo stats,
// /gonogo stats): one header and the cells of each row, so the terminal's
// table and Slack's table block never disagree on a column.

// StatsHeader is the header of the skill-and-agent table: SKILL and AGENT,
// then StatsCountsHeader.
func StatsHeader() []string {
	return append([]string{"SKILL", "AGENT"}, StatsCountsHeader()...)
}

// StatsCountsHeader names the columns of StatsCells.
func StatsCountsHeader() []string {
	return []string{"STEPS", "ATTEMPTS", "PRODUCED", "EMPTY", "FAILED", "APPROVED", "1ST-TRY", "EDITED", "EDIT-CHANGED",
		"REDO+FB", "REDO", "SKIPPED", "ABORTED", "PICKS", "MEDIAN-WAIT", "COST/APPROVED"}
}

// StatsCells are a row's, a week's or the total's figures as text:
// counts, the edit change as a percentage ("-" with no edit measured), the
// median wait as a short duration ("-" with no decision), the cost per
// approved artifact in dollars ("-" with none approved).
func StatsCells(c StatsCounts) []string {
	n := strconv.Itoa
	change := "-"
	if c.EditMeasured > 0 {
		change = fmt.Sprintf("%.0f%%", c.EditChange*100)
	}
	wait := "-"
	if c.Decided > 0 {
		wait = ShortDuration(time.Duration(c.DecisionMedianSeconds * float64(time.Second)))
	}
	cost := "-"
	if c.CostPerApproved != nil {
		cost = fmt.Sprintf("$%.2f", *c.CostPerApproved)
	}
	return []string{n(c.Steps), n(c.Attempts), n(c.Produced), n(c.Empty), n(c.Failed), n(c.Approved), n(c.FirstApproved),
		n(c.Edited), change, n(c.RedoneWithFeedback), n(c.RedoneWithout), n(c.Skipped), n(c.AbortedAt), n(c.PicksWon),
		wait, cost}
}

// StatsRowCells is one skill-and-agent row, under StatsHeader.
func StatsRowCells(r StatsRow) []string {
	return append([]string{r.Skill, r.Agent}, StatsCells(r.StatsCounts)...)
}

// StatsTotalCells is the total's row, under StatsHeader.
func StatsTotalCells(c StatsCounts) []string {
	return append([]string{"TOTAL", ""}, StatsCells(c)...)
}

// StatsWeekHeader is the header of the table by week: WEEK, then
// StatsCountsHeader.
func StatsWeekHeader() []string {
	return append([]string{"WEEK"}, StatsCountsHeader()...)
}

// StatsWeekCells is one week's row, under StatsWeekHeader: the date of
// its Monday, then its figures.
func StatsWeekCells(w StatsWeek) []string {
	return append([]string{w.Week.Format("2006-01-02")}, StatsCells(w.StatsCounts)...)
}

// StatsTableLines lays out rows, a header first, as fixed-width text,
// one line each: columns two spaces apart, as wide as their widest cell
// in characters; each of the first two columns left-aligned when it holds
// names (a skill, an agent, a week's date), the figures right-aligned; no
// trailing spaces. gonogo stats prints these lines and /gonogo stats
// shows the table by week in them.
func StatsTableLines(rows [][]string) []string {
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	left := make([]bool, len(width))
	for i := range min(2, len(left)) {
		left[i] = len(rows) > 0 && !figures(rows[1:], i)
	}
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if left[i] {
				b.WriteString(c + pad)
			} else {
				b.WriteString(pad + c)
			}
		}
		out = append(out, strings.TrimRight(b.String(), " "))
	}
	return out
}

// figures reports whether column i of rows holds only figures (digits),
// or nothing: the week table's second column does, the skill table's does
// not.
func figures(rows [][]string, i int) bool {
	for _, r := range rows {
		if i < len(r) && r[i] != "" && strings.Trim(r[i], "0123456789") != "" {
			return false
		}
	}
	return true
}

// ShortDuration writes d in at most two units, rounded down: "45s",
// "7m", "1h20m", "2d3h".
func ShortDuration(d time.Duration) string {
	s := int64(math.Max(0, d.Seconds()))
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm", s/60)
	case s < 86400:
		return trimZero(fmt.Sprintf("%dh%dm", s/3600, s%3600/60))
	}
	return trimZero(fmt.Sprintf("%dd%dh", s/86400, s%86400/3600))
}

func trimZero(s string) string {
	if len(s) > 2 && s[len(s)-2:] == "0m" || len(s) > 2 && s[len(s)-2:] == "0h" {
		if c := s[len(s)-3]; c < '0' || c > '9' {
			return s[:len(s)-2]
		}
	}
	return s
}
