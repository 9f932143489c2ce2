package bot

import (
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
)

// maxCellText caps a stats cell: a skill's name, or a figure.
const maxCellText = 200

// StatsAnswer answers `/gonogo stats`: what was counted, a table block of
// the figures per skill and agent with their total (the columns gonogo
// stats prints, engine.StatsHeader), and the same by week as a fixed-width
// table in a section, since a message takes one table block. since is the
// period as the person gave it ("30d").
func StatsAnswer(s engine.Stats, since string) []slack.Block {
	what := "all skills"
	if s.Skill != "" {
		what = "skill `" + mdLine(s.Skill, 100) + "`"
	}
	period := "all time"
	if s.Since != nil {
		period = fmt.Sprintf("since %s (%s)", s.Since.UTC().Format("2006-01-02 15:04 UTC"), mdLine(since, 40))
	}
	head := fmt.Sprintf("*Stats*, %s, %s: %s.", what, period, s.RunsCounted())
	if s.Runs == 0 {
		return []slack.Block{section(head + " Nothing was run or decided in that period.")}
	}
	blocks := []slack.Block{section(head)}
	rows := [][]string{engine.StatsHeader()}
	shown := s.Rows
	if len(shown) > maxTableRows-2 { // the header and the total
		shown = shown[:maxTableRows-2]
	}
	for _, r := range shown {
		rows = append(rows, engine.StatsRowCells(r))
	}
	rows = append(rows, engine.StatsTotalCells(s.Total))
	blocks = append(blocks, statsTable(rows))
	if n := len(s.Rows) - len(shown); n > 0 {
		blocks = append(blocks, contextBlock(fmt.Sprintf("… and %d more skill and agent rows: `gonogo stats` shows them all.", n)))
	}
	blocks = append(blocks, statsWeeks(s.Weeks)...)
	blocks = append(blocks, contextBlock("Computed from the runs' journals. 1ST-TRY: approved as produced on the first attempt; "+
		"EDIT-CHANGED: the share of lines the edits changed; MEDIAN-WAIT: from a checkpoint to its decision."))
	return blocks
}

func statsTable(rows [][]string) *slack.TableBlock {
	t := slack.NewTableBlock("")
	for i, r := range rows {
		cells := make([]slack.TableCell, 0, min(len(r), maxTableCells))
		for _, c := range r[:min(len(r), maxTableCells)] {
			if i == 0 {
				cells = append(cells, headCell(c))
			} else {
				cells = append(cells, textCell(c, maxCellText))
			}
		}
		t.AddRow(cells...)
	}
	settings := []slack.ColumnSetting{{Align: slack.ColumnAlignmentLeft}, {Align: slack.ColumnAlignmentLeft}}
	for range len(rows[0]) - 2 {
		settings = append(settings, slack.ColumnSetting{Align: slack.ColumnAlignmentRight})
	}
	return t.WithColumnSettings(settings[:min(len(settings), maxTableCells)]...)
}

// statsWeeks is the table by week in a code block: the newest weeks that
// fit in a section, oldest first, and how many older ones did not.
func statsWeeks(weeks []engine.StatsWeek) []slack.Block {
	if len(weeks) == 0 {
		return nil
	}
	rows := [][]string{engine.StatsWeekHeader()}
	for _, w := range weeks {
		rows = append(rows, engine.StatsWeekCells(w))
	}
	lines := fixedWidth(rows)
	const frame = len("*By week* (from Monday, UTC)\n```\n\n```") + 80
	keep, size := 0, textLen(lines[0])
	for i := len(lines) - 1; i > 0; i-- {
		if size+textLen(lines[i])+1 > maxSectionText-frame {
			break
		}
		size += textLen(lines[i]) + 1
		keep++
	}
	body := append([]string{lines[0]}, lines[len(lines)-keep:]...)
	text := "*By week* (from Monday, UTC)\n```\n" + strings.Join(body, "\n") + "\n```"
	if older := len(lines) - 1 - keep; older > 0 {
		text += fmt.Sprintf("\n%d older weeks: `gonogo stats` shows them.", older)
	}
	return []slack.Block{section(text)}
}

// fixedWidth lays rows out as engine.StatsTableLines does, escaped for
// Slack.
func fixedWidth(rows [][]string) []string {
	lines := engine.StatsTableLines(rows)
	for i, l := range lines {
		lines[i] = escape(l)
	}
	return lines
}
