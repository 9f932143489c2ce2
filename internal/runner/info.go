package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// Info is what gonogo knows about a runner without running a step: the
// executable it runs when none is configured and how to ask that
// executable its version.
type Info struct {
	Name string
	// DefaultCmd is the executable run when GONOGO_RUNNER_CMD is not set;
	// "" when the runner needs one given (command) or runs none (dry-run).
	DefaultCmd string
	// RunsAgent is false for a runner that starts no process.
	RunsAgent bool
	// VersionArgs ask the executable its version; nil when it is not asked
	// (the command runner's executable is anything at all, and may take
	// any argument as work to do).
	VersionArgs []string
	// login asks the agent CLI whether it is logged in (CheckLogin); nil
	// when it cannot say without a call to its service.
	login *loginCheck
}

// infos are the runners gonogo knows, in the order help text shows them.
var infos = []Info{
	{Name: "claude", DefaultCmd: DefaultClaudeCmd, RunsAgent: true, VersionArgs: []string{"--version"}, login: claudeLogin},
	{Name: "codex", DefaultCmd: DefaultCodexCmd, RunsAgent: true, VersionArgs: []string{"--version"}, login: codexLogin},
	{Name: "gemini", DefaultCmd: DefaultGeminiCmd, RunsAgent: true, VersionArgs: []string{"--version"}},
	{Name: "command", RunsAgent: true},
	{Name: "dry-run"},
}

// Infos returns what gonogo knows about every runner.
func Infos() []Info {
	out := make([]Info, len(infos))
	copy(out, infos)
	return out
}

// Lookup returns what gonogo knows about the runner called name.
func Lookup(name string) (Info, bool) {
	for _, i := range infos {
		if i.Name == name {
			return i, true
		}
	}
	return Info{}, false
}

// Executable is the executable the runner runs when cmd is configured
// (GONOGO_RUNNER_CMD, --runner-cmd); "" when there is none.
func (i Info) Executable(cmd string) string {
	if strings.TrimSpace(cmd) != "" {
		return cmd
	}
	return i.DefaultCmd
}

// ErrNoExecutable is returned by Find for a runner that needs an
// executable and was given none.
var ErrNoExecutable = errors.New("no agent executable given")

// Find resolves the executable the runner would run with cmd configured,
// as starting it would: a name without a slash is looked up in PATH. It
// returns "" and no error for a runner that runs nothing. A missing
// executable is an error wrapping ErrCommandNotFound.
func (i Info) Find(cmd string) (string, error) {
	if !i.RunsAgent {
		return "", nil
	}
	exe := i.Executable(cmd)
	if exe == "" {
		return "", fmt.Errorf("runner %s: %w", i.Name, ErrNoExecutable)
	}
	path, err := exec.LookPath(exe)
	if err != nil {
		return "", startError(exe, err)
	}
	return path, nil
}

// VersionTimeout bounds how long Version waits for an answer.
const VersionTimeout = 5 * time.Second

// Version asks the executable at path its version with args and returns
// the first line of what it printed. It never waits past timeout: an
// executable that does not answer is killed, with its process group. An
// error says why it did not start or answer.
func Version(ctx context.Context, path string, args []string, timeout time.Duration) (string, error) {
	out, x := ask(ctx, "", path, args, timeout)
	o := x.outcome(path)
	text := strings.TrimSpace(out)
	if o.Err == nil && o.ExitCode != 0 {
		o.Err = fmt.Errorf("exit status %d%s", o.ExitCode, lastLine(x.stderr))
	}
	if o.Err != nil {
		return "", o.Err
	}
	if text == "" {
		// Some tools print their version on stderr.
		text = strings.TrimSpace(x.stderr)
	}
	line, _, _ := strings.Cut(text, "\n")
	return strings.TrimSpace(line), nil
}

// ask runs the executable at path with args, in the environment runner's
// agent gets ("" for none's) and never past timeout, for a short answer: what it printed on
// stdout (at most 64 KiB) and how it ended.
func ask(ctx context.Context, runner, path string, args []string, timeout time.Duration) (string, exit) {
	var out []byte
	x := runProcess(ctx, spec{
		cmd:     path,
		args:    args,
		env:     ownEnviron(runner, nil),
		timeout: timeout,
		grace:   100 * time.Millisecond,
	}, func(r io.Reader) error {
		var err error
		out, err = readCapped(r, 64<<10)
		return err
	})
	return string(out), x
}
