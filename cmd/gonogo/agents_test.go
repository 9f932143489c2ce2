package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/gonogo/gonogo/internal/terminal"
)

// moduleFile is the path of a file relative to the module root.
func moduleFile(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", name)
}

// GONOGO_RUNNER_ARGS reaches the agent split like a shell would split it,
// and the agent learns its skill's folder from the prompt and, for the
// command runner, GONOGO_SKILL_DIR.
func TestRunnerArgsAndSkillDirReachTheAgent(t *testing.T) {
	vars := baseVars(t)
	dir := t.TempDir()
	vars["GONOGO_RUNNER"] = "command"
	vars["GONOGO_RUNNER_CMD"] = writeAgent(t, `printf '%s\n' "$@" > `+dir+`/args
printf '%s' "$GONOGO_SKILL_DIR" > `+dir+`/skill-dir
cat > `+dir+`/prompt
printf '# PRD\n\nA real paragraph of work.\n'`)
	vars["GONOGO_RUNNER_ARGS"] = `--model "big one" --note='it'"'"'s' plain\ word`
	res := gonogo(t, vars, "approve\n", "run", "--chain", "deliver-prd -- saved searches")
	if res.code != terminal.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	args, _ := os.ReadFile(filepath.Join(dir, "args"))
	if got, want := string(args), "--model\nbig one\n--note=it's\nplain word\n"; got != want {
		t.Errorf("the agent got arguments %q, want %q", got, want)
	}
	skillDir, err := filepath.Abs(filepath.Join(exampleDir(t), "skills", "deliver-prd"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "skill-dir")); string(got) != skillDir {
		t.Errorf("GONOGO_SKILL_DIR = %q, want %q", got, skillDir)
	}
	if prompt, _ := os.ReadFile(filepath.Join(dir, "prompt")); !strings.Contains(string(prompt), "`"+skillDir+"`") {
		t.Errorf("the prompt does not name the skill's folder %s:\n%s", skillDir, prompt)
	}
}

func TestRunnerArgsMalformedAreRefused(t *testing.T) {
	for _, bad := range []string{`--model "unclosed`, `--model opus; rm -rf /`, `--out > file`, `trailing\`} {
		vars := baseVars(t)
		vars["GONOGO_RUNNER"] = "command"
		vars["GONOGO_RUNNER_CMD"] = writeAgent(t, `cat >/dev/null; echo '# never'`)
		vars["GONOGO_RUNNER_ARGS"] = bad
		res := gonogo(t, vars, "", "run", "--chain", "deliver-prd -- saved searches")
		if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, "GONOGO_RUNNER_ARGS") {
			t.Errorf("GONOGO_RUNNER_ARGS=%s: exit %d, want %d naming the variable\n%s", bad, res.code, terminal.ExitUsage, res.stderr)
		}
		if strings.Contains(res.stdout, "Step 1 of 1") {
			t.Errorf("GONOGO_RUNNER_ARGS=%s: a step ran:\n%s", bad, res.stdout)
		}
	}
}

// The agent gets no secret of another service unless GONOGO_AGENT_ENV lists
// it; a malformed list is refused before anything runs.
func TestAgentEnvLetsTheOperatorPassASecret(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "ghp-for-the-agent")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "not-for-the-agent")
	t.Setenv("SLACK_BOT_TOKEN", "xoxb-not-for-the-agent")
	t.Setenv("GONOGO_TEMPORAL_TLS_KEY", "/etc/tls/gonogo-key.pem")
	vars := baseVars(t)
	dir := t.TempDir()
	vars["GONOGO_RUNNER"] = "command"
	vars["GONOGO_RUNNER_CMD"] = writeAgent(t, `env > `+dir+`/env
cat >/dev/null
printf '# PRD\n\nA real paragraph of work.\n'`)
	vars["GONOGO_AGENT_ENV"] = "GITHUB_TOKEN"
	if res := gonogo(t, vars, "approve\n", "run", "--chain", "deliver-prd -- saved searches"); res.code != terminal.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "env"))
	if err != nil {
		t.Fatal(err)
	}
	env := "\n" + string(b)
	if !strings.Contains(env, "\nGITHUB_TOKEN=ghp-for-the-agent\n") {
		t.Error("the agent lacks GITHUB_TOKEN, which GONOGO_AGENT_ENV lists")
	}
	for _, secret := range []string{"not-for-the-agent", "xoxb-", "gonogo-key.pem"} {
		if strings.Contains(env, secret) {
			t.Errorf("the agent's environment holds %q", secret)
		}
	}

	vars["GONOGO_AGENT_ENV"] = "GITHUB_TOKEN,AWS SECRET"
	res := gonogo(t, vars, "", "run", "--chain", "deliver-prd -- saved searches")
	if res.code != terminal.ExitUsage || !strings.Contains(res.stderr, `GONOGO_AGENT_ENV="GITHUB_TOKEN,AWS SECRET"`) || !strings.Contains(res.stderr, `"AWS SECRET" is not a variable name`) {
		t.Errorf("a malformed GONOGO_AGENT_ENV: exit %d, want %d naming it\n%s", res.code, terminal.ExitUsage, res.stderr)
	}
}

// What the agent said reaches the person: a claude that is not logged in
// fails the step with its own words and how to fix it, not its exit code.
func TestAgentErrorReachesThePerson(t *testing.T) {
	vars := baseVars(t)
	vars["GONOGO_RUNNER"] = "claude"
	vars["GONOGO_RUNNER_CMD"] = writeAgent(t, `cat >/dev/null; cat `+moduleFile("testdata/agents-fake/streams/not-logged-in.jsonl")+`; exit 1`)
	res := gonogo(t, vars, "", "run", "--chain", "deliver-prd -- saved searches")
	if res.code != terminal.ExitRefused {
		t.Fatalf("exit %d, want %d\n%s\n%s", res.code, terminal.ExitRefused, res.stdout, res.stderr)
	}
	want := "FAILED - the agent reported an error: Not logged in · Please run /login; to fix it, log in once (run `claude`, then /login) or set ANTHROPIC_API_KEY"
	if !strings.Contains(res.stdout, want) {
		t.Errorf("output lacks %q:\n%s", want, res.stdout)
	}
	if strings.Contains(res.stdout, "exited with code") || strings.Count(res.stdout, "Not logged in") != 1 {
		t.Errorf("the reason is not said once, in the agent's words:\n%s", res.stdout)
	}
}

// The real Claude Code, against a loopback stand-in of the Anthropic API,
// runs a whole step through gonogo, which records it as PRODUCED.
func TestRealClaudeThroughGonogo(t *testing.T) {
	agents := os.Getenv("GONOGO_AGENTS_DIR")
	if agents == "" {
		home, _ := os.UserHomeDir()
		agents = filepath.Join(home, ".cache", "gonogo", "agents")
	}
	cli := filepath.Join(agents, "claude", "node_modules", ".bin", "claude")
	if _, err := os.Stat(cli); err != nil {
		t.Skipf("claude CLI not installed at %s (run .ci/install-agents): %v", cli, err)
	}
	var (
		mu     sync.Mutex
		bodies []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body strings.Builder
		_, _ = fmt.Fprint(&body, r.URL.Path+"\n")
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Body.Read(buf)
			body.Write(buf[:n])
			if err != nil {
				break
			}
		}
		mu.Lock()
		bodies = append(bodies, body.String())
		mu.Unlock()
		if !strings.HasPrefix(r.URL.Path, "/v1/messages") || strings.Contains(r.URL.Path, "count_tokens") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		ev := func(name string, data map[string]any) {
			b, _ := json.Marshal(data)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		}
		ev("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_1", "type": "message", "role": "assistant",
			"model": "claude-sonnet-4-5", "content": []any{}, "usage": map[string]any{"input_tokens": 50, "output_tokens": 1}}})
		ev("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta",
			"text": "# PRD: saved searches\n\nShoppers keep their searches and get told about new matches."}})
		ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
		ev("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "end_turn"}, "usage": map[string]any{"output_tokens": 20}})
		ev("message_stop", map[string]any{"type": "message_stop"})
	}))
	defer srv.Close()
	home := t.TempDir()
	for k, v := range map[string]string{
		"HOME": home, "TMPDIR": t.TempDir(), "XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"ANTHROPIC_BASE_URL": srv.URL, "ANTHROPIC_API_KEY": "sk-ant-standin-cmd", "ANTHROPIC_AUTH_TOKEN": "", "CLAUDE_CODE_OAUTH_TOKEN": "",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_MAX_RETRIES": "0",
		"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9", "ALL_PROXY": "http://127.0.0.1:9", "NO_PROXY": "127.0.0.1,localhost",
	} {
		t.Setenv(k, v)
	}
	vars := baseVars(t)
	vars["GONOGO_RUNNER"], vars["GONOGO_RUNNER_CMD"] = "claude", cli
	res := gonogo(t, vars, "approve\n", "run", "--chain", "deliver-prd -- saved searches")
	if res.code != terminal.ExitOK || !strings.Contains(res.stdout, "PRODUCED") {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stdout, "Shoppers keep their searches") {
		t.Errorf("the step's preview lacks the stand-in's text:\n%s", res.stdout)
	}
	mu.Lock()
	defer mu.Unlock()
	skillDir, _ := filepath.Abs(filepath.Join(exampleDir(t), "skills", "deliver-prd"))
	found := false
	for _, b := range bodies {
		found = found || (strings.Contains(b, "saved searches") && strings.Contains(b, skillDir))
	}
	if !found {
		t.Errorf("no request to the stand-in carried the prompt and the skill's folder (%d requests)", len(bodies))
	}
}
