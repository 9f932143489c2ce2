package bot

import (
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
)

// An agent's name is whatever its executable is called: a quote or a
// backslash in it is escaped, so the exposition stays valid, and each
// family is typed once.
func TestWriteStatsEscapesLabels(t *testing.T) {
	var b strings.Builder
	WriteStats(&b, engine.Stats{Rows: []engine.StatsRow{
		{Skill: "deliver-prd", Agent: `we"ird\agent`, StatsCounts: engine.StatsCounts{Produced: 3, Approved: 2, Edited: 1, CostUSD: 0.75}},
		{Skill: "deliver-prd", Agent: "claude", StatsCounts: engine.StatsCounts{Failed: 1}},
	}})
	out := b.String()
	for _, want := range []string{
		`gonogo_attempts_total{skill="deliver-prd",agent="we\"ird\\agent",result="PRODUCED"} 3`,
		`gonogo_decisions_total{skill="deliver-prd",agent="we\"ird\\agent",decision="approve"} 1`,
		`gonogo_decisions_total{skill="deliver-prd",agent="we\"ird\\agent",decision="edit"} 1`,
		`gonogo_attempt_cost_usd_total{skill="deliver-prd",agent="we\"ird\\agent"} 0.75`,
		`gonogo_attempts_total{skill="deliver-prd",agent="claude",result="FAILED"} 1`,
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("lacks %s\n%s", want, out)
		}
	}
	if n := strings.Count(out, "# TYPE gonogo_attempts_total counter"); n != 1 {
		t.Errorf("gonogo_attempts_total typed %d times", n)
	}
}
