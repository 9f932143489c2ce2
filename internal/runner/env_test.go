package runner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
)

// gonogoEnviron is the environment of a gonogo that serves Slack, stores
// artifacts on S3 and has every agent's key at hand.
var gonogoEnviron = []string{
	"PATH=/usr/bin:/bin", "HOME=/home/op", "LANG=en_US.UTF-8", "LC_ALL=C.UTF-8", "TERM=xterm", "TZ=UTC",
	"HTTPS_PROXY=http://proxy:3128", "no_proxy=localhost", "SSL_CERT_FILE=/etc/ssl/ca.pem", "MAKEFLAGS=-j2",
	"TOKENIZERS_PARALLELISM=false",
	"SLACK_BOT_TOKEN=xoxb-1", "SLACK_APP_TOKEN=xapp-1", "SLACK_API_URL=http://slack.invalid/api/",
	"AWS_ACCESS_KEY_ID=AKIA1", "AWS_SECRET_ACCESS_KEY=aws-secret", "AWS_REGION=eu-west-1",
	"GONOGO_RUNNER_CMD=claude", "GONOGO_TEMPORAL_TLS_KEY=/etc/tls/key.pem", "GONOGO_AGENT_ID=from-a-parent",
	"GITHUB_TOKEN=ghp-1", "DB_PASSWORD=hunter22", "STRIPE_SECRET_KEY=sk-live", "NPM_CONFIG_APIKEY=npm-1",
	"ANTHROPIC_API_KEY=sk-ant-1", "ANTHROPIC_BASE_URL=http://llm.invalid", "CLAUDE_CONFIG_DIR=/home/op/.claude",
	"CLAUDE_CODE_USE_BEDROCK=1",
	"OPENAI_API_KEY=sk-oai-1", "CODEX_API_KEY=sk-codex-1", "CODEX_HOME=/home/op/.codex",
	"GEMINI_API_KEY=gem-1", "GOOGLE_API_KEY=goog-1", "GOOGLE_CLOUD_PROJECT=proj",
}

// common is what every process gonogo starts for a step gets.
var common = []string{"PATH", "HOME", "LANG", "LC_ALL", "TERM", "TZ", "HTTPS_PROXY", "no_proxy", "SSL_CERT_FILE",
	"MAKEFLAGS", "TOKENIZERS_PARALLELISM"}

func TestAgentEnvironRule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		runner string
		pass   []string
		own    []string // passed besides common
	}{
		{"claude", nil, []string{"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "CLAUDE_CONFIG_DIR", "CLAUDE_CODE_USE_BEDROCK"}},
		{"codex", nil, []string{"OPENAI_API_KEY", "CODEX_API_KEY", "CODEX_HOME"}},
		{"gemini", nil, []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT"}},
		{"", nil, nil},
		// The operator lists what a step needs: Claude Code on Bedrock
		// needs the AWS credentials, a command runner wrapping Claude Code
		// its key, an agent that opens pull requests a GitHub token.
		{"claude", []string{"AWS_*", "GITHUB_TOKEN"}, []string{"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "CLAUDE_CONFIG_DIR",
			"CLAUDE_CODE_USE_BEDROCK", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "GITHUB_TOKEN"}},
		{"", []string{"ANTHROPIC_API_KEY"}, []string{"ANTHROPIC_API_KEY"}},
	}
	for _, tc := range tests {
		got := agentEnviron(tc.runner, tc.pass, gonogoEnviron)
		var names []string
		for _, kv := range got {
			k, _, _ := strings.Cut(kv, "=")
			names = append(names, k)
		}
		want := append(slices.Clone(common), tc.own...)
		slices.Sort(names)
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Errorf("runner %q, GONOGO_AGENT_ENV %v:\n got %v\nwant %v", tc.runner, tc.pass, names, want)
		}
	}
}

func TestSecretName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"GITHUB_TOKEN": true, "gh_token": true, "ANTHROPIC_AUTH_TOKEN": true, "DB_PASSWORD": true, "VAULT_SECRET": true,
		"STRIPE_SECRET_KEY": true, "OPENAI_API_KEY": true, "GOOGLE_APPLICATION_CREDENTIALS": true, "SSH_PRIVATE_KEY": true,
		"AWS_ACCESS_KEY_ID": true, "NPM_CONFIG_APIKEY": true, "GPG_PASSPHRASE": true,
		"STRIPE_KEY": true, "NPM_CONFIG__AUTH": true, "KEY": false, "GPG_KEYRING": false,
		"TOKENIZERS_PARALLELISM": false, "PATH": false, "KEYBOARD": false, "API_URL": false, "SSH_AUTH_SOCK": false,
	} {
		if got := secretName(name); got != want {
			t.Errorf("secretName(%s) = %v, want %v", name, got, want)
		}
	}
}

func TestParsePassEnv(t *testing.T) {
	t.Parallel()
	got, err := ParsePassEnv(" GITHUB_TOKEN, AWS_* ,,")
	if err != nil || !slices.Equal(got, []string{"GITHUB_TOKEN", "AWS_*"}) {
		t.Errorf("ParsePassEnv = %v, %v", got, err)
	}
	if got, err := ParsePassEnv(""); err != nil || got != nil {
		t.Errorf("ParsePassEnv(\"\") = %v, %v", got, err)
	}
	for _, bad := range []string{"*", "GITHUB TOKEN", "A=B", "*_TOKEN", "1ABC", "AWS*_X"} {
		if _, err := ParsePassEnv("PATH," + bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("ParsePassEnv(%q) = %v, want an error naming it", bad, err)
		}
	}
}

// Every runner starts its agent with the environment the rule gives it:
// the agent's own key, not the others' nor Slack's, AWS's or gonogo's own;
// what the operator lists; and the job's variables over everything.
func TestRunnersGiveTheDocumentedEnvironment(t *testing.T) {
	for _, kv := range gonogoEnviron {
		k, v, _ := strings.Cut(kv, "=")
		if k != "PATH" && k != "HOME" {
			t.Setenv(k, v)
		}
	}
	runners := []struct {
		name   string
		new    func(Config) engine.Runner
		replay string
		own    []string
	}{
		{"claude", func(c Config) engine.Runner { return NewClaude(c) }, "streams/success.jsonl", []string{"ANTHROPIC_API_KEY", "CLAUDE_CONFIG_DIR"}},
		{"codex", func(c Config) engine.Runner { return NewCodex(c) }, "codex/success.jsonl", []string{"CODEX_API_KEY", "OPENAI_API_KEY"}},
		{"gemini", func(c Config) engine.Runner { return NewGemini(c) }, "gemini/success.jsonl", []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}},
		{"command", func(c Config) engine.Runner { return NewCommand(c) }, "streams/success.jsonl", nil},
	}
	keys := []string{"ANTHROPIC_API_KEY", "CLAUDE_CONFIG_DIR", "CODEX_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"}
	for _, r := range runners {
		envFile := filepath.Join(t.TempDir(), "env")
		cfg := fast("--all-env-to", envFile, "--replay", testdata(r.replay))
		cfg.PassEnv = []string{"GITHUB_TOKEN"}
		cfg.Env = []string{"GONOGO_STEP=99", "FAKE_EXTRA=1"}
		if o := r.new(cfg).Run(context.Background(), job(), nil); o.Err != nil || o.AgentError != "" {
			t.Fatalf("%s: %+v", r.name, o)
		}
		b, err := os.ReadFile(envFile)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]string{}
		for _, kv := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			k, v, _ := strings.Cut(kv, "=")
			seen[k] = v
		}
		for _, k := range []string{"LANG", "TERM", "HTTPS_PROXY", "GITHUB_TOKEN", "FAKE_EXTRA", "GONOGO_RUN_ID", "GONOGO_SKILL"} {
			if _, ok := seen[k]; !ok {
				t.Errorf("%s: the agent lacks %s", r.name, k)
			}
		}
		if seen["GONOGO_STEP"] != "2" {
			t.Errorf("%s: GONOGO_STEP=%q, want the job's 2", r.name, seen["GONOGO_STEP"])
		}
		for _, k := range []string{"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_API_URL", "AWS_SECRET_ACCESS_KEY", "AWS_REGION",
			"GONOGO_RUNNER_CMD", "GONOGO_TEMPORAL_TLS_KEY", "DB_PASSWORD", "STRIPE_SECRET_KEY"} {
			if _, ok := seen[k]; ok {
				t.Errorf("%s: the agent got %s", r.name, k)
			}
		}
		if seen["GONOGO_AGENT_ID"] == "from-a-parent" {
			t.Errorf("%s: the agent got gonogo's own GONOGO_AGENT_ID", r.name)
		}
		for _, k := range keys {
			_, got := seen[k]
			if want := slices.Contains(r.own, k); got != want {
				t.Errorf("%s: the agent got %s: %v, want %v", r.name, k, got, want)
			}
		}
	}
}
