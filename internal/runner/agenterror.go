package runner

// What an agent says when it fails, made fit for a person: its words on
// one line, the kind of error, how to log in, and no secret in any of it.

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/gonogo/gonogo/engine"
)

// secretSet holds the values of the API keys and tokens the agent may be
// given, so that none of them reaches a message even when an agent prints
// one.
type secretSet []string

// secretValues collects the values of variables whose names say they hold
// a secret (secretName: …_API_KEY, …_TOKEN, …_SECRET, …_PASSWORD, ...),
// from gonogo's environment and the runner's extra one. Values shorter than
// 8 bytes are left alone: they are not real keys, and blanking them would
// garble messages.
func secretValues(extra []string) secretSet {
	var out secretSet
	for _, kv := range append(os.Environ(), extra...) {
		k, v, _ := strings.Cut(kv, "=")
		if len(v) < 8 || !secretName(k) {
			continue
		}
		out = append(out, v)
	}
	// Longest first, so a key that contains another is blanked whole.
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

func (s secretSet) redact(text string) string {
	for _, v := range s {
		if strings.Contains(text, v) {
			text = strings.ReplaceAll(text, v, "[redacted]")
		}
	}
	return text
}

// vendor says how to log an agent CLI in, for the message of an
// authentication failure.
type vendor struct {
	name  string // the CLI, for messages
	login string // how to fix a missing or rejected login, one clause
}

var (
	claudeVendor = vendor{"claude", "log in once (run `claude`, then /login) or set ANTHROPIC_API_KEY"}
	codexVendor  = vendor{"codex", "log in once with `codex login`, or set CODEX_API_KEY (or store OPENAI_API_KEY with `codex login --with-api-key`)"}
	geminiVendor = vendor{"gemini", "log in once (run `gemini` and choose a login) or set GEMINI_API_KEY"}
)

// agentFailed records an error the agent reported: its own words, trimmed
// to one line, and its kind; an authentication failure also says how to
// fix it.
func (v vendor) agentFailed(o *engine.Outcome, msg string, kind engine.AgentErrorKind) {
	msg = strings.Join(strings.Fields(msg), " ")
	if msg == "" {
		msg = "the agent reported an error"
	}
	if kind == "" {
		kind = errorKind(msg)
	}
	if kind == engine.AgentErrAuth {
		msg = strings.TrimRight(msg, ". ") + "; to fix it, " + v.login
	}
	o.AgentError, o.AgentErrorKind = msg, kind
}

// errorKind guesses the kind of an agent error from its words, for agents
// that report no kind of their own (codex, gemini) and the errors claude
// calls unknown: first what the words say, then the HTTP status they quote.
func errorKind(msg string) engine.AgentErrorKind {
	m := strings.ToLower(msg)
	if kind, ok := kindByWords(m); ok {
		return kind
	}
	for _, code := range httpStatus.FindAllString(m, -1) {
		if kind, ok := statusKind[code]; ok {
			return kind
		}
	}
	return engine.AgentErrOther
}

// kindByWords is the kind of error the lower-cased message m names in
// words (errorWords), if it names one.
func kindByWords(m string) (engine.AgentErrorKind, bool) {
	for _, k := range errorWords {
		for _, w := range k.words {
			if strings.Contains(m, w) {
				return k.kind, true
			}
		}
	}
	return "", false
}

// statusKind is the kind of error an HTTP status an error quotes stands
// for.
var statusKind = map[string]engine.AgentErrorKind{
	"401": engine.AgentErrAuth, "403": engine.AgentErrAuth,
	"402": engine.AgentErrBilling,
	"429": engine.AgentErrRateLimit,
	"500": engine.AgentErrOverloaded, "502": engine.AgentErrOverloaded, "503": engine.AgentErrOverloaded,
	"504": engine.AgentErrOverloaded, "529": engine.AgentErrOverloaded,
}

// errorWords are the words that give an error's kind away, in the order
// they are tried: a message about a key that quotes a 429 is about the key.
var errorWords = []struct {
	kind  engine.AgentErrorKind
	words []string
}{
	{engine.AgentErrContextTooLong, []string{"prompt is too long", "context length", "context window", "context_length", "maximum context", "input token count"}},
	{engine.AgentErrAuth, []string{"not logged in", "unauthorized", "unauthenticated", "invalid api key", "api key not valid", "api_key_invalid",
		"incorrect api key", "authentication", "missing environment variable", "/login", "auth method", "login required", "permission_denied"}},
	{engine.AgentErrBilling, []string{"credit balance", "billing", "insufficient_quota", "payment required"}},
	{engine.AgentErrRateLimit, []string{"rate limit", "rate_limit", "too many requests", "resource_exhausted", "resource has been exhausted", "quota"}},
	{engine.AgentErrOverloaded, []string{"overloaded", "unavailable", "server error", "server_error", "internal error", "try again later"}},
}

// httpStatus finds the HTTP statuses an error message quotes.
var httpStatus = regexp.MustCompile(`\b[45]\d\d\b`)

// ansi matches terminal colour and cursor sequences, which some CLIs write
// to stderr even when it is not a terminal.
var ansi = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`)

// stderrMessage picks the line of an agent's stderr that says what went
// wrong: colour codes and stack frames dropped, the first line that reads
// as an error, else the last line left. "" when nothing is left.
func stderrMessage(stderr string, noise ...string) string {
	var lines []string
	for _, l := range strings.Split(ansi.ReplaceAllString(stderr, ""), "\n") {
		if l = strings.TrimSpace(l); says(l, noise) {
			lines = append(lines, l)
		}
	}
	for _, l := range lines {
		low := strings.ToLower(l)
		if strings.HasPrefix(low, "error") || strings.Contains(low, "error:") {
			return l
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return lines[len(lines)-1]
}

// says reports whether a trimmed stderr line may say what went wrong: it
// is no stack frame, no bare punctuation, and none of the noise a CLI
// always writes.
func says(l string, noise []string) bool {
	if l == "" || strings.HasPrefix(l, "at ") || strings.Trim(l, "{}[](),;") == "" {
		return false
	}
	for _, n := range noise {
		if strings.HasPrefix(l, n) {
			return false
		}
	}
	return true
}

// noEndError is the error of an agent whose stream ended without its final
// event (what names that event, for the message), telling apart no output,
// output that was not JSON, an exit status and the end of stderr.
func noEndError(what string, events, garbage int, x exit) error {
	var notes []string
	if x.code > 0 {
		notes = append(notes, fmt.Sprintf("exit status %d", x.code))
	}
	switch {
	case events == 0 && garbage == 0:
		notes = append(notes, "no output")
	case garbage > 0:
		notes = append(notes, fmt.Sprintf("%d of %d lines were not JSON events", garbage, garbage+events))
	}
	msg := ""
	if len(notes) > 0 {
		msg = " (" + strings.Join(notes, ", ") + ")"
	}
	return fmt.Errorf("%w%s%s", &runError{msg: "agent ended without " + what, is: []error{errNoResult}}, msg, lastLine(x.stderr))
}

// errNoResult is behind the error of a stream that ended without its final
// event.
var errNoResult = errors.New("agent ended without a result event")
