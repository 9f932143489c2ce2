package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// Login is what an agent CLI says of its own login when asked without a
// call to its service (no request is sent, nothing is paid for).
type Login struct {
	// Checked: the CLI answered. False when it has no such question, or
	// did not answer it; Why says which.
	Checked  bool
	LoggedIn bool
	// How is how the CLI says it is logged in ("api_key", "oauth_token",
	// ...), "" when it does not say.
	How string
	// Asked is the command asked ("claude auth status"), "" when none.
	Asked string
	Why   string
	// Hint says how to log in, for a CLI that is not.
	Hint string
}

// loginCheck is how one agent CLI is asked whether it is logged in.
type loginCheck struct {
	args []string
	// read reads the CLI's answer: what it printed and its exit code.
	read func(stdout, stderr string, code int) Login
	// uncounted are environment variables that carry a login the CLI's
	// answer does not count: set, they leave "not logged in" unproven.
	uncounted []string
	hint      string
}

// claude auth status prints JSON ({"loggedIn": true, "authMethod":
// "api_key", ...}) and exits 1 when not logged in. It reads the stored
// login and the environment (ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN)
// only: a key is not checked with Anthropic, so "logged in" means a
// credential is there, not that it is accepted.
var claudeLogin = &loginCheck{
	args: []string{"auth", "status"},
	read: func(out, _ string, _ int) Login {
		var st struct {
			LoggedIn   *bool  `json:"loggedIn"`
			AuthMethod string `json:"authMethod"`
		}
		if json.Unmarshal([]byte(out), &st) != nil || st.LoggedIn == nil {
			return Login{Why: "claude auth status gave no answer gonogo reads (a Claude Code older than auth status?)"}
		}
		l := Login{Checked: true, LoggedIn: *st.LoggedIn}
		if l.LoggedIn && st.AuthMethod != "none" {
			l.How = st.AuthMethod
		}
		return l
	},
	hint: "log in with claude auth login, or set ANTHROPIC_API_KEY",
}

// codex login status reads ~/.codex (no request: "Authentication is
// checked when you send a request") and exits 0 when logged in, 1 with
// "Not logged in". It does not count CODEX_API_KEY, which codex exec
// reads.
var codexLogin = &loginCheck{
	args: []string{"login", "status"},
	read: func(out, errOut string, code int) Login {
		switch {
		case code == 0:
			return Login{Checked: true, LoggedIn: true}
		case code == 1 && strings.Contains(out+errOut, "Not logged in"):
			return Login{Checked: true}
		}
		return Login{Why: fmt.Sprintf("codex login status exited %d without saying", code)}
	},
	uncounted: []string{"CODEX_API_KEY"},
	hint:      "log in with codex login, or set CODEX_API_KEY",
}

// CheckLogin asks the agent CLI at path whether it is logged in, when it
// can say without a call to its service, waiting at most timeout. Only
// whether and how is kept of its answer: what it prints may show part of
// a key.
func (i Info) CheckLogin(ctx context.Context, path string, timeout time.Duration) Login {
	c := i.login
	if c == nil {
		return Login{Why: fmt.Sprintf("the %s runner's agent has no way to say without a call to its service", i.Name)}
	}
	asked := i.Name + " " + strings.Join(c.args, " ")
	out, x := ask(ctx, i.Name, path, c.args, timeout)
	if x.err != nil {
		return Login{Asked: asked, Why: asked + ": " + x.outcome(path).Err.Error()}
	}
	l := c.read(out, x.stderr, x.code)
	l.Asked = asked
	if l.Checked && !l.LoggedIn {
		if v := firstSet(c.uncounted); v != "" {
			return Login{Asked: asked, Why: fmt.Sprintf("%s says not logged in, but does not count %s, which is set", asked, v)}
		}
		l.Hint = c.hint
	}
	return l
}

// firstSet is the first of the environment variables vars that is set to
// something, or "".
func firstSet(vars []string) string {
	for _, v := range vars {
		if os.Getenv(v) != "" {
			return v
		}
	}
	return ""
}
