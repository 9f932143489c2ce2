package engine

import (
	"slices"
	"testing"
)

// Names are left-aligned and figures right-aligned, widths counted in
// characters, and no line ends in spaces.
func TestStatsTableLines(t *testing.T) {
	for _, tc := range []struct {
		name string
		rows [][]string
		want []string
	}{
		{"skills", [][]string{{"SKILL", "AGENT", "STEPS"}, {"prd", "codex", "7"}, {"résumé", "", "12"}},
			[]string{"SKILL   AGENT  STEPS", "prd     codex      7", "résumé            12"}},
		{"weeks: the second column holds figures", [][]string{{"WEEK", "STEPS", "COST"}, {"2026-03-02", "3", "$0.50"}, {"2026-03-09", "12", "-"}},
			[]string{"WEEK        STEPS   COST", "2026-03-02      3  $0.50", "2026-03-09     12      -"}},
		{"a header only", [][]string{{"WEEK", "STEPS"}}, []string{"WEEK  STEPS"}},
	} {
		if got := StatsTableLines(tc.rows); !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
