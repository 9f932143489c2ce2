//go:build temporal

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/terminal"
)

// The same run, decided the same way, has the same stats on a Temporal
// cluster as on bbolt: both are computed from the run's journal by the
// same function (only the times differ: the wait for a decision and the
// weeks are left out of the comparison).
func TestTemporalStatsAreThoseOfBbolt(t *testing.T) {
	agent := writeAgent(t, `cat >/dev/null
printf '# %s\n\nline one\nline two\nline three\n' "$GONOGO_SKILL"
`)
	const chain = "deliver-prd -> define-problem-statement -- saved searches"
	editFile := filepath.Join(t.TempDir(), "edit.md")
	if err := os.WriteFile(editFile, []byte("# ours\n\nline one\nline 2\nline three\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	decisions := "redo shorter, please\napprove\nedit " + editFile + "\n"
	c := newCluster(t, agent, 3*time.Second)
	c.worker()
	vars := c.vars()
	if res := gonogo(t, vars, decisions, "run", "--chain", chain); res.code != terminal.ExitOK {
		t.Fatalf("run on Temporal: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	bbolt := map[string]string{"GONOGO_DATA_DIR": t.TempDir(), "GONOGO_SKILLS_DIR": vars["GONOGO_SKILLS_DIR"]}
	if res := gonogo(t, bbolt, decisions, "run", "--runner", "command", "--runner-cmd", agent, "--chain", chain); res.code != terminal.ExitOK {
		t.Fatalf("run on bbolt: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	stats := func(vars map[string]string) engine.Stats {
		t.Helper()
		res := gonogo(t, vars, "", "stats", "--json", "--since", "all")
		var s engine.Stats
		if err := json.Unmarshal([]byte(res.stdout), &s); res.code != terminal.ExitOK || err != nil {
			t.Fatalf("stats: exit %d, %v\n%s%s", res.code, err, res.stdout, res.stderr)
		}
		s.Until, s.Weeks = time.Time{}, nil
		s.Total.DecisionMedianSeconds = 0
		for i := range s.Rows {
			s.Rows[i].DecisionMedianSeconds = 0
		}
		return s
	}
	onCluster, onBbolt := stats(vars), stats(bbolt)
	cj, _ := json.MarshalIndent(onCluster, "", " ")
	bj, _ := json.MarshalIndent(onBbolt, "", " ")
	if string(cj) != string(bj) {
		t.Errorf("stats on Temporal:\n%s\non bbolt:\n%s", cj, bj)
	}
	if onBbolt.Total.Approved != 2 || onBbolt.Total.Edited != 1 || onBbolt.Total.RedoneWithFeedback != 1 || onBbolt.Total.Attempts != 3 ||
		!strings.Contains(string(bj), `"agent": "agent.sh"`) {
		t.Errorf("the run's figures: %s", bj)
	}
}
