package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/storage"
)

// seed commits the events a transition returned to a real store, as the
// service would.
func seed(t *testing.T, db *storage.DB, r *engine.Run, evs []engine.Event, err error) *engine.Run {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	after, err := engine.Fold(r, evs)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Commit(context.Background(), engine.Commit{Run: after, Events: evs, After: r.Seq}); err != nil {
		t.Fatal(err)
	}
	return after
}

func oneStepChain(id string) engine.Plan {
	return engine.Plan{Input: engine.InputChain, Source: "deliver-prd -- " + id,
		Steps: []engine.PlanStep{{Skill: "deliver-prd", Prompt: "Write the PRD.", Category: engine.CategoryContent, Execution: engine.ExecDelegate}}}
}

// Runs started in the same second, whose ids (random after the second)
// sort against their start, are listed newest started first by runs and
// runs --json.
func TestRunsListsTheSameSecondByStart(t *testing.T) {
	vars := baseVars(t)
	db, err := storage.Open(vars["GONOGO_DATA_DIR"], storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	started := []string{"20260301-100000-ffffffffffff", "20260301-100000-000000000000", "20260301-100000-888888888888"}
	for i, id := range started {
		evs, err := engine.NewRun(engine.RunID(id), oneStepChain(id), engine.StartOptions{StartedBy: "tester"},
			at.Add(time.Duration(i)*100*time.Millisecond))
		seed(t, db, &engine.Run{}, evs, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{started[2], started[1], started[0]}

	res := gonogo(t, vars, "", "runs", "--json")
	var list []struct{ ID string }
	if err := json.Unmarshal([]byte(res.stdout), &list); res.code != terminal.ExitOK || err != nil {
		t.Fatalf("runs --json: exit %d, %v\n%s%s", res.code, err, res.stdout, res.stderr)
	}
	for i := range want {
		if list[i].ID != want[i] {
			t.Fatalf("runs --json lists %+v, want %v (newest started first)", list, want)
		}
	}
	res = gonogo(t, vars, "", "runs")
	var ids []string
	for _, line := range strings.Split(res.stdout, "\n")[1:] {
		if f := strings.Fields(line); len(f) > 0 {
			ids = append(ids, f[0])
		}
	}
	if strings.Join(ids, " ") != strings.Join(want, " ") {
		t.Fatalf("runs lists %v, want %v\n%s", ids, want, res.stdout)
	}
}

// An attempt gonogo lost when it stopped says when it was lost as far as
// gonogo knows (the store's last pulse), not when the next gonogo opened
// the store: in show, show --json and both exports.
func TestInterruptedAttemptSaysWhenItWasLost(t *testing.T) {
	vars := baseVars(t)
	data := vars["GONOGO_DATA_DIR"]
	db, err := storage.Open(data, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const id = "20260301-100000-abcdefabcdef"
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	evs, err := engine.NewRun(id, oneStepChain(id), engine.StartOptions{StartedBy: "tester"}, t0)
	r := seed(t, db, &engine.Run{}, evs, err)
	evs, err = engine.Start(r, 1, t0.Add(time.Minute))
	seed(t, db, r, evs, err)
	alive := t0.Add(8*time.Minute + 30*time.Second)
	db.Alive(alive)
	if err := db.Close(); err != nil { // gonogo stops with step 1 running
		t.Fatal(err)
	}

	run := showRun(t, vars, id) // opens the store: the step is recovered
	a := run.Steps[0].Attempts[0]
	if run.Steps[0].Status != "interrupted" || a.Finished == nil || !a.Finished.Equal(alive) {
		t.Fatalf("step 1 %s, attempt 1 finished %v; want interrupted, lost at %v", run.Steps[0].Status, a.Finished, alive)
	}
	var ev *struct {
		Time time.Time
		Lost *time.Time
	}
	for _, e := range run.Journal {
		if e.Type == "step-interrupted" {
			ev = &struct {
				Time time.Time
				Lost *time.Time
			}{e.Time, e.Lost}
		}
	}
	if ev == nil || ev.Lost == nil || !ev.Lost.Equal(alive) || !ev.Time.After(alive.Add(time.Hour)) {
		t.Fatalf("the step-interrupted event: %+v; want it lost at %v and recorded when found", ev, alive)
	}

	show := gonogo(t, vars, "", "show", id)
	if !strings.Contains(show.stdout, "interrupted; last sign of life "+alive.Local().Format("2006-01-02 15:04:05")) {
		t.Errorf("show does not say when the attempt was lost:\n%s", show.stdout)
	}
	md := gonogo(t, vars, "", "export", id, "--format", "md").stdout
	if !strings.Contains(md, "- Ran 7m30s from 2026-03-01 10:01:00 UTC") ||
		!strings.Contains(md, "- Interrupted: lost after its last sign of life at 2026-03-01 10:08:30 UTC; the next gonogo found it at ") ||
		!strings.Contains(md, "last sign of life 2026-03-01 10:08:30 UTC |") {
		t.Errorf("the Markdown trail does not say when the attempt was lost:\n%s", md)
	}
	var trail struct {
		Steps []struct {
			Attempts []struct {
				Finished        time.Time
				DurationSeconds float64 `json:"duration_seconds"`
			}
		}
	}
	if err := json.Unmarshal([]byte(gonogo(t, vars, "", "export", id).stdout), &trail); err != nil {
		t.Fatal(err)
	}
	if at := trail.Steps[0].Attempts[0]; !at.Finished.Equal(alive) || at.DurationSeconds != 450 {
		t.Errorf("export: attempt 1 finished %v after %vs; want %v, 450s", at.Finished, at.DurationSeconds, alive)
	}
}

// The Markdown trail names every setup change with its from and to, as
// the JSON does.
func TestMarkdownTrailNamesSetupChanges(t *testing.T) {
	id, vars := waitingRun(t, "deliver-prd -- one step")
	recorded := vars["GONOGO_RUNNER_CMD"]
	other := writeAgent(t, `cat >/dev/null; printf '# %s\n\nfrom the other agent\n' "$GONOGO_SKILL"`)
	if res := gonogo(t, vars, "approve\n", "resume", id, "--runner-cmd", other); res.code != terminal.ExitOK {
		t.Fatalf("resume --runner-cmd: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	md := gonogo(t, vars, "", "export", id, "--format", "md").stdout
	want := "| setup-changed |  | tester | runner-cmd " + recorded + " -> " + other + " |"
	if !strings.Contains(md, want) {
		t.Errorf("the Markdown trail lacks %q:\n%s", want, md)
	}
}

// A run's artifact file someone deleted: show, show --json and export say
// the file is gone, and show --artifact still prints it from the store.
func TestDeletedArtifactFileIsSaidGone(t *testing.T) {
	vars := baseVars(t)
	vars["GONOGO_RUNNER"] = "command"
	vars["GONOGO_RUNNER_CMD"] = writeAgent(t, `cat >/dev/null; printf '# %s\n\nstep %s\n' "$GONOGO_SKILL" "$GONOGO_STEP"`)
	res := gonogo(t, vars, "approve\napprove\n", "run", "--chain", "deliver-prd -> measure-experiment-design -- x")
	if res.code != terminal.ExitOK {
		t.Fatalf("run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	id := runID(t, res.stdout)
	run := showRun(t, vars, id)
	kept, gone := run.Steps[1].Attempts[0], run.Steps[0].Attempts[0]
	if gone.Artifact == nil || kept.Artifact == nil || gone.ArtifactGone || kept.ArtifactGone {
		t.Fatalf("before: attempts %+v and %+v", gone, kept)
	}
	if err := os.Remove(*gone.Artifact); err != nil {
		t.Fatal(err)
	}

	run = showRun(t, vars, id)
	if !run.Steps[0].Attempts[0].ArtifactGone || run.Steps[1].Attempts[0].ArtifactGone {
		t.Errorf("show --json: step 1 gone %v, step 2 gone %v; want only step 1's", run.Steps[0].Attempts[0].ArtifactGone,
			run.Steps[1].Attempts[0].ArtifactGone)
	}
	show := gonogo(t, vars, "", "show", id).stdout
	if !strings.Contains(show, *gone.Artifact+" is gone; in the store: gonogo show "+id+" --artifact 1") ||
		strings.Contains(show, *kept.Artifact+" is gone") {
		t.Errorf("show does not say step 1's file is gone (and only it):\n%s", show)
	}
	if art := gonogo(t, vars, "", "show", id, "--artifact", "1"); art.code != terminal.ExitOK || art.stdout != "# deliver-prd\n\nstep 1\n" {
		t.Errorf("the store does not print what the gone file held: exit %d %q", art.code, art.stdout)
	}
	var trail struct {
		Steps []struct {
			Attempts []struct {
				Artifact struct {
					File     string
					FileGone bool `json:"file_gone"`
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(gonogo(t, vars, "", "export", id).stdout), &trail); err != nil {
		t.Fatal(err)
	}
	if a1, a2 := trail.Steps[0].Attempts[0].Artifact, trail.Steps[1].Attempts[0].Artifact; !a1.FileGone || a2.FileGone {
		t.Errorf("export: step 1 %+v, step 2 %+v; want only step 1's file gone", a1, a2)
	}
	md := gonogo(t, vars, "", "export", id, "--format", "md").stdout
	rel, _ := filepath.Rel(vars["GONOGO_DATA_DIR"], *gone.Artifact)
	if !strings.Contains(md, "its file `"+filepath.ToSlash(rel)+"` is gone from disk, the store keeps it: `gonogo show "+id+" --artifact 1 --attempt 1`") {
		t.Errorf("the Markdown trail does not say step 1's file is gone:\n%s", md)
	}
}
