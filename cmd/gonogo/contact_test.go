package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mattn/go-shellwords"

	"github.com/gonogo/gonogo/internal/terminal"
)

// The mix-ups a newcomer makes, each answered with a hint that is true:
// what it suggests, done, works.

// --skills naming the folder that holds the skills folder (a clone of a
// skills repository) is pointed at the folder inside, which really holds
// the skills.
func TestSkillsGivenTheirParentFolder(t *testing.T) {
	repo := t.TempDir()
	if err := os.CopyFS(filepath.Join(repo, "skills"), os.DirFS(filepath.Join(exampleDir(t), "skills"))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "README.md"), []byte("# my skills\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hint := regexp.MustCompile(`did you mean (--skills|GONOGO_SKILLS_DIR=)\s*(\S+)\?`)
	for _, tc := range []struct {
		name string
		vars map[string]string
		args []string
		via  string
	}{
		{"flag", map[string]string{"GONOGO_DATA_DIR": t.TempDir()}, []string{"check", "--skills", repo, "--chain", "deliver-prd"}, "--skills"},
		{"variable", map[string]string{"GONOGO_DATA_DIR": t.TempDir(), "GONOGO_SKILLS_DIR": repo}, []string{"skills"}, "GONOGO_SKILLS_DIR="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := gonogo(t, tc.vars, "", tc.args...)
			m := hint.FindStringSubmatch(res.stderr)
			if res.code != terminal.ExitUsage || m == nil || m[1] != tc.via {
				t.Fatalf("exit %d, stderr %q: want exit 2 and a hint through %s", res.code, res.stderr, tc.via)
			}
			// The hint is true: the folder it names holds the skills.
			if m[2] != filepath.Join(repo, "skills") {
				t.Fatalf("suggested %s, want %s", m[2], filepath.Join(repo, "skills"))
			}
			if ok := gonogo(t, tc.vars, "", "check", "--skills", m[2], "--chain", "deliver-prd"); ok.code != terminal.ExitOK {
				t.Fatalf("the suggested folder does not work: exit %d\n%s", ok.code, ok.stderr)
			}
		})
	}
	// A folder with skills of its own is read as it is, skills/ inside or not.
	own := filepath.Join(repo, "skills")
	if err := os.CopyFS(filepath.Join(own, "skills", "deliver-prd"), os.DirFS(filepath.Join(own, "deliver-prd"))); err != nil {
		t.Fatal(err)
	}
	if res := gonogo(t, baseVars(t), "", "check", "--skills", own, "--chain", "deliver-prd"); res.code != terminal.ExitOK || strings.Contains(res.stderr, "did you mean") {
		t.Fatalf("a folder of skills got a hint: exit %d\n%s", res.code, res.stderr)
	}
}

// A chain given where a plan file goes is pointed at --chain, and the
// suggestion, run, is accepted; a missing plan file that is no chain gets
// no such hint.
func TestChainGivenAsAPlanFile(t *testing.T) {
	vars := baseVars(t)
	hint := regexp.MustCompile(`did you mean (--chain .*)\?\n`)
	for _, args := range [][]string{
		{"run", "define-problem-statement -> deliver-prd"},
		{"run", "deliver-prd"},
		{"check", "deliver-prd, measure-experiment-design -- saved searches"},
	} {
		res := gonogo(t, vars, "", args...)
		m := hint.FindStringSubmatch(res.stderr)
		if res.code != terminal.ExitUsage || m == nil || !strings.Contains(res.stderr, "does not exist") {
			t.Fatalf("%q: exit %d, stderr %q: want exit 2, the file missing and a --chain hint", args, res.code, res.stderr)
		}
		words, err := shellwords.Parse(m[1])
		if err != nil || len(words) != 2 || words[1] != args[1] {
			t.Fatalf("%q: the hint %q does not give the chain back as typed (%q, %v)", args, m[1], words, err)
		}
		if ok := gonogo(t, vars, "", append([]string{"check"}, words...)...); ok.code != terminal.ExitOK {
			t.Fatalf("%q: the suggested %q is refused: exit %d\n%s", args, m[1], ok.code, ok.stderr)
		}
	}
	for _, plan := range []string{"plan.md", "plans/missing.md", "no-such-skill"} {
		if res := gonogo(t, vars, "", "run", plan); res.code != terminal.ExitUsage || strings.Contains(res.stderr, "--chain") {
			t.Errorf("run %s: exit %d, stderr %q: want exit 2 and no --chain hint", plan, res.code, res.stderr)
		}
	}
}

// An agent executable that is there but may not be run is said to be so,
// not said to be missing; doctor says the same.
func TestRunnerCmdNotExecutable(t *testing.T) {
	vars := baseVars(t)
	agent := filepath.Join(t.TempDir(), "agent.sh")
	if err := os.WriteFile(agent, []byte("#!/bin/sh\ncat\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := gonogo(t, vars, "", "run", "--runner", "command", "--runner-cmd", agent, "--chain", "deliver-prd")
	if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, "is not executable") || !strings.Contains(res.stderr, "chmod +x") ||
		strings.Contains(res.stderr, "not there") {
		t.Fatalf("exit %d, stderr %q: want exit 2 saying it is not executable", res.code, res.stderr)
	}
	doc := gonogo(t, vars, "", "doctor", "--runner", "command", "--runner-cmd", agent)
	if !strings.Contains(doc.stdout, "found, but not executable") {
		t.Errorf("doctor:\n%s", doc.stdout)
	}
	// The hint is true: made executable, the same command runs.
	if err := os.Chmod(agent, 0o755); err != nil {
		t.Fatal(err)
	}
	if res := gonogo(t, vars, "", "run", "--runner", "command", "--runner-cmd", agent, "--chain", "deliver-prd"); res.code != terminal.ExitWaiting {
		t.Fatalf("after chmod +x: exit %d\n%s", res.code, res.stderr)
	}
	dir := t.TempDir()
	if res := gonogo(t, vars, "", "run", "--runner", "command", "--runner-cmd", dir, "--chain", "deliver-prd"); res.code != terminal.ExitUsage ||
		!strings.Contains(res.stderr, "is a folder, not an executable") {
		t.Fatalf("a folder as the agent: exit %d, stderr %q", res.code, res.stderr)
	}
}

// A binary file given as a plan is refused as not text, also when it is
// over the size limit: raising the limit, as a size refusal says, would
// not help.
func TestBinaryPlanOverTheLimit(t *testing.T) {
	vars := baseVars(t)
	bin := filepath.Join(t.TempDir(), "gonogo")
	body := append([]byte("\x7fELF\x02\x01\x01\x00"), bytes.Repeat([]byte{0x48, 0x89, 0xe5, 0x00}, 300_000)...)
	if err := os.WriteFile(bin, body, 0o755); err != nil {
		t.Fatal(err)
	}
	res := gonogo(t, vars, "", "check", "--dry-run", bin)
	if out := res.stdout + res.stderr; res.code != terminal.ExitRefused || !strings.Contains(out, "not a text file") || strings.Contains(out, "max-plan-bytes") {
		t.Fatalf("exit %d, output %q: want a refusal saying it is not a text file", res.code, out)
	}
	// A text plan over the limit still says how to raise it.
	big := filepath.Join(t.TempDir(), "big.md")
	if err := os.WriteFile(big, bytes.Repeat([]byte("# plan\n"), 200_000), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := gonogo(t, vars, "", "check", "--dry-run", big); res.code != terminal.ExitRefused || !strings.Contains(res.stdout, "--max-plan-bytes 2MiB") {
		t.Fatalf("a text plan over the limit: exit %d, output %q", res.code, res.stdout+res.stderr)
	}
}

// serve without its tokens names both at once.
func TestServeWithoutTokensNamesBoth(t *testing.T) {
	res := gonogo(t, baseVars(t), "", "serve")
	if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, "SLACK_APP_TOKEN is not set") || !strings.Contains(res.stderr, "SLACK_BOT_TOKEN is not set") {
		t.Fatalf("exit %d, stderr %q: want both tokens named", res.code, res.stderr)
	}
	vars := baseVars(t)
	vars["SLACK_APP_TOKEN"], vars["SLACK_BOT_TOKEN"] = "xoxb-1", "xapp-1"
	res = gonogo(t, vars, "", "serve")
	if !strings.Contains(res.stderr, "SLACK_APP_TOKEN does not look like") || !strings.Contains(res.stderr, "SLACK_BOT_TOKEN does not look like") {
		t.Fatalf("swapped tokens: stderr %q: want both named", res.stderr)
	}
}

// A second run on a data directory another gonogo holds names that gonogo
// and its pid: the process that really holds it.
func TestSecondRunNamesTheHolder(t *testing.T) {
	data := t.TempDir()
	env := append(os.Environ(), "GONOGO_TEST_AS_MAIN=1", "GONOGO_DATA_DIR="+data,
		"GONOGO_SKILLS_DIR="+filepath.Join(exampleDir(t), "skills"))
	h := startHolder(t, env, "demo", "--dry-run")
	waitFor(t, h.out, regexp.MustCompile(`Result:\s+NOT.EXECUTED`), "the demo's first step")
	want := fmt.Sprintf("gonogo demo (pid %d) holds %s", h.cmd.Process.Pid, data)
	for _, args := range [][]string{{"run", "--dry-run", "--chain", "deliver-prd"}, {"demo", "--dry-run"}} {
		res := subprocess(t, env, "", args...)
		if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, want) || strings.Contains(res.stderr, "pid unknown") {
			t.Errorf("%q: exit %d, stderr %q: want exit 2 naming %q", args, res.code, res.stderr, want)
		}
	}
}

// A command defines only the flags it reads: one it would ignore is
// refused, and the commands the message says take it do.
func TestFlagsACommandWouldIgnoreAreRefused(t *testing.T) {
	vars := baseVars(t)
	named := regexp.MustCompile(`does not take it; (.+) do(?:es)?\)`)
	for _, args := range [][]string{
		{"demo", "--runner", "codex"}, {"demo", "--runner-cmd", "/bin/true"}, {"demo", "--skills", "skills"}, {"demo", "--thread"},
	} {
		res := gonogo(t, vars, "", args...)
		flag := args[1]
		m := named.FindStringSubmatch(res.stderr)
		if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, "unknown flag: "+flag) || m == nil {
			t.Errorf("%q: exit %d, stderr %q: want exit 2 refusing %s", args, res.code, res.stderr, flag)
			continue
		}
		for _, cmd := range regexp.MustCompile(`, | and `).Split(m[1], -1) {
			help := gonogo(t, vars, "", append(strings.Fields(cmd), "--help")...)
			if help.code != terminal.ExitOK || !strings.Contains(help.stdout, "  "+flag+" ") {
				t.Errorf("%q: the message says %s takes %s, but its help does not list it", args, cmd, flag)
			}
		}
	}
}

// The flags DESIGN.md gives run, check and resume alike are taken by all
// three; where one changes nothing (check opens no store, a run keeps
// whether it is threaded) the command says so on stderr, and does its work.
func TestSharedFlagsThatChangeNothingSaySo(t *testing.T) {
	vars := baseVars(t)
	plan := filepath.Join(exampleDir(t), "plan.md")
	res := gonogo(t, vars, "", "check", "--data", "elsewhere", plan)
	if res.code != terminal.ExitOK || !strings.Contains(res.stderr, "check opens no store; --data changes nothing") {
		t.Errorf("check --data: exit %d, stderr %q: want the plan accepted and the note", res.code, res.stderr)
	}
	res = gonogo(t, vars, "", "resume", "--thread", "20260101-000000-000000000000")
	if !strings.Contains(res.stderr, "--thread changes nothing on resume") || !strings.Contains(res.stderr, "no run 20260101-000000-000000000000") {
		t.Errorf("resume --thread: stderr %q: want the note, then resume's own answer", res.stderr)
	}
}

// resume --dry-run of a run started for real is refused, not ignored, and
// the run is left as it was.
func TestResumeDryOfARealRunIsRefused(t *testing.T) {
	vars := baseVars(t)
	agent := writeAgent(t, "cat >/dev/null\necho '# done'\n")
	res := gonogo(t, vars, "", "run", "--runner", "command", "--runner-cmd", agent, "--chain", "deliver-prd -> measure-experiment-design")
	id := regexp.MustCompile(`gonogo run (\S+)`).FindStringSubmatch(res.stdout)
	if res.code != terminal.ExitWaiting || id == nil {
		t.Fatalf("run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = gonogo(t, vars, "approve\n", "resume", "--dry-run", id[1])
	if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, "was started for real") || strings.Contains(res.stdout, "Step 2") {
		t.Fatalf("resume --dry-run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	var shown jsonRun
	if show := gonogo(t, vars, "", "show", "--json", id[1]); json.Unmarshal([]byte(show.stdout), &shown) != nil ||
		shown.Steps[0].Status != "waiting" || shown.Steps[1].Status != "pending" {
		t.Fatalf("the run after the refusal: %+v", shown.Steps)
	}
}

// show --artifact and --attempt, and decide --step and --attempt, take a
// number from 1: 0, a negative number or a word is a usage error, never
// read as the flag left out.
func TestNumberFlagsAreNumbersFromOne(t *testing.T) {
	vars := baseVars(t)
	res := gonogo(t, vars, "", "run", "--dry-run", "--chain", "deliver-prd")
	id := regexp.MustCompile(`gonogo run (\S+)`).FindStringSubmatch(res.stdout)
	if id == nil {
		t.Fatalf("no run id:\n%s", res.stdout)
	}
	for _, args := range [][]string{
		{"show", id[1], "--artifact", "0"}, {"show", id[1], "--artifact", "x"}, {"show", id[1], "--artifact=-1"},
		{"show", id[1], "--artifact", "1", "--attempt", "0"}, {"decide", id[1], "approve", "--step", "0"},
		{"decide", id[1], "approve", "--attempt", "two"},
	} {
		res := gonogo(t, vars, "", args...)
		if res.code != terminal.ExitUsage || !regexp.MustCompile(`not an? (step|attempt) number \(1, 2, \.\.\.\)`).MatchString(res.stderr) || res.stdout != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q: want exit 2 and no output", args, res.code, res.stdout, res.stderr)
		}
	}
	if res := gonogo(t, vars, "", "decide", id[1], "approve", "--step", "1", "--attempt", "1"); res.code != terminal.ExitOK {
		t.Errorf("decide --step 1 --attempt 1: exit %d\n%s", res.code, res.stderr)
	}
}

// export -o FILE writes the format its extension says, unless --format
// says otherwise.
func TestExportFormatFollowsTheFileName(t *testing.T) {
	vars := baseVars(t)
	res := gonogo(t, vars, "", "run", "--dry-run", "--chain", "deliver-prd")
	id := regexp.MustCompile(`gonogo run (\S+)`).FindStringSubmatch(res.stdout)[1]
	dir := t.TempDir()
	for _, tc := range []struct {
		file   string
		format []string
		md     bool
	}{
		{"trail.md", nil, true}, {"trail.Markdown", nil, true}, {"trail.json", nil, false}, {"trail.txt", nil, false},
		{"json.md", []string{"--format", "json"}, false}, {"md.json", []string{"--format", "md"}, true},
	} {
		out := filepath.Join(dir, tc.file)
		if res := gonogo(t, vars, "", append([]string{"export", id, "-o", out}, tc.format...)...); res.code != terminal.ExitOK {
			t.Fatalf("export -o %s: exit %d\n%s", tc.file, res.code, res.stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if isMD := bytes.HasPrefix(b, []byte("# Audit trail of run "+id)); isMD != tc.md || !tc.md && !json.Valid(b) {
			t.Errorf("export -o %s %q wrote %.40q: want Markdown %v", tc.file, tc.format, b, tc.md)
		}
	}
}

// Every hint the demo prints names a command that works as printed (after
// go install, gonogo is the binary these tests stand in for).
func TestDemoHintsWork(t *testing.T) {
	vars := baseVars(t)
	res := gonogo(t, vars, "approve\n", "demo")
	if res.code != terminal.ExitWaiting {
		t.Fatalf("demo: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	hint := regexp.MustCompile(`gonogo ((?:resume|show|decide|export|runs)\b[^\n()]*)`)
	var ran []string
	for _, m := range hint.FindAllStringSubmatch(res.stdout+res.stderr, -1) {
		line := strings.TrimSpace(m[1])
		if slices.Contains(ran, line) {
			continue
		}
		ran = append(ran, line)
		args, err := shellwords.Parse(line)
		if err != nil {
			t.Fatalf("hint %q: %v", line, err)
		}
		got := gonogo(t, vars, "", args...)
		if got.code == terminal.ExitUsage {
			t.Errorf("the hint gonogo %s fails: exit %d\n%s", line, got.code, got.stderr)
		}
	}
	if !slices.ContainsFunc(ran, func(l string) bool { return strings.HasPrefix(l, "resume ") }) {
		t.Fatalf("no resume hint among %q:\n%s", ran, res.stdout)
	}
}

// In bash (with the bash-completion package, as the README says), a skill
// name is completed inside the quotes of a chain being typed, and put back
// without backslashes; an unquoted word is still cobra's.
func TestBashCompletesInsideAQuotedChain(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "gonogo.bash")
	if err := os.WriteFile(script, []byte(gonogo(t, nil, "", "completion", "bash").stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	skills, _ := filepath.Abs("../../testdata/skills")
	// _init_completion stands in for bash-completion's: it splits the line
	// as bash-completion does (a quoted word kept whole, its quote
	// included); compopt works only inside a real completion.
	const driver = `source "$1"
complete -p gonogo | grep -q -- '-F __gonogo_start_quoted gonogo$' || { echo "gonogo's completion is not __gonogo_start_quoted" >&2; exit 3; }
compopt() { :; }
_init_completion() { mapfile -t words <<<"$WORDS"; cword=$((${#words[@]}-1)); cur=${words[cword]}; prev=${words[cword-1]}; }
__gonogo_start_quoted
printf '%s\n' "${COMPREPLY[@]}"`
	complete := func(words ...string) []string {
		t.Helper()
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c", driver, "bash", script)
		cmd.Env = append(os.Environ(), "GONOGO_TEST_AS_MAIN=1", "GONOGO_SKILLS_DIR="+skills,
			"WORDS="+strings.Join(append([]string{self}, words...), "\n"))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%q: %v\n%s", words, err, stderr.String())
		}
		var got []string
		for _, l := range strings.Split(string(out), "\n") {
			if l != "" {
				got = append(got, l)
			}
		}
		return got
	}
	for _, tc := range []struct {
		words []string
		want  []string
	}{
		{[]string{"run", "--chain", "'deliver-prd -> deliver-"}, []string{"deliver-prd -> deliver-prd", "deliver-prd -> deliver-user-stories"}},
		{[]string{"check", "--chain", `"define-problem-statement, meas`}, []string{"define-problem-statement, measure-experiment-design"}},
		{[]string{"run", "--chain", "'deliver-u"}, []string{"deliver-user-stories"}},
		{[]string{"run", "--chain", "deliver-"}, []string{"deliver-prd", "deliver-user-stories"}},
	} {
		got := complete(tc.words...)
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: completed %q, want %q", tc.words, got, tc.want)
		}
	}
	if got := complete("run", "--chain", "'"); len(got) < 3 {
		t.Errorf("an opening quote alone completed %q, want every skill", got)
	}
}

// The resume line pause prints works as printed from another folder, in a
// shell without GONOGO_DATA_DIR: it names the data directory.
func TestPauseHintNamesTheData(t *testing.T) {
	h, id, env, release, _ := pausable(t)
	res := subprocess(t, as(env, "second"), "", "pause", id)
	m := regexp.MustCompile(`Resume with: gonogo (.+)\n`).FindStringSubmatch(res.stdout)
	if res.code != terminal.ExitOK || m == nil {
		t.Fatalf("pause: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	release()
	waitFor(t, h.out, regexp.MustCompile(`Result:\s+PRODUCED[\s\S]*The run is paused`), "step 1 held at its checkpoint")
	args, err := shellwords.Parse(m[1])
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	fresh := slices.DeleteFunc(slices.Clone(env), func(v string) bool { return strings.HasPrefix(v, "GONOGO_DATA_DIR=") })
	cmd := exec.Command(self, args...)
	cmd.Env, cmd.Dir = as(fresh, "third"), t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Run "+id+" resumed by third") {
		t.Fatalf("the hint gonogo %s: %v\n%s", m[1], err, out)
	}
	if err := h.wait(t); err != nil || !strings.Contains(h.out.String(), "Run complete: "+id) {
		t.Fatalf("the holder ended with %v:\n%s", err, h.out.String())
	}
}

// Flags that belong to one kind of input, or one state of a run, are
// refused where they would be ignored.
func TestFlagsWithoutWhatTheyAreFor(t *testing.T) {
	vars := baseVars(t)
	res := gonogo(t, vars, "", "run", "--dry-run", "--chain", "deliver-prd")
	id := regexp.MustCompile(`gonogo run (\S+)`).FindStringSubmatch(res.stdout)[1]
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--dry-run", "--arg", "k=v", "--chain", "deliver-prd"}, "--arg is for --workflow"},
		{[]string{"check", "--max-plan-bytes", "2MiB", "--chain", "deliver-prd"}, "--max-plan-bytes is for a plan file"},
		{[]string{"resume", "--checkpointed", id}, "run " + id + " is not paused"},
	} {
		res := gonogo(t, vars, "", tc.args...)
		if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, tc.want) || strings.Contains(res.stdout, "Step ") {
			t.Errorf("%q: exit %d\n%s%s\nwant exit 2 saying %q", tc.args, res.code, res.stdout, res.stderr, tc.want)
		}
	}
	if res := gonogo(t, vars, "", "check", "--max-plan-bytes", "2MiB", filepath.Join(exampleDir(t), "plan.md")); res.code != terminal.ExitOK {
		t.Errorf("--max-plan-bytes with a plan: exit %d\n%s", res.code, res.stderr)
	}
}

// The first line of a run reads "gonogo run RUN"; run given that id back
// points at resume and show, and the hint works as printed.
func TestRunGivenARunID(t *testing.T) {
	vars := baseVars(t)
	res := gonogo(t, vars, "", "run", "--dry-run", "--chain", "deliver-prd -> measure-experiment-design")
	id := regexp.MustCompile(`gonogo run (\S+)`).FindStringSubmatch(res.stdout)[1]
	res = gonogo(t, vars, "", "run", id)
	m := regexp.MustCompile(`did you mean gonogo (resume [^()]+) \(or gonogo (show [^()]+)\)\?`).FindStringSubmatch(res.stderr)
	if res.code != terminal.ExitUsage || m == nil {
		t.Fatalf("run %s: exit %d, stderr %q: want exit 2 pointing at resume", id, res.code, res.stderr)
	}
	for _, hint := range m[1:] {
		args, err := shellwords.Parse(hint)
		if err != nil {
			t.Fatal(err)
		}
		if got := gonogo(t, vars, "", args...); got.code == terminal.ExitUsage || !strings.Contains(got.stdout, id) {
			t.Errorf("the hint gonogo %s: exit %d\n%s%s", hint, got.code, got.stdout, got.stderr)
		}
	}
	if res := gonogo(t, vars, "", "run", "20260101-000000-000000000000"); strings.Contains(res.stderr, "did you mean") {
		t.Errorf("a run that is not there got a hint: %q", res.stderr)
	}
}
