package terminal

import (
	"bytes"
	"testing"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/engine/statstest"
)

// The stats table as people read it, pinned byte for byte: the columns'
// widths and alignment, the total and the weeks.
func TestPrintStatsGolden(t *testing.T) {
	rec := statstest.Generate(40)
	var b bytes.Buffer
	PrintStats(&b, engine.ComputeStats(rec.StatsRuns(), engine.StatsQuery{Now: rec.Now}), "all")
	golden(t, "stats.txt", b.Bytes())
}

// A skill named only with digits is still a name: left-aligned like the
// others; a name's width counts its characters, not its bytes.
func TestPrintStatsOddNames(t *testing.T) {
	s := engine.Stats{Runs: 2, Rows: []engine.StatsRow{
		{Skill: "2026", Agent: "codex", StatsCounts: engine.StatsCounts{Steps: 1, Attempts: 1, Produced: 1}},
		{Skill: "résumé-écrit", Agent: "claude", StatsCounts: engine.StatsCounts{Steps: 12, Attempts: 140, Failed: 140}},
	}}
	var b bytes.Buffer
	PrintStats(&b, s, "all")
	golden(t, "stats_odd_names.txt", b.Bytes())
}
