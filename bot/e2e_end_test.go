package bot_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/fakeslack"
)

// endTable reads the rows of the table a run's end message carries: each
// cell's text, a person as <@ID>.
func endTable(t *testing.T, m fakeslack.Message) [][]string {
	t.Helper()
	type element struct {
		Type     string    `json:"type"`
		Text     string    `json:"text"`
		UserID   string    `json:"user_id"`
		Elements []element `json:"elements"`
	}
	var blocks []struct {
		Type string      `json:"type"`
		Rows [][]element `json:"rows"`
	}
	if err := json.Unmarshal(m.Blocks, &blocks); err != nil {
		t.Fatal(err)
	}
	var text func(e element) string
	text = func(e element) string {
		switch e.Type {
		case "user":
			return "<@" + e.UserID + ">"
		case "raw_text", "text":
			return e.Text
		}
		var parts []string
		for _, c := range e.Elements {
			parts = append(parts, text(c))
		}
		return strings.Join(parts, "")
	}
	for _, b := range blocks {
		if b.Type != "table" {
			continue
		}
		var rows [][]string
		for _, r := range b.Rows {
			var cells []string
			for _, c := range r {
				cells = append(cells, text(c))
			}
			rows = append(rows, cells)
		}
		return rows
	}
	t.Fatalf("the message has no table:\n%s", m.Rendered)
	return nil
}

// A step in guarded auto whose attempt 1 FAILED, was redone by a person
// and whose redo PRODUCED went on by itself: the end table says so, and
// names nobody as its decider (the redo was of attempt 1).
func TestEndTableRedoneStepWentOnByItself(t *testing.T) {
	srv := newSlack(t)
	runner := &scriptedRunner{}
	runner.script("deliver-prd", engine.Outcome{ExitCode: 1, Stderr: "the agent fell over"})
	h := start(t, srv, t.TempDir(), runner)

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories --force-auto")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Redo", "Abort")
	runner.script("deliver-prd", engine.Outcome{Artifact: []byte("# PRD\n\nThe second attempt worked.\n"), CostUSD: 0.01})
	click(t, srv, starter, step1, "Redo")
	modal := waitView(t, srv, 0)
	env, err := srv.SubmitView(starter, modal.ID, map[string]string{bot.InputFeedback: "try again"})
	if err != nil {
		t.Fatal(err)
	}
	ack(t, srv, env)

	end := waitText(t, srv, "Run complete")
	r := h.onlyRun()
	if s := r.Steps[0]; len(s.Attempts) != 2 || s.Decisions[0].Kind != engine.DecideRedo || s.Status != engine.StepDone {
		t.Fatalf("step 1: %d attempts, decisions %+v, %s", len(s.Attempts), s.Decisions, s.Status)
	}
	rows := endTable(t, end)
	if got := rows[1]; len(got) != 5 || got[2] != "advanced automatically" || got[3] != "-" {
		t.Errorf("step 1's row = %q, want it advanced automatically, by nobody", got)
	}
	if !strings.Contains(end.Rendered, "2 of 2 steps done (2 advanced automatically)") {
		t.Errorf("the summary does not count step 1 as advanced automatically:\n%s", end.Rendered)
	}
}
