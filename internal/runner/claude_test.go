package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gonogo/gonogo/engine"
)

// progressLog records progress reports; the runner may call it from another
// goroutine.
type progressLog struct {
	mu  sync.Mutex
	all []engine.Progress
}

func (l *progressLog) add(p engine.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, p)
}

func (l *progressLog) reports() []engine.Progress {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]engine.Progress(nil), l.all...)
}

// ok reports whether an outcome is a success by the Outcome contract.
func ok(o engine.Outcome) bool {
	return o.Err == nil && o.ExitCode == 0 && o.AgentError == "" && !o.NotRun
}

func TestClaudeBasicQueryCapture(t *testing.T) {
	t.Parallel()
	capture := corpus(t, "claude-code-2.1.7--basic-query.stream.jsonl")
	dir := t.TempDir()
	argv, stdin := filepath.Join(dir, "argv"), filepath.Join(dir, "stdin")
	c := NewClaude(fast("--argv-to", argv, "--stdin-to", stdin, "--replay", capture))
	j := job()
	o := c.Run(context.Background(), j, nil)
	if !ok(o) {
		t.Fatalf("outcome is not OK: %+v", o)
	}
	if string(o.Artifact) != "4" {
		t.Errorf("artifact = %q, want %q", o.Artifact, "4")
	}
	if o.CostUSD != 0.1354875 {
		t.Errorf("cost = %v, want 0.1354875", o.CostUSD)
	}
	want := engine.Usage{InputTokens: 10, OutputTokens: 25, CacheRead: 0, CacheCreate: 21570, Turns: 1}
	if o.Usage != want {
		t.Errorf("usage = %+v, want %+v", o.Usage, want)
	}

	gotArgs, err := os.ReadFile(argv)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(gotArgs), "-p\n--output-format\nstream-json\n--verbose\n--argv-to\n") {
		t.Errorf("claude got arguments\n%s", gotArgs)
	}
	gotStdin, err := os.ReadFile(stdin)
	if err != nil {
		t.Fatal(err)
	}
	if string(gotStdin) != j.Prompt {
		t.Errorf("stdin = %q, want the prompt %q", gotStdin, j.Prompt)
	}
}

func TestClaudeSubagentCapture(t *testing.T) {
	t.Parallel()
	capture := corpus(t, "claude-code-2.0.25--tool-use-and-subagents.stream.jsonl")
	want := lastResultText(t, capture)

	var log progressLog
	o := NewClaude(fast("--replay", capture)).Run(context.Background(), job(), log.add)
	if !ok(o) {
		t.Fatalf("outcome is not OK: %+v", o)
	}
	if string(o.Artifact) != want {
		t.Errorf("artifact = %q, want the result text %q", o.Artifact, want)
	}
	if o.CostUSD != 0.21085415 {
		t.Errorf("cost = %v, want 0.21085415", o.CostUSD)
	}
	wantUsage := engine.Usage{InputTokens: 16, OutputTokens: 956, CacheRead: 58826, CacheCreate: 11907, Turns: 19}
	if o.Usage != wantUsage {
		t.Errorf("usage = %+v, want %+v", o.Usage, wantUsage)
	}

	reports := log.reports()
	if len(reports) == 0 {
		t.Fatal("no progress reported")
	}
	for i, p := range reports {
		if i > 0 && (p.Turns < reports[i-1].Turns || p.ToolCalls < reports[i-1].ToolCalls || p.Elapsed < reports[i-1].Elapsed) {
			t.Errorf("progress went backwards: %+v after %+v", p, reports[i-1])
		}
	}
	// Claude Code 2.0 counts every message event of the main conversation
	// (11 of its own, 8 tool results) and says num_turns 19; each turn is
	// reported. The subagents' messages (which carry a parent_tool_use_id)
	// are not turns of the step.
	want19 := make([]int, 19)
	for i := range want19 {
		want19[i] = i + 1
	}
	if got := turnsSeen(reports); !slices.Equal(got, want19) {
		t.Errorf("turns reported = %v, want 1 to 19", got)
	}
	last := reports[len(reports)-1]
	if last.ToolCalls != 21 || last.LastTool != "TodoWrite" || last.CostUSD != 0.21085415 {
		t.Errorf("last progress = %+v, want 21 tool calls, last TodoWrite, cost 0.21085415", last)
	}
}

// turnsSeen lists the distinct turn counts progress reported, leaving out
// reports from before the first turn.
func turnsSeen(reports []engine.Progress) []int {
	var turns []int
	for _, p := range reports {
		if p.Turns > 0 && (len(turns) == 0 || turns[len(turns)-1] != p.Turns) {
			turns = append(turns, p.Turns)
		}
	}
	return turns
}

// lastResultText reads the result text of a capture's result event, as the
// test's own independent reading of the file.
func lastResultText(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	var text string
	for sc.Scan() {
		var ev struct {
			Type   string `json:"type"`
			Result string `json:"result"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Type == "result" {
			text = ev.Result
		}
	}
	if err := sc.Err(); err != nil || text == "" {
		t.Fatalf("no result text in %s (%v)", path, err)
	}
	return text
}

func TestClaudeRecordedStreams(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       []string
		ok         bool
		artifact   string
		agentError string // substring
		err        string // substring
		exitCode   int
		cost       float64
	}{
		{name: "success", args: []string{"--replay", testdata("streams/success.jsonl")},
			ok: true, artifact: "## Summary\nThe export button ships in 1.4.", cost: 0.0421},
		{name: "auth failure reported as success with is_error", args: []string{"--replay", testdata("streams/auth-error.jsonl"), "--exit", "1"},
			agentError: "Invalid API key · Please run /login", exitCode: 1},
		{name: "error subtype", args: []string{"--replay", testdata("streams/max-turns.jsonl")},
			agentError: "error_max_turns", cost: 0.0133},
		{name: "no result event", args: []string{"--replay", testdata("streams/no-result.jsonl"), "--stderr", "socket hang up"},
			err: "agent ended without a result event: socket hang up"},
		{name: "no result event and an exit status", args: []string{"--replay", testdata("streams/no-result.jsonl"), "--exit", "1"},
			err: "without a result event (exit status 1)", exitCode: 1},
		{name: "garbage lines then a valid result", args: []string{"--replay", testdata("streams/garbage-then-result.jsonl")},
			ok: true, artifact: "Done: three risks listed.", cost: 0.0019},
		{name: "garbage only", args: []string{"--replay", testdata("streams/garbage-only.jsonl"), "--exit", "2"},
			err: "without a result event (exit status 2, 2 of 2 lines were not JSON events)", exitCode: 2},
		{name: "no output at all", args: nil,
			err: "without a result event (no output)"},
		{name: "non-zero exit after a success result", args: []string{"--replay", testdata("streams/success.jsonl"), "--exit", "3"},
			artifact: "## Summary\nThe export button ships in 1.4.", exitCode: 3, cost: 0.0421},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := NewClaude(fast(tc.args...)).Run(context.Background(), job(), nil)
			if ok(o) != tc.ok {
				t.Errorf("OK = %v, want %v: %+v", ok(o), tc.ok, o)
			}
			if string(o.Artifact) != tc.artifact {
				t.Errorf("artifact = %q, want %q", o.Artifact, tc.artifact)
			}
			if !strings.Contains(o.AgentError, tc.agentError) || (tc.agentError == "") != (o.AgentError == "") {
				t.Errorf("agent error = %q, want %q", o.AgentError, tc.agentError)
			}
			if tc.err == "" && o.Err != nil || tc.err != "" && (o.Err == nil || !strings.Contains(o.Err.Error(), tc.err)) {
				t.Errorf("err = %v, want one containing %q", o.Err, tc.err)
			}
			if o.ExitCode != tc.exitCode {
				t.Errorf("exit code = %d, want %d", o.ExitCode, tc.exitCode)
			}
			if o.CostUSD != tc.cost {
				t.Errorf("cost = %v, want %v", o.CostUSD, tc.cost)
			}
		})
	}
}

func TestClaudeLongResultLine(t *testing.T) {
	t.Parallel()
	// A result far longer than bufio.Scanner's default 64 KiB line limit.
	text := strings.Repeat("All good here. ", 20000)
	line, _ := json.Marshal(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": text, "num_turns": 1, "total_cost_usd": 0.5})
	path := filepath.Join(t.TempDir(), "long.jsonl")
	if err := os.WriteFile(path, append(line, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	o := NewClaude(fast("--replay", path)).Run(context.Background(), job(), nil)
	if !ok(o) || string(o.Artifact) != text {
		t.Fatalf("long result: OK %v, artifact of %d bytes, want %d: %v", ok(o), len(o.Artifact), len(text), o.Err)
	}
}

func TestClaudeOutputCap(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "child")
	cfg := fast("--child", pidFile, "--replay", testdata("streams/success.jsonl"), "--hang")
	cfg.MaxOutput = 300 // the second event is longer
	// The agent hangs: an agent not stopped at the cap ends at fast's
	// timeout instead, which the error below tells apart.
	o := NewClaude(cfg).Run(context.Background(), job(), nil)
	if !o.Truncated || !errors.Is(o.Err, ErrOutputTooLarge) || !strings.Contains(o.Err.Error(), "GONOGO_MAX_ARTIFACT") {
		t.Fatalf("want a truncated outcome naming GONOGO_MAX_ARTIFACT, got Truncated %v, Err %v", o.Truncated, o.Err)
	}
	if len(o.Artifact) != 0 {
		t.Errorf("a truncated stream gave an artifact: %q", o.Artifact)
	}
	assertDead(t, readPid(t, pidFile))
}

func TestClaudeProgressWithoutCallback(t *testing.T) {
	t.Parallel()
	o := NewClaude(fast("--replay", testdata("streams/success.jsonl"))).Run(context.Background(), job(), nil)
	if !ok(o) {
		t.Fatalf("nil progress: %+v", o)
	}
}

func TestClaudeProgressOwnStream(t *testing.T) {
	t.Parallel()
	var log progressLog
	o := NewClaude(fast("--replay", testdata("streams/success.jsonl"))).Run(context.Background(), job(), log.add)
	if !ok(o) {
		t.Fatalf("outcome: %+v", o)
	}
	reports := log.reports()
	last := reports[len(reports)-1]
	if last.Turns != 3 || last.ToolCalls != 2 || last.LastTool != "Bash" || last.CostUSD != 0.0421 {
		t.Errorf("last progress = %+v, want 3 turns, 2 tool calls, last Bash, cost 0.0421", last)
	}
	if got := turnsSeen(reports); !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("turns reported = %v, want 1, 2, 3", got)
	}
}

// What Claude Code says when it cannot work reaches the person in its own
// words, once, with its kind; a login failure says how to fix it.
func TestClaudeAgentErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		stream string
		kind   engine.AgentErrorKind
		want   string // the whole AgentError
	}{
		{"not-logged-in.jsonl", engine.AgentErrAuth,
			"Not logged in · Please run /login; to fix it, log in once (run `claude`, then /login) or set ANTHROPIC_API_KEY"},
		{"auth-error.jsonl", engine.AgentErrAuth,
			"Invalid API key · Please run /login; to fix it, log in once (run `claude`, then /login) or set ANTHROPIC_API_KEY"},
		{"rate-limited.jsonl", engine.AgentErrRateLimit,
			"API Error: Request rejected (429) · This request would exceed your organization's rate limit of 50 requests per minute"},
		{"overloaded.jsonl", engine.AgentErrOverloaded,
			"API Error: 529 Overloaded. This is a server-side issue, usually temporary; try again in a moment."},
		{"prompt-too-long.jsonl", engine.AgentErrContextTooLong, "Prompt is too long"},
		{"max-turns.jsonl", engine.AgentErrOther, ""},
	}
	for _, tc := range tests {
		t.Run(tc.stream, func(t *testing.T) {
			t.Parallel()
			o := NewClaude(fast("--replay", testdata("streams/"+tc.stream), "--exit", "1")).Run(context.Background(), job(), nil)
			if o.AgentErrorKind != tc.kind {
				t.Errorf("kind = %q, want %q", o.AgentErrorKind, tc.kind)
			}
			if tc.want != "" && o.AgentError != tc.want {
				t.Errorf("agent error =\n%q, want\n%q", o.AgentError, tc.want)
			}
			result, reason := engine.Judge(o, engine.Skill{})
			if result != engine.ResultFailed || strings.Contains(reason, "exited with code") {
				t.Errorf("judged %s - %s, want FAILED with the agent's words", result, reason)
			}
		})
	}
}

// Claude Code's api_retry events are status lines in live progress, gone
// once the agent answers.
func TestClaudeRetryStatus(t *testing.T) {
	t.Parallel()
	var log progressLog
	NewClaude(fast("--replay", testdata("streams/rate-limited.jsonl"))).Run(context.Background(), job(), log.add)
	var statuses []string
	for _, p := range log.reports() {
		if p.Status != "" && (len(statuses) == 0 || statuses[len(statuses)-1] != p.Status) {
			statuses = append(statuses, p.Status)
		}
	}
	want := []string{"API retry 1 of 2: rate limit (429)", "API retry 2 of 2: rate limit (429)"}
	if !slices.Equal(statuses, want) {
		t.Errorf("statuses = %q, want %q", statuses, want)
	}
	if last := log.reports()[len(log.reports())-1]; last.Status != "" {
		t.Errorf("the last report still shows %q", last.Status)
	}
}

// The skill's folder is given to Claude Code with --add-dir, after the
// contract's arguments and before the extra ones.
func TestClaudeAddsSkillDir(t *testing.T) {
	t.Parallel()
	argv := filepath.Join(t.TempDir(), "argv")
	j := job()
	j.SkillDir = "/srv/skills/deliver-prd"
	j.Options = map[string]string{"model": "opus"}
	o := NewClaude(fast("--argv-to", argv, "--replay", testdata("streams/success.jsonl"))).Run(context.Background(), j, nil)
	if !ok(o) {
		t.Fatalf("outcome: %+v", o)
	}
	got, err := os.ReadFile(argv)
	if err != nil {
		t.Fatal(err)
	}
	want := "-p\n--output-format\nstream-json\n--verbose\n--add-dir\n/srv/skills/deliver-prd\n--model\nopus\n--argv-to\n"
	if !strings.HasPrefix(string(got), want) {
		t.Errorf("arguments:\n%s\nwant them to start\n%s", got, want)
	}
}
