package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/gonogo/gonogo/internal/demo"
	"github.com/gonogo/gonogo/internal/hangguard"
	"github.com/gonogo/gonogo/internal/terminal"
)

// workAgent is a command agent that writes a real artifact naming its
// skill and step, and keeps each prompt it was given in prompts.
func workAgent(t *testing.T, vars map[string]string) (prompts string) {
	t.Helper()
	prompts = t.TempDir()
	vars["GONOGO_RUNNER"] = "command"
	vars["GONOGO_RUNNER_CMD"] = writeAgent(t, `cat > `+prompts+`/step-$GONOGO_STEP-$GONOGO_ATTEMPT.txt
printf '# %s\n\nOUTPUT-OF-STEP-%s: a paragraph of real work.\n' "$GONOGO_SKILL" "$GONOGO_STEP"`)
	return prompts
}

func showRun(t *testing.T, vars map[string]string, id string) jsonRun {
	t.Helper()
	res := gonogo(t, vars, "", "show", "--json", id)
	var run jsonRun
	if err := json.Unmarshal([]byte(res.stdout), &run); err != nil {
		t.Fatalf("show --json: %v\n%s%s", err, res.stdout, res.stderr)
	}
	return run
}

// A plan's Section 7 blocks are independent: --thread on a plan is
// refused, by check and run alike, rather than announced and ignored.
func TestThreadOnAPlanIsRefused(t *testing.T) {
	vars := baseVars(t)
	plan := filepath.Join(exampleDir(t), "plan.md")
	res := gonogo(t, vars, "", "check", "--json", "--thread", plan)
	var got jsonCheck
	if err := json.Unmarshal([]byte(res.stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, res.stdout)
	}
	if res.code != terminal.ExitRefused || got.Accepted || got.Refusal == nil || got.Refusal.Reason != "invalid-input" ||
		!strings.Contains(got.Refusal.Message, "--thread") {
		t.Fatalf("check --thread PLAN: exit %d refusal %+v", res.code, got.Refusal)
	}
	res = gonogo(t, vars, "approve\napprove\napprove\n", "run", "--dry-run", "--thread", plan)
	if res.code != terminal.ExitRefused || !strings.Contains(res.stderr, "REFUSED (invalid-input)") || strings.Contains(res.stdout, "Threaded") {
		t.Fatalf("run --thread PLAN: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if list := gonogo(t, vars, "", "runs"); !strings.Contains(list.stdout, "No runs") {
		t.Fatalf("a refused run was started:\n%s", list.stdout)
	}
}

// Skipping a step a --thread step takes its artifact from says what that
// step gets instead, and it gets the last confirmed artifact before it.
func TestSkipBeforeAThreadedStep(t *testing.T) {
	vars := baseVars(t)
	prompts := workAgent(t, vars)
	res := gonogo(t, vars, "approve\nskip\napprove\n", "run", "--thread", "--chain",
		"define-problem-statement -> deliver-prd -> measure-experiment-design -- saved searches")
	if res.code != terminal.ExitOK || !strings.Contains(res.stdout, "Run complete") {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{
		"Step 3 (measure-experiment-design) takes this step's artifact: it is handed the confirmed artifact of step 1 (define-problem-statement) instead.",
		"Input:    the confirmed artifact of step 1 (define-problem-statement), as step 2 (deliver-prd) was skipped",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, res.stdout)
		}
	}
	p, err := os.ReadFile(filepath.Join(prompts, "step-3-1.txt"))
	if err != nil || !strings.Contains(string(p), "OUTPUT-OF-STEP-1") || strings.Contains(string(p), "OUTPUT-OF-STEP-2") {
		t.Fatalf("step 3 was not handed step 1's artifact: %v\n%s", err, p)
	}

	// With nothing confirmed before it, the step runs without an input.
	vars = baseVars(t)
	prompts = workAgent(t, vars)
	res = gonogo(t, vars, "skip\napprove\n", "run", "--thread", "--chain", "define-problem-statement -> deliver-prd -- saved searches")
	if res.code != terminal.ExitOK || !strings.Contains(res.stdout, "Step 2 (deliver-prd) takes this step's artifact: it runs without one") {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if p, _ := os.ReadFile(filepath.Join(prompts, "step-2-1.txt")); strings.Contains(string(p), "## Input") {
		t.Fatalf("step 2 was handed an input:\n%s", p)
	}
}

// A run halted on a FAILED step is listed as halted (its JSON state stays
// waiting), the agent's stderr is said once, and the columns fit the ids.
func TestHaltedRunInRunsAndShow(t *testing.T) {
	vars := baseVars(t)
	vars["GONOGO_RUNNER"] = "command"
	vars["GONOGO_RUNNER_CMD"] = writeAgent(t, `cat >/dev/null; echo "quota exhausted for this key" >&2; exit 7`)
	res := gonogo(t, vars, "", "run", "--chain", "deliver-prd, measure-experiment-design")
	if res.code != terminal.ExitRefused || !strings.Contains(res.stdout, "Run halted at Step 1 of 2") {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if n := strings.Count(res.stdout+res.stderr, "quota exhausted"); n != 1 {
		t.Errorf("the agent's stderr is said %d times, want once:\n%s%s", n, res.stdout, res.stderr)
	}
	id := runID(t, res.stdout)
	dry := gonogo(t, vars, "", "run", "--dry-run", "--chain", "deliver-prd")
	list := gonogo(t, vars, "", "runs")
	lines := strings.Split(strings.TrimSpace(list.stdout), "\n")
	if len(lines) != 3 {
		t.Fatalf("runs printed %d lines:\n%s", len(lines), list.stdout)
	}
	col := regexp.MustCompile(`^(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+`)
	want := map[string]string{id: "halted", runID(t, dry.stdout): "waiting"}
	stateAt := strings.Index(lines[0], "STATE")
	for _, l := range lines[1:] {
		m := col.FindStringSubmatch(l)
		if m == nil || want[m[1]] != m[2] {
			t.Errorf("runs line %q: want the run's state %v", l, want)
			continue
		}
		if strings.Index(l, m[2]) != stateAt || !strings.HasPrefix(l, m[1]+"  ") {
			t.Errorf("runs line %q is not aligned under %q", l, lines[0])
		}
	}
	var runs []jsonRunLine
	if err := json.Unmarshal([]byte(gonogo(t, vars, "", "runs", "--json").stdout), &runs); err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.State != "waiting" || r.Halted != (r.ID == id) {
			t.Errorf("runs --json: %s state %s halted %v", r.ID, r.State, r.Halted)
		}
	}
	show := gonogo(t, vars, "", "show", id)
	if !strings.Contains(show.stdout, "State:      halted at step 1 (deliver-prd): FAILED - the agent exited with code 7") {
		t.Errorf("show does not say the run is halted:\n%s", show.stdout)
	}
	if run := showRun(t, vars, id); run.State != "waiting" || !run.Halted {
		t.Errorf("show --json state %q halted %v, want waiting and halted", run.State, run.Halted)
	}
}

// --runner dry-run is a dry run, shown as one, with the label said once.
func TestRunnerDryRunIsADryRun(t *testing.T) {
	vars := baseVars(t)
	res := gonogo(t, vars, "approve\n", "run", "--runner", "dry-run", "--chain", "deliver-prd -- x")
	if res.code != terminal.ExitOK || !strings.Contains(res.stdout, "Mode:       dry-run") {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	run := showRun(t, vars, runID(t, res.stdout))
	if run.Mode != "dry-run" {
		t.Errorf("show --json mode %q, want dry-run", run.Mode)
	}
	show := gonogo(t, vars, "", "show", run.ID)
	for _, out := range []string{res.stdout, show.stdout} {
		if strings.Contains(out, "NOT EXECUTED - NOT EXECUTED") || strings.Contains(out, "NOT-EXECUTED - ") || !strings.Contains(out, "NOT EXECUTED - dry run") {
			t.Errorf("the dry-run label is doubled, renamed or missing:\n%s", out)
		}
	}
	chk := gonogo(t, vars, "", "check", "--json", "--runner", "dry-run", "--chain", "deliver-prd")
	var got jsonCheck
	if err := json.Unmarshal([]byte(chk.stdout), &got); err != nil || got.RunMode != "dry-run" || !got.Flags.DryRun {
		t.Fatalf("check --runner dry-run: %v run_mode %q flags %+v", err, got.RunMode, got.Flags)
	}
}

func TestPlanOverTheLimitGivesItsRealSize(t *testing.T) {
	vars := baseVars(t)
	plan := filepath.Join(t.TempDir(), "big.md")
	if err := os.WriteFile(plan, bytes.Repeat([]byte("# a plan line\n"), 3<<20/14), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(plan)
	res := gonogo(t, vars, "", "check", plan)
	for _, want := range []string{fmt.Sprintf("(%d bytes)", fi.Size()), "3.0MiB", "over the 1MiB (1048576 bytes) limit",
		"--max-plan-bytes 4MiB", "GONOGO_MAX_PLAN_BYTES=4MiB"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("check of a %d-byte plan does not say %q:\n%s", fi.Size(), want, res.stdout)
		}
	}
	if res.code != terminal.ExitRefused {
		t.Errorf("exit %d, want %d", res.code, terminal.ExitRefused)
	}
}

func TestEditOfAMissingFileNamesIt(t *testing.T) {
	vars := baseVars(t)
	workAgent(t, vars)
	missing := filepath.Join(t.TempDir(), "nope.md")
	res := gonogo(t, vars, "edit "+missing+"\n", "run", "--chain", "deliver-prd, measure-experiment-design")
	if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, "edit file "+missing+" does not exist") {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	if strings.Contains(res.stderr, "plan file") {
		t.Errorf("the edit file is called a plan file: %s", res.stderr)
	}
	if strings.Contains(res.stderr, "edit: edit file") {
		t.Errorf("the message repeats its prefix: %s", res.stderr)
	}
}

// Malformed variables are refused naming the variable and a good value,
// not in go-envconfig's or strconv's words.
func TestMalformedVariables(t *testing.T) {
	cases := []struct{ name, value, example string }{
		{"GONOGO_LOG_LEVEL", "verbose", "GONOGO_LOG_LEVEL=debug"},
		{"GONOGO_STEP_TIMEOUT", "10", "GONOGO_STEP_TIMEOUT=30m"},
		{"GONOGO_PROGRESS_INTERVAL", "often", "GONOGO_PROGRESS_INTERVAL=30s"},
		{"GONOGO_MAX_PARALLEL", "two", "GONOGO_MAX_PARALLEL=4"},
		{"GONOGO_RUN_BUDGET_USD", "1,50", "GONOGO_RUN_BUDGET_USD=5.00"},
		{"GONOGO_MAX_ARTIFACT", "1XB", "GONOGO_MAX_ARTIFACT=1MiB"},
		{"GONOGO_MAX_PLAN_BYTES", "lots", "GONOGO_MAX_PLAN_BYTES=1MiB"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vars := baseVars(t)
			vars[c.name] = c.value
			res := gonogo(t, vars, "", "runs")
			if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, fmt.Sprintf("%s=%q", c.name, c.value)) ||
				!strings.Contains(res.stderr, "for example "+c.example) {
				t.Fatalf("exit %d, stderr %q", res.code, res.stderr)
			}
			for _, raw := range []string{"strconv", "time:", "parsing"} {
				if strings.Contains(res.stderr, raw) {
					t.Errorf("stderr %q is in the parser's words", res.stderr)
				}
			}
		})
	}
	// Numbers strconv reads but no budget can be: never compared true,
	// NaN would turn the budget off without a word.
	for _, v := range []string{"NaN", "Inf", "-1"} {
		vars := baseVars(t)
		vars["GONOGO_RUN_BUDGET_USD"] = v
		res := gonogo(t, vars, "", "runs")
		if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, "GONOGO_RUN_BUDGET_USD") || !strings.Contains(res.stderr, "for example GONOGO_RUN_BUDGET_USD=5.00") {
			t.Errorf("GONOGO_RUN_BUDGET_USD=%s: exit %d, stderr %q", v, res.code, res.stderr)
		}
	}
	for _, c := range []struct{ name, value, example string }{
		{"GONOGO_QUORUM", "x", "GONOGO_QUORUM=1"},
		{"GONOGO_REMIND_AFTER", "2", "GONOGO_REMIND_AFTER=2h"},
		{"GONOGO_QUORUM_EXCLUDE_STARTER", "yes", "GONOGO_QUORUM_EXCLUDE_STARTER=true"},
		{"GONOGO_CONFIRM_START", "yes", "GONOGO_CONFIRM_START=true"},
		{"GONOGO_SLACK_AUDIT_TRAIL", "off", "GONOGO_SLACK_AUDIT_TRAIL=false"},
	} {
		vars := baseVars(t)
		vars[c.name] = c.value
		res := gonogo(t, vars, "", "serve")
		if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, "for example "+c.example) || strings.Contains(res.stderr, "strconv") {
			t.Errorf("serve with %s=%s: exit %d, stderr %q", c.name, c.value, res.code, res.stderr)
		}
	}
}

// The same through gonogo demo with a short GONOGO_PROGRESS_INTERVAL: its
// stand-in agent reports turns and tool calls.
func TestProgressLinesInTheDemo(t *testing.T) {
	vars := baseVars(t)
	vars["GONOGO_PROGRESS_INTERVAL"] = "200ms"
	res := gonogo(t, vars, "approve\n", "demo")
	line := regexp.MustCompile(`(?m)^  \.\.\. define-problem-statement \(step 1\) running [\d.]+m?s(, \d+ turns?, \d+ tool calls?)?$`)
	if !line.MatchString(res.stdout) {
		t.Fatalf("no progress line for step 1:\n%s", res.stdout)
	}
}

// ttyReader and ttyWriter stand in for a terminal (see isTerminal).
type ttyReader struct{ io.Reader }

func (ttyReader) Terminal() bool { return true }

type ttyWriter struct{ *lockedBuffer }

func (ttyWriter) Terminal() bool { return true }

// session runs gonogo in-process "on a terminal": answers are written to
// the returned pipe, output read from out; ir is its Ctrl-C.
type session struct {
	t    *testing.T
	feed *io.PipeWriter
	out  *lockedBuffer
	ir   *terminal.Interrupts
	done chan int
}

func startSession(t *testing.T, vars map[string]string, args ...string) *session {
	return startSessionOut(t, vars, true, args...)
}

// startSessionOut is startSession with stdout a terminal or (like | tee)
// not one.
func startSessionOut(t *testing.T, vars map[string]string, termOut bool, args ...string) *session {
	t.Helper()
	m := map[string]string{"USER": "tester"}
	for k, v := range vars {
		m[k] = v
	}
	stdin, feed := io.Pipe()
	out := &lockedBuffer{}
	ctx, ir := terminal.NewInterrupts(context.Background())
	s := &session{t: t, feed: feed, out: out, ir: ir, done: make(chan int, 1)}
	var stdout io.Writer = out
	if termOut {
		stdout = ttyWriter{out}
	}
	go func() {
		s.done <- realMain(ctx, env{
			args: args, stdin: ttyReader{stdin}, stdout: stdout, stderr: stdout,
			lookup: envconfig.MapLookuper(m), getenv: func(k string) string { return m[k] },
		})
	}()
	t.Cleanup(func() { feed.Close() })
	return s
}

// waitFor waits until the output holds text n times.
func (s *session) waitFor(text string, n int) {
	s.t.Helper()
	deadline := hangguard.Deadline(s.t)
	for strings.Count(s.out.String(), text) < n {
		if time.Now().After(deadline) {
			s.t.Fatalf("no %q (x%d):\n%s", text, n, s.out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (s *session) say(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.feed, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

func (s *session) exit() int {
	s.t.Helper()
	select {
	case code := <-s.done:
		return code
	case <-time.After(hangguard.Limit(s.t)):
		s.t.Fatalf("gonogo did not end:\n%s", s.out.String())
		return 0
	}
}

// Closing the editor with the artifact unchanged records no edit: gonogo
// asks whether to approve as is, edit again or go back.
func TestEditorClosedUnchanged(t *testing.T) {
	vars := baseVars(t)
	workAgent(t, vars)
	vars["VISUAL"] = writeAgent(t, "exit 0")
	s := startSession(t, vars, "run", "--chain", "deliver-prd, measure-experiment-design -- x")
	const prompt = "[a]pprove [e]dit [s]kip [r]edo a[b]ort >"
	const unchanged = "The artifact is unchanged, so no edit is recorded."
	s.waitFor(prompt, 1)
	s.say("e")
	s.waitFor(unchanged, 1)
	s.say("e") // edit again: still unchanged
	s.waitFor(unchanged, 2)
	s.say("c") // back to the checkpoint
	s.waitFor(prompt, 2)
	s.say("e")
	s.waitFor(unchanged, 3)
	s.say("a") // approve as it is
	s.waitFor(prompt, 3)
	s.say("b")
	s.waitFor("Abort the run?", 1)
	s.say("y")
	if code := s.exit(); code != terminal.ExitRefused {
		t.Fatalf("exit %d after abort\n%s", code, s.out.String())
	}
	run := showRun(t, vars, runID(t, s.out.String()))
	for _, ev := range run.Journal {
		if ev.Kind == "edit" {
			t.Fatalf("an unchanged edit was recorded: %+v", ev)
		}
	}
	if d := run.Steps[0].Decision; d == nil || *d != "approve" || run.Steps[0].Attempts[0].Edited {
		t.Fatalf("step 1: decision %v, attempts %+v", d, run.Steps[0].Attempts)
	}

	// An editor that changes the artifact records the edit.
	vars = baseVars(t)
	workAgent(t, vars)
	vars["VISUAL"] = writeAgent(t, `printf '\nA line the reviewer added.\n' >> "$1"`)
	s = startSession(t, vars, "run", "--chain", "deliver-prd -- x")
	s.waitFor(prompt, 1)
	s.say("e")
	if code := s.exit(); code != terminal.ExitOK {
		t.Fatalf("exit %d after an edit\n%s", code, s.out.String())
	}
	if d := showRun(t, vars, runID(t, s.out.String())).Steps[0].Decision; d == nil || *d != "edit" {
		t.Fatalf("decision %v, want edit", d)
	}
}

// Ctrl-C at the redo feedback prompt goes back to the checkpoint; a second
// Ctrl-C there stops gonogo with the resume hint, the run kept waiting.
func TestCtrlCAtTheFeedbackPrompt(t *testing.T) {
	vars := baseVars(t)
	workAgent(t, vars)
	s := startSession(t, vars, "run", "--chain", "deliver-prd, measure-experiment-design -- x")
	const prompt = "[a]pprove [e]dit [s]kip [r]edo a[b]ort >"
	s.waitFor(prompt, 1)
	s.say("r")
	s.waitFor("Feedback for the agent", 1)
	s.ir.Interrupt()
	s.waitFor("Back at the checkpoint", 1)
	s.waitFor(prompt, 2)
	s.ir.Interrupt()
	if code := s.exit(); code != terminal.ExitWaiting {
		t.Fatalf("exit %d after the second Ctrl-C, want %d\n%s", code, terminal.ExitWaiting, s.out.String())
	}
	id := runID(t, s.out.String())
	if !strings.Contains(s.out.String(), "gonogo resume "+id) {
		t.Errorf("no resume hint:\n%s", s.out.String())
	}
	run := showRun(t, vars, id)
	if run.State != "waiting" || run.Steps[0].Status != "waiting" || len(run.Steps[0].Attempts) != 1 || run.Steps[0].Decision != nil {
		t.Fatalf("after Ctrl-C: state %s, step 1 %s with %d attempts, decision %v", run.State, run.Steps[0].Status, len(run.Steps[0].Attempts), run.Steps[0].Decision)
	}
}

// A real run is never continued by the dry-run runner: its steps would be
// recorded as not executed.
func TestResumeRealRunWithDryRunner(t *testing.T) {
	vars := baseVars(t)
	workAgent(t, vars)
	res := gonogo(t, vars, "", "run", "--chain", "deliver-prd, measure-experiment-design")
	id := runID(t, res.stdout)
	res = gonogo(t, vars, "approve\napprove\n", "resume", "--runner", "dry-run", id)
	if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, "started for real") {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if run := showRun(t, vars, id); run.Steps[0].Decision != nil {
		t.Fatalf("the refused resume decided: %+v", run.Steps[0])
	}
}

// No message says its prefix twice ("gonogo run: run:", "error: error").
func TestMessagesDoNotRepeatTheirPrefix(t *testing.T) {
	vars := baseVars(t)
	plan := filepath.Join(exampleDir(t), "plan.md")
	for _, args := range [][]string{
		{"run", "--bogus", plan}, {"check", "--bogus"}, {"runs", "--bogus"}, {"runs", "extra"}, {"show"}, {"resume"},
		{"demo", "extra"}, {"show", "nope"}, {"run", "/nonexistent/plan.md"}, {"run", "--runner", "nope", plan},
		{"run", "--runner", "command", plan}, {"check", plan, "--chain", "deliver-prd"}, {"workflow", "list", "x"},
	} {
		res := gonogo(t, vars, "", args...)
		if repeatsPrefix(res.stderr) || res.code != terminal.ExitUsage {
			t.Errorf("gonogo %s: exit %d, %q", strings.Join(args, " "), res.code, res.stderr)
		}
	}
	vars["GONOGO_STEP_TIMEOUT"] = "10"
	if res := gonogo(t, vars, "", "runs"); repeatsPrefix(res.stderr) {
		t.Errorf("%q", res.stderr)
	}
	for _, bad := range []string{"gonogo run: run: flag", "gonogo show: show takes one run id", "error: error: x", "gonogo run: gonogo run: x"} {
		if !repeatsPrefix(bad) {
			t.Errorf("repeatsPrefix(%q) = false", bad)
		}
	}
}

// repeatsPrefix says whether a line of msg says a prefix twice: "gonogo
// show: show takes", "error: error".
func repeatsPrefix(msg string) bool {
	for _, line := range strings.Split(msg, "\n") {
		parts := strings.Split(strings.ToLower(line), ": ")
		for i := 0; i+1 < len(parts); i++ {
			prev := strings.TrimPrefix(parts[i], "gonogo ")
			next := strings.TrimPrefix(parts[i+1], "gonogo ")
			if prev != "" && (next == prev || strings.HasPrefix(next, prev+" ") || strings.HasPrefix(next, prev+":")) {
				return true
			}
		}
	}
	return false
}

// A person at a terminal whose output goes through | tee is still asked,
// and sees progress lines instead of a live line.
func TestTerminalInputWithPipedOutput(t *testing.T) {
	vars := baseVars(t)
	vars["GONOGO_PROGRESS_INTERVAL"] = "100ms"
	vars["GONOGO_RUNNER"] = "command"
	vars["GONOGO_RUNNER_CMD"] = writeAgent(t, `cat >/dev/null; sleep 0.4; printf '# Work\n\nA paragraph of real work.\n'`)
	s := startSessionOut(t, vars, false, "run", "--chain", "deliver-prd -- x")
	s.waitFor("[a]pprove [e]dit [s]kip [r]edo a[b]ort >", 1)
	s.say("e")
	s.waitFor("stdout is not a terminal, so no editor opens", 1)
	s.say("a")
	if code := s.exit(); code != terminal.ExitOK {
		t.Fatalf("exit %d\n%s", code, s.out.String())
	}
	out := s.out.String()
	if !strings.Contains(out, "  ... deliver-prd (step 1) running ") || strings.Contains(out, "\033[K") {
		t.Errorf("want progress lines and no live line:\n%q", out)
	}
}

// The real signal: Ctrl-C ends a prompt that caught it, and only the next
// one stops gonogo.
func TestInterruptSignals(t *testing.T) {
	ctx, stop := terminal.WithInterrupts(context.Background())
	defer stop()
	pctx, release := terminal.CatchInterrupt(ctx)
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-pctx.Done():
	case <-time.After(hangguard.Limit(t)):
		t.Fatal("Ctrl-C did not end the prompt that caught it")
	}
	release()
	if !terminal.WasInterrupted(pctx) || ctx.Err() != nil {
		t.Fatalf("prompt interrupted %v, gonogo stopped %v; want the prompt only", terminal.WasInterrupted(pctx), ctx.Err())
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(hangguard.Limit(t)):
		t.Fatal("the second Ctrl-C did not stop gonogo")
	}
}

// A demo run records the demo's stand-in as its runner, not the agent the
// configuration names: show and export tell no agent ran.
func TestDemoRecordsItsStandIn(t *testing.T) {
	vars := baseVars(t)
	res := gonogo(t, vars, "", "demo")
	id := regexp.MustCompile(`gonogo run (\S+)`).FindStringSubmatch(res.stdout)
	if id == nil {
		t.Fatalf("no run id:\n%s", res.stdout)
	}
	var shown jsonRun
	show := gonogo(t, vars, "", "show", "--json", id[1])
	if err := json.Unmarshal([]byte(show.stdout), &shown); err != nil || shown.Setup == nil || shown.Setup.Runner != demo.RunnerName ||
		len(shown.Setup.Skills) != 0 {
		t.Fatalf("setup = %+v (%v)", shown.Setup, err)
	}
}
