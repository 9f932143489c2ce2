package doctor

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/name, or rewrites it with -update.
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
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update to accept):\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

func yes() *bool { b := true; return &b }

// okReport is a set-up where a run can start: claude found and logged
// in, another agent that does not start, skills, and a store with runs.
func okReport() Report {
	return Report{
		Runner: "claude",
		Runners: []Runner{
			{Name: "claude", Configured: true, Executable: "claude", Path: "/bin/claude", Found: true, Version: "2.1.7 (Claude Code)", Starts: yes(),
				Login: &Login{Checked: true, LoggedIn: true, How: "api_key", Asked: "claude auth status"},
				Node:  &Node{Package: "@anthropic-ai/claude-code", Declares: ">=18", Node: "v24.1.0", NodePath: "/bin/node"}},
			{Name: "codex", Executable: "codex", Problem: "not found on PATH"},
			{Name: "gemini", Executable: "gemini", Path: "/bin/gemini", Found: true, Version: "0.61.0", Starts: yes(),
				Login: &Login{Why: "the gemini runner's agent has no way to say without a call to its service"}},
			{Name: "command", Problem: "no executable given (--runner-cmd PATH or GONOGO_RUNNER_CMD)"},
			{Name: "dry-run"},
		},
		Skills:    Skills{Dirs: []string{"skills"}, Source: "--skills", Exists: true, Skills: 3, Broken: 1, Problems: []string{"skills/half: no SKILL.md"}},
		Workflows: Workflows{Dir: "workflows", Exists: true, Workflows: 2, Problems: []string{}},
		Data:      Data{Dir: "data", Exists: true, Writable: true, Store: "ok", Runs: map[string]int{"waiting": 2, "done": 1}},
		Temporal:  &Temporal{Addr: "localhost:7233", Namespace: "gonogo", Reachable: true, Ready: true, Workers: 2, Heartbeat: "10s"},
	}
}

// notOKReport is a set-up where no run could work, for several reasons.
func notOKReport() Report {
	return Report{
		Runner: "claude",
		Runners: []Runner{
			{Name: "claude", Configured: true, Executable: "claude", Path: "/bin/claude", Found: true, Version: "2.1.7 (Claude Code)", Starts: yes(),
				Login: &Login{Checked: true, Asked: "claude auth status", Hint: "log in with claude auth login, or set ANTHROPIC_API_KEY"},
				Node:  &Node{Package: "@anthropic-ai/claude-code", Declares: ">=22", Node: "v20.1.0", NodePath: "/bin/node", Older: true}},
		},
		Skills:    Skills{Dirs: []string{}, Source: "the default folders: ~/.claude/skills, .claude/skills, then skills in the working directory", Problems: []string{"no skills folder found"}},
		Workflows: Workflows{Dir: "workflows", Problems: []string{}},
		Data:      Data{Dir: "data/x", NotWritable: "it cannot be created: data is a file, not a directory", Store: "none", Runs: map[string]int{}},
		Temporal:  &Temporal{Addr: "localhost:7233", Namespace: "gonogo", Reachable: true, Heartbeat: "10s", Problem: "namespace gonogo does not exist: run gonogo temporal setup"},
	}
}

func TestJudgeNamesEachReasonNoRunCouldWork(t *testing.T) {
	base := func() Report {
		r := okReport()
		r.Temporal = nil
		return r
	}
	cases := []struct {
		name   string
		change func(*Report)
		want   []string
	}{
		{"all well", func(*Report) {}, []string{}},
		{"unknown runner", func(r *Report) {
			r.Runners[0].Configured = false
			r.Runners = append(r.Runners, Runner{Name: "nope", Configured: true, Problem: "unknown runner (valid: claude)"})
		}, []string{"the nope runner cannot run: unknown runner (valid: claude)"}},
		{"agent not found", func(r *Report) {
			r.Runners[0] = Runner{Name: "claude", Configured: true, Executable: "claude", Problem: "not found on PATH"}
		}, []string{`the claude runner cannot run its agent "claude": not found on PATH; point at it with --runner-cmd PATH (GONOGO_RUNNER_CMD) or choose another with --runner`}},
		{"not logged in", func(r *Report) {
			r.Runners[0].Login = &Login{Checked: true, Asked: "claude auth status", Hint: "log in"}
		},
			[]string{"the claude runner's agent is not logged in (claude auth status says so): log in"}},
		{"login not checked", func(r *Report) { r.Runners[0].Login = &Login{Why: "cannot say"} }, []string{}},
		{"another runner broken", func(r *Report) { r.Runners[1].Problem = "does not start" }, []string{}},
		{"no skills folder", func(r *Report) { r.Skills = Skills{Problems: []string{"none here", "nor there"}} },
			[]string{"no skills folder: none here; nor there"}},
		{"only broken skills", func(r *Report) { r.Skills.Skills, r.Skills.Broken = 0, 2 },
			[]string{"no usable skill in skills: 2 skills found, none can be used (see gonogo skills)"}},
		{"no skills", func(r *Report) { r.Skills.Skills, r.Skills.Broken = 0, 0 }, []string{"no usable skill: skills holds none"}},
		{"data not writable", func(r *Report) { r.Data.Writable, r.Data.NotWritable = false, "read-only" },
			[]string{"gonogo cannot write the data directory data: read-only"}},
		{"store does not open", func(r *Report) { r.Data.Store, r.Data.StoreError = "error", "bad file" },
			[]string{"the store in data does not open: bad file"}},
		{"store held", func(r *Report) { r.Data.Store = "held" }, []string{}},
		{"cluster not ready", func(r *Report) { r.Temporal = &Temporal{Problem: "namespace gonogo does not exist"} },
			[]string{"gonogo cannot work on the Temporal cluster GONOGO_TEMPORAL_ADDR names: namespace gonogo does not exist"}},
		{"no workers", func(r *Report) { r.Temporal = &Temporal{Ready: true} }, []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := base()
			c.change(&rep)
			rep.judge()
			if !slices.Equal(rep.Problems, c.want) || rep.OK != (len(c.want) == 0) {
				t.Errorf("ok %v, problems %q; want %q", rep.OK, rep.Problems, c.want)
			}
		})
	}
	rep := notOKReport()
	rep.judge()
	if len(rep.Problems) != 4 {
		t.Errorf("a set-up wrong in four ways: %d problems: %q", len(rep.Problems), rep.Problems)
	}
}

// The text and the JSON are a contract: any change shows as a diff of
// the golden files.
func TestPrintAndJSONAreStable(t *testing.T) {
	for _, c := range []struct {
		name string
		rep  Report
	}{{"ok", okReport()}, {"not-ok", notOKReport()}} {
		t.Run(c.name, func(t *testing.T) {
			rep := c.rep
			rep.judge()
			var text bytes.Buffer
			Print(&text, rep)
			golden(t, c.name+".txt", text.Bytes())
			js, err := json.MarshalIndent(rep, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, c.name+".json", append(js, '\n'))
		})
	}
}
