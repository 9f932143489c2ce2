package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/hangguard"
)

// fakeAgent is the path of the fake agent executable built for the tests.
var fakeAgent string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "gonogo-runner-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	fakeAgent = filepath.Join(dir, "fakeagent")
	// go test puts its own toolchain's bin first on PATH.
	gocmd := "go"
	build := exec.Command(gocmd, "build", "-o", fakeAgent, "../../testdata/agents-fake/fakeagent")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the fake agent: %v\n%s", err, out)
		return 1
	}
	// As gonogo is (cmd/gonogo): what an agent detaches is adopted here.
	if err := BecomeSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// testdata returns the path of a file in the module's testdata/agents-fake.
func testdata(name string) string {
	return filepath.Join("..", "..", "testdata", "agents-fake", name)
}

// corpus returns the path of a real capture in the shared corpus next to the
// module, skipping the test when it is absent.
func corpus(t *testing.T, name string) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("module root not found")
		}
		dir = parent
	}
	p := filepath.Join(filepath.Dir(dir), "shared", "corpus", "agent-output", name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("corpus capture absent: %v", err)
	}
	return p
}

func job() engine.Job {
	return engine.Job{Run: "r-20250101-abc", Step: 2, Attempt: 1, Skill: "deliver-prd", Prompt: "Write the PRD for the export button.\nKeep it short."}
}

// fast is a config for the fake agent with limits that keep tests short.
func fast(args ...string) Config {
	return Config{Cmd: fakeAgent, Args: args, Timeout: 10 * time.Second, KillGrace: 100 * time.Millisecond}
}

// readPid reads a pid the fake agent wrote.
func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the child's pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file %s: %v", path, err)
	}
	return pid
}

// alive reports whether pid is a live process; a zombie waiting for its
// reaper counts as dead.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || (stat[i+2] != 'Z' && stat[i+2] != 'X')
}

// assertDead waits briefly for pid to die (its reaper may lag) and fails the
// test if it does not.
func assertDead(t *testing.T, pid int) {
	t.Helper()
	deadline := hangguard.Deadline(t) // a killed process ends at once
	for alive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d outlived the attempt", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestNew(t *testing.T) {
	for _, name := range Names() {
		cfg := Config{Cmd: fakeAgent}
		r, err := New(name, cfg)
		if err != nil {
			t.Fatalf("New(%q): %v", name, err)
		}
		var want string
		switch r.(type) {
		case *Claude:
			want = "claude"
		case *Codex:
			want = "codex"
		case *Gemini:
			want = "gemini"
		case *Command:
			want = "command"
		case DryRun:
			want = "dry-run"
		}
		if want != name {
			t.Errorf("New(%q) returned %T", name, r)
		}
	}
	if c := NewClaude(Config{}); c.cfg.Cmd != "claude" {
		t.Errorf("claude's default command is %q, want claude", c.cfg.Cmd)
	}
	if c := NewCodex(Config{}); c.cfg.Cmd != "codex" {
		t.Errorf("codex's default command is %q, want codex", c.cfg.Cmd)
	}
	if g := NewGemini(Config{}); g.cfg.Cmd != "gemini" {
		t.Errorf("gemini's default command is %q, want gemini", g.cfg.Cmd)
	}

	bad := []struct {
		name string
		cfg  Config
		want string
	}{
		{"aider", Config{}, `unknown runner "aider" (valid: claude, codex, gemini, command, dry-run)`},
		{"command", Config{}, "GONOGO_RUNNER_CMD"},
		{"claude", Config{Timeout: -time.Second}, "negative"},
		{"claude", Config{MaxOutput: -1}, "negative"},
	}
	for _, tc := range bad {
		if _, err := New(tc.name, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%q, %+v) error = %v, want one containing %q", tc.name, tc.cfg, err, tc.want)
		}
	}
}

func TestDryRunRunsNothing(t *testing.T) {
	argv := filepath.Join(t.TempDir(), "argv")
	j := job()
	j.DryRun = true
	runners := map[string]engine.Runner{
		"dry-run": DryRun{},
		"claude":  NewClaude(fast("--argv-to", argv)),
		"codex":   NewCodex(fast("--argv-to", argv)),
		"gemini":  NewGemini(fast("--argv-to", argv)),
		"command": NewCommand(fast("--argv-to", argv)),
	}
	for name, r := range runners {
		o := r.Run(context.Background(), j, nil)
		if !o.NotRun || o.Err != nil || o.Artifact != nil {
			t.Errorf("%s: dry run gave %+v, want NotRun only", name, o)
		}
	}
	if _, err := os.Stat(argv); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a dry run started the agent (stat: %v)", err)
	}
}

func TestEnvironSkillDir(t *testing.T) {
	j := job()
	j.SkillDir = "/srv/skills/deliver-prd"
	env := "\n" + strings.Join(environ("", Config{}, j), "\n") + "\n"
	if !strings.Contains(env, "\nGONOGO_SKILL_DIR=/srv/skills/deliver-prd\n") {
		t.Error("environment lacks GONOGO_SKILL_DIR")
	}
	if strings.Contains("\n"+strings.Join(environ("", Config{}, job()), "\n"), "\nGONOGO_SKILL_DIR=") {
		t.Error("GONOGO_SKILL_DIR set for a job without a skill folder")
	}
}

// An API key an agent prints reaches no message: not the reason, not the
// stderr an Outcome keeps, not a status line.
func TestSecretsNeverReachMessages(t *testing.T) {
	t.Parallel()
	const key = "sk-test-0123456789abcdef"
	cfg := fast("--stderr", "using key "+key, "--replay", testdata("codex/missing-key.jsonl"), "--exit", "1")
	cfg.Env = []string{"OPENAI_API_KEY=" + key}
	var log progressLog
	o := NewCodex(cfg).Run(context.Background(), job(), log.add)
	if strings.Contains(o.Stderr, key) || strings.Contains(o.AgentError, key) {
		t.Errorf("the key reached the outcome: %+v", o)
	}
	if !strings.Contains(o.Stderr, "using key [redacted]") {
		t.Errorf("stderr = %q, want the key blanked out", o.Stderr)
	}

	cfg = fast("--stderr", "fatal: bad key "+key, "--exit", "3")
	cfg.Env = []string{"GEMINI_API_KEY=" + key}
	o = NewCommand(cfg).Run(context.Background(), job(), nil)
	if strings.Contains(o.Stderr, key) {
		t.Errorf("the command runner kept the key in stderr: %q", o.Stderr)
	}

	s := secretValues([]string{"ANTHROPIC_API_KEY=" + key, "SHORT_TOKEN=abc", "PLAIN=" + key + "x"})
	if got := s.redact("a " + key + " b abc"); got != "a [redacted] b abc" {
		t.Errorf("redact = %q", got)
	}
}
