package terminal

import (
	"fmt"
	"io"

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
	rows = append(rows, engine.StatsTotalCells(s.Total))
	fmt.Fprintln(w)
	printTable(w, rows)
	weeks := [][]string{engine.StatsWeekHeader()}
	for _, wk := range s.Weeks {
		weeks = append(weeks, engine.StatsWeekCells(wk))
	}
	fmt.Fprintln(w, "\nBy week (from Monday, UTC):")
	printTable(w, weeks)
}

// printTable writes rows as engine.StatsTableLines lays them out.
func printTable(w io.Writer, rows [][]string) {
	for _, l := range engine.StatsTableLines(rows) {
		fmt.Fprintln(w, l)
	}
}
