package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// conditionCommandTimeout bounds a command condition: a check, not a step.
const conditionCommandTimeout = time.Minute

// CheckConditions checks a workflow step's pre- or postconditions in order
// and returns the first that does not hold, described with where it was
// written. dir is the working directory paths and commands are relative
// to; output is the step's output (nil before it runs). A command
// condition runs its program directly (no shell) in dir, with the output on
// stdin, and must exit 0 within a minute.
func CheckConditions(ctx context.Context, conds []Condition, dir string, output []byte) error {
	for _, c := range conds {
		if err := checkCondition(ctx, c, dir, output); err != nil {
			if c.Line > 0 {
				return fmt.Errorf("%s (condition at line %d)", err, c.Line)
			}
			return err
		}
	}
	return nil
}

func checkCondition(ctx context.Context, c Condition, dir string, output []byte) error {
	switch c.Kind {
	case CondFileExists, CondFileAbsent:
		_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(c.Path)))
		switch {
		case c.Kind == CondFileExists && errors.Is(err, os.ErrNotExist):
			return fmt.Errorf("file %s does not exist", c.Path)
		case c.Kind == CondFileAbsent && err == nil:
			return fmt.Errorf("file %s exists, and must not", c.Path)
		case err != nil && !errors.Is(err, os.ErrNotExist):
			return fmt.Errorf("file %s cannot be checked: %w", c.Path, err)
		}
	case CondOutputContains:
		if !bytes.Contains(output, []byte(c.Text)) {
			return fmt.Errorf("the output does not contain %q", c.Text)
		}
	case CondOutputMatches:
		re, err := regexp.Compile(c.Pattern)
		if err != nil {
			return fmt.Errorf("pattern %q does not compile: %w", c.Pattern, err)
		}
		if !re.Match(output) {
			return fmt.Errorf("the output does not match /%s/", c.Pattern)
		}
	case CondJSONField:
		return checkJSONField(output, c.Field, c.Value)
	case CondCommand:
		return checkCommand(ctx, c.Command, dir, output)
	default:
		return fmt.Errorf("unknown condition %q", c.Kind)
	}
	return nil
}

// checkJSONField reads the output as JSON (a fenced ```json block is
// unwrapped) and compares the field at a dotted path (a number picks an
// array element) with want: a string by its text, anything else by its
// JSON spelling (true, 3, null).
func checkJSONField(output []byte, field, want string) error {
	var v any
	if err := json.Unmarshal([]byte(jsonBody(string(output))), &v); err != nil {
		return fmt.Errorf("the output is not JSON, so field %s cannot be read: %s", field, jsonProblem(jsonBody(string(output)), err))
	}
	for _, part := range strings.Split(field, ".") {
		switch x := v.(type) {
		case map[string]any:
			next, ok := x[part]
			if !ok {
				return fmt.Errorf("the output's JSON has no field %s", field)
			}
			v = next
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(x) {
				return fmt.Errorf("the output's JSON has no field %s", field)
			}
			v = x[i]
		default:
			return fmt.Errorf("the output's JSON has no field %s", field)
		}
	}
	got, ok := v.(string)
	if !ok {
		b, _ := json.Marshal(v)
		got = string(b)
	}
	if got != want {
		return fmt.Errorf("the output's JSON field %s is %q, not %q", field, wfClip(got, 80), want)
	}
	return nil
}

func checkCommand(ctx context.Context, argv []string, dir string, output []byte) error {
	if len(argv) == 0 || argv[0] == "" {
		return errors.New("the command condition names no program")
	}
	ctx, cancel := context.WithTimeout(ctx, conditionCommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = AgentEnviron()
	cmd.Stdin = bytes.NewReader(output)
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	name := strings.Join(argv, " ")
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("command `%s` did not finish within %s", wfClip(name, 80), conditionCommandTimeout)
	case errors.As(err, &exit):
		msg := fmt.Sprintf("command `%s` exited %d", wfClip(name, 80), exit.ExitCode())
		if tail := strings.TrimSpace(stderr.String()); tail != "" {
			msg += ": " + wfClip(lastLine(tail), 200)
		}
		return errors.New(msg)
	}
	return fmt.Errorf("command `%s` could not run: %w", wfClip(name, 80), err)
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// IsSecretEnv reports whether an environment variable of gonogo's own is
// a secret that nothing gonogo starts (an agent, a command condition) may
// see: an agent that can run shell commands could otherwise read the bot's
// Slack tokens.
func IsSecretEnv(name string) bool {
	return name == "SLACK_APP_TOKEN" || name == "SLACK_BOT_TOKEN"
}

// AgentEnviron is gonogo's environment without its secrets.
func AgentEnviron() []string {
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !IsSecretEnv(k) {
			env = append(env, kv)
		}
	}
	return env
}

// jsonBody returns the JSON an agent's output carries: the output itself,
// or the body of its first ```json (or bare ```) fenced block when the
// output is not JSON on its own.
func jsonBody(out string) string {
	t := strings.TrimSpace(out)
	if strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		return t
	}
	for rest := t; ; {
		i := strings.Index(rest, "```")
		if i < 0 {
			return t
		}
		rest = rest[i+3:]
		nl := strings.IndexByte(rest, '\n')
		if nl < 0 {
			return t
		}
		lang := strings.TrimSpace(rest[:nl])
		body := rest[nl+1:]
		end := strings.Index(body, "```")
		if end < 0 {
			return t
		}
		if lang == "" || strings.EqualFold(lang, "json") {
			return strings.TrimSpace(body[:end])
		}
		rest = body[end+3:]
	}
}

// jsonProblem describes a JSON decoding error with the line and column it
// was found at, so the person reading the failed step can find it.
func jsonProblem(body string, err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	off := int64(-1)
	switch {
	case errors.As(err, &syn):
		off = syn.Offset
	case errors.As(err, &typ):
		off = typ.Offset
	}
	if off < 1 || off > int64(len(body)) {
		return err.Error()
	}
	// Offset counts the bytes read, the offending one included.
	before := body[:off-1]
	line := strings.Count(before, "\n") + 1
	col := len(before) - strings.LastIndexByte(before, '\n')
	return fmt.Sprintf("%v (line %d, column %d)", err, line, col)
}
