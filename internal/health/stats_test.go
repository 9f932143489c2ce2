package health

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/engine/statstest"
)

// recorded is a store of runs statstest recorded, read as the service
// reads its store.
type recorded struct {
	rec  *statstest.Recorded
	runs map[engine.RunID]engine.StatsRun
}

func (r recorded) List(context.Context) ([]engine.RunSummary, error) {
	var out []engine.RunSummary
	for _, x := range r.rec.Runs {
		out = append(out, r.runs[x.ID].Run.Summary())
	}
	return out, nil
}
func (r recorded) Load(_ context.Context, id engine.RunID) (*engine.Run, error) {
	return r.runs[id].Run, nil
}
func (r recorded) RunWithJournal(_ context.Context, id engine.RunID) (*engine.Run, []engine.Event, error) {
	return r.runs[id].Run, r.runs[id].Journal, nil
}
func (r recorded) ArtifactVersions(_ context.Context, id engine.RunID, step, attempt int) ([][]byte, error) {
	return r.runs[id].Versions[engine.ArtifactRef{Step: step, Attempt: attempt}], nil
}
func (r recorded) StatsSource() engine.StatsSource { return r }

// /metrics counts, per skill and agent, the attempts by result and the
// decisions by kind that the recorded runs were made to have.
func TestMetricsCountWhatTheJournalsSay(t *testing.T) {
	rec := statstest.Generate(150)
	src := recorded{rec: rec, runs: map[engine.RunID]engine.StatsRun{}}
	for _, r := range rec.Runs {
		src.runs[r.ID] = r.StatsRun()
	}
	resp := httptest.NewRecorder()
	Handler(fakeBot{bot.NewMetrics()}, src).ServeHTTP(resp, httptest.NewRequest("GET", "/metrics", nil))
	if resp.Code != http.StatusOK {
		t.Fatalf("/metrics: %d\n%s", resp.Code, resp.Body)
	}
	body := resp.Body.String()
	want := rec.Want(engine.StatsQuery{Now: rec.Now.AddDate(1, 0, 0)})
	if len(want.Rows) != 6 {
		t.Fatalf("%d rows", len(want.Rows))
	}
	for _, r := range want.Rows {
		l := fmt.Sprintf(`skill=%q,agent=%q`, r.Skill, r.Agent)
		for _, line := range []string{
			fmt.Sprintf(`gonogo_attempts_total{%s,result="PRODUCED"} %d`, l, r.Produced),
			fmt.Sprintf(`gonogo_attempts_total{%s,result="FAILED"} %d`, l, r.Failed),
			fmt.Sprintf(`gonogo_decisions_total{%s,decision="approve"} %d`, l, r.Approved-r.Edited),
			fmt.Sprintf(`gonogo_decisions_total{%s,decision="edit"} %d`, l, r.Edited),
			fmt.Sprintf(`gonogo_decisions_total{%s,decision="redo",feedback="yes"} %d`, l, r.RedoneWithFeedback),
			fmt.Sprintf(`gonogo_decisions_total{%s,decision="abort"} %d`, l, r.AbortedAt),
			fmt.Sprintf(`gonogo_approved_first_attempt_total{%s} %d`, l, r.FirstApproved),
			fmt.Sprintf(`gonogo_attempt_cost_usd_total{%s} %g`, l, r.CostUSD),
		} {
			if !strings.Contains(body, "\n"+line+"\n") {
				t.Errorf("/metrics lacks %s", line)
			}
		}
	}
	for _, typ := range []string{"# TYPE gonogo_attempts_total counter", "# TYPE gonogo_decisions_total counter"} {
		if !strings.Contains(body, typ) {
			t.Errorf("/metrics lacks %s", typ)
		}
	}
}

// Scraped again after runs moved on and finished, /metrics counts what
// the journals then say: what was kept of the runs not finished at the
// first scrape is counted again.
func TestMetricsCountRunsThatChanged(t *testing.T) {
	rec := statstest.Generate(60)
	src := recorded{rec: rec, runs: map[engine.RunID]engine.StatsRun{}}
	for i, r := range rec.Runs {
		src.runs[r.ID] = r.StatsRun()
		if i%5 == 0 {
			src.runs[r.ID] = statstest.Run{ID: r.ID, Commits: r.Commits[:3]}.StatsRun() // an attempt finished, not decided
		}
	}
	h := Handler(fakeBot{bot.NewMetrics()}, src)
	scrape := func(what string) {
		t.Helper()
		resp := httptest.NewRecorder()
		h.ServeHTTP(resp, httptest.NewRequest("GET", "/metrics", nil))
		var runs []engine.StatsRun
		for _, r := range rec.Runs {
			runs = append(runs, src.runs[r.ID])
		}
		var want strings.Builder
		bot.WriteStats(&want, engine.ComputeStats(runs, engine.StatsQuery{Now: rec.Now}))
		if resp.Code != http.StatusOK || !strings.Contains(resp.Body.String(), want.String()) {
			t.Fatalf("%s: /metrics %d, its stats counters are not the journals':\n%s\nwant\n%s", what, resp.Code, resp.Body, want.String())
		}
	}
	scrape("the first scrape")
	for i, r := range rec.Runs {
		if i%5 == 0 {
			src.runs[r.ID] = r.StatsRun()
		}
	}
	scrape("after runs finished")
}
