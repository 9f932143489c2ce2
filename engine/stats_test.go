package engine_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/engine/statstest"
)

// The figures of a recorded store of a few hundred runs are the ones its
// runs were made to have: per skill and agent, per week and in all, for
// the whole time, a period, and one skill.
func TestStatsOfARecordedStore(t *testing.T) {
	rec := statstest.Generate(350)
	runs := rec.StatsRuns()
	for _, q := range []engine.StatsQuery{
		{Now: rec.Now},
		{Now: rec.Now, Since: statstest.T0.Add(30*24*time.Hour + 5*time.Hour)},
		{Now: rec.Now, Skill: statstest.Skills[1]},
		{Now: statstest.T0.Add(40 * 24 * time.Hour), Since: statstest.T0.Add(10 * 24 * time.Hour), Skill: statstest.Skills[2]},
	} {
		got, want := computeStats(t, runs, q), rec.Want(q)
		gj, _ := json.MarshalIndent(got, "", " ")
		wj, _ := json.MarshalIndent(want, "", " ")
		if string(gj) != string(wj) {
			t.Errorf("since %v skill %q:\ngot  %s\nwant %s", q.Since, q.Skill, gj, wj)
		}
		if len(want.Rows) == 0 || want.Total.Edited == 0 || want.Total.RedoneWithFeedback == 0 || len(want.Weeks) < 3 {
			t.Fatalf("the recorded store tests too little: %+v", want.Total)
		}
	}
}

// Known answers, by hand: one run approved at once, one redone twice.
func TestStatsByHand(t *testing.T) {
	rec := statstest.Generate(4) // scenarios 0-3: approve, edit 1 line of 8 (2 of 16 lines deleted or inserted), FAILED+redo+switch, redo with feedback
	s := computeStats(t, rec.StatsRuns(), engine.StatsQuery{Now: rec.Now})
	tot := s.Total
	if tot.Attempts != 6 || tot.Produced != 5 || tot.Failed != 1 || tot.Steps != 4 || s.Runs != 4 {
		t.Errorf("attempts %+v", tot)
	}
	if tot.Approved != 4 || tot.FirstApproved != 1 || tot.Edited != 1 || tot.EditChange != 0.125 ||
		tot.RedoneWithout != 1 || tot.RedoneWithFeedback != 1 {
		t.Errorf("decisions %+v", tot)
	}
	// waits: run 0 7m; run 1 14m; run 2 21m, 21m; run 3 28m, 28m → median of 6 = (21+21)/2
	if tot.Decided != 6 || tot.DecisionMedianSeconds != 21*60 {
		t.Errorf("median %v over %d", tot.DecisionMedianSeconds, tot.Decided)
	}
	// costs: 0.125 + 0.25 + 2*0.375 + 2*0.5 = 2.125, over 4 approved
	if tot.CostUSD != 2.125 || tot.CostPerApproved == nil || *tot.CostPerApproved != 2.125/4 {
		t.Errorf("cost %+v", tot)
	}
	checkAgentSwitch(t, s)
}

// checkAgentSwitch: run 2 (skill 3 of 3, agent 1 = claude) failed with
// claude, then ran on codex.
func checkAgentSwitch(t *testing.T, s engine.Stats) {
	t.Helper()
	rows := map[string]engine.StatsRow{}
	for _, r := range s.Rows {
		if r.Skill == statstest.Skills[2] {
			rows[r.Agent] = r
		}
	}
	claude, codex := rows["claude"], rows["codex"]
	if claude.Failed != 1 || claude.RedoneWithout != 1 || codex.Produced != 1 || codex.Approved != 1 {
		t.Errorf("the agent switch: claude %+v codex %+v", claude, codex)
	}
}

// A vote short of a quorum settles nothing; gonogo's own retries are no
// person's decision; events past the run as read are not counted.
func TestStatsCountsSettlingDecisionsOnly(t *testing.T) {
	at := statstest.T0
	f := statstest.Fold(t)
	p := engine.Plan{Input: engine.InputChain, Source: "x", Steps: []engine.PlanStep{{Skill: "a", Category: engine.CategoryContent, Execution: engine.ExecDelegate}}}
	f.Apply(engine.NewRun("20260302-090000-ab", p, engine.StartOptions{StartedBy: "U-ana", Quorum: 2}, at))
	f.Apply(engine.Start(f.Run, 1, at.Add(time.Minute)))
	f.Apply(engine.Finish(f.Run, 1, 1, engine.Finished{Result: engine.ResultFailed, CostUSD: 1}, at.Add(2*time.Minute)))
	f.Apply(engine.Decide(f.Run, engine.Decision{Kind: engine.DecideRedo, Actor: engine.RetryActor, Step: 1, Attempt: 1, Key: "r"}, nil, at.Add(3*time.Minute)))
	f.Apply(engine.Start(f.Run, 1, at.Add(4*time.Minute)))
	f.Apply(engine.Finish(f.Run, 1, 2, engine.Finished{Result: engine.ResultProduced, CostUSD: 1}, at.Add(5*time.Minute)))
	f.Apply(engine.Decide(f.Run, engine.Decision{Kind: engine.DecideApprove, Actor: "U-ana", Step: 1, Attempt: 2, Key: "a1"}, nil, at.Add(6*time.Minute)))
	read := f.Run.Clone()
	f.Apply(engine.Decide(f.Run, engine.Decision{Kind: engine.DecideApprove, Actor: "U-bob", Step: 1, Attempt: 2, Key: "a2"}, nil, at.Add(9*time.Minute)))
	q := engine.StatsQuery{Now: at.Add(time.Hour)}
	s := computeStats(t, []engine.StatsRun{{Run: f.Run, Journal: f.Journal}}, q)
	if s.Total.Approved != 1 || s.Total.RedoneWithout != 0 || s.Total.Decided != 1 || s.Total.DecisionMedianSeconds != 4*60 {
		t.Errorf("with the quorum met: %+v", s.Total)
	}
	if s.Rows[0].Agent != "(not recorded)" || s.Total.Attempts != 2 || s.Total.Failed != 1 {
		t.Errorf("rows %+v", s.Rows)
	}
	s = computeStats(t, []engine.StatsRun{{Run: read, Journal: f.Journal}}, q)
	if s.Total.Approved != 0 || s.Total.Decided != 0 {
		t.Errorf("read before the quorum was met: %+v", s.Total)
	}
}

// An attempt counts for the agent that ran it, as its end records it (on
// Temporal, the worker's agent, not the one the run was set up with); an
// end recorded before gonogo kept that, and a lost attempt, count for the
// run's setup.
func TestStatsNameTheAgentThatRanEachAttempt(t *testing.T) {
	at := statstest.T0
	f := statstest.Fold(t)
	p := engine.Plan{Input: engine.InputChain, Source: "a -> b", Steps: []engine.PlanStep{
		{Skill: "a", Category: engine.CategoryContent, Execution: engine.ExecDelegate},
		{Skill: "b", Category: engine.CategoryContent, Execution: engine.ExecDelegate}}}
	setup := engine.Setup{Runner: "command", RunnerCmd: "/opt/bin/agent.sh"}
	f.Apply(engine.NewRun("20260302-090000-ag", p, engine.StartOptions{StartedBy: "U-ana", Setup: &setup}, at))
	f.Apply(engine.Start(f.Run, 1, at.Add(time.Minute)))
	f.Apply(engine.Finish(f.Run, 1, 1, engine.Finished{Result: engine.ResultProduced, CostUSD: 1, Agent: "worker-agent"}, at.Add(2*time.Minute)))
	f.Apply(engine.Decide(f.Run, engine.Decision{Kind: engine.DecideRedo, Actor: "U-ana", Step: 1, Attempt: 1, Key: "r"}, nil, at.Add(3*time.Minute)))
	f.Apply(engine.Start(f.Run, 1, at.Add(4*time.Minute)))
	f.Apply(engine.Finish(f.Run, 1, 2, engine.Finished{Result: engine.ResultProduced, CostUSD: 2}, at.Add(5*time.Minute)))
	f.Apply(engine.Decide(f.Run, engine.Decision{Kind: engine.DecideApprove, Actor: "U-ana", Step: 1, Attempt: 2, Key: "a"}, nil, at.Add(6*time.Minute)))
	f.Apply(engine.Start(f.Run, 2, at.Add(7*time.Minute)))
	f.Apply(engine.Interrupt(f.Run, at.Add(8*time.Minute), 2), nil)

	s := computeStats(t, []engine.StatsRun{{Run: f.Run, Journal: f.Journal}}, engine.StatsQuery{Now: at.Add(time.Hour)})
	got := map[string]engine.StatsRow{}
	for _, row := range s.Rows {
		got[row.Skill+" "+row.Agent] = row
	}
	ran, old, lost := got["a worker-agent"], got["a agent.sh"], got["b agent.sh"]
	if len(s.Rows) != 3 || ran.Attempts != 1 || ran.CostUSD != 1 || ran.RedoneWithout != 1 {
		t.Errorf("the attempt its end names worker-agent for: %+v (rows %+v)", ran.StatsCounts, s.Rows)
	}
	if old.Attempts != 1 || old.CostUSD != 2 || old.Approved != 1 {
		t.Errorf("the attempt whose end names no agent, by the run's setup: %+v", old.StatsCounts)
	}
	if lost.Attempts != 1 || lost.Failed != 1 {
		t.Errorf("the lost attempt, by the run's setup: %+v", lost.StatsCounts)
	}
}

func TestEditChange(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want float64
	}{
		{"", "", 0},
		{"a\nb\n", "a\nb\n", 0},
		{"", "a\nb\n", 1},
		{"a\nb\n", "", 1},
		{"a\nb\nc\nd\n", "a\nX\nc\nd\n", 2.0 / 8},
		{"a\nb\nc\nd\n", "a\nb\nc\nd\ne\n", 1.0 / 9},
		{"a\nb\nc\nd", "a\nb\nc\nd\n", 2.0 / 8}, // the last line gained its newline
		{"a\nb\nc\n", "c\nb\na\n", 4.0 / 6},
		{"x\ny\n", "p\nq\nr\n", 1},
	} {
		if got := engine.EditChange([]byte(tc.a), []byte(tc.b)); got != tc.want {
			t.Errorf("EditChange(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestWeekOf(t *testing.T) {
	for _, tc := range []struct{ at, want string }{
		{"2026-03-02T00:00:00Z", "2026-03-02T00:00:00Z"}, // a Monday
		{"2026-03-08T23:59:59Z", "2026-03-02T00:00:00Z"}, // the Sunday after
		{"2026-03-09T01:00:00+02:00", "2026-03-02T00:00:00Z"},
		{"2026-01-01T12:00:00Z", "2025-12-29T00:00:00Z"},
	} {
		at, _ := time.Parse(time.RFC3339, tc.at)
		if got := engine.WeekOf(at).Format(time.RFC3339); got != tc.want {
			t.Errorf("WeekOf(%s) = %s, want %s", tc.at, got, tc.want)
		}
	}
}

// BenchmarkStats10000Runs computes the stats of 10,000 recorded runs;
// plain-pass, the baseline, only walks the same journals counting events.
func BenchmarkStats10000Runs(b *testing.B) {
	rec := statstest.Generate(10000)
	runs := rec.StatsRuns()
	q := engine.StatsQuery{Now: rec.Now}
	b.Run("stats", func(b *testing.B) {
		for b.Loop() {
			if s := engine.ComputeStats(runs, q); s.Runs != len(runs) {
				b.Fatalf("%d runs counted", s.Runs)
			}
		}
	})
	b.Run("plain-pass", func(b *testing.B) {
		for b.Loop() {
			byType := map[engine.EventType]int{}
			for i := range runs {
				for _, ev := range runs[i].Journal {
					byType[ev.Type]++
				}
			}
			if byType[engine.EvRunStarted] != len(runs) {
				b.Fatal(byType)
			}
		}
	})
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"30d", now.AddDate(0, 0, -30)},
		{"36h", now.Add(-36 * time.Hour)},
		{"4w", now.AddDate(0, 0, -28)},
		{"2026-03-01", time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)},
		{"2026-03-01T10:00:00+02:00", time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)},
		{"all", time.Time{}},
	} {
		got, err := engine.ParseSince(tc.in, now)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("ParseSince(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "30", "d", "0d", "-3d", "+3d", "3m", "3 days", "2026-13-01", "9999999d"} {
		if _, err := engine.ParseSince(bad, now); err == nil || !strings.Contains(err.Error(), "--since") {
			t.Errorf("ParseSince(%q): %v", bad, err)
		}
	}
}

// ParseSince never panics; it answers a time not after now, or an error
// naming --since.
func FuzzParseSince(f *testing.F) {
	for _, s := range []string{"30d", "4w", "36h", "all", "2026-03-01", "2026-03-01T10:00:00Z", "", "-1d", "99999999999d", "3x"} {
		f.Add(s)
	}
	now := time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		got, err := engine.ParseSince(s, now)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--since ") {
				t.Errorf("%q: %v", s, err)
			}
			return
		}
		if rel := strings.TrimRight(s, "hdw"); rel != s && got.After(now) {
			t.Errorf("%q: %v is after now", s, got)
		}
	})
}

func TestRunsCounted(t *testing.T) {
	for n, want := range map[int]string{0: "0 runs", 1: "1 run", 3: "3 runs"} {
		if got := (engine.Stats{Runs: n}).RunsCounted(); got != want {
			t.Errorf("%d runs counted read %q, want %q", n, got, want)
		}
	}
}
