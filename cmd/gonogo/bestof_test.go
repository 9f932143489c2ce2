package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/gonogo/gonogo/internal/terminal"
)

// agentOut is what a fake agent does: print text as its runner's stream
// (blank text is an EMPTY artifact), or fail with exit code 3.
type agentOut struct {
	text string
	fail bool
	// afterCodex: the agent ends a little after the codex one started,
	// so that it most likely ends last.
	afterCodex bool
}

// bestOfAgents puts a fake claude and a fake codex, real executables
// speaking their runner's stream format, first on PATH. Each logs
// "NAME STEP ATTEMPT" to the returned log as it starts.
func bestOfAgents(t *testing.T, claude, codex agentOut) (log string) {
	t.Helper()
	dir := t.TempDir()
	log = filepath.Join(dir, "agents.log")
	lines := func(evs ...map[string]any) []byte {
		var out []byte
		for _, ev := range evs {
			b, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			out = append(append(out, b...), '\n')
		}
		return out
	}
	streams := map[string][]byte{
		"claude": lines(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": claude.text,
			"num_turns": 1, "total_cost_usd": 0.5}),
		"codex": lines(map[string]any{"type": "item.completed", "item": map[string]any{"id": "item_1", "type": "agent_message", "text": codex.text}},
			map[string]any{"type": "turn.completed", "usage": map[string]any{"input_tokens": 10, "output_tokens": 10}}),
	}
	for name, out := range map[string]agentOut{"claude": claude, "codex": codex} {
		stream := filepath.Join(dir, name+".jsonl")
		if err := os.WriteFile(stream, streams[name], 0o644); err != nil {
			t.Fatal(err)
		}
		script := "#!/bin/sh\ncat >/dev/null\necho \"" + name + " $GONOGO_STEP $GONOGO_ATTEMPT\" >> " + log + "\n"
		if out.afterCodex {
			script += "while ! grep -q codex " + log + "; do sleep 0.02; done\nsleep 0.3\n"
		}
		if out.fail {
			script += "echo 'the " + name + " agent broke' >&2\nexit 3\n"
		} else {
			script += "cat " + stream + "\n"
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return log
}

func bestOfVars(t *testing.T) map[string]string {
	vars := baseVars(t)
	vars["GONOGO_RUNNER"] = "claude"
	return vars
}

const claudePRD = "# Claude's PRD\n\nSaved searches for mobile shoppers, in full.\n"

func TestBestOfTerminalOneProducedOneEmpty(t *testing.T) {
	log := bestOfAgents(t, agentOut{text: claudePRD}, agentOut{text: "   "})
	vars := bestOfVars(t)
	// Step 1: the EMPTY candidate cannot be the artifact by itself; the
	// person picks claude's with a note. Step 2 likewise.
	res := gonogo(t, vars, "pick 1 the full draft\npick 1\n", "run", "--thread", "--best-of", "claude,codex",
		"--chain", "deliver-prd -> measure-experiment-design -- saved searches")
	if res.code != terminal.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{
		"(candidate 1 on claude)", "(candidate 2 on codex)",
		"Candidates of step 1 (pick N [note] takes one as the step's artifact):",
		"1. claude   PRODUCED", "2. codex    EMPTY",
		`pick of candidate 1 (attempt 1) with note "the full draft" by tester`,
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, res.stdout)
		}
	}
	id := runID(t, res.stdout)
	dir := filepath.Join(vars["GONOGO_DATA_DIR"], "runs", id)
	if b, err := os.ReadFile(filepath.Join(dir, "01-deliver-prd.md")); err != nil || string(b) != claudePRD {
		t.Fatalf("step 1's artifact file: %v %q, want the picked candidate's", err, b)
	}
	// Each candidate ran once per step, each on its own agent.
	b, _ := os.ReadFile(log)
	for _, want := range []string{"claude 1 1", "codex 1 2", "claude 2 1", "codex 2 2"} {
		if strings.Count(string(b), want+"\n") != 1 {
			t.Errorf("agent log has %q %d times, want once:\n%s", want, strings.Count(string(b), want+"\n"), b)
		}
	}
	// The journal says who picked which, and why; costs add up.
	show := gonogo(t, vars, "", "show", "--json", id)
	var run struct {
		CostUSD float64 `json:"cost_usd"`
		Journal []struct {
			Type      string `json:"type"`
			Kind      string `json:"kind"`
			Actor     string `json:"actor"`
			Candidate int    `json:"candidate"`
			Runner    string `json:"runner"`
			Feedback  string `json:"feedback"`
		} `json:"journal"`
	}
	if err := json.Unmarshal([]byte(show.stdout), &run); err != nil {
		t.Fatalf("%v\n%s", err, show.stdout)
	}
	if run.CostUSD != 1.0 {
		t.Errorf("run cost $%.2f, want $1.00: claude's $0.50 on each step", run.CostUSD)
	}
	picks := 0
	for _, ev := range run.Journal {
		if ev.Kind == "pick" {
			picks++
			if ev.Actor != "tester" || ev.Candidate != 1 {
				t.Errorf("pick event %+v", ev)
			}
		}
	}
	if picks != 2 {
		t.Errorf("%d pick events, want 2", picks)
	}
}

func TestBestOfTerminalGuardedAuto(t *testing.T) {
	t.Run("one PRODUCED is picked by itself", func(t *testing.T) {
		bestOfAgents(t, agentOut{text: claudePRD}, agentOut{text: " "})
		res := gonogo(t, bestOfVars(t), "", "run", "--force-auto", "--best-of", "claude,codex", "--chain", "deliver-prd -- saved searches")
		if res.code != terminal.ExitOK || !strings.Contains(res.stdout, "pick of candidate 1 (attempt 1) by gonogo (auto)") {
			t.Fatalf("exit %d, want the lone PRODUCED candidate picked by gonogo\n%s\n%s", res.code, res.stdout, res.stderr)
		}
	})
	t.Run("the PRODUCED one ending last is picked, and said so", func(t *testing.T) {
		// Its end, the pick and the run's end are one commit: the terminal
		// shows the pick before the end.
		bestOfAgents(t, agentOut{text: claudePRD, afterCodex: true}, agentOut{text: " "})
		vars := bestOfVars(t)
		res := gonogo(t, vars, "", "run", "--force-auto", "--best-of", "claude,codex", "--chain", "deliver-prd -- saved searches")
		if res.code != terminal.ExitOK || !strings.Contains(res.stdout, "pick of candidate 1 (attempt 1) by gonogo (auto)") {
			t.Fatalf("exit %d, want the lone PRODUCED candidate picked by gonogo, said before the end\n%s\n%s", res.code, res.stdout, res.stderr)
		}
	})
	t.Run("both PRODUCED wait for people", func(t *testing.T) {
		bestOfAgents(t, agentOut{text: claudePRD}, agentOut{text: "# Codex's PRD\n\nAnother full draft.\n"})
		vars := bestOfVars(t)
		res := gonogo(t, vars, "", "run", "--force-auto", "--best-of", "claude,codex", "--chain", "deliver-prd -- saved searches")
		if res.code != terminal.ExitWaiting || !strings.Contains(res.stdout, "1. claude   PRODUCED") || !strings.Contains(res.stdout, "2. codex    PRODUCED") {
			t.Fatalf("exit %d, want the run waiting on a pick\n%s\n%s", res.code, res.stdout, res.stderr)
		}
		id := runID(t, res.stdout)
		// gonogo decide picks while no gonogo holds the run; resume goes on.
		dec := gonogo(t, vars, "", "decide", id, "pick", "2", "shorter")
		if dec.code != terminal.ExitOK {
			t.Fatalf("decide pick: exit %d\n%s\n%s", dec.code, dec.stdout, dec.stderr)
		}
		res = gonogo(t, vars, "", "resume", id)
		if res.code != terminal.ExitOK || !strings.Contains(res.stdout, "Run complete") {
			t.Fatalf("resume after the pick: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
		}
		show := gonogo(t, vars, "", "show", id, "--artifact", "1")
		if !strings.Contains(show.stdout, "Codex's PRD") {
			t.Fatalf("step 1's artifact is not the picked candidate's:\n%s\n%s", show.stdout, show.stderr)
		}
	})
}

func TestBestOfTerminalOneFailed(t *testing.T) {
	bestOfAgents(t, agentOut{text: claudePRD}, agentOut{fail: true})
	vars := bestOfVars(t)
	// Picking the FAILED candidate is refused; the PRODUCED one is taken.
	res := gonogo(t, vars, "pick 2\n", "run", "--best-of", "claude,codex", "--chain", "deliver-prd -- saved searches")
	if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, "candidate 2 (codex) is FAILED and cannot be picked") {
		t.Fatalf("pick of the FAILED candidate: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if !regexp.MustCompile(`2\. codex +FAILED - .*the codex agent broke.*\(cannot be picked\)`).MatchString(res.stdout) {
		t.Errorf("the FAILED candidate is not listed as such:\n%s", res.stdout)
	}
	id := runID(t, res.stdout)
	// gonogo decide is refused the same pick under the run's rules
	// (exit 1), in the engine's words.
	dec := gonogo(t, vars, "", "decide", id, "pick", "2")
	if dec.code != terminal.ExitRefused || !strings.Contains(dec.stderr, "REFUSED: step 1: candidate 2 (codex) is FAILED and cannot be picked") {
		t.Fatalf("decide pick of the FAILED candidate: exit %d\n%s\n%s", dec.code, dec.stdout, dec.stderr)
	}
	res = gonogo(t, vars, "pick 1\n", "resume", id)
	if res.code != terminal.ExitOK || !strings.Contains(res.stdout, "Run complete") {
		t.Fatalf("resume with pick 1: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
}

func TestBestOfUnknownRunner(t *testing.T) {
	bestOfAgents(t, agentOut{text: claudePRD}, agentOut{text: claudePRD})
	t.Setenv("PATH", strings.Split(os.Getenv("PATH"), string(os.PathListSeparator))[0]+string(os.PathListSeparator)+"/usr/bin:/bin")
	for _, tt := range []struct{ flag, want string }{
		{"claude,cursor", `--best-of claude,cursor: best-of: unknown runner "cursor" (valid: claude, codex, gemini, command, dry-run)`},
		{"claude", "name at least two"},
		// Known, but its agent is not on PATH.
		{"claude,gemini", `best-of: the gemini runner's agent "gemini" is not on PATH`},
	} {
		res := gonogo(t, bestOfVars(t), "", "run", "--best-of", tt.flag, "--chain", "deliver-prd")
		if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, tt.want) {
			t.Errorf("--best-of %s: exit %d, stderr %q; want 2 and %q", tt.flag, res.code, res.stderr, tt.want)
		}
	}
}

// TestBestOfKilledWhileCandidatesRun SIGKILLs gonogo while both candidates
// of a best-of step run: the next gonogo offers the step for redo, the
// two lost candidates are interrupted once each, and the redo runs one
// new round of two: no candidate runs twice, none is recorded twice.
func TestBestOfKilledWhileCandidatesRun(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fifo, fast, log := filepath.Join(dir, "started"), filepath.Join(dir, "fast"), filepath.Join(dir, "agents.log")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// Read and write ends both here: a write blocks until read, and the
	// reader never sees the end while the agents come and go.
	started, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer started.Close()
	stream, _ := json.Marshal(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": claudePRD, "num_turns": 1})
	if err := os.WriteFile(filepath.Join(dir, "claude.jsonl"), append(stream, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	// The first round blocks after saying it started; once fast exists,
	// an agent answers at once.
	agent := "#!/bin/sh\ncat >/dev/null\necho \"$GONOGO_STEP $GONOGO_ATTEMPT\" >> " + log + "\n" +
		"if [ ! -f " + fast + " ]; then echo started > " + fifo + "; exec sleep 600; fi\ncat " + filepath.Join(dir, "claude.jsonl") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "claude"), []byte(agent), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	vars := bestOfVars(t)
	cmd := exec.Command(self, "run", "--best-of", "claude,claude", "--chain", "deliver-prd -- saved searches")
	cmd.Env = append(os.Environ(), "GONOGO_TEST_AS_MAIN=1", "GONOGO_DATA_DIR="+vars["GONOGO_DATA_DIR"],
		"GONOGO_SKILLS_DIR="+vars["GONOGO_SKILLS_DIR"], "GONOGO_RUNNER=claude", "USER=tester")
	stdin, err := cmd.StdinPipe() // held open: the run never sees its input end
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewReader(started)
	for range 2 {
		if _, err := lines.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if err := os.WriteFile(fast, nil, 0o644); err != nil {
		t.Fatal(err)
	}

	list := gonogo(t, vars, "", "runs", "--json")
	var runs []jsonRunLine
	if err := json.Unmarshal([]byte(list.stdout), &runs); err != nil || len(runs) != 1 {
		t.Fatalf("runs --json: %v %s", err, list.stdout)
	}
	id := runs[0].ID
	res := gonogo(t, vars, "redo\npick 2\n", "resume", id)
	if res.code != terminal.ExitOK || !strings.Contains(res.stdout, "was interrupted") {
		t.Fatalf("resume: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	show := gonogo(t, vars, "", "show", "--json", id)
	var run struct {
		Journal []struct {
			Type    string `json:"type"`
			Attempt int    `json:"attempt"`
		} `json:"journal"`
	}
	if err := json.Unmarshal([]byte(show.stdout), &run); err != nil {
		t.Fatalf("%v\n%s", err, show.stdout)
	}
	count := map[string][]int{}
	for _, ev := range run.Journal {
		count[ev.Type] = append(count[ev.Type], ev.Attempt)
	}
	if got := count["step-started"]; !slices.Equal(got, []int{1, 2, 3, 4}) {
		t.Errorf("attempts started %v, want 1 and 2, then 3 and 4 after the redo", got)
	}
	if got := count["step-interrupted"]; !slices.Equal(got, []int{1, 2}) {
		t.Errorf("attempts interrupted %v, want 1 and 2, once each", got)
	}
	if got := count["step-finished"]; !slices.Equal(got, []int{3, 4}) && !slices.Equal(got, []int{4, 3}) {
		t.Errorf("attempts finished %v, want 3 and 4", got)
	}
	b, _ := os.ReadFile(log)
	if ran := strings.Split(strings.TrimSpace(string(b)), "\n"); len(ran) != 4 {
		t.Errorf("the agent ran %d times, want 4 (two per round):\n%s", len(ran), b)
	}
}

// A workflow step's best_of: runs on its runners and waits for a pick;
// one naming a runner gonogo does not have is refused before anything
// starts.
func TestBestOfWorkflowStep(t *testing.T) {
	bestOfAgents(t, agentOut{text: claudePRD}, agentOut{text: "# Codex's PRD\n\nAnother full draft.\n"})
	vars := bestOfVars(t)
	dir := t.TempDir()
	vars["GONOGO_WORKFLOWS_DIR"] = dir
	write := func(name, runners string) {
		src := "name: " + name + "\nsteps:\n  - id: prd\n    skill: deliver-prd\n    best_of: [" + runners + "]\n"
		if err := os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("drafts", "claude, codex")
	write("typo", "claude, cursor")
	res := gonogo(t, vars, "", "run", "--workflow", "typo")
	if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, `step "prd": best-of: unknown runner "cursor"`) {
		t.Fatalf("a best_of: naming cursor: exit %d\n%s", res.code, res.stderr)
	}
	res = gonogo(t, vars, "pick 2 tighter\n", "run", "--workflow", "drafts")
	if res.code != terminal.ExitOK || !strings.Contains(res.stdout, `pick of candidate 2 (attempt 2) with note "tighter"`) {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
}

// TestBestOfNeedsNoOwnAgent runs every step on two codex candidates while
// the run's own runner (claude) is not installed: the run starts, since no
// step runs on claude. A round that names claude still needs it.
func TestBestOfNeedsNoOwnAgent(t *testing.T) {
	bestOfAgents(t, agentOut{text: claudePRD}, agentOut{text: "# Codex's PRD\n\nA draft.\n"})
	codex, err := exec.LookPath("codex")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(codex)
	if err := os.Remove(filepath.Join(dir, "claude")); err != nil {
		t.Fatal(err)
	}
	if p, err := exec.LookPath("claude"); err == nil {
		t.Skipf("a claude is installed at %s: this test needs it absent", p)
	}
	vars := bestOfVars(t)
	res := gonogo(t, vars, "pick 2\n", "run", "--best-of", "codex,codex", "--chain", "deliver-prd -- saved searches")
	if res.code != terminal.ExitOK || !strings.Contains(res.stdout, "(candidate 2 on codex)") {
		t.Fatalf("a run on codex only, without claude: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	res = gonogo(t, vars, "", "run", "--best-of", "claude,codex", "--chain", "deliver-prd -- saved searches")
	if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, "claude") {
		t.Fatalf("a round naming the missing claude: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
}
