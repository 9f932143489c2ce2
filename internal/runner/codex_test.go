package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
)

func TestCodexSuccess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	argv, stdin := filepath.Join(dir, "argv"), filepath.Join(dir, "stdin")
	j := job()
	j.SkillDir = "/srv/skills/deliver-prd"
	j.Options = map[string]string{"model": "gpt-5"}
	var log progressLog
	o := NewCodex(fast("--argv-to", argv, "--stdin-to", stdin, "--replay", testdata("codex/success.jsonl"))).Run(context.Background(), j, log.add)
	if !ok(o) {
		t.Fatalf("outcome is not OK: %+v", o)
	}
	if got, want := string(o.Artifact), "## Summary\nThe export button ships in 1.4."; got != want {
		t.Errorf("artifact = %q, want the last agent message %q", got, want)
	}
	// Codex counts cached tokens inside input_tokens; gonogo keeps them
	// apart, as Claude Code reports them.
	want := engine.Usage{InputTokens: 1000, CacheRead: 200, OutputTokens: 345, Turns: 3}
	if o.Usage != want {
		t.Errorf("usage = %+v, want %+v", o.Usage, want)
	}
	reports := log.reports()
	last := reports[len(reports)-1]
	if last.Turns != 3 || last.ToolCalls != 2 || last.LastTool != "docs.search" {
		t.Errorf("last progress = %+v, want 3 turns, 2 tool calls, last docs.search", last)
	}

	gotArgs, err := os.ReadFile(argv)
	if err != nil {
		t.Fatal(err)
	}
	// The skill's folder needs no flag: Codex's sandbox reads everywhere.
	if wantArgs := "exec\n--json\n--skip-git-repo-check\n--model\ngpt-5\n--argv-to\n"; !strings.HasPrefix(string(gotArgs), wantArgs) {
		t.Errorf("codex got arguments\n%s\nwant them to start\n%s", gotArgs, wantArgs)
	}
	if !strings.HasSuffix(string(gotArgs), "\n-\n") {
		t.Errorf("codex got arguments\n%s\nwant them to end with - (the prompt on stdin)", gotArgs)
	}
	if gotStdin, _ := os.ReadFile(stdin); string(gotStdin) != j.Prompt {
		t.Errorf("stdin = %q, want the prompt", gotStdin)
	}
}

func TestCodexFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		kind     engine.AgentErrorKind
		want     string // the whole AgentError, when set
		contains string
		err      string
	}{
		{name: "rejected key", args: []string{"--replay", testdata("codex/unauthorized.jsonl"), "--exit", "1"}, kind: engine.AgentErrAuth,
			want: "unexpected status 401 Unauthorized: Incorrect API key provided, url: http://127.0.0.1:8080/v1/responses; to fix it, " + codexVendor.login},
		{name: "missing key", args: []string{"--replay", testdata("codex/missing-key.jsonl"), "--exit", "1"}, kind: engine.AgentErrAuth,
			contains: "Missing environment variable: `OPENAI_API_KEY`; to fix it, log in once with `codex login`"},
		{name: "rate limited", args: []string{"--replay", testdata("codex/rate-limited.jsonl"), "--exit", "1"}, kind: engine.AgentErrRateLimit,
			want: "exceeded retry limit, last status: 429 Too Many Requests"},
		{name: "bad configuration on stderr", args: []string{"--stderr", "Error loading config.toml: unknown variant `chat`", "--stderr", "in `model_providers.x.wire_api`", "--exit", "1"},
			kind: engine.AgentErrOther, want: "Error loading config.toml: unknown variant `chat`"},
		{name: "ended mid-turn", args: []string{"--replay", testdata("codex/waiting-for-network.jsonl")},
			err: "agent ended without a turn.completed event"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := NewCodex(fast(tc.args...)).Run(context.Background(), job(), nil)
			if o.AgentErrorKind != tc.kind {
				t.Errorf("kind = %q, want %q (%+v)", o.AgentErrorKind, tc.kind, o)
			}
			if tc.want != "" && o.AgentError != tc.want {
				t.Errorf("agent error =\n%q, want\n%q", o.AgentError, tc.want)
			}
			if !strings.Contains(o.AgentError, tc.contains) {
				t.Errorf("agent error = %q, want it to contain %q", o.AgentError, tc.contains)
			}
			if tc.err != "" && (o.Err == nil || !strings.Contains(o.Err.Error(), tc.err)) {
				t.Errorf("err = %v, want one containing %q", o.Err, tc.err)
			}
			if result, _ := engine.Judge(o, engine.Skill{}); result != engine.ResultFailed {
				t.Errorf("judged %s, want FAILED", result)
			}
		})
	}
}

// Codex's own status lines ("Reconnecting...", a transport warning) show
// in live progress.
func TestCodexStatusLines(t *testing.T) {
	t.Parallel()
	var log progressLog
	NewCodex(fast("--replay", testdata("codex/waiting-for-network.jsonl"))).Run(context.Background(), job(), log.add)
	var seen []string
	for _, p := range log.reports() {
		seen = append(seen, p.Status)
	}
	joined := strings.Join(seen, "\n")
	for _, want := range []string{"Falling back from WebSockets to HTTPS transport", "Reconnecting... waiting for network (Connection failed: error sending request)"} {
		if !strings.Contains(joined, want) {
			t.Errorf("progress never showed %q; statuses: %q", want, seen)
		}
	}
}

func TestCodexUnknownOption(t *testing.T) {
	j := job()
	j.Options = map[string]string{"max-turns": "3"}
	o := NewCodex(fast()).Run(context.Background(), j, nil)
	if o.Err == nil || !strings.Contains(o.Err.Error(), `runner option "max-turns" is not one the codex runner knows (model, profile, sandbox)`) {
		t.Errorf("err = %v", o.Err)
	}
}

// The output cap, the timeout and the process-group cleanup are the same
// for every event-stream runner.
func TestStreamRunnersLimits(t *testing.T) {
	t.Parallel()
	runners := map[string]func(Config) engine.Runner{
		"codex":  func(c Config) engine.Runner { return NewCodex(c) },
		"gemini": func(c Config) engine.Runner { return NewGemini(c) },
	}
	for name, newRunner := range runners {
		t.Run(name+" output cap", func(t *testing.T) {
			t.Parallel()
			pidFile := filepath.Join(t.TempDir(), "child")
			cfg := fast("--child", pidFile, "--replay", testdata(name+"/success.jsonl"), "--hang")
			cfg.MaxOutput = 120 // a later event is longer
			o := newRunner(cfg).Run(context.Background(), job(), nil)
			if !o.Truncated || !errors.Is(o.Err, ErrOutputTooLarge) || len(o.Artifact) != 0 {
				t.Errorf("want a truncated outcome without an artifact, got %+v", o)
			}
			assertDead(t, readPid(t, pidFile))
		})
		t.Run(name+" timeout", func(t *testing.T) {
			t.Parallel()
			pidFile := filepath.Join(t.TempDir(), "child")
			cfg := fast("--child", pidFile, "--hang")
			cfg.Timeout = 2 * time.Second // time for a loaded machine to start the agent and its child
			o := newRunner(cfg).Run(context.Background(), job(), nil)
			if !errors.Is(o.Err, ErrTimeout) || !strings.Contains(o.Err.Error(), "GONOGO_STEP_TIMEOUT") {
				t.Errorf("err = %v, want a timeout naming GONOGO_STEP_TIMEOUT", o.Err)
			}
			assertDead(t, readPid(t, pidFile))
		})
	}
}

// Progress arrives while the agent works, not only at its end; a cancel
// then stops the agent and everything it started.
func TestCodexLiveProgressThenCancel(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "child")
	cfg := fast("--child", pidFile, "--replay", testdata("codex/success.jsonl"), "--line-delay", "50", "--hang")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := make(chan engine.Progress, 1)
	done := make(chan engine.Outcome, 1)
	go func() {
		done <- NewCodex(cfg).Run(ctx, job(), func(p engine.Progress) {
			if p.ToolCalls >= 1 {
				select {
				case seen <- p:
				default:
				}
			}
		})
	}()
	select {
	case p := <-seen:
		if p.Turns < 1 || p.LastTool == "" || p.Elapsed <= 0 {
			t.Errorf("live progress %+v, want a turn, a tool's name and the time so far", p)
		}
	case o := <-done:
		t.Fatalf("ended before any live progress: %+v", o)
	case <-time.After(60 * time.Second): // a hang guard
		t.Fatal("no live progress within a minute")
	}
	cancel()
	o := <-done
	if !errors.Is(o.Err, ErrCancelled) || len(o.Artifact) != 0 {
		t.Errorf("want a cancelled outcome without an artifact, got %+v", o)
	}
	assertDead(t, readPid(t, pidFile))
}
