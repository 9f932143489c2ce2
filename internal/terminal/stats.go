package terminal

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/gonogo/gonogo/engine"
)

// PrintStats writes gonogo stats for people: a line saying what was
// counted, the table per skill and agent with its total, and the same by
// week. w should be Printable: a skill's name comes from a plan.
func PrintStats(w io.Writer, s engine.Stats, since string) {
	what := "all skills"
	if s.Skill != "" {
		what = "skill " + s.Skill
	}
	period := "all time"
	if s.Since != nil {
		period = "since " + s.Since.Local().Format("2006-01-02 15:04") + " (" + since + ")"
	}
	fmt.Fprintf(w, "Stats, %s, %s: %s.\n", what, period, s.RunsCounted())
	if s.Runs == 0 {
		fmt.Fprintln(w, "Nothing was run or decided in that period.")
		return
	}
	rows := [][]string{engine.StatsHeader()}
	for _, r := range s.Rows {
		rows = append(rows, engine.StatsRowCells(r))
	}
	rows = append(rows, append([]string{"TOTAL", ""}, engine.StatsCells(s.Total)...))
	fmt.Fprintln(w)
	printTable(w, rows)
	weeks := [][]string{append([]string{"WEEK"}, engine.StatsCountsHeader()...)}
	for _, wk := range s.Weeks {
		weeks = append(weeks, append([]string{wk.Week.Format("2006-01-02")}, engine.StatsCells(wk.StatsCounts)...))
	}
	fmt.Fprintln(w, "\nBy week (from Monday, UTC):")
	printTable(w, weeks)
}

// printTable writes rows in columns two spaces apart, the first two
// (names) left-aligned, the figures right-aligned.
func printTable(w io.Writer, rows [][]string) {
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if i < 2 && !isFigure(rows[1:], i) {
				b.WriteString(c + pad)
			} else {
				b.WriteString(pad + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// isFigure reports whether column i holds figures: the week table's
// second column does, the skill table's does not.
func isFigure(rows [][]string, i int) bool {
	for _, r := range rows {
		if i < len(r) && r[i] != "" && strings.Trim(r[i], "0123456789") != "" {
			return false
		}
	}
	return true
}
