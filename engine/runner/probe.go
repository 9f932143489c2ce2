package runner

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// Probe answers a workflow step's file and command conditions on this
// machine (engine.Probe), relative to Dir ("" is the current directory).
// A command runs in the environment an agent gets, so a condition sees no
// more of gonogo's secrets than an agent does.
type Probe struct {
	Dir string
}

var _ engine.Probe = Probe{}

// Exists reports whether path, under Dir, exists.
func (p Probe) Exists(_ context.Context, path string) (bool, error) {
	_, err := os.Stat(filepath.Join(p.Dir, filepath.FromSlash(path)))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	}
	return false, err
}

// Command runs argv in Dir with stdin and reports how it ended. ctx
// bounds it (the engine gives a condition a minute); output it leaves
// open is not waited for past a few seconds.
func (p Probe) Command(ctx context.Context, argv []string, stdin []byte) engine.CommandResult {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = p.Dir
	cmd.Env = agentEnviron()
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return engine.CommandResult{ExitCode: exit.ExitCode(), Stderr: stderr.String()}
	}
	return engine.CommandResult{Err: err, Stderr: stderr.String()}
}

// isSecretEnv reports whether an environment variable of gonogo's own is
// a secret that nothing gonogo starts (an agent, a command condition) may
// see: an agent that can run shell commands could otherwise read the bot's
// Slack tokens.
func isSecretEnv(name string) bool {
	return name == "SLACK_APP_TOKEN" || name == "SLACK_BOT_TOKEN"
}

// agentEnviron is gonogo's environment without its secrets: what every
// process gonogo starts for an agent or a condition begins from.
func agentEnviron() []string {
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !isSecretEnv(k) {
			env = append(env, kv)
		}
	}
	return env
}
