package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// conditionCommandTimeout bounds a command condition: a check, not a step.
const conditionCommandTimeout = time.Minute

// Probe looks outside a run for a workflow step's conditions: whether a
// file exists and how a command ends. It is the only way the engine
// reaches the file system or starts a process for a condition, so the
// engine itself does no I/O, and a backend that runs steps on another
// machine checks their conditions where they run. Paths and commands are
// relative to the probe's own working directory. The probe only looks;
// what a condition's answer means, and the words a failure is told in, are
// the engine's (CheckConditions).
type Probe interface {
	// Exists reports whether path (slash-separated, relative to the
	// working directory) exists; an error says it cannot be told.
	Exists(ctx context.Context, path string) (bool, error)
	// Command runs argv[0] directly (no shell) in the working directory,
	// with stdin, in the environment an agent gets (gonogo's without its
	// secrets), until it exits or ctx ends.
	Command(ctx context.Context, argv []string, stdin []byte) CommandResult
}

// CommandResult is how a command condition's program ended.
type CommandResult struct {
	// Err says why the program did not run or could not be waited for;
	// nil once it ran and exited with ExitCode.
	Err      error
	ExitCode int
	Stderr   string // what it wrote to stderr
}

// errNoProbe fails a condition that needs a Probe when the service was
// given none.
var errNoProbe = errors.New("this gonogo cannot check file or command conditions")

// CheckConditions checks a workflow step's pre- or postconditions in order
// and returns the first that does not hold, described with where it was
// written. output is the step's output (nil before it runs). Conditions on
// the output are judged here; p answers those on files and commands (nil:
// they fail). A command condition is given the output on stdin and must
// exit 0 within a minute.
func CheckConditions(ctx context.Context, conds []Condition, output []byte, p Probe) error {
	for _, c := range conds {
		if err := checkCondition(ctx, c, output, p); err != nil {
			if c.Line > 0 {
				return fmt.Errorf("%w (condition at line %d)", err, c.Line)
			}
			return err
		}
	}
	return nil
}

func checkCondition(ctx context.Context, c Condition, output []byte, p Probe) error {
	switch c.Kind {
	case CondFileExists, CondFileAbsent:
		return checkFile(ctx, c, p)
	case CondOutputContains:
		if !bytes.Contains(output, []byte(c.Text)) {
			return fmt.Errorf("the output does not contain %q", c.Text)
		}
	case CondOutputMatches:
		return checkOutputMatches(c.Pattern, output)
	case CondJSONField:
		return checkJSONField(output, c.Field, c.Value)
	case CondCommand:
		return checkCommand(ctx, c.Command, output, p)
	default:
		return fmt.Errorf("unknown condition %q", c.Kind)
	}
	return nil
}

func checkOutputMatches(pattern string, output []byte) error {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return fmt.Errorf("pattern %q does not compile: %w", pattern, err)
	}
	if !re.Match(output) {
		return fmt.Errorf("the output does not match /%s/", pattern)
	}
	return nil
}

func checkFile(ctx context.Context, c Condition, p Probe) error {
	if p == nil {
		return fmt.Errorf("file %s cannot be checked: %w", c.Path, errNoProbe)
	}
	exists, err := p.Exists(ctx, c.Path)
	switch {
	case err != nil:
		return fmt.Errorf("file %s cannot be checked: %w", c.Path, err)
	case c.Kind == CondFileExists && !exists:
		return fmt.Errorf("file %s does not exist", c.Path)
	case c.Kind == CondFileAbsent && exists:
		return fmt.Errorf("file %s exists, and must not", c.Path)
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
		var ok bool
		if v, ok = jsonMember(v, part); !ok {
			return fmt.Errorf("the output's JSON has no field %s", field)
		}
	}
	if got := jsonText(v); got != want {
		return fmt.Errorf("the output's JSON field %s is %q, not %q", field, wfClip(got, 80), want)
	}
	return nil
}

// jsonMember is the member part of decoded JSON v: an object's field, or
// an array's element when part is its index; false when v has none.
func jsonMember(v any, part string) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		next, ok := x[part]
		return next, ok
	case []any:
		i, err := strconv.Atoi(part)
		if err != nil || i < 0 || i >= len(x) {
			return nil, false
		}
		return x[i], true
	}
	return nil, false
}

// jsonText is decoded JSON v as a condition compares it: a string by its
// text, anything else by its JSON spelling.
func jsonText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func checkCommand(ctx context.Context, argv []string, output []byte, p Probe) error {
	if len(argv) == 0 || argv[0] == "" {
		return errors.New("the command condition names no program")
	}
	name := strings.Join(argv, " ")
	if p == nil {
		return fmt.Errorf("command `%s` could not run: %w", wfClip(name, 80), errNoProbe)
	}
	ctx, cancel := context.WithTimeout(ctx, conditionCommandTimeout)
	defer cancel()
	return commandVerdict(ctx, name, p.Command(ctx, argv, output))
}

// commandVerdict is what a command condition's run (res) says, for ctx,
// the context it ran in: nil when it exited 0; else why not, with the last
// line of its stderr.
func commandVerdict(ctx context.Context, name string, res CommandResult) error {
	switch {
	case res.Err == nil && res.ExitCode == 0:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("command `%s` did not finish within %s", wfClip(name, 80), conditionCommandTimeout)
	case res.Err == nil:
		msg := fmt.Sprintf("command `%s` exited %d", wfClip(name, 80), res.ExitCode)
		if tail := strings.TrimSpace(res.Stderr); tail != "" {
			msg += ": " + wfClip(lastLine(tail), 200)
		}
		return errors.New(msg)
	}
	return fmt.Errorf("command `%s` could not run: %w", wfClip(name, 80), res.Err)
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
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
		lang, body, after, ok := nextFence(rest)
		if !ok {
			return t
		}
		if lang == "" || strings.EqualFold(lang, "json") {
			return strings.TrimSpace(body)
		}
		rest = after
	}
}

// nextFence finds the first closed ``` fenced block of s: the language
// its opening line names, its body, and the text after it; false when s
// holds none.
func nextFence(s string) (lang, body, after string, ok bool) {
	i := strings.Index(s, "```")
	if i < 0 {
		return "", "", "", false
	}
	s = s[i+3:]
	nl := strings.IndexByte(s, '\n')
	if nl < 0 {
		return "", "", "", false
	}
	lang, rest := strings.TrimSpace(s[:nl]), s[nl+1:]
	end := strings.Index(rest, "```")
	if end < 0 {
		return "", "", "", false
	}
	return lang, rest[:end], rest[end+3:], true
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
