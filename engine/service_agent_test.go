package engine

import (
	"testing"
	"testing/synctest"
	"time"
)

// The service records, with each attempt's end, the agent it ran the
// attempt on (its own setup's), even for a run set up with another: stats
// then counts the attempt for the agent that ran it.
func TestServiceRecordsTheAgentThatRanEachAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarnessWith(t, 2, false, func(_ *harness, c *ServiceConfig) {
			c.Setup = &Setup{Runner: "command", RunnerCmd: "/srv/bin/worker-agent"}
		})
		r, err := h.svc.Start(t.Context(), h.chain(Flags{}, "deliver-prd"),
			StartOptions{StartedBy: "U-ana", Setup: &Setup{Runner: "command", RunnerCmd: "/opt/bin/asked-agent"}})
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		j := h.checkJournal(r.ID)
		finished := 0
		for _, ev := range j {
			if ev.Type == EvStepFinished {
				finished++
				if ev.Agent != "worker-agent" {
					t.Errorf("step %d attempt %d finished by agent %q, want worker-agent", ev.Step, ev.Attempt, ev.Agent)
				}
			}
		}
		if finished != 1 {
			t.Fatalf("%d attempts finished, want 1", finished)
		}
		s := ComputeStats([]StatsRun{{Run: h.load(r.ID), Journal: j}}, StatsQuery{Now: time.Now().Add(time.Hour)})
		if len(s.Rows) != 1 || s.Rows[0].Agent != "worker-agent" || s.Rows[0].Attempts != 1 {
			t.Errorf("stats rows %+v, want one attempt by worker-agent", s.Rows)
		}
	})
}

// A best-of candidate's end names the runner it ran on.
func TestServiceRecordsEachCandidatesRunner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 1, true)
		h.script("claude/deliver-prd", produced("# Claude's PRD\n"))
		h.script("codex/deliver-prd", produced("# Codex's PRD\n"))
		id := h.start(h.bestOfChain(false))
		synctest.Wait()
		h.runner.gate <- struct{}{}
		h.runner.gate <- struct{}{}
		synctest.Wait()
		runners := map[int]string{}
		for _, ev := range h.checkJournal(id) {
			if ev.Type == EvStepStarted && ev.Runner != "" {
				runners[ev.Attempt] = ev.Runner
			}
		}
		agents := map[int]string{}
		for _, ev := range h.checkJournal(id) {
			if ev.Type == EvStepFinished {
				agents[ev.Attempt] = ev.Agent
			}
		}
		if len(runners) != 2 || len(agents) != 2 || agents[1] != runners[1] || agents[2] != runners[2] {
			t.Errorf("candidates ran on %v, their ends name %v", runners, agents)
		}
	})
}
