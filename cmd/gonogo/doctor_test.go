package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/internal/doctor"
	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/storage"
)

// onPath makes PATH a fresh folder holding the given executables (name to
// shell script body) and returns it. Tests that use it cannot run in
// parallel: PATH is the process's.
func onPath(t *testing.T, scripts map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The scripts need a shell and sleep; nothing else of the system's
	// PATH comes along.
	t.Setenv("PATH", dir)
	return dir
}

func doctorJSON(t *testing.T, r result) doctor.Report {
	t.Helper()
	var rep doctor.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("doctor --json: %v\n%s\n%s", err, r.stdout, r.stderr)
	}
	return rep
}

func runnerIn(t *testing.T, rep doctor.Report, name string) doctor.Runner {
	t.Helper()
	for _, r := range rep.Runners {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("doctor does not report the %s runner: %+v", name, rep.Runners)
	return doctor.Runner{}
}

func TestDoctorFindsTheAgentAndReportsEverything(t *testing.T) {
	bin := onPath(t, map[string]string{
		"claude": loggedInClaude,
		"gemini": `echo "gemini cannot start: no credentials" >&2; exit 3`,
	})
	vars := baseVars(t)
	// A run left waiting, so the store has something to count.
	if r := gonogo(t, vars, "", "run", "--dry-run", filepath.Join(exampleDir(t), "plan.md")); r.code != terminal.ExitWaiting {
		t.Fatalf("dry run exited %d: %s", r.code, r.stderr)
	}
	r := gonogo(t, vars, "", "doctor", "--json")
	if r.code != terminal.ExitOK {
		t.Errorf("doctor exited %d with claude on PATH, want 0\n%s", r.code, r.stderr)
	}
	checkDoctorReport(t, doctorJSON(t, r), bin)

	text := gonogo(t, vars, "", "doctor")
	for _, want := range []string{"* claude   " + filepath.Join(bin, "claude") + "  2.1.7 (Claude Code)  answers --version\n",
		"login: claude auth status: logged in (api_key)\n",
		`codex    "codex" not found on PATH`, "Skills     " + vars["GONOGO_SKILLS_DIR"] + " (GONOGO_SKILLS_DIR): 3 skills",
		"store opens: 1 run (1 waiting)",
		"OK: a run can start: the claude runner's agent answers --version and claude auth status says it is logged in (api_key); 3 usable skills; the data directory is writable.\n"} {
		if !strings.Contains(text.stdout, want) {
			t.Errorf("doctor lacks %q:\n%s", want, text.stdout)
		}
	}
}

// loggedInClaude is a claude that answers --version and says, as
// claude auth status does, that it has an API key.
const loggedInClaude = `case "$1 $2" in
"auth status") echo '{"loggedIn": true, "authMethod": "api_key", "apiKeySource": "ANTHROPIC_API_KEY"}' ;;
*) echo "2.1.7 (Claude Code)" ;;
esac`

// checkDoctorReport checks doctor's findings with claude and a gemini
// that does not start in bin, the example skills and one waiting run.
func checkDoctorReport(t *testing.T, rep doctor.Report, bin string) {
	t.Helper()
	if !rep.OK || len(rep.Problems) != 0 || rep.Runner != "claude" {
		t.Errorf("ok %v, problems %q, runner %q; want OK with claude", rep.OK, rep.Problems, rep.Runner)
	}
	checkDoctorClaude(t, runnerIn(t, rep, "claude"), bin)
	checkDoctorOthers(t, rep)
}

// checkDoctorClaude checks what doctor found of a claude in bin that
// answers --version and is logged in.
func checkDoctorClaude(t *testing.T, c doctor.Runner, bin string) {
	t.Helper()
	if !c.Configured || !c.Found || c.Path != filepath.Join(bin, "claude") ||
		c.Version != "2.1.7 (Claude Code)" || c.Starts == nil || !*c.Starts || c.Problem != "" {
		t.Errorf("claude: %+v, want found at %s, version 2.1.7 (Claude Code), starts", c, bin)
	}
	if l := c.Login; l == nil || !l.Checked || !l.LoggedIn || l.How != "api_key" || l.Asked != "claude auth status" {
		t.Errorf("claude login: %+v, want logged in with api_key, as claude auth status says", l)
	}
}

// checkDoctorOthers checks the rest of checkDoctorReport's set-up.
func checkDoctorOthers(t *testing.T, rep doctor.Report) {
	t.Helper()
	if g := runnerIn(t, rep, "gemini"); !g.Found || g.Starts == nil || *g.Starts || !strings.Contains(g.Problem, "exit status 3: gemini cannot start") {
		t.Errorf("gemini: %+v, want found but not starting, with its stderr", g)
	}
	if x := runnerIn(t, rep, "codex"); x.Found || x.Executable != "codex" || x.Problem != "not found on PATH" {
		t.Errorf("codex: %+v, want not found on PATH", x)
	}
	if s := rep.Skills; !s.Exists || s.Skills != 3 || s.Source != "GONOGO_SKILLS_DIR" || len(s.Problems) != 0 {
		t.Errorf("skills: %+v, want the example's 3, from GONOGO_SKILLS_DIR", s)
	}
	if d := rep.Data; !d.Exists || !d.Writable || d.Store != "ok" || d.Runs["waiting"] != 1 {
		t.Errorf("data: %+v, want a writable directory whose store opens with 1 waiting run", d)
	}
}

func TestDoctorWithoutTheAgent(t *testing.T) {
	onPath(t, nil)
	vars := baseVars(t)
	vars["GONOGO_DATA_DIR"] = filepath.Join(t.TempDir(), "not-yet")
	r := gonogo(t, vars, "", "doctor")
	if r.code != terminal.ExitRefused {
		t.Errorf("doctor exited %d without the agent, want 1", r.code)
	}
	for _, want := range []string{`* claude   "claude" not found on PATH`, "does not exist yet", "NOT OK: no run could work:\n" +
		`  - the claude runner cannot run its agent "claude": not found on PATH; point at it with --runner-cmd PATH (GONOGO_RUNNER_CMD) or choose another with --runner` + "\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("doctor lacks %q:\n%s", want, r.stdout)
		}
	}
	if _, err := os.Stat(vars["GONOGO_DATA_DIR"]); !os.IsNotExist(err) {
		t.Errorf("doctor created the data directory (stat: %v)", err)
	}
	// A dry run needs no agent.
	if r := gonogo(t, vars, "", "doctor", "--dry-run", "--json"); r.code != terminal.ExitOK || !doctorJSON(t, r).OK {
		t.Errorf("doctor --dry-run exited %d, want 0:\n%s", r.code, r.stdout)
	}
}

func TestDoctorReportsAStoreHeldByAnotherGonogo(t *testing.T) {
	onPath(t, map[string]string{"agent": "echo agent 1.0"})
	vars := baseVars(t)
	db, err := storage.Open(vars["GONOGO_DATA_DIR"], storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r := gonogo(t, vars, "", "doctor", "--json", "--runner", "command", "--runner-cmd", "agent")
	rep := doctorJSON(t, r)
	if r.code != terminal.ExitOK || rep.Data.Store != "held" {
		t.Errorf("doctor exited %d, store %q; want 0 and held", r.code, rep.Data.Store)
	}
	// The command runner's executable is found but never run: it may take
	// any argument as work.
	if c := runnerIn(t, rep, "command"); !c.Found || c.Starts != nil || c.Version != "" {
		t.Errorf("command: %+v, want found and not run", c)
	}
}

func TestDoctorListsTheSkillsProblems(t *testing.T) {
	onPath(t, nil)
	vars := baseVars(t)
	shapes := filepath.Join(exampleDir(t), "..", "..", "..", "testdata", "skills-shapes", "skills")
	r := gonogo(t, vars, "", "doctor", "--json", "--dry-run", "--skills", shapes)
	s := doctorJSON(t, r).Skills
	if r.code != terminal.ExitOK || !s.Exists || s.Source != "--skills" || s.Skills == 0 || s.Broken == 0 || len(s.Problems) < s.Broken {
		t.Errorf("doctor exited %d, skills %+v; want usable and broken skills, with a problem for each broken one", r.code, s)
	}
	for _, name := range []string{"unclosed-front-matter", "utility-pm-critic"} {
		found := false
		for _, p := range s.Problems {
			found = found || strings.Contains(p, name)
		}
		if !found {
			t.Errorf("the problems do not name %s: %q", name, s.Problems)
		}
	}
	// The counts agree with gonogo skills: its leaf agent missing, the
	// dispatch skill cannot be used.
	var list []jsonSkill
	if err := json.Unmarshal([]byte(gonogo(t, vars, "", "skills", "--json", "--skills", shapes).stdout), &list); err != nil {
		t.Fatal(err)
	}
	usable := 0
	for _, sk := range list {
		if sk.Usable {
			usable++
		}
	}
	if s.Skills != usable || s.Skills+s.Broken != len(list) {
		t.Errorf("doctor counts %d usable of %d, gonogo skills %d of %d", s.Skills, s.Skills+s.Broken, usable, len(list))
	}
}
