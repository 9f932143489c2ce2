package runner

// The environment of every process gonogo starts for a step (the agent, a
// workflow's command condition, a version check) is decided here, by one
// rule over gonogo's own environment:
//
//  1. A name the operator lists in GONOGO_AGENT_ENV (Config.PassEnv) is
//     passed.
//  2. The agent's own variables (agentVars: ANTHROPIC_* and CLAUDE_* for
//     claude, OPENAI_* and CODEX_* for codex, GEMINI_* and GOOGLE_* for
//     gemini) are passed to that agent's runner.
//  3. Withheld: gonogo's own settings and tokens (GONOGO_*), other
//     services' credentials (SLACK_*, AWS_*), the variables of the agents
//     the runner does not run, and any name that says it holds a secret
//     (secretName: a part TOKEN, SECRET, PASSWORD, CREDENTIALS, ..., or
//     API_KEY, PRIVATE_KEY, ACCESS_KEY, or a last part KEY or AUTH).
//  4. Everything else is passed: PATH, HOME, USER, SHELL, LANG and LC_*,
//     TERM, TZ, TMPDIR, the proxies (HTTPS_PROXY, NO_PROXY, ...), SSL_CERT_FILE,
//     NODE_EXTRA_CA_CERTS, XDG_*, the settings of the tools an agent runs.
//
// Then come Config.Env (set by code, never withheld) and the job's own
// GONOGO_* variables (environ). An agent that can run shell commands can
// print whatever it was given, so a secret it has no use for is one it
// must not have.

import (
	"fmt"
	"os"
	"regexp"
	"strings"
)

// agentVars are the name prefixes of each agent's own settings and keys:
// only that agent's runner gets them.
var agentVars = map[string][]string{
	"claude": {"ANTHROPIC_", "CLAUDE_"},
	"codex":  {"OPENAI_", "CODEX_"},
	"gemini": {"GEMINI_", "GOOGLE_"},
}

// withheldPrefixes are the name prefixes no agent gets unless listed:
// gonogo's own configuration and tokens, and other services' credentials.
var withheldPrefixes = []string{"GONOGO_", "SLACK_", "AWS_"}

// secretParts are the parts of a name (split at '_') that say it holds a
// secret; secretPairs the same for two parts in a row, secretEnds for the
// last part.
var (
	secretParts = map[string]bool{
		"TOKEN": true, "TOKENS": true, "SECRET": true, "SECRETS": true, "PASSWORD": true,
		"PASSWD": true, "PASSPHRASE": true, "CREDENTIAL": true, "CREDENTIALS": true, "APIKEY": true,
	}
	secretPairs = map[[2]string]bool{{"API", "KEY"}: true, {"PRIVATE", "KEY"}: true, {"ACCESS", "KEY"}: true}
	secretEnds  = map[string]bool{"KEY": true, "AUTH": true}
)

// secretName reports whether a variable's name says it holds a secret:
// GITHUB_TOKEN, DB_PASSWORD, OPENAI_API_KEY, GOOGLE_APPLICATION_CREDENTIALS,
// STRIPE_KEY, but not TOKENIZERS_PARALLELISM or SSH_AUTH_SOCK. Its value is then withheld from agents
// (agentEnviron) and blanked out of every message (secretValues).
func secretName(name string) bool {
	parts := strings.Split(strings.ToUpper(name), "_")
	for i, p := range parts {
		if secretParts[p] || i > 0 && secretPairs[[2]string{parts[i-1], p}] {
			return true
		}
	}
	return len(parts) > 1 && secretEnds[parts[len(parts)-1]]
}

// passes reports whether the variable name goes to the agent of runner
// ("" for a process that is no agent's: a command condition, the command
// runner's executable), with pass the operator's GONOGO_AGENT_ENV.
func passes(runner, name string, pass []string) bool {
	upper := strings.ToUpper(name)
	if operatorPasses(name, pass) || hasAnyPrefix(upper, agentVars[runner]) {
		return true
	}
	if hasAnyPrefix(upper, withheldPrefixes) {
		return false
	}
	for _, prefixes := range agentVars {
		if hasAnyPrefix(upper, prefixes) {
			return false // another agent's
		}
	}
	return !secretName(name)
}

// operatorPasses reports whether GONOGO_AGENT_ENV (pass) names the
// variable, or a prefix of it.
func operatorPasses(name string, pass []string) bool {
	for _, p := range pass {
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(name, prefix) || p == name {
			return true
		}
	}
	return false
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// agentEnviron is what of environ (gonogo's own, KEY=VALUE) the agent of
// runner gets, in environ's order.
func agentEnviron(runner string, pass []string, environ []string) []string {
	var env []string
	for _, kv := range environ {
		if k, _, _ := strings.Cut(kv, "="); passes(runner, k, pass) {
			env = append(env, kv)
		}
	}
	return env
}

// ownEnviron is agentEnviron over gonogo's environment.
func ownEnviron(runner string, pass []string) []string {
	return agentEnviron(runner, pass, os.Environ())
}

// passName is one entry of GONOGO_AGENT_ENV: a variable name, or a prefix
// ending in '*'.
var passName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*\*?$`)

// ParsePassEnv reads GONOGO_AGENT_ENV: a comma-separated list of variable
// names (or NAME_PREFIX_*) an agent gets even though the rule above would
// withhold them. It refuses an entry that is no variable name.
func ParsePassEnv(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !passName.MatchString(f) {
			return nil, fmt.Errorf("%q is not a variable name (letters, digits and _, or a prefix ending in *)", f)
		}
		out = append(out, f)
	}
	return out, nil
}
