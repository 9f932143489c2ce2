package audit_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/engine/audit"
)

var update = flag.Bool("update", false, "rewrite golden files")

var t0 = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

// recordInto returns what records a transition as a store would: it folds
// the transition's events into *r, appends them to *journal and moves *now
// on a minute, failing t on a refused transition.
func recordInto(t *testing.T, r **engine.Run, journal *[]engine.Event, now *time.Time) func([]engine.Event, error) {
	return func(evs []engine.Event, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		next, err := engine.Fold(*r, evs)
		if err != nil {
			t.Fatal(err)
		}
		*r, *journal = next, append(*journal, evs...)
		*now = now.Add(time.Minute)
	}
}

// history plays a run through the engine's own transitions: step 1 is
// edited, step 2 fails, is redone with feedback and approved, step 3 is
// skipped. It returns the run, its journal and the stored artifact
// versions, as a store would hold them.
func history(t *testing.T) (*engine.Run, []engine.Event, map[[2]int][][]byte) {
	t.Helper()
	p := engine.Plan{Input: engine.InputChain, Source: "deliver-prd -> deliver-user-stories -> measure",
		Steps:  []engine.PlanStep{{Skill: "deliver-prd", Effort: "spec | the fix"}, {Skill: "deliver-user-stories"}, {Skill: "measure"}},
		Manual: []engine.Block{{Effort: "launch", Skill: "workflow-launch", Reason: "a whole workflow", Line: 40}}}
	var journal []engine.Event
	r := &engine.Run{}
	now := t0
	apply := recordInto(t, &r, &journal, &now)
	apply(engine.NewRun("20261120-090000-abc", p, engine.StartOptions{StartedBy: "U1", Origin: engine.Origin{Channel: "C1", Thread: "1.2"}}, now))
	versions := map[[2]int][][]byte{}
	agent := []byte("# PRD\n\nline one\nline two\n")
	edited := []byte("# PRD\n\nline one, sharper\nline two\n")

	apply(engine.Start(r, 1, now))
	apply(engine.Finish(r, 1, 1, engine.Finished{Result: engine.ResultProduced, Artifact: true, Size: len(agent), CostUSD: 0.25,
		Usage: engine.Usage{InputTokens: 100, OutputTokens: 50, Turns: 3}, File: "runs/x/01-deliver-prd.md"}, now))
	versions[[2]int{1, 1}] = [][]byte{agent, edited}
	apply(engine.Decide(r, engine.Decision{Kind: engine.DecideEdit, Actor: "U2", Step: 1, Attempt: 1, Key: "k1"},
		&engine.Edit{Size: len(edited)}, now))

	apply(engine.Start(r, 2, now))
	apply(engine.Finish(r, 2, 1, engine.Finished{Result: engine.ResultFailed, Reason: "timed out after 30m"}, now))
	apply(engine.Decide(r, engine.Decision{Kind: engine.DecideRedo, Actor: "U1", Step: 2, Attempt: 1, Key: "k2", Feedback: "shorter,\nplease"}, nil, now))
	apply(engine.Start(r, 2, now))
	stories := []byte("stories\n")
	apply(engine.Finish(r, 2, 2, engine.Finished{Result: engine.ResultProduced, Artifact: true, Size: len(stories), CostUSD: 0.5}, now))
	versions[[2]int{2, 2}] = [][]byte{stories}
	apply(engine.Decide(r, engine.Decision{Kind: engine.DecideApprove, Actor: "U3", Step: 2, Attempt: 2, Key: "k3"}, nil, now))

	apply(engine.Start(r, 3, now))
	apply(engine.Finish(r, 3, 1, engine.Finished{Result: engine.ResultEmpty}, now))
	apply(engine.Decide(r, engine.Decision{Kind: engine.DecideSkip, Actor: "ops|lead", Step: 3, Attempt: 1, Key: "k4"}, nil, now))
	return r, journal, versions
}

// autoHistory plays a chain in guarded auto: step 1 FAILED, is redone and
// goes on by itself; step 2 finishes while the run is paused and is let go
// as it resumes; the agent is changed on resume; step 3 is lost when
// gonogo stops (its last pulse 4 minutes after it started, found hours
// later), is redone and goes on. Step 1's file is gone from disk.
func autoHistory(t *testing.T) audit.Source {
	t.Helper()
	p := engine.Plan{Input: engine.InputChain, Source: "deliver-prd -> deliver-user-stories -> measure --force-auto",
		Flags: engine.Flags{ForceAuto: true},
		Steps: []engine.PlanStep{{Skill: "deliver-prd"}, {Skill: "deliver-user-stories"}, {Skill: "measure"}}}
	var journal []engine.Event
	r := &engine.Run{}
	now := t0
	apply := recordInto(t, &r, &journal, &now)
	produced := func(n, a int) engine.Finished {
		return engine.Finished{Result: engine.ResultProduced, Artifact: true, Size: 6, CostUSD: 0.1,
			File: engine.ArtifactFile(r.ID, n, r.Step(n).Skill, a, true)}
	}
	setup := engine.Setup{Runner: "command", RunnerCmd: "/opt/agent-1"}
	apply(engine.NewRun("20261120-090000-aut", p, engine.StartOptions{StartedBy: "U1", Setup: &setup}, now))
	apply(engine.Start(r, 1, now))
	apply(engine.Finish(r, 1, 1, engine.Finished{Result: engine.ResultFailed, Reason: "the agent exited with code 1", Agent: "agent-1"}, now))
	apply(engine.Decide(r, engine.Decision{Kind: engine.DecideRedo, Actor: "U1", Step: 1, Attempt: 1, Key: "k1", Feedback: "again"}, nil, now))
	apply(engine.Start(r, 1, now))
	apply(engine.Finish(r, 1, 2, produced(1, 2), now))

	apply(engine.Start(r, 2, now))
	apply(engine.Pause(r, "U2", "lunch", now))
	apply(engine.Finish(r, 2, 1, produced(2, 1), now))
	apply(engine.Unpause(r, "U2", "", nil, now))

	setup.RunnerCmd = "/opt/agent-2"
	apply(engine.ChangeSetup(r, setup, "U2", now))
	apply(engine.Start(r, 3, now))
	c, ok, err := engine.Recover(r, now.Add(5*time.Hour), now.Add(3*time.Minute))
	if !ok || err != nil {
		t.Fatalf("recover: %v, %v", ok, err)
	}
	apply(c.Events, nil)
	now = now.Add(5 * time.Hour)
	apply(engine.Decide(r, engine.Decision{Kind: engine.DecideRedo, Actor: "U1", Step: 3, Attempt: 1, Key: "k2"}, nil, now))
	apply(engine.Start(r, 3, now))
	apply(engine.Finish(r, 3, 2, produced(3, 2), now))
	if r.State != engine.RunCompleted {
		t.Fatalf("the run is %s", r.State)
	}
	gone := engine.ArtifactFile(r.ID, 1, "deliver-prd", 2, true)
	return audit.Source{Run: r, Journal: journal,
		Versions: func(step, attempt int) ([][]byte, error) { return [][]byte{[]byte("body\n")}, nil },
		Gone:     func(file string) bool { return file == gone }}
}

// TestAutoTrailGolden: the trail of a run in guarded auto, with a redo, a
// pause, a setup change, a lost attempt and a deleted file.
func TestAutoTrailGolden(t *testing.T) {
	tr, err := audit.Build(autoHistory(t), t0.Add(6*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	goldenTrail(t, tr, "trail_auto")
}

// TestAutoTrailFacts: every step of the guarded-auto run went on by
// itself, a redo or a pause notwithstanding; the setup change, the lost
// attempt and the gone file are told, in the JSON and the Markdown alike.
func TestAutoTrailFacts(t *testing.T) {
	tr, err := audit.Build(autoHistory(t), t0.Add(6*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	md := string(tr.Markdown())
	for _, s := range tr.Steps {
		if s.Decision == nil || *s.Decision != "auto" {
			t.Errorf("step %d decision = %v, want auto", s.N, s.Decision)
		}
		row := fmt.Sprintf("| %d | %s | PRODUCED | auto | — |", s.N, s.Skill)
		if !strings.Contains(md, row) {
			t.Errorf("the Markdown lacks the row %q", row)
		}
	}
	if d := tr.Steps[0].Attempts[0].Decisions; len(d) != 1 || d[0].Kind != "redo" {
		t.Errorf("step 1 attempt 1 decisions = %+v, want its redo kept", d)
	}
	var lost *audit.Event
	for i, e := range tr.Journal {
		switch e.Type {
		case "setup-changed":
			if len(e.Changes) != 1 || e.Changes[0] != (audit.Change{Field: "runner-cmd", From: "/opt/agent-1", To: "/opt/agent-2"}) {
				t.Errorf("setup-changed = %+v", e)
			}
			if !strings.Contains(md, "| U2 | runner-cmd /opt/agent-1 -> /opt/agent-2 |") {
				t.Error("the Markdown journal does not name the setup change")
			}
		case "step-interrupted":
			lost = &tr.Journal[i]
		case "step-finished":
			if want := map[bool]string{true: "agent-1"}[e.Step == 1 && e.Attempt == 1]; e.Agent != want {
				t.Errorf("step %d attempt %d finished by agent %q, want %q", e.Step, e.Attempt, e.Agent, want)
			}
		}
	}
	a := tr.Steps[2].Attempts[0]
	if lost == nil || lost.Lost == nil || a.Finished == nil || !a.Finished.Equal(*lost.Lost) || !lost.Time.After(*lost.Lost) {
		t.Fatalf("the lost attempt: event %+v, attempt finished %v", lost, a.Finished)
	}
	if a.DurationSeconds != 240 || !strings.Contains(md, "- Interrupted: lost after its last sign of life at "+lost.Lost.Format("2006-01-02 15:04:05 UTC")) {
		t.Errorf("the lost attempt ran %vs; the Markdown:\n%s", a.DurationSeconds, md)
	}
	if art := tr.Steps[0].Attempts[1].Artifact; art == nil || !art.FileGone || tr.Steps[1].Attempts[0].Artifact.FileGone {
		t.Errorf("step 1's artifact %+v, want its file gone (and only it)", art)
	}
}

func build(t *testing.T) audit.Trail {
	t.Helper()
	r, journal, versions := history(t)
	tr, err := audit.Build(audit.Source{Run: r, Journal: journal, Versions: func(step, attempt int) ([][]byte, error) {
		return versions[[2]int{step, attempt}], nil
	}}, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (write it with -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test ./engine/audit -update):\n%s", path, got)
	}
}

// goldenTrail compares tr's JSON and Markdown with testdata/NAME.json and
// testdata/NAME.md.
func goldenTrail(t *testing.T, tr audit.Trail, name string) {
	t.Helper()
	js, err := tr.JSON()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, name+".json", js)
	golden(t, name+".md", tr.Markdown())
}

// TestTrailGolden: the JSON shape and the Markdown of a run with an edit,
// a failure redone with feedback, an approval and a skip.
func TestTrailGolden(t *testing.T) {
	tr := build(t)
	goldenTrail(t, tr, "trail")
}

// TestTrailFacts asserts the facts an auditor relies on, independently of
// the golden files.
func TestTrailFacts(t *testing.T) {
	tr := build(t)
	if tr.Version != audit.Version || tr.Run.State != "completed" || tr.Run.Finished == nil {
		t.Fatalf("run = %+v", tr.Run)
	}
	if got := tr.Run.CostUSD; got != 0.75 {
		t.Errorf("cost = %v, want 0.75", got)
	}
	s1 := tr.Steps[0].Attempts[0]
	agentSum := sha256.Sum256([]byte("# PRD\n\nline one\nline two\n"))
	if s1.Artifact == nil || s1.Artifact.SHA256 != hex.EncodeToString(agentSum[:]) || s1.Artifact.File != "runs/x/01-deliver-prd.md" {
		t.Fatalf("step 1 artifact = %+v", s1.Artifact)
	}
	if len(s1.Edits) != 1 {
		t.Fatalf("step 1 edits = %+v", s1.Edits)
	}
	e := s1.Edits[0]
	if e.Actor != "U2" || !strings.Contains(e.Diff, "-line one\n+line one, sharper\n") || strings.Contains(e.Diff, "-line two") {
		t.Errorf("edit = %+v", e)
	}
	if e.SHA256 == s1.Artifact.SHA256 {
		t.Error("the edit's sum is the agent's")
	}
	s2 := tr.Steps[1]
	if len(s2.Attempts) != 2 || s2.Attempts[0].Reason != "timed out after 30m" || s2.Attempts[1].Feedback != "shorter,\nplease" {
		t.Fatalf("step 2 attempts = %+v", s2.Attempts)
	}
	if d := s2.Attempts[0].Decisions; len(d) != 1 || d[0].Kind != "redo" || d[0].Actor != "U1" || d[0].Feedback == "" {
		t.Errorf("step 2 attempt 1 decisions = %+v", d)
	}
	if d := s2.Attempts[1].Decisions; len(d) != 1 || d[0].Kind != "approve" || d[0].Actor != "U3" {
		t.Errorf("step 2 attempt 2 decisions = %+v", d)
	}
	if s3 := tr.Steps[2]; *s3.Decision != "skip" || s3.Attempts[0].Artifact != nil {
		t.Errorf("step 3 = %+v", s3)
	}
	if len(tr.NotRun) != 1 || tr.NotRun[0].Kind != "manual" || tr.NotRun[0].Line != 40 {
		t.Errorf("not run = %+v", tr.NotRun)
	}
	if len(tr.Journal) == 0 || tr.Journal[0].Seq != 1 || tr.Journal[len(tr.Journal)-1].Type != "run-finished" {
		t.Errorf("journal = %+v", tr.Journal)
	}
}

// TestMarkdownCannotBeSteered: text people or agents wrote (a reason, an
// effort, feedback) cannot break the document's tables or start headings.
func TestMarkdownCannotBeSteered(t *testing.T) {
	md := string(build(t).Markdown())
	if strings.Contains(md, "shorter,\nplease") {
		t.Error("multi-line feedback was not folded to one line")
	}
	// Every row of the steps table has its 8 columns, whatever the
	// effort or skill says.
	in := false
	for _, line := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(line, "| Step |"):
			in = true
		case in && !strings.HasPrefix(line, "|"):
			in = false
		case in:
			if n := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|"); n != 9 {
				t.Errorf("steps table row has %d column breaks, want 9: %q", n, line)
			}
		}
	}
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "#") && strings.Contains(line, "please") {
			t.Errorf("feedback became a heading: %q", line)
		}
	}
}

// TestEditsMissingVersion: an edit whose version the store lacks is still
// listed, with who and when, and says so.
func TestEditsMissingVersion(t *testing.T) {
	r, journal, versions := history(t)
	versions[[2]int{1, 1}] = versions[[2]int{1, 1}][:1]
	tr, err := audit.Build(audit.Source{Run: r, Journal: journal, Versions: func(step, attempt int) ([][]byte, error) {
		return versions[[2]int{step, attempt}], nil
	}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	e := tr.Steps[0].Attempts[0].Edits
	if len(e) != 1 || e[0].Actor != "U2" || !strings.Contains(e[0].Diff, "not in the store") {
		t.Fatalf("edits = %+v", e)
	}
	var back audit.Trail
	js, _ := tr.JSON()
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
}

// TestEditOfNothing: when the agent stored no artifact (an EMPTY or a dry
// run step) and a person edits one in, the edit is the first version: the
// trail says the agent produced none and diffs the edit against nothing.
func TestEditOfNothing(t *testing.T) {
	p := engine.Plan{Input: engine.InputChain, Source: "deliver-prd", Steps: []engine.PlanStep{{Skill: "deliver-prd"}}}
	r := &engine.Run{}
	var journal []engine.Event
	var clock time.Time // these runs keep the times their transitions are given
	apply := recordInto(t, &r, &journal, &clock)
	apply(engine.NewRun("20261120-090000-def", p, engine.StartOptions{StartedBy: "U1"}, t0))
	apply(engine.Start(r, 1, t0))
	apply(engine.Finish(r, 1, 1, engine.Finished{Result: engine.ResultEmpty}, t0))
	edit := []byte("written by a person\n")
	apply(engine.Decide(r, engine.Decision{Kind: engine.DecideEdit, Actor: "U1", Step: 1, Attempt: 1, Key: "k"},
		&engine.Edit{Size: len(edit)}, t0))
	tr, err := audit.Build(audit.Source{Run: r, Journal: journal, Versions: func(int, int) ([][]byte, error) {
		return [][]byte{edit}, nil
	}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	a := tr.Steps[0].Attempts[0]
	if a.Artifact != nil {
		t.Errorf("the agent's artifact = %+v, want none", a.Artifact)
	}
	if len(a.Edits) != 1 || a.Edits[0].Size != len(edit) || !strings.Contains(a.Edits[0].Diff, "+written by a person") ||
		strings.Contains(a.Edits[0].Diff, "not in the store") {
		t.Fatalf("edits = %+v", a.Edits)
	}
}

// TestMarkdownShowsControlSequences: an agent's escape sequences (in a
// FAILED reason, in an artifact a person then edited) are shown in the
// Markdown, never obeyed by a terminal it is cat'ed to; the JSON keeps
// the agent's words as they were.
func TestMarkdownShowsControlSequences(t *testing.T) {
	const (
		erase = "\x1b[2K"
		hide  = "\x1b[8m"
		osc52 = "\x1b]52;c;Y3VybCBldmlsfHNo\x07"
	)
	p := engine.Plan{Input: engine.InputChain, Source: "deliver-prd -> measure",
		Steps: []engine.PlanStep{{Skill: "deliver-prd"}, {Skill: "measure"}}}
	r := &engine.Run{}
	var journal []engine.Event
	var clock time.Time // these runs keep the times their transitions are given
	apply := recordInto(t, &r, &journal, &clock)
	agent := []byte("# PRD\n" + erase + "all good\n" + hide + "rm -rf ~\n")
	edit := []byte("# PRD\nall good\n")
	apply(engine.NewRun("20261120-090000-esc", p, engine.StartOptions{StartedBy: "U1"}, t0))
	apply(engine.Start(r, 1, t0))
	apply(engine.Finish(r, 1, 1, engine.Finished{Result: engine.ResultProduced, Artifact: true, Size: len(agent)}, t0))
	apply(engine.Decide(r, engine.Decision{Kind: engine.DecideEdit, Actor: "U1", Step: 1, Attempt: 1, Key: "k"},
		&engine.Edit{Size: len(edit)}, t0))
	apply(engine.Start(r, 2, t0))
	reason := "the agent exited with code 1: " + osc52 + erase + "fine"
	apply(engine.Finish(r, 2, 1, engine.Finished{Result: engine.ResultFailed, Reason: reason}, t0))
	tr, err := audit.Build(audit.Source{Run: r, Journal: journal, Versions: func(step, _ int) ([][]byte, error) {
		if step == 1 {
			return [][]byte{agent, edit}, nil
		}
		return nil, engine.ErrNotFound
	}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	md := string(tr.Markdown())
	if i := strings.IndexAny(md, "\x1b\x07"); i >= 0 {
		t.Fatalf("the Markdown holds a control character at %d: %q", i, md[max(0, i-40):min(len(md), i+40)])
	}
	for _, want := range []string{"-␛[2Kall good", "-␛[8mrm -rf ~", "Reason: the agent exited with code 1: ␛]52;c;Y3VybCBldmlsfHNo␇␛[2Kfine"} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown does not show %q:\n%s", want, md)
		}
	}
	js, err := tr.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var back audit.Trail
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if got := back.Steps[1].Attempts[0].Reason; got != reason {
		t.Errorf("the JSON reason is %q, want the agent's words %q", got, reason)
	}
}

// TestTrailBestOf: the trail of a best-of step names each candidate's
// runner, which was picked, by whom and why, and counts every
// candidate's cost.
func TestTrailBestOf(t *testing.T) {
	tr, err := audit.Build(bestOfSource(t), t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	st := tr.Steps[0]
	if st.CostUSD != 0.75 || tr.Run.CostUSD != 0.75 || st.Decision == nil || *st.Decision != "pick" {
		t.Fatalf("step cost $%.2f, run $%.2f, decision %v; want $0.75 each and a pick", st.CostUSD, tr.Run.CostUSD, st.Decision)
	}
	a1, a2 := st.Attempts[0], st.Attempts[1]
	if a1.Runner != "claude" || a1.Candidate != 1 || a1.Picked || a2.Runner != "codex" || a2.Candidate != 2 || !a2.Picked {
		t.Fatalf("attempts %+v and %+v, want claude's candidate 1 and codex's candidate 2, picked", a1, a2)
	}
	if ds := a2.Decisions; len(ds) != 1 || ds[0].Kind != "pick" || ds[0].Actor != "U2" || ds[0].Feedback != "clearer goals" || ds[0].Candidate != 2 {
		t.Fatalf("decisions on the pick %+v", ds)
	}
	var starts []string
	for _, ev := range tr.Journal {
		if ev.Type == string(engine.EvStepStarted) {
			starts = append(starts, fmt.Sprintf("%s#%d", ev.Runner, ev.Candidate))
		}
	}
	if strings.Join(starts, " ") != "claude#1 codex#2" {
		t.Fatalf("journal starts %v", starts)
	}
}

// TestBestOfTrailMarkdown: the Markdown, like the JSON, names each
// candidate's number and runner, which one was picked, by whom, and the
// picker's note; the steps table and the journal name the candidate.
func TestBestOfTrailMarkdown(t *testing.T) {
	tr, err := audit.Build(bestOfSource(t), t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	md := string(tr.Markdown())
	attempt := func(n int) string {
		_, rest, _ := strings.Cut(md, fmt.Sprintf("### Attempt %d: ", n))
		body, _, _ := strings.Cut(rest, "\n## ")
		if i := strings.Index(body, "\n### "); i >= 0 {
			body = body[:i]
		}
		return body
	}
	one, two := attempt(1), attempt(2)
	for _, c := range []struct {
		what, text string
		want, bad  []string
	}{
		{"attempt 1", one, []string{"- Candidate 1 of a best-of round, on runner `claude`\n"}, []string{"picked", "**pick**"}},
		{"attempt 2", two, []string{"- Candidate 2 of a best-of round, on runner `codex`; picked: its artifact is the step's\n",
			"- **pick** of candidate 2 by U2 at 2026-11-20 09:04:00 UTC with note “clearer goals”\n"}, []string{"feedback"}},
		{"the steps table", md, []string{"| 1 | deliver-prd | PRODUCED | pick (candidate 2) | U2 | 2 |"}, nil},
		{"the journal", md, []string{"| 1.1 |  | candidate 1 on claude |", "| 1.2 |  | candidate 2 on codex |", "| 1.2 | U2 | pick: candidate 2 |"}, nil},
	} {
		for _, w := range c.want {
			if !strings.Contains(c.text, w) {
				t.Errorf("%s lacks %q:\n%s", c.what, w, c.text)
			}
		}
		for _, b := range c.bad {
			if strings.Contains(c.text, b) {
				t.Errorf("%s has %q:\n%s", c.what, b, c.text)
			}
		}
	}
}

// TestBestOfTrailGolden: the trail of a best-of step picked by a person.
func TestBestOfTrailGolden(t *testing.T) {
	tr, err := audit.Build(bestOfSource(t), t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	goldenTrail(t, tr, "trail_bestof")
}

// bestOfSource is a run of one best-of step on claude and codex, both
// PRODUCED (codex first), and U2's pick of codex's with a note.
func bestOfSource(t *testing.T) audit.Source {
	t.Helper()
	p := engine.BestOf(engine.Plan{Input: engine.InputChain, Source: "deliver-prd",
		Steps: []engine.PlanStep{{Skill: "deliver-prd"}}}, []string{"claude", "codex"})
	var journal []engine.Event
	r := &engine.Run{}
	now := t0
	apply := recordInto(t, &r, &journal, &now)
	apply(engine.NewRun("20261120-090000-bst", p, engine.StartOptions{StartedBy: "U1"}, now))
	apply(engine.Start(r, 1, now))
	apply(engine.Finish(r, 1, 2, engine.Finished{Result: engine.ResultProduced, Artifact: true, Size: 5, CostUSD: 0.5}, now))
	apply(engine.Finish(r, 1, 1, engine.Finished{Result: engine.ResultProduced, Artifact: true, Size: 5, CostUSD: 0.25}, now))
	d, err := engine.PickDecision(r, 1, 2, "U2", "clearer goals")
	if err != nil {
		t.Fatal(err)
	}
	d.Key = "k1"
	apply(engine.Decide(r, d, nil, now))
	return audit.Source{Run: r, Journal: journal,
		Versions: func(step, attempt int) ([][]byte, error) { return [][]byte{[]byte("body\n")}, nil }}
}
