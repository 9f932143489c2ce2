package engine

import (
	"testing"
	"testing/synctest"
	"time"
)

// A person's pick of a best-of candidate is a pick won by the candidate's
// own agent, and approves its artifact; each candidate's attempt counts
// on its own runner's row.
func TestStatsCountBestOfPicksOnTheWinningAgent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 1, true)
		h.script("claude/deliver-prd", produced("# Claude's PRD\n\nA full draft.\n"))
		h.script("codex/deliver-prd", produced("# Codex's PRD\n\nAnother draft.\n"))
		id := h.start(h.bestOfChain(false))
		synctest.Wait()
		h.runner.gate <- struct{}{}
		h.runner.gate <- struct{}{}
		synctest.Wait()
		d, err := PickDecision(h.load(id), 1, 2, "U-ana", "tighter scope")
		if err != nil {
			t.Fatal(err)
		}
		d.Key = "pick-1"
		if _, err := h.svc.Decide(t.Context(), id, d, nil); err != nil {
			t.Fatalf("pick: %v", err)
		}
		synctest.Wait()
		r, j := h.load(id), h.checkJournal(id)
		s := ComputeStats([]StatsRun{{Run: r, Journal: j}}, StatsQuery{Now: time.Now().Add(time.Hour)})
		rows := map[string]StatsRow{}
		for _, row := range s.Rows {
			if row.Skill == "deliver-prd" {
				rows[row.Agent] = row
			}
		}
		claude, codex := rows["claude"], rows["codex"]
		if claude.Attempts != 1 || codex.Attempts != 1 || claude.Produced != 1 || codex.Produced != 1 {
			t.Fatalf("each candidate counts on its runner: claude %+v, codex %+v", claude.StatsCounts, codex.StatsCounts)
		}
		if codex.PicksWon != 1 || codex.Approved != 1 || claude.PicksWon != 0 || claude.Approved != 0 {
			t.Errorf("the pick of codex's candidate: claude %+v, codex %+v", claude.StatsCounts, codex.StatsCounts)
		}
		if s.Total.PicksWon != 1 {
			t.Errorf("total picks won %d, want 1", s.Total.PicksWon)
		}
	})
}
