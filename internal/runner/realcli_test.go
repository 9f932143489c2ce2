package runner

// Tests against the real agent CLIs, installed by .ci/install-agents into
// ${GONOGO_AGENTS_DIR:-$HOME/.cache/gonogo/agents}. Each CLI runs with an
// empty HOME and its telemetry off, against a stand-in of its vendor's API
// on 127.0.0.1 that the test starts and that records what it was asked.
// A test skips, saying why, when its CLI is not installed.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/hangguard"
)

// realSlots bounds how many real CLIs run at once: each is a Node.js
// program that takes a core to start, and CI machines have few.
var realSlots = make(chan struct{}, 3)

// realCLI returns the path of an installed agent CLI, or skips the test.
// It holds one of realSlots until the test ends.
func realCLI(t *testing.T, name, bin string) string {
	t.Helper()
	dir := os.Getenv("GONOGO_AGENTS_DIR")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Skipf("%s: no GONOGO_AGENTS_DIR and no home directory to find the agent CLIs in: %v", name, err)
		}
		dir = filepath.Join(home, ".cache", "gonogo", "agents")
	}
	p := filepath.Join(dir, name, "node_modules", ".bin", bin)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s CLI not installed at %s (run .ci/install-agents): %v", name, p, err)
	}
	realSlots <- struct{}{}
	t.Cleanup(func() { <-realSlots })
	return p
}

// request is one request a stand-in received.
type request struct {
	Method, Path, Auth string
	Body               []byte
}

// standIn is a loopback stand-in of a vendor's API. handle answers one
// request; a handler that hangs must return when release is closed or the
// client goes away.
type standIn struct {
	*httptest.Server
	mu      sync.Mutex
	reqs    []request
	release chan struct{}
}

func newStandIn(t *testing.T, handle func(s *standIn, w http.ResponseWriter, r *http.Request, body []byte)) *standIn {
	t.Helper()
	s := &standIn{release: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		auth := r.Header.Get("Authorization") + r.Header.Get("X-Api-Key") + r.Header.Get("X-Goog-Api-Key")
		s.mu.Lock()
		s.reqs = append(s.reqs, request{Method: r.Method, Path: r.URL.Path, Auth: auth, Body: body})
		s.mu.Unlock()
		handle(s, w, r, body)
	}))
	t.Cleanup(s.Close)
	t.Cleanup(func() { close(s.release) }) // runs first: hung handlers return
	return s
}

// requests returns the requests whose path contains part.
func (s *standIn) requests(part string) []request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []request
	for _, r := range s.reqs {
		if strings.Contains(r.Path, part) {
			out = append(out, r)
		}
	}
	return out
}

// hang holds a streamed answer open until the test ends or the agent is
// gone.
func (s *standIn) hang(r *http.Request) {
	select {
	case <-s.release:
	case <-r.Context().Done():
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// sse writes one server-sent event (without an event name when name is
// "") and flushes it.
func sse(w http.ResponseWriter, name string, data any) {
	b, _ := json.Marshal(data)
	if name != "" {
		fmt.Fprintf(w, "event: %s\n", name)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	w.(http.Flusher).Flush()
}

func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

// realJob is a job whose prompt carries a marker the stand-ins look for,
// and whose skill folder exists.
func realJob(t *testing.T) engine.Job {
	dir := filepath.Join(t.TempDir(), "deliver-prd")
	if err := os.MkdirAll(filepath.Join(dir, "references"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: deliver-prd\n---\nWrite a PRD.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	j := job()
	j.Prompt = "Say hello. gonogo-marker-7f3a"
	j.SkillDir = dir
	return j
}

// realConfig runs cli with an empty HOME (its own, so it finds no login
// and leaves no trace) in an empty working directory, with env added.
// The vendors' key variables start empty, whatever the machine has.
func realConfig(t *testing.T, cli string, env ...string) (Config, string) {
	home := t.TempDir()
	work := t.TempDir()
	base := []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"TMPDIR=" + t.TempDir(), // Gemini CLI leaves error reports there
		"ANTHROPIC_API_KEY=", "ANTHROPIC_AUTH_TOKEN=", "CLAUDE_CODE_OAUTH_TOKEN=", "ANTHROPIC_BASE_URL=",
		"OPENAI_API_KEY=", "CODEX_API_KEY=", "OPENAI_BASE_URL=",
		"GEMINI_API_KEY=", "GOOGLE_API_KEY=", "GOOGLE_GEMINI_BASE_URL=", "GOOGLE_GENAI_USE_VERTEXAI=", "GOOGLE_GENAI_USE_GCA=",
		// Whatever the machine says, nothing leaves it: a CLI that honours
		// the proxy variables reaches only the stand-in, and anything else
		// a dead port on the loopback.
		"HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9", "ALL_PROXY=http://127.0.0.1:9",
		"https_proxy=http://127.0.0.1:9", "http_proxy=http://127.0.0.1:9", "all_proxy=http://127.0.0.1:9",
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
	}
	return Config{Cmd: cli, Dir: work, Env: append(base, env...), Timeout: 60 * time.Second, KillGrace: 500 * time.Millisecond}, home
}

// runUntilProgress runs the runner until its progress satisfies seen, then
// cancels it. It returns the outcome and the process groups of the agent's
// processes found while it ran (those whose environment carries HOME=home).
func runUntilProgress(t *testing.T, r engine.Runner, j engine.Job, home string, seen func(engine.Progress) bool) (engine.Outcome, map[int]bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	arrived := make(chan engine.Progress, 1)
	var once sync.Once
	done := make(chan engine.Outcome, 1)
	go func() {
		done <- r.Run(ctx, j, func(p engine.Progress) {
			if seen(p) {
				once.Do(func() { arrived <- p })
			}
		})
	}()
	select {
	case p := <-arrived:
		t.Logf("live progress: %+v", p)
	case o := <-done:
		t.Fatalf("the agent ended before the awaited progress: %+v", o)
	case <-time.After(hangguard.Limit(t)):
		t.Fatal("no live progress came")
	}
	groups := map[int]bool{}
	for _, pid := range pidsWithEnv("HOME=" + home) {
		if g, err := pgid(pid); err == nil {
			groups[g] = true
		}
	}
	if len(groups) == 0 {
		t.Fatal("found no process of the running agent")
	}
	cancel()
	var o engine.Outcome
	select {
	case o = <-done:
	case <-time.After(hangguard.Limit(t)):
		t.Fatal("Run did not return after the cancel")
	}
	return o, groups
}

// assertGroupsGone checks that no process of the agent is left: none in
// its process groups, none with its HOME.
func assertGroupsGone(t *testing.T, home string, groups map[int]bool) {
	t.Helper()
	for _, pid := range allPids() {
		if !alive(pid) {
			continue
		}
		if g, err := pgid(pid); err == nil && groups[g] {
			t.Errorf("process %d of the agent's group %d outlived the attempt", pid, g)
		}
	}
	for _, pid := range pidsWithEnv("HOME=" + home) {
		if alive(pid) {
			t.Errorf("process %d of the agent outlived the attempt", pid)
		}
	}
}

func allPids() []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// pidsWithEnv lists the processes whose environment holds kv.
func pidsWithEnv(kv string) []int {
	var out []int
	for _, pid := range allPids() {
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			continue
		}
		for _, v := range bytes.Split(env, []byte{0}) {
			if string(v) == kv {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// pgid reads a process's group from /proc/PID/stat.
func pgid(pid int) (int, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("odd stat")
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 3 {
		return 0, errors.New("odd stat")
	}
	return strconv.Atoi(f[2]) // state, ppid, pgrp
}

// judge runs the rubric on an outcome, as the engine will.
func judge(o engine.Outcome) (engine.Result, string) { return engine.Judge(o, engine.Skill{}) }

// failsAgainst runs r once and checks that the attempt is FAILED with an
// agent error of kind naming every one of want, after the stand-in was
// asked at path.
func failsAgainst(t *testing.T, r engine.Runner, srv *standIn, path string, kind engine.AgentErrorKind, want ...string) {
	t.Helper()
	failedAs(t, r.Run(context.Background(), realJob(t), nil), kind, want...)
	if len(srv.requests(path)) == 0 {
		t.Errorf("the stand-in got no request at %s", path)
	}
}

// failedAs checks that the attempt is FAILED with an agent error of kind
// whose reason names every one of want, and returns the reason.
func failedAs(t *testing.T, o engine.Outcome, kind engine.AgentErrorKind, want ...string) string {
	t.Helper()
	res, why := judge(o)
	ok := res == engine.ResultFailed && o.AgentErrorKind == kind
	for _, w := range want {
		ok = ok && strings.Contains(why, w)
	}
	if !ok {
		t.Errorf("judged %s - %s (kind %q), want FAILED (%s) naming %q", res, why, o.AgentErrorKind, kind, want)
	}
	return why
}

// --- Claude Code against a stand-in of the Anthropic Messages API ---

const standInAnswer = "# Stand-in answer\n\nHello from the stand-in."

func anthropicStandIn(t *testing.T, mode string) *standIn {
	return newStandIn(t, func(s *standIn, w http.ResponseWriter, r *http.Request, _ []byte) {
		if !strings.HasPrefix(r.URL.Path, "/v1/messages") || strings.Contains(r.URL.Path, "count_tokens") {
			writeJSON(w, http.StatusNotFound, map[string]any{"type": "error", "error": map[string]any{"type": "not_found_error", "message": "not here"}})
			return
		}
		apiError := func(status int, kind, msg string) {
			writeJSON(w, status, map[string]any{"type": "error", "error": map[string]any{"type": kind, "message": msg}})
		}
		switch mode {
		case "unauthorized":
			apiError(http.StatusUnauthorized, "authentication_error", "invalid x-api-key")
			return
		case "overloaded":
			apiError(529, "overloaded_error", "Overloaded")
			return
		}
		startSSE(w)
		sse(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
			"id": "msg_standin_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": []any{},
			"stop_reason": nil, "usage": map[string]any{"input_tokens": 120, "output_tokens": 1, "cache_read_input_tokens": 20, "cache_creation_input_tokens": 0}}})
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": standInAnswer}})
		sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
		if mode == "slow" {
			s.hang(r)
			return
		}
		sse(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "end_turn"}, "usage": map[string]any{"output_tokens": 30}})
		sse(w, "message_stop", map[string]any{"type": "message_stop"})
	})
}

func claudeConfig(t *testing.T, srv *standIn, key string) (Config, string) {
	cli := realCLI(t, "claude", "claude")
	env := []string{"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_MAX_RETRIES=0",
		"ANTHROPIC_BASE_URL=" + srv.URL, "ANTHROPIC_API_KEY=" + key}
	return realConfig(t, cli, env...)
}

func TestRealClaude(t *testing.T) {
	t.Parallel()
	t.Run("success", func(t *testing.T) {
		t.Parallel()
		srv := anthropicStandIn(t, "ok")
		cfg, _ := claudeConfig(t, srv, "sk-ant-standin-key-1")
		j := realJob(t)
		o := NewClaude(cfg).Run(context.Background(), j, nil)
		if res, why := judge(o); res != engine.ResultProduced {
			t.Fatalf("judged %s - %s: %+v", res, why, o)
		}
		if string(o.Artifact) != standInAnswer {
			t.Errorf("artifact = %q, want the stand-in's text", o.Artifact)
		}
		if o.Usage.InputTokens != 120 || o.Usage.OutputTokens != 30 || o.Usage.CacheRead != 20 || o.CostUSD <= 0 {
			t.Errorf("usage %+v, cost %v: want 120 in, 30 out, 20 cache read and a cost", o.Usage, o.CostUSD)
		}
		reqs := srv.requests("/v1/messages")
		if len(reqs) == 0 {
			t.Fatal("the stand-in got no request")
		}
		if !bytes.Contains(reqs[0].Body, []byte("gonogo-marker-7f3a")) || !strings.Contains(reqs[0].Auth, "sk-ant-standin-key-1") {
			t.Errorf("the request lacks the prompt or the key: auth %q", reqs[0].Auth)
		}
		// --add-dir shows in the session's environment.
		if !bytes.Contains(reqs[0].Body, []byte(j.SkillDir)) {
			t.Errorf("the request does not mention the skill folder %s", j.SkillDir)
		}
	})
	t.Run("rejected key", func(t *testing.T) {
		t.Parallel()
		srv := anthropicStandIn(t, "unauthorized")
		cfg, _ := claudeConfig(t, srv, "sk-ant-standin-wrong")
		failsAgainst(t, NewClaude(cfg), srv, "/v1/messages", engine.AgentErrAuth, "Invalid API key", "ANTHROPIC_API_KEY")
	})
	t.Run("not logged in", func(t *testing.T) {
		t.Parallel()
		srv := anthropicStandIn(t, "ok")
		cfg, _ := claudeConfig(t, srv, "")
		o := NewClaude(cfg).Run(context.Background(), realJob(t), nil)
		res, why := judge(o)
		want := "the agent reported an error: Not logged in · Please run /login; to fix it, log in once (run `claude`, then /login) or set ANTHROPIC_API_KEY"
		if res != engine.ResultFailed || why != want || o.AgentErrorKind != engine.AgentErrAuth {
			t.Errorf("judged %s - %q (kind %q), want FAILED - %q", res, why, o.AgentErrorKind, want)
		}
	})
	t.Run("overloaded", func(t *testing.T) {
		t.Parallel()
		srv := anthropicStandIn(t, "overloaded")
		cfg, _ := claudeConfig(t, srv, "sk-ant-standin-key-2")
		failsAgainst(t, NewClaude(cfg), srv, "/v1/messages", engine.AgentErrOverloaded, "529")
	})
	t.Run("slow stream then cancel", func(t *testing.T) {
		t.Parallel()
		srv := anthropicStandIn(t, "slow")
		cfg, home := claudeConfig(t, srv, "sk-ant-standin-key-3")
		o, groups := runUntilProgress(t, NewClaude(cfg), realJob(t), home, func(p engine.Progress) bool { return p.Turns >= 1 })
		if !errors.Is(o.Err, ErrCancelled) {
			t.Errorf("err = %v, want a cancellation", o.Err)
		}
		assertGroupsGone(t, home, groups)
	})
}

// --- Codex against a stand-in of the OpenAI Responses API ---

func responsesStandIn(t *testing.T, mode string) *standIn {
	return newStandIn(t, func(s *standIn, w http.ResponseWriter, r *http.Request, _ []byte) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
			writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{"message": "not here"}})
			return
		}
		if mode == "slow" && len(s.requests("/responses")) == 1 {
			// The first try fails, so Codex says it reconnects.
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"error": map[string]any{"message": "try again", "type": "server_error"}})
			return
		}
		switch mode {
		case "unauthorized":
			writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}})
			return
		case "rate-limited":
			writeJSON(w, http.StatusTooManyRequests, map[string]any{"error": map[string]any{"message": "Rate limit reached", "type": "rate_limit_exceeded", "code": "rate_limit_exceeded"}})
			return
		}
		startSSE(w)
		sse(w, "response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_standin"}})
		sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "item": map[string]any{
			"type": "message", "role": "assistant", "id": "msg_standin",
			"content": []any{map[string]any{"type": "output_text", "text": standInAnswer}}}})
		if mode == "slow" {
			s.hang(r)
			return
		}
		sse(w, "response.completed", map[string]any{"type": "response.completed", "response": map[string]any{"id": "resp_standin",
			"usage": map[string]any{"input_tokens": 120, "input_tokens_details": map[string]any{"cached_tokens": 20},
				"output_tokens": 30, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 150}}})
	})
}

// codexConfig points codex at the stand-in the way Codex documents: a
// model provider of its own, chosen with -c overrides, which is how a team
// would pass them in GONOGO_RUNNER_ARGS.
func codexConfig(t *testing.T, srv *standIn, key string) (Config, string) {
	return codexConfigRetries(t, srv, key, 0)
}

func codexConfigRetries(t *testing.T, srv *standIn, key string, retries int) (Config, string) {
	cli := realCLI(t, "codex", "codex")
	cfg, home := realConfig(t, cli, "OPENAI_API_KEY="+key)
	cfg.Args = []string{
		"-c", "model_provider=gonogo-standin",
		"-c", `model_providers.gonogo-standin={name="stand-in",base_url="` + srv.URL + `/v1",env_key="OPENAI_API_KEY",wire_api="responses",request_max_retries=0,stream_max_retries=` + strconv.Itoa(retries) + `}`,
		"-c", "analytics.enabled=false",
	}
	return cfg, home
}

func TestRealCodex(t *testing.T) {
	t.Parallel()
	t.Run("success", func(t *testing.T) {
		t.Parallel()
		srv := responsesStandIn(t, "ok")
		cfg, _ := codexConfig(t, srv, "sk-standin-codex-1")
		var log progressLog
		o := NewCodex(cfg).Run(context.Background(), realJob(t), log.add)
		if res, why := judge(o); res != engine.ResultProduced {
			t.Fatalf("judged %s - %s: %+v", res, why, o)
		}
		if string(o.Artifact) != standInAnswer {
			t.Errorf("artifact = %q, want the stand-in's text", o.Artifact)
		}
		if o.Usage.InputTokens != 100 || o.Usage.CacheRead != 20 || o.Usage.OutputTokens != 30 {
			t.Errorf("usage = %+v, want 100 in, 20 cache read, 30 out", o.Usage)
		}
		if len(log.reports()) == 0 {
			t.Error("no progress reported")
		}
		reqs := srv.requests("/responses")
		if len(reqs) == 0 {
			t.Fatal("the stand-in got no request")
		}
		if !bytes.Contains(reqs[0].Body, []byte("gonogo-marker-7f3a")) || !strings.Contains(reqs[0].Auth, "sk-standin-codex-1") {
			t.Errorf("the request lacks the prompt or the key: auth %q", reqs[0].Auth)
		}
	})
	t.Run("built-in provider with CODEX_API_KEY", func(t *testing.T) {
		t.Parallel()
		// How a team runs it: Codex's own OpenAI provider and the key
		// codex exec reads, here with the provider's base URL moved to
		// the stand-in.
		srv := responsesStandIn(t, "ok")
		cli := realCLI(t, "codex", "codex")
		cfg, _ := realConfig(t, cli, "CODEX_API_KEY=sk-standin-codex-env")
		cfg.Args = []string{"-c", "openai_base_url=" + srv.URL + "/v1", "-c", "analytics.enabled=false"}
		o := NewCodex(cfg).Run(context.Background(), realJob(t), nil)
		if res, why := judge(o); res != engine.ResultProduced || string(o.Artifact) != standInAnswer {
			t.Fatalf("judged %s - %s: %+v", res, why, o)
		}
		var posts []request
		for _, r := range srv.requests("/responses") {
			if r.Method == http.MethodPost {
				posts = append(posts, r)
			}
		}
		if len(posts) == 0 {
			t.Fatal("the stand-in got no request")
		}
		if posts[0].Auth != "Bearer sk-standin-codex-env" || !bytes.Contains(posts[0].Body, []byte("gonogo-marker-7f3a")) {
			t.Errorf("the request has auth %q, want the CODEX_API_KEY bearer, and the prompt", posts[0].Auth)
		}
	})
	t.Run("missing key", func(t *testing.T) {
		t.Parallel()
		srv := responsesStandIn(t, "ok")
		cfg, _ := codexConfig(t, srv, "")
		o := NewCodex(cfg).Run(context.Background(), realJob(t), nil)
		failedAs(t, o, engine.AgentErrAuth, "OPENAI_API_KEY", "codex login")
		if n := len(srv.requests("/")); n != 0 {
			t.Errorf("the stand-in got %d requests, want none", n)
		}
	})
	t.Run("rejected key", func(t *testing.T) {
		t.Parallel()
		srv := responsesStandIn(t, "unauthorized")
		cfg, _ := codexConfig(t, srv, "sk-standin-codex-wrong")
		failsAgainst(t, NewCodex(cfg), srv, "/responses", engine.AgentErrAuth, "401")
	})
	t.Run("rate limited", func(t *testing.T) {
		t.Parallel()
		srv := responsesStandIn(t, "rate-limited")
		cfg, _ := codexConfig(t, srv, "sk-standin-codex-2")
		o := NewCodex(cfg).Run(context.Background(), realJob(t), nil)
		why := failedAs(t, o, engine.AgentErrRateLimit, "429")
		if strings.Count(why, "429 Too Many Requests") != 1 {
			t.Errorf("the reason repeats itself: %s", why)
		}
	})
	t.Run("slow stream then cancel", func(t *testing.T) {
		t.Parallel()
		srv := responsesStandIn(t, "slow")
		cfg, home := codexConfigRetries(t, srv, "sk-standin-codex-3", 1)
		var mu sync.Mutex
		var statuses []string
		o, groups := runUntilProgress(t, NewCodex(cfg), realJob(t), home, func(p engine.Progress) bool {
			mu.Lock()
			defer mu.Unlock()
			if p.Status != "" {
				statuses = append(statuses, p.Status)
			}
			return p.Turns >= 1
		})
		if !errors.Is(o.Err, ErrCancelled) {
			t.Errorf("err = %v, want a cancellation", o.Err)
		}
		assertGroupsGone(t, home, groups)
		mu.Lock()
		defer mu.Unlock()
		if len(statuses) == 0 || !strings.HasPrefix(statuses[0], "Reconnecting... 1/1") {
			t.Errorf("live progress did not show Codex reconnecting: %q", statuses)
		}
	})
}

// --- Gemini CLI against a stand-in of the Gemini API ---

func geminiStandIn(t *testing.T, mode string) *standIn {
	return newStandIn(t, func(s *standIn, w http.ResponseWriter, r *http.Request, _ []byte) {
		if !strings.Contains(r.URL.Path, ":streamGenerateContent") {
			writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{"code": 404, "message": "not here", "status": "NOT_FOUND"}})
			return
		}
		switch mode {
		case "bad-key":
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT",
				"details": []any{map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com"}}}})
			return
		case "overloaded":
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"error": map[string]any{"code": 503, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}})
			return
		}
		startSSE(w)
		sse(w, "", map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": "# Stand-in answer\n\n"}}}, "index": 0}},
			"modelVersion": "gemini-2.5-pro"})
		if mode == "slow" {
			s.hang(r)
			return
		}
		sse(w, "", map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": "Hello from the stand-in."}}}, "finishReason": "STOP", "index": 0}},
			"usageMetadata": map[string]any{"promptTokenCount": 120, "candidatesTokenCount": 30, "totalTokenCount": 150, "cachedContentTokenCount": 20}, "modelVersion": "gemini-2.5-pro"})
	})
}

// geminiConfig points Gemini CLI at the stand-in with
// GOOGLE_GEMINI_BASE_URL. The empty HOME gets a settings file choosing API
// key login (with the base URL set, Gemini CLI would otherwise pick a
// "gateway" login it refuses headless), one attempt per request, and no
// usage statistics.
func geminiConfig(t *testing.T, srv *standIn, key string) (Config, string) {
	cli := realCLI(t, "gemini", "gemini")
	cfg, home := realConfig(t, cli, "GEMINI_API_KEY="+key, "GOOGLE_GEMINI_BASE_URL="+srv.URL,
		"GEMINI_CLI_TRUST_WORKSPACE=true", "GEMINI_TELEMETRY_ENABLED=false")
	settings := `{"security":{"auth":{"selectedType":"gemini-api-key"}},"privacy":{"usageStatisticsEnabled":false},"general":{"maxAttempts":1}}`
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	// A model of its own skips Gemini CLI's routing call.
	cfg.Args = []string{"--model", "gemini-2.5-pro"}
	return cfg, home
}

func TestRealGemini(t *testing.T) {
	t.Parallel()
	t.Run("success", func(t *testing.T) {
		t.Parallel()
		srv := geminiStandIn(t, "ok")
		cfg, _ := geminiConfig(t, srv, "standin-gemini-key-1")
		var log progressLog
		j := realJob(t)
		o := NewGemini(cfg).Run(context.Background(), j, log.add)
		if res, why := judge(o); res != engine.ResultProduced {
			t.Fatalf("judged %s - %s: %+v", res, why, o)
		}
		if string(o.Artifact) != standInAnswer {
			t.Errorf("artifact = %q, want the stand-in's text", o.Artifact)
		}
		if o.Usage.InputTokens != 100 || o.Usage.CacheRead != 20 || o.Usage.OutputTokens != 30 || o.Usage.Turns != 1 {
			t.Errorf("usage = %+v, want 100 in, 20 cache read, 30 out, 1 turn", o.Usage)
		}
		reqs := srv.requests(":streamGenerateContent")
		if len(reqs) == 0 {
			t.Fatal("the stand-in got no request")
		}
		if !bytes.Contains(reqs[0].Body, []byte("gonogo-marker-7f3a")) || !strings.Contains(reqs[0].Auth, "standin-gemini-key-1") {
			t.Errorf("the request lacks the prompt or the key: auth %q", reqs[0].Auth)
		}
		// --include-directories shows in the session's workspace.
		if !bytes.Contains(reqs[0].Body, []byte(j.SkillDir)) {
			t.Errorf("the request does not mention the skill folder %s", j.SkillDir)
		}
	})
	t.Run("no login", func(t *testing.T) {
		t.Parallel()
		cli := realCLI(t, "gemini", "gemini")
		cfg, home := realConfig(t, cli, "GEMINI_CLI_TRUST_WORKSPACE=true", "GEMINI_TELEMETRY_ENABLED=false")
		if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(`{"privacy":{"usageStatisticsEnabled":false}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		o := NewGemini(cfg).Run(context.Background(), realJob(t), nil)
		res, why := judge(o)
		if res != engine.ResultFailed || o.AgentErrorKind != engine.AgentErrAuth || o.ExitCode != geminiAuthExit || !strings.Contains(why, "GEMINI_API_KEY") {
			t.Errorf("judged %s - %s (kind %q, exit %d)", res, why, o.AgentErrorKind, o.ExitCode)
		}
	})
	t.Run("rejected key", func(t *testing.T) {
		t.Parallel()
		srv := geminiStandIn(t, "bad-key")
		cfg, _ := geminiConfig(t, srv, "standin-gemini-wrong")
		failsAgainst(t, NewGemini(cfg), srv, ":streamGenerateContent", engine.AgentErrAuth, "API key not valid")
	})
	t.Run("overloaded", func(t *testing.T) {
		t.Parallel()
		srv := geminiStandIn(t, "overloaded")
		cfg, _ := geminiConfig(t, srv, "standin-gemini-key-2")
		o := NewGemini(cfg).Run(context.Background(), realJob(t), nil)
		failedAs(t, o, engine.AgentErrOverloaded, "overloaded")
	})
	t.Run("slow stream then cancel", func(t *testing.T) {
		t.Parallel()
		srv := geminiStandIn(t, "slow")
		cfg, home := geminiConfig(t, srv, "standin-gemini-key-3")
		o, groups := runUntilProgress(t, NewGemini(cfg), realJob(t), home, func(p engine.Progress) bool { return p.Turns >= 1 })
		if !errors.Is(o.Err, ErrCancelled) {
			t.Errorf("err = %v, want a cancellation", o.Err)
		}
		assertGroupsGone(t, home, groups)
	})
}
