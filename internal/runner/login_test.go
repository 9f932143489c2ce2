package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// script writes an executable shell script and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "cli")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func info(t *testing.T, name string) Info {
	t.Helper()
	i, ok := Lookup(name)
	if !ok {
		t.Fatalf("no runner %s", name)
	}
	return i
}

func TestCheckLoginReadsTheCLIsAnswer(t *testing.T) {
	t.Setenv("CODEX_API_KEY", "")
	cases := []struct {
		runner, body string
		want         Login
	}{
		{"claude", `[ "$1 $2" = "auth status" ] || exit 9; echo '{"loggedIn": false, "authMethod": "none"}'; exit 1`,
			Login{Checked: true, Asked: "claude auth status", Hint: "log in with claude auth login, or set ANTHROPIC_API_KEY"}},
		{"claude", `echo '{"loggedIn": true, "authMethod": "api_key", "apiKeySource": "ANTHROPIC_API_KEY"}'`,
			Login{Checked: true, LoggedIn: true, How: "api_key", Asked: "claude auth status"}},
		{"claude", `echo "error: unknown command 'auth'" >&2; exit 1`,
			Login{Asked: "claude auth status", Why: "claude auth status gave no answer gonogo reads (a Claude Code older than auth status?)"}},
		{"codex", `[ "$1 $2" = "login status" ] || exit 9; echo "Not logged in" >&2; exit 1`,
			Login{Checked: true, Asked: "codex login status", Hint: "log in with codex login, or set CODEX_API_KEY"}},
		{"codex", `echo "API key configured - sk-proj-***abcde"`,
			Login{Checked: true, LoggedIn: true, Asked: "codex login status"}},
		{"codex", `exit 2`, Login{Asked: "codex login status", Why: "codex login status exited 2 without saying"}},
		{"gemini", `echo should not be asked; exit 9`,
			Login{Why: "the gemini runner's agent has no way to say without a call to its service"}},
	}
	for _, c := range cases {
		got := info(t, c.runner).CheckLogin(t.Context(), script(t, c.body), VersionTimeout)
		if got != c.want {
			t.Errorf("%s answering %q:\n got %+v\nwant %+v", c.runner, c.body, got, c.want)
		}
	}
	// What the CLI prints is not kept: it may show part of a key.
	if got := info(t, "codex").CheckLogin(t.Context(), script(t, `echo "API key configured - sk-proj-***abcde"`), VersionTimeout); strings.Contains(got.How+got.Why, "sk-") {
		t.Errorf("the answer kept the key: %+v", got)
	}
	// codex login status does not count CODEX_API_KEY, which codex exec
	// reads: with it set, "not logged in" is not proven.
	t.Setenv("CODEX_API_KEY", "sk-test")
	got := info(t, "codex").CheckLogin(t.Context(), script(t, `echo "Not logged in" >&2; exit 1`), VersionTimeout)
	if got.Checked || !strings.Contains(got.Why, "does not count CODEX_API_KEY, which is set") {
		t.Errorf("codex not logged in with CODEX_API_KEY set: %+v", got)
	}
}

// The real CLIs answer without a request: HOME is empty, and every proxy
// points at a dead port on the loopback.
func TestCheckLoginOfTheRealCLIs(t *testing.T) {
	isolate := func(t *testing.T) {
		home := t.TempDir()
		for k, v := range map[string]string{
			"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
			"ANTHROPIC_API_KEY": "", "ANTHROPIC_AUTH_TOKEN": "", "CLAUDE_CODE_OAUTH_TOKEN": "", "CODEX_API_KEY": "", "OPENAI_API_KEY": "",
			"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9", "http_proxy": "http://127.0.0.1:9",
		} {
			t.Setenv(k, v)
		}
	}
	t.Run("claude", func(t *testing.T) {
		cli := realCLI(t, "claude", "claude")
		isolate(t)
		if got := info(t, "claude").CheckLogin(t.Context(), cli, 30*VersionTimeout); !got.Checked || got.LoggedIn {
			t.Errorf("claude with an empty HOME: %+v, want checked and not logged in", got)
		}
		t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test")
		if got := info(t, "claude").CheckLogin(t.Context(), cli, 30*VersionTimeout); !got.Checked || !got.LoggedIn || got.How != "api_key" {
			t.Errorf("claude with ANTHROPIC_API_KEY: %+v, want logged in with api_key", got)
		}
	})
	t.Run("codex", func(t *testing.T) {
		cli := realCLI(t, "codex", "codex")
		isolate(t)
		if got := info(t, "codex").CheckLogin(t.Context(), cli, 30*VersionTimeout); !got.Checked || got.LoggedIn {
			t.Errorf("codex with an empty HOME: %+v, want checked and not logged in", got)
		}
	})
}

// The real Claude Code package declares the Node it needs, next to its
// executable.
func TestCheckNodeOfTheRealClaude(t *testing.T) {
	cli := realCLI(t, "claude", "claude")
	n, ok := CheckNode(t.Context(), cli, 6*VersionTimeout)
	if !ok || n.Package != "@anthropic-ai/claude-code" || n.Declares != ">=22.0.0" {
		t.Fatalf("CheckNode(%s) = %+v, %v; want @anthropic-ai/claude-code declaring >=22.0.0", cli, n, ok)
	}
	if n.NodePath != "" && (n.Node == "" || n.Why != "") {
		t.Errorf("node %s found but not compared: %+v", n.NodePath, n)
	}
}
