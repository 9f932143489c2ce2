package bot

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/engine/statstest"
)

// The answer's table holds every skill-and-agent row with the cells
// gonogo stats prints, then the total; the weeks it leaves out for room
// are the oldest, and it says how many.
func TestStatsAnswerSaysWhatItLeavesOut(t *testing.T) {
	rec := statstest.Generate(40)
	for _, weeks := range []int{2, 20, 52, 200} {
		q := engine.StatsQuery{Now: rec.Now, Since: rec.Now.Add(-time.Duration(weeks) * 7 * 24 * time.Hour)}
		s := engine.ComputeStats(rec.StatsRuns(), q)
		blocks := StatsAnswer(s, fmt.Sprintf("%dw", weeks))
		if err := checkBlocks(blocks); err != nil {
			t.Fatalf("%d weeks: %v", weeks, err)
		}
		var table *slack.TableBlock
		var text string
		for _, b := range blocks {
			switch x := b.(type) {
			case *slack.TableBlock:
				table = x
			case *slack.SectionBlock:
				text += x.Text.Text + "\n"
			}
		}
		if table == nil || len(table.Rows) != len(s.Rows)+2 {
			t.Fatalf("%d weeks: table %+v", weeks, table)
		}
		for i, r := range s.Rows {
			if got, want := cellTexts(table.Rows[i+1]), engine.StatsRowCells(r); strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("row %d: %q, want %q", i, got, want)
			}
		}
		shown := regexp.MustCompile(`(?m)^(\d{4}-\d\d-\d\d) `).FindAllStringSubmatch(text, -1)
		older := 0
		if m := regexp.MustCompile(`(\d+) older weeks`).FindStringSubmatch(text); m != nil {
			older, _ = strconv.Atoi(m[1])
		}
		if len(shown)+older != len(s.Weeks) || len(shown) == 0 {
			t.Errorf("%d weeks: %d shown + %d said older, of %d", weeks, len(shown), older, len(s.Weeks))
			continue
		}
		if last := s.Weeks[len(s.Weeks)-1].Week.Format("2006-01-02"); shown[len(shown)-1][1] != last {
			t.Errorf("%d weeks: the newest shown is %s, not %s", weeks, shown[len(shown)-1][1], last)
		}
	}
}

func cellTexts(row []slack.TableCell) []string {
	var out []string
	for _, c := range row {
		if x, ok := c.(*slack.TableRawTextCell); ok {
			out = append(out, x.Text)
		}
	}
	return out
}
