package bot

import (
	"io"
	"strings"

	"github.com/VictoriaMetrics/metrics"

	"github.com/gonogo/gonogo/engine"
)

// The stats counters of /metrics: what gonogo stats counts per skill and
// agent, over every run, computed from the journals at each scrape (no
// counter is kept twice; engine.StatsCache keeps each finished run's part,
// so a scrape reads only the runs not finished), so they only grow as
// runs are recorded. The
// README's Metrics list names each one.
const (
	metricAttempts      = "gonogo_attempts_total"
	metricDecisions     = "gonogo_decisions_total"
	metricFirstApproved = "gonogo_approved_first_attempt_total"
	metricCost          = "gonogo_attempt_cost_usd_total"
)

// WriteStats writes s, the stats of every run, as Prometheus counters:
// attempts by result, decisions by kind (approve counts approvals without
// an edit; redo is split by whether it gave feedback), approvals on the
// first attempt, and what the attempts cost, each by skill and agent.
func WriteStats(w io.Writer, s engine.Stats) {
	set := metrics.NewSet()
	for _, r := range s.Rows {
		labels := `skill="` + labelValue(r.Skill) + `",agent="` + labelValue(r.Agent) + `"`
		count := func(name, extra string, n int) {
			l := labels
			if extra != "" {
				l += "," + extra
			}
			set.GetOrCreateCounter(name + "{" + l + "}").Set(uint64(max(n, 0)))
		}
		count(metricAttempts, `result="PRODUCED"`, r.Produced)
		count(metricAttempts, `result="EMPTY"`, r.Empty)
		count(metricAttempts, `result="FAILED"`, r.Failed)
		count(metricDecisions, `decision="approve"`, r.Approved-r.Edited)
		count(metricDecisions, `decision="edit"`, r.Edited)
		count(metricDecisions, `decision="redo",feedback="yes"`, r.RedoneWithFeedback)
		count(metricDecisions, `decision="redo",feedback="no"`, r.RedoneWithout)
		count(metricDecisions, `decision="skip"`, r.Skipped)
		count(metricDecisions, `decision="abort"`, r.AbortedAt)
		count(metricDecisions, `decision="pick"`, r.PicksWon)
		count(metricFirstApproved, "", r.FirstApproved)
		set.GetOrCreateFloatCounter(metricCost + "{" + labels + "}").Set(r.CostUSD)
	}
	set.WritePrometheus(w)
}

// labelValue escapes a Prometheus label value: backslash, double quote
// and newline.
func labelValue(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}
