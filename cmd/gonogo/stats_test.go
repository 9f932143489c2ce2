package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/engine/statstest"
	"github.com/gonogo/gonogo/internal/localapi"
	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/storage"
)

// recordStore writes rec's runs into a bbolt store in a new data
// directory, commit by commit, as the service would have.
func recordStore(t testing.TB, rec *statstest.Recorded) string {
	t.Helper()
	data := t.TempDir()
	db, err := storage.Open(data, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, r := range rec.Runs {
		for _, c := range r.Commits {
			if err := db.Commit(context.Background(), c); err != nil {
				t.Fatalf("run %s: %v", r.ID, err)
			}
		}
	}
	return data
}

// gonogoAt runs gonogo with the clock at now.
func gonogoAt(t *testing.T, now time.Time, data string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	m := map[string]string{"USER": "tester", "GONOGO_DATA_DIR": data}
	code := realMain(context.Background(), env{
		args: args, stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
		lookup: envconfig.MapLookuper(m), getenv: func(k string) string { return m[k] }, clock: func() time.Time { return now },
	})
	return result{code, out.String(), errb.String()}
}

const statsGolden = "testdata/stats.golden.json"

// gonogo stats --json over a recorded store of a few hundred runs gives
// the figures the runs were made to have, in the documented shape (the
// golden), for all time, a period and one skill.
func TestStatsJSON(t *testing.T) {
	rec := statstest.Generate(280)
	data := recordStore(t, rec)
	for _, tc := range []struct {
		args []string
		q    engine.StatsQuery
	}{
		{[]string{"--since", "all"}, engine.StatsQuery{Now: rec.Now}},
		{nil, engine.StatsQuery{Now: rec.Now, Since: rec.Now.Add(-30 * 24 * time.Hour)}},
		{[]string{"--since", "2026-04-01", "--skill", statstest.Skills[0]}, engine.StatsQuery{Now: rec.Now,
			Since: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC), Skill: statstest.Skills[0]}},
	} {
		res := gonogoAt(t, rec.Now, data, append([]string{"stats", "--json"}, tc.args...)...)
		if res.code != terminal.ExitOK || res.stderr != "" {
			t.Fatalf("stats %v: exit %d\n%s", tc.args, res.code, res.stderr)
		}
		want, _ := json.MarshalIndent(rec.Want(tc.q), "", "  ")
		if strings.TrimSpace(res.stdout) != string(want) {
			t.Errorf("stats --json %v:\n%s\nwant\n%s", tc.args, res.stdout, want)
		}
		if tc.args != nil && tc.args[1] == "all" {
			checkGolden(t, statsGolden, res.stdout)
		}
	}
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (write it with -update)", err)
	}
	if got != string(want) {
		t.Errorf("differs from %s:\n%s", path, got)
	}
}

// The table says what was counted, and each row, the total and each week
// are the figures of the JSON.
func TestStatsTable(t *testing.T) {
	rec := statstest.Generate(70)
	data := recordStore(t, rec)
	res := gonogoAt(t, rec.Now, data, "stats", "--since", "all")
	if res.code != terminal.ExitOK || res.stderr != "" {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	want := rec.Want(engine.StatsQuery{Now: rec.Now})
	lines := strings.Split(res.stdout, "\n")
	if lines[0] != "Stats, all skills, all time: 70 runs." {
		t.Errorf("first line %q", lines[0])
	}
	has := func(cells []string) {
		t.Helper()
		for _, l := range lines {
			if strings.Join(strings.Fields(l), " ") == strings.Join(cells, " ") {
				return
			}
		}
		t.Errorf("no line %q in\n%s", cells, res.stdout)
	}
	has(engine.StatsHeader())
	for _, r := range want.Rows {
		has(engine.StatsRowCells(r))
	}
	has(append([]string{"TOTAL"}, engine.StatsCells(want.Total)...))
	for _, w := range want.Weeks {
		has(append([]string{w.Week.Format("2006-01-02")}, engine.StatsCells(w.StatsCounts)...))
	}
	if res := gonogoAt(t, rec.Now, data, "stats", "--skill", "no-such-skill"); res.code != terminal.ExitOK ||
		!strings.Contains(res.stdout, "skill no-such-skill") || !strings.Contains(res.stdout, ": 0 runs.") {
		t.Errorf("an unknown skill: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// A bad --since or an argument is a usage error (exit 2) naming it.
func TestStatsRefusesBadInput(t *testing.T) {
	data := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"stats", "--since", "3 months"}, `--since "3 months": give hours, days or weeks back`},
		{[]string{"stats", "--since", "0d"}, `--since "0d"`},
		{[]string{"stats", "RUN-1"}, `takes no arguments (got "RUN-1")`},
		{[]string{"stats", "--skil", "x"}, "unknown flag: --skil"},
	} {
		res := gonogoAt(t, time.Now(), data, tc.args...)
		if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, tc.want) || res.stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, res.code, res.stdout, res.stderr, tc.want)
		}
	}
}

// While another gonogo holds the data directory, stats reads through its
// local API and says the same.
func TestStatsWhileHeld(t *testing.T) {
	rec := statstest.Generate(30)
	data := recordStore(t, rec)
	alone := gonogoAt(t, rec.Now, data, "stats", "--json", "--since", "all")
	db, err := storage.Open(data, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ln, err := localapi.Listen(data)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	svc := engine.NewService(engine.ServiceConfig{Store: db, Log: slog.New(slog.DiscardHandler), Members: engine.LocalOperator})
	go func() {
		done <- localapi.Serve(ctx, ln, localapi.NewServer(db, svc, slog.New(slog.DiscardHandler), "serve", "test", 0))
	}()
	defer func() { cancel(); <-done }()
	held := gonogoAt(t, rec.Now, data, "stats", "--json", "--since", "all")
	if held.code != terminal.ExitOK || held.stdout != alone.stdout || alone.code != terminal.ExitOK {
		t.Errorf("held: exit %d %s\n%s\nalone: exit %d\n%s", held.code, held.stderr, held.stdout, alone.code, alone.stdout)
	}
}
