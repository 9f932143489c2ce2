package bot_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/engine/statstest"
	"github.com/gonogo/gonogo/storage"
)

// /gonogo stats over a recorded store answers the person with a table
// block Slack accepts, whose rows are the figures the runs were made to
// have; a bad period is refused with stats' usage.
func TestStatsAnswersWithATable(t *testing.T) {
	srv := newSlack(t)
	dir := t.TempDir()
	rec := statstest.Generate(120)
	db, err := storage.Open(dir, storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rec.Runs {
		for _, c := range r.Commits {
			if err := db.Commit(context.Background(), c); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	start(t, srv, dir, &scriptedRunner{})

	slash(t, srv, "U0STATS", "stats --since all --skill "+statstest.Skills[1])
	e := waitEphemeral(t, srv, "U0STATS", "*Stats*, skill `"+statstest.Skills[1]+"`, all time: 40 runs.")
	want := rec.Want(engine.StatsQuery{Now: time.Now(), Skill: statstest.Skills[1]})
	var blocks []struct {
		Type string `json:"type"`
		Rows [][]struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(e.Blocks, &blocks); err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, b := range blocks {
		if b.Type != "table" {
			continue
		}
		for _, r := range b.Rows[1:] {
			var cells []string
			for _, c := range r {
				cells = append(cells, c.Text)
			}
			rows = append(rows, strings.Join(cells, "|"))
		}
	}
	wantRows := []string{}
	for _, r := range want.Rows {
		wantRows = append(wantRows, strings.Join(engine.StatsRowCells(r), "|"))
	}
	wantRows = append(wantRows, strings.Join(append([]string{"TOTAL", "-"}, engine.StatsCells(want.Total)...), "|"))
	if strings.Join(rows, "\n") != strings.Join(wantRows, "\n") {
		t.Errorf("the table's rows:\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(wantRows, "\n"))
	}

	slash(t, srv, "U0STATS", "stats --since yesterday")
	waitEphemeral(t, srv, "U0STATS", `--since "yesterday"`, "/gonogo stats [--since 30d] [--skill NAME]", "Nothing was run")
}
