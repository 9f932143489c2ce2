package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/storage"
)

var runIDRE = regexp.MustCompile(`gonogo run (\S+)`)

// waitingRun starts a chain with the command runner and leaves it waiting
// at step 1 (stdin ends); it returns the run id and the variables used.
func waitingRun(t *testing.T, chain string) (string, map[string]string) {
	t.Helper()
	vars := baseVars(t)
	vars["GONOGO_RUNNER"] = "command"
	vars["GONOGO_RUNNER_CMD"] = writeAgent(t, `cat >/dev/null; printf '# %s\n\nattempt %s\n' "$GONOGO_SKILL" "$GONOGO_ATTEMPT"`)
	res := gonogo(t, vars, "", "run", "--chain", chain)
	if res.code != terminal.ExitWaiting {
		t.Fatalf("run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	return runIDRE.FindStringSubmatch(res.stdout)[1], vars
}

func loadRun(t *testing.T, data, id string) (*engine.Run, []engine.Event) {
	t.Helper()
	db, err := storage.Open(data, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r, j, err := db.RunWithJournal(context.Background(), engine.RunID(id))
	if err != nil {
		t.Fatal(err)
	}
	return r, j
}

func TestShowArtifact(t *testing.T) {
	id, vars := waitingRun(t, "deliver-prd -- one step")
	// redo, then the second attempt waits.
	res := gonogo(t, vars, "redo shorter\n", "resume", id)
	if res.code != terminal.ExitWaiting {
		t.Fatalf("resume: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stdout, "gonogo show "+id+" --artifact 1 --attempt 2") {
		t.Errorf("a one-step run's artifact line does not name the command:\n%s", res.stdout)
	}
	cases := []struct {
		name string
		args []string
		code int
		out  string
		err  string
	}{
		{"current", []string{"--artifact", "1"}, terminal.ExitOK, "# deliver-prd\n\nattempt 2\n", ""},
		{"an earlier attempt", []string{"--artifact=1", "--attempt", "1"}, terminal.ExitOK, "# deliver-prd\n\nattempt 1\n", ""},
		{"no such attempt", []string{"--artifact", "1", "--attempt", "3"}, terminal.ExitUsage, "", "no attempt 3"},
		{"no such step", []string{"--artifact", "2"}, terminal.ExitUsage, "", "has no step 2"},
		{"not a number", []string{"--artifact", "x"}, terminal.ExitUsage, "", "invalid argument"},
		{"attempt alone", []string{"--attempt", "1"}, terminal.ExitUsage, "", "--attempt goes with --artifact"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := gonogo(t, vars, "", append([]string{"show", id}, c.args...)...)
			if res.code != c.code || res.stdout != c.out || !strings.Contains(res.stderr, c.err) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %d, %q, %q", res.code, res.stdout, res.stderr, c.code, c.out, c.err)
			}
		})
	}
	if res := gonogo(t, vars, "", "show", "nope", "--artifact", "1"); res.code != terminal.ExitUsage || !strings.Contains(res.stderr, "no run nope") {
		t.Fatalf("unknown run: exit %d, %s", res.code, res.stderr)
	}

	// show --json: the one-step run's artifacts are in the store only.
	res = gonogo(t, vars, "", "show", "--json", id)
	var run jsonRun
	if err := json.Unmarshal([]byte(res.stdout), &run); err != nil {
		t.Fatal(err)
	}
	for _, a := range run.Steps[0].Attempts {
		if a.Artifact != nil || !a.StoreOnly || a.SHA256 == nil || len(*a.SHA256) != 64 {
			t.Fatalf("attempt %d: artifact %v store_only %v sha256 %v", a.N, a.Artifact, a.StoreOnly, a.SHA256)
		}
	}

	// A skipped step has no current artifact; its attempts still print.
	if res := gonogo(t, vars, "", "decide", id, "skip"); res.code != terminal.ExitOK {
		t.Fatalf("decide skip: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if res := gonogo(t, vars, "", "show", id, "--artifact", "1"); res.code != terminal.ExitRefused || !strings.Contains(res.stderr, "skipped") {
		t.Fatalf("skipped step: exit %d, %s", res.code, res.stderr)
	}
}

func TestDecideWithNobodyHoldingTheData(t *testing.T) {
	id, vars := waitingRun(t, "define-problem-statement -> deliver-prd -- x")
	data := vars["GONOGO_DATA_DIR"]
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"not a decision", []string{"decide", id, "maybe"}, terminal.ExitUsage, "not a decision"},
		{"edit is not offered", []string{"decide", id, "edit"}, terminal.ExitUsage, "not a decision"},
		{"words after approve", []string{"decide", id, "approve", "it"}, terminal.ExitUsage, "only redo takes feedback"},
		{"no such run", []string{"decide", "nope", "approve"}, terminal.ExitUsage, "no run nope"},
		{"no such step", []string{"decide", id, "approve", "--step", "9"}, terminal.ExitUsage, "no step 9"},
		{"a step not waiting", []string{"decide", id, "approve", "--step", "2"}, terminal.ExitRefused, "not waiting"},
		{"a stale attempt", []string{"decide", id, "approve", "--attempt", "2"}, terminal.ExitRefused, "moved on"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := gonogo(t, vars, "", c.args...)
			if res.code != c.code || !strings.Contains(res.stderr, c.msg) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", res.code, res.stderr, c.code, c.msg)
			}
		})
	}
	res := gonogo(t, vars, "", "decide", id, "redo", "more", "detail", "--key", "k1")
	if res.code != terminal.ExitOK || !strings.Contains(res.stdout, "gonogo resume "+id) {
		t.Fatalf("decide redo: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	r, j := loadRun(t, data, id)
	last := j[len(j)-1]
	if last.Type != engine.EvDecision || last.Decision != engine.DecideRedo || last.Actor != "tester" || last.Key != "k1" || last.Feedback != "more detail" {
		t.Fatalf("last event = %+v", last)
	}
	if s := r.Step(1); s.Status != engine.StepQueued && s.Status != engine.StepPending || len(s.Attempts) != 1 {
		t.Fatalf("step 1 is %s with %d attempts: decide must not run anything", s.Status, len(s.Attempts))
	}
	// Nobody carries the run out until it is resumed, and runs and show
	// say so rather than call it running.
	if res := gonogo(t, vars, "", "runs"); !strings.Contains(res.stdout, id+"  queued") {
		t.Errorf("runs after the recorded redo:\n%s", res.stdout)
	}
	if res := gonogo(t, vars, "", "show", id); !strings.Contains(res.stdout, "Continue:   gonogo resume "+id) {
		t.Errorf("show after the recorded redo:\n%s", res.stdout)
	}
	// The run goes on with resume: the redo runs, then waits.
	if res := gonogo(t, vars, "", "resume", id); res.code != terminal.ExitWaiting || !strings.Contains(res.stdout, "attempt 2") {
		t.Fatalf("resume: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	checkKeyIsTheRuns(t, vars, id)
}

// checkKeyIsTheRuns checks decide --key k1 against run id, which recorded
// "redo more detail" under k1: the same decision retried is already
// decided, another is refused naming it, and another run takes the key as
// a new decision.
func checkKeyIsTheRuns(t *testing.T, vars map[string]string, id string) {
	t.Helper()
	data := vars["GONOGO_DATA_DIR"]
	_, before := loadRun(t, data, id)
	res := gonogo(t, vars, "", "decide", id, "redo", "more", "detail", "--key", "k1")
	if res.code != terminal.ExitOK || !strings.Contains(res.stdout, `Already decided with key k1 on run `+id+`: redo of step 1 (attempt 1) by tester with feedback "more detail"`) {
		t.Fatalf("the decision retried with its key: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, other := range [][]string{{"approve"}, {"redo"}, {"redo", "less"}} {
		args := append([]string{"decide", id}, other...)
		res := gonogo(t, vars, "", append(args, "--key", "k1")...)
		if res.code != terminal.ExitRefused || !strings.Contains(res.stderr, `key "k1" was used on run `+id+` for redo of step 1 (attempt 1) by tester with feedback "more detail"`) ||
			strings.Contains(res.stdout, "Already decided") {
			t.Errorf("%v with the key of another decision: exit %d\n%s%s", other, res.code, res.stdout, res.stderr)
		}
	}
	if _, after := loadRun(t, data, id); len(after) != len(before) {
		t.Errorf("the retries added %d journal events to run %s", len(after)-len(before), id)
	}
	// The same key on another run is a new decision there.
	res = gonogo(t, vars, "", "run", "--chain", "deliver-prd -- y")
	other := runIDRE.FindStringSubmatch(res.stdout)[1]
	if res := gonogo(t, vars, "", "decide", other, "approve", "--key", "k1"); res.code != terminal.ExitOK || strings.Contains(res.stdout, "Already decided") {
		t.Fatalf("the key on another run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if r, _ := loadRun(t, data, other); engine.DecidedUnder(r, "k1") == nil || r.Step(1).Status != engine.StepDone {
		t.Errorf("run %s did not record its approval under k1: step 1 %s", other, r.Step(1).Status)
	}
}

func TestResumeKeepsTheSetupItStartedWith(t *testing.T) {
	id, vars := waitingRun(t, "define-problem-statement -> deliver-prd -- x")
	data := vars["GONOGO_DATA_DIR"]
	recorded := vars["GONOGO_RUNNER_CMD"]
	// The environment now says something else: the run goes on as started.
	vars["GONOGO_RUNNER"] = "claude"
	vars["GONOGO_RUNNER_CMD"] = "/nonexistent/claude"
	res := gonogo(t, vars, "approve\n", "resume", id)
	if res.code != terminal.ExitWaiting || !strings.Contains(res.stdout, "Step 2 of 2: deliver-prd") || !strings.Contains(res.stdout, "PRODUCED") {
		t.Fatalf("resume with another environment: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}

	// The agent is gone: resume refuses before touching the run.
	if err := os.Remove(recorded); err != nil {
		t.Fatal(err)
	}
	before, jb := loadRun(t, data, id)
	res = gonogo(t, vars, "redo\n", "resume", id)
	if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, recorded) || !strings.Contains(res.stderr, "--runner-cmd") {
		t.Fatalf("agent gone: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if after, ja := loadRun(t, data, id); after.Seq != before.Seq || len(ja) != len(jb) {
		t.Fatalf("a refused resume changed the run: seq %d -> %d", before.Seq, after.Seq)
	}

	// A replacement given with --runner-cmd is used, and journaled.
	other := writeAgent(t, `cat >/dev/null; printf '# replaced\n\nby the other agent\n'`)
	res = gonogo(t, vars, "redo\n", "resume", id, "--runner-cmd", other)
	if res.code != terminal.ExitWaiting || !strings.Contains(res.stdout, "by the other agent") {
		t.Fatalf("resume --runner-cmd: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	r, j := loadRun(t, data, id)
	var change *engine.Event
	for i := range j {
		if j[i].Type == engine.EvSetupChanged {
			change = &j[i]
		}
	}
	want := []engine.SetupChange{{Field: "runner-cmd", From: recorded, To: other}}
	if change == nil || change.Actor != "tester" || len(change.Changes) != 1 || change.Changes[0] != want[0] {
		t.Fatalf("setup-changed event = %+v, want %+v by tester", change, want)
	}
	if r.Setup.RunnerCmd != other || r.Setup.Runner != "command" {
		t.Fatalf("setup now %+v", r.Setup)
	}

	// The skills folder is gone: refused, naming --skills.
	skills := filepath.Join(t.TempDir(), "skills")
	if err := os.CopyFS(skills, os.DirFS(vars["GONOGO_SKILLS_DIR"])); err != nil {
		t.Fatal(err)
	}
	res = gonogo(t, vars, "", "resume", id, "--skills", skills)
	if res.code != terminal.ExitWaiting {
		t.Fatalf("resume --skills: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if err := os.RemoveAll(skills); err != nil {
		t.Fatal(err)
	}
	if res := gonogo(t, vars, "", "resume", id); res.code != terminal.ExitUsage || !strings.Contains(res.stderr, "--skills DIR") {
		t.Fatalf("skills gone: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}

func TestResumeOfARunRecordedWithoutASetup(t *testing.T) {
	vars := baseVars(t)
	data := vars["GONOGO_DATA_DIR"]
	// A run as an older gonogo left it: started with no setup recorded.
	db, err := storage.Open(data, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p := engine.Plan{Input: engine.InputChain, Source: "deliver-prd", Flags: engine.Flags{DryRun: true},
		Steps: []engine.PlanStep{{Skill: "deliver-prd", Prompt: "Write it."}}}
	evs, err := engine.NewRun("20250101-000000-000000000001", p, engine.StartOptions{StartedBy: "old"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	r, err := engine.Fold(&engine.Run{}, evs)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Commit(ctx, engine.Commit{Run: r, Events: evs}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	res := gonogo(t, vars, "", "resume", string(r.ID))
	if res.code != terminal.ExitWaiting || !strings.Contains(res.stderr, "recorded before gonogo kept how a run is carried out") {
		t.Fatalf("resume of an old run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	after, _ := loadRun(t, data, string(r.ID))
	if after.Setup == nil || after.Setup.Runner != "claude" {
		t.Fatalf("the setup it went on with is not recorded: %+v", after.Setup)
	}
}

// A run started with Claude Code's skills folders (personal and project)
// resumes with exactly those, from any directory.
func TestResumeFindsTheSkillsFoldersItStartedWith(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	example := filepath.Join(exampleDir(t), "skills")
	for dir, skill := range map[string]string{
		filepath.Join(home, ".claude", "skills"):    "define-problem-statement",
		filepath.Join(project, ".claude", "skills"): "deliver-prd",
	} {
		if err := os.CopyFS(filepath.Join(dir, skill), os.DirFS(filepath.Join(example, skill))); err != nil {
			t.Fatal(err)
		}
	}
	vars := baseVars(t)
	delete(vars, "GONOGO_SKILLS_DIR")
	vars["HOME"] = home
	vars["GONOGO_RUNNER"] = "command"
	vars["GONOGO_RUNNER_CMD"] = writeAgent(t, `cat >/dev/null; printf '# %s\n\ndone\n' "$GONOGO_SKILL"`)
	t.Chdir(project)
	res := gonogo(t, vars, "", "run", "--chain", "define-problem-statement -> deliver-prd -- x")
	if res.code != terminal.ExitWaiting {
		t.Fatalf("run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	id := runIDRE.FindStringSubmatch(res.stdout)[1]
	r, _ := loadRun(t, vars["GONOGO_DATA_DIR"], id)
	want := []string{filepath.Join(home, ".claude", "skills"), filepath.Join(project, ".claude", "skills")}
	if r.Setup == nil || !slices.Equal(r.Setup.Skills, want) {
		t.Fatalf("recorded skills %+v, want %v", r.Setup, want)
	}
	t.Chdir(t.TempDir()) // neither folder is found from here
	res = gonogo(t, vars, "approve\napprove\n", "resume", id)
	if res.code != terminal.ExitOK || !strings.Contains(res.stdout, "Run complete") {
		t.Fatalf("resume from elsewhere: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}

func TestResumeKeepsTheRunnerArguments(t *testing.T) {
	vars := baseVars(t)
	vars["GONOGO_RUNNER"] = "command"
	vars["GONOGO_RUNNER_CMD"] = writeAgent(t, `cat >/dev/null; printf '# args\n\n[%s]\n' "$*"`)
	vars["GONOGO_RUNNER_ARGS"] = `--note "it's kept"`
	res := gonogo(t, vars, "", "run", "--chain", "define-problem-statement -> deliver-prd -- x")
	if res.code != terminal.ExitWaiting || !strings.Contains(res.stdout, "[--note it's kept]") {
		t.Fatalf("run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	id := runIDRE.FindStringSubmatch(res.stdout)[1]
	vars["GONOGO_RUNNER_ARGS"] = "--other"
	res = gonogo(t, vars, "approve\nredo\n", "resume", id)
	if strings.Count(res.stdout, "[--note it's kept]") != 3 || strings.Contains(res.stdout, "--other") {
		t.Fatalf("resume did not keep the arguments:\n%s%s", res.stdout, res.stderr)
	}
	// Naming the runner again takes this shell's arguments, journaled.
	res = gonogo(t, vars, "redo\n", "resume", "--runner", "command", id)
	if !strings.Contains(res.stdout, "[--other]") || !strings.Contains(res.stdout, "runner-args --note it's kept -> --other") {
		t.Fatalf("resume --runner did not take the new arguments:\n%s%s", res.stdout, res.stderr)
	}
}

func TestDecideAndShowMessagesDoNotRepeatTheirPrefix(t *testing.T) {
	vars := baseVars(t)
	for _, args := range [][]string{
		{"decide"}, {"decide", "r1"}, {"decide", "r1", "maybe"}, {"decide", "r1", "approve", "--step", "x"},
		{"decide", "nope", "approve"}, {"show", "r1", "--attempt", "1"}, {"show", "r1", "--artifact", "1", "--json"},
		{"show", "nope", "--artifact", "1"},
	} {
		res := gonogo(t, vars, "", args...)
		if repeatsPrefix(res.stderr) || res.code != terminal.ExitUsage {
			t.Errorf("gonogo %s: exit %d, %q", strings.Join(args, " "), res.code, res.stderr)
		}
	}
}

// decide does not judge a decision itself: the engine refuses what a step
// cannot take, in its words (engine.NotPossible), and decide exits 1 with
// them, changing nothing. A stale attempt and a finished run are refused
// the same way.
func TestDecideRefusesInTheEnginesWords(t *testing.T) {
	id, vars := waitingRun(t, "define-problem-statement -> deliver-prd -- x")
	data := vars["GONOGO_DATA_DIR"]
	before, _ := loadRun(t, data, id)
	pending := (&engine.NotPossible{Title: engine.Title(before, before.Step(2)), Kind: engine.DecideApprove, Status: engine.StepPending}).Error()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"decide", id, "approve", "--step", "2"}, "REFUSED: " + pending},
		{[]string{"decide", id, "approve", "--attempt", "2"}, "REFUSED: step 1: the decision was for attempt 2, the step is at attempt 1"},
	} {
		res := gonogo(t, vars, "", c.args...)
		if res.code != terminal.ExitRefused || !strings.Contains(res.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 and %q", c.args, res.code, res.stderr, c.want)
		}
	}
	if after, _ := loadRun(t, data, id); after.Seq != before.Seq {
		t.Errorf("a refused decision changed the run: seq %d -> %d", before.Seq, after.Seq)
	}
	id, vars = waitingRun(t, "deliver-prd -- x")
	if res := gonogo(t, vars, "", "decide", id, "approve"); res.code != terminal.ExitOK {
		t.Fatalf("approve: exit %d\n%s", res.code, res.stderr)
	}
	res := gonogo(t, vars, "", "decide", id, "approve", "--step", "1")
	if res.code != terminal.ExitRefused || !strings.Contains(res.stderr, "REFUSED: run "+id+" is completed: nothing waits for a decision") {
		t.Errorf("approve on a completed run: exit %d, stderr %q", res.code, res.stderr)
	}
}
