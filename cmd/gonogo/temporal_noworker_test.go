//go:build temporal

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/terminal"
)

// On Temporal, gonogo pause and resume reach a run from another shell,
// and the read commands answer with no worker polling: for a finished run
// and for one waiting whose worker was killed, runs, show, show --json,
// show --artifact and export read what the cluster and the artifact store
// keep.
func TestTemporalPauseFromAnyShellAndReadsWithNoWorker(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "go")
	// deliver-prd waits for the gate; every step writes its skill's name.
	agent := writeAgent(t, `cat >/dev/null
if [ "$GONOGO_SKILL" = deliver-prd ]; then
  while [ ! -f `+gate+` ]; do sleep 0.05; done
fi
printf '# Output of %s\n\nSaved searches.\n' "$GONOGO_SKILL"
`)
	c := newCluster(t, agent, 3*time.Second)
	worker := c.worker()
	vars := c.vars()

	// A run paused while its step runs, from this shell; the worker is
	// another process.
	moving := c.startWith("deliver-prd -> define-problem-statement", true)
	c.waitStep(moving, 1, engine.StepRunning)
	pause := gonogo(t, vars, "", "pause", string(moving))
	if pause.code != terminal.ExitOK || !strings.Contains(pause.stdout, "Run "+string(moving)+" paused by tester") ||
		!strings.Contains(pause.stdout, "held by the Temporal cluster") {
		t.Fatalf("pause: exit %d\n%s%s", pause.code, pause.stdout, pause.stderr)
	}
	if again := gonogo(t, vars, "", "pause", string(moving)); again.code != terminal.ExitOK || !strings.Contains(again.stdout, "Nothing changed") {
		t.Errorf("pause again: exit %d\n%s%s", again.code, again.stdout, again.stderr)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// The run is in guarded auto: step 1 waits only because it is paused.
	held := c.waitStep(moving, 1, engine.StepWaiting)
	if !held.Paused || held.PausedBy != "tester" {
		t.Fatalf("step 1 waits in a run paused %v by %q", held.Paused, held.PausedBy)
	}
	var shown jsonRun
	if res := gonogo(t, vars, "", "show", "--json", string(moving)); json.Unmarshal([]byte(res.stdout), &shown) != nil || !shown.Paused {
		t.Errorf("show --json of the paused run: exit %d, paused %v\n%s%s", res.code, shown.Paused, res.stdout, res.stderr)
	}
	resume := gonogo(t, vars, "", "resume", string(moving))
	if resume.code != terminal.ExitOK {
		t.Fatalf("resume: exit %d\n%s%s", resume.code, resume.stdout, resume.stderr)
	}
	if r := c.waitRun(moving, "completed", func(r *engine.Run) bool { return r.State == engine.RunCompleted }); r.Paused {
		t.Errorf("the resumed run ended paused: %+v", r)
	}

	// A run finished with an edit, and one left waiting; then the only
	// worker dies.
	done := c.startWith("define-problem-statement", false)
	c.waitStep(done, 1, engine.StepWaiting)
	edit := "# Problem statement\n\nAs the team wrote it.\n"
	if _, err := c.b.Decide(t.Context(), done, engine.Decision{Kind: engine.DecideEdit, Actor: "tester", Step: 1, Attempt: 1, Key: "edit-1"}, []byte(edit)); err != nil {
		t.Fatal(err)
	}
	c.waitRun(done, "completed", func(r *engine.Run) bool { return r.State == engine.RunCompleted })
	waits := c.startWith("define-problem-statement -> deliver-prd", false)
	c.waitStep(waits, 1, engine.StepWaiting)
	if err := worker.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = worker.Wait()

	runs := gonogo(t, vars, "", "runs")
	if runs.code != terminal.ExitOK || !strings.Contains(runs.stdout, string(done)) || !strings.Contains(runs.stdout, string(waits)) {
		t.Errorf("runs with no worker: exit %d\n%s%s", runs.code, runs.stdout, runs.stderr)
	}
	for _, want := range []struct {
		id       engine.RunID
		state    string
		artifact string
	}{
		{done, "completed", edit},
		{waits, "waiting", "# Output of define-problem-statement\n\nSaved searches.\n"},
	} {
		show := gonogo(t, vars, "", "show", string(want.id))
		if show.code != terminal.ExitOK || !strings.Contains(show.stdout, want.state) {
			t.Errorf("show %s with no worker: exit %d\n%s%s", want.state, show.code, show.stdout, show.stderr)
		}
		var run jsonRun
		js := gonogo(t, vars, "", "show", "--json", string(want.id))
		if err := json.Unmarshal([]byte(js.stdout), &run); err != nil || run.State != want.state || len(run.Steps) == 0 {
			t.Errorf("show --json %s with no worker: exit %d, state %q (%v)\n%s%s", want.state, js.code, run.State, err, js.stdout, js.stderr)
		}
		art := gonogo(t, vars, "", "show", string(want.id), "--artifact", "1")
		if art.code != terminal.ExitOK || !strings.Contains(art.stdout, want.artifact) {
			t.Errorf("show --artifact 1 of the %s run with no worker: exit %d\n%s%s", want.state, art.code, art.stdout, art.stderr)
		}
		exp := gonogo(t, vars, "", "export", string(want.id), "--format", "md")
		if exp.code != terminal.ExitOK || !strings.Contains(exp.stdout, "# Audit trail of run "+string(want.id)) || !strings.Contains(exp.stdout, sha256Hex(want.artifact)) {
			t.Errorf("export of the %s run with no worker: exit %d\n%s%s", want.state, exp.code, exp.stdout, exp.stderr)
		}
	}
	const unknown = "20260101-000000-000000000000"
	for _, cmd := range [][]string{{"pause", unknown}, {"decide", unknown, "approve"}} {
		res := gonogo(t, vars, "", cmd...)
		if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, "no run "+unknown+" on Temporal at "+vars["GONOGO_TEMPORAL_ADDR"]) {
			t.Errorf("%s of an unknown run: exit %d\n%s%s", cmd[0], res.code, res.stdout, res.stderr)
		}
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// startWith starts a run of chain by tester, in guarded auto when auto.
func (c *cluster) startWith(chain string, auto bool) engine.RunID {
	c.t.Helper()
	cat, err := (config{}).LoadSkills(filepath.Join(exampleDir(c.t), "skills"))
	if err != nil {
		c.t.Fatal(err)
	}
	p, err := engine.PreflightChain(engine.ChainExpr{Source: chain, Names: strings.Split(chain, " -> "), Context: "saved searches"}, cat, engine.DefaultPolicy())
	if err != nil {
		c.t.Fatal(err)
	}
	p.Flags.ForceAuto = auto
	r, err := c.b.Start(c.t.Context(), p, engine.StartOptions{StartedBy: "tester"})
	if err != nil {
		c.t.Fatal(err)
	}
	return r.ID
}

// waitRun waits until run id is as ok says.
func (c *cluster) waitRun(id engine.RunID, what string, ok func(*engine.Run) bool) *engine.Run {
	c.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r, err := c.b.Load(c.t.Context(), id)
		if err == nil && ok(r) {
			return r
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("run %s never became %s: %+v, %v", id, what, r, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
