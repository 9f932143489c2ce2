package runner

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// Probe answers a workflow step's file and command conditions on this
// machine (engine.Probe), relative to Dir ("" is the current directory).
// A command runs in the environment the command runner's executable gets
// (env.go), so a condition sees no more of gonogo's secrets than an agent
// does; PassEnv is GONOGO_AGENT_ENV.
type Probe struct {
	Dir     string
	PassEnv []string
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
	cmd.Env = ownEnviron("", p.PassEnv)
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
