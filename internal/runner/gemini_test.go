package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
)

func TestGeminiSuccess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	argv, stdin := filepath.Join(dir, "argv"), filepath.Join(dir, "stdin")
	j := job()
	j.SkillDir = "/srv/skills/deliver-prd"
	var log progressLog
	o := NewGemini(fast("--argv-to", argv, "--stdin-to", stdin, "--replay", testdata("gemini/success.jsonl"))).Run(context.Background(), j, log.add)
	if !ok(o) {
		t.Fatalf("outcome is not OK: %+v", o)
	}
	// The text before the tool call was the agent thinking aloud, not the
	// artifact.
	if got, want := string(o.Artifact), "## Summary\nThe export button ships in 1.4."; got != want {
		t.Errorf("artifact = %q, want %q", got, want)
	}
	want := engine.Usage{InputTokens: 1000, CacheRead: 200, OutputTokens: 345, Turns: 2}
	if o.Usage != want {
		t.Errorf("usage = %+v, want %+v", o.Usage, want)
	}
	reports := log.reports()
	last := reports[len(reports)-1]
	if last.Turns != 2 || last.ToolCalls != 1 || last.LastTool != "read_file" {
		t.Errorf("last progress = %+v, want 2 turns, 1 tool call, last read_file", last)
	}
	gotArgs, err := os.ReadFile(argv)
	if err != nil {
		t.Fatal(err)
	}
	if wantArgs := "--output-format\nstream-json\n--include-directories\n/srv/skills/deliver-prd\n--argv-to\n"; !strings.HasPrefix(string(gotArgs), wantArgs) {
		t.Errorf("gemini got arguments\n%s\nwant them to start\n%s", gotArgs, wantArgs)
	}
	if gotStdin, _ := os.ReadFile(stdin); string(gotStdin) != j.Prompt {
		t.Errorf("stdin = %q, want the prompt", gotStdin)
	}
}

func TestGeminiFailures(t *testing.T) {
	t.Parallel()
	const noAuth = "Please set an Auth method in your /home/x/.gemini/settings.json or specify one of the following environment variables before running: GEMINI_API_KEY, GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_GCA"
	tests := []struct {
		name string
		args []string
		kind engine.AgentErrorKind
		want string
		err  string
	}{
		{name: "no login", args: []string{"--stderr", "Warning: 256-color support not detected.", "--stderr", noAuth, "--exit", "41"}, kind: engine.AgentErrAuth,
			want: noAuth + "; to fix it, " + geminiVendor.login},
		{name: "rejected key", args: []string{"--replay", testdata("gemini/bad-key.jsonl"), "--exit", "1"}, kind: engine.AgentErrAuth,
			want: "API error: API key not valid. Please pass a valid API key. (INVALID_ARGUMENT, API_KEY_INVALID); to fix it, " + geminiVendor.login},
		{name: "rate limited", args: []string{"--replay", testdata("gemini/rate-limited.jsonl"), "--exit", "1"}, kind: engine.AgentErrRateLimit,
			want: "API error: Resource has been exhausted (e.g. check quota). Please wait and try again later."},
		{name: "untrusted folder", args: []string{"--stderr", "\x1b[31mGemini CLI is not running in a trusted directory. To proceed, either use `--skip-trust`.\x1b[0m", "--exit", "55"},
			kind: engine.AgentErrOther, want: "Gemini CLI is not running in a trusted directory. To proceed, either use `--skip-trust`."},
		{name: "no result", args: []string{"--replay", testdata("gemini/warning.jsonl")},
			err: "agent ended without a result event"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := NewGemini(fast(tc.args...)).Run(context.Background(), job(), nil)
			if o.AgentErrorKind != tc.kind {
				t.Errorf("kind = %q, want %q (%+v)", o.AgentErrorKind, tc.kind, o)
			}
			if o.AgentError != tc.want {
				t.Errorf("agent error =\n%q, want\n%q", o.AgentError, tc.want)
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

func TestGeminiWarningIsStatus(t *testing.T) {
	t.Parallel()
	var log progressLog
	NewGemini(fast("--replay", testdata("gemini/warning.jsonl"))).Run(context.Background(), job(), log.add)
	found := false
	for _, p := range log.reports() {
		found = found || p.Status == "Quota exceeded for quota metric 'Requests'; retrying in 5s"
	}
	if !found {
		t.Errorf("progress never showed the warning: %+v", log.reports())
	}
}

// Gemini CLI writes its retry notices to stderr, not to its events: they
// show as the status line.
func TestGeminiRetryNoticeIsStatus(t *testing.T) {
	t.Parallel()
	var log progressLog
	notice := `Attempt 2 failed with status 429. Retrying with backoff... _ApiError: {"error":{"code":429,"message":"Resource has been exhausted"}}`
	NewGemini(fast("--stderr", "Warning: 256-color support not detected.", "--stderr", notice, "--stderr", "    at async Turn.run (file:///x.js:1:1)", "--exit", "1")).Run(context.Background(), job(), log.add)
	found := false
	for _, p := range log.reports() {
		if p.Status != "" && p.Status != "Attempt 2 failed with status 429. Retrying with backoff..." {
			t.Errorf("status %q", p.Status)
		}
		found = found || p.Status != ""
	}
	if !found {
		t.Errorf("the retry notice never showed: %+v", log.reports())
	}
}

func TestLineWriter(t *testing.T) {
	var got []string
	w := &lineWriter{fn: func(l string) { got = append(got, l) }}
	for _, chunk := range []string{"one\ntw", "o\n", "", "three\nfour", "\n" + strings.Repeat("x", 5000)} {
		if n, err := w.Write([]byte(chunk)); n != len(chunk) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", chunk, n, err)
		}
	}
	want := []string{"one", "two", "three", "four", strings.Repeat("x", 4<<10)}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lines = %q", got)
	}
}
