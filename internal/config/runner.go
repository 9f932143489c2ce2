package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mattn/go-shellwords"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/runner"
)

// RunnerConfig is the agent runner's configuration for the executable cmd (the
// flag or GONOGO_RUNNER_CMD), recording agents in agentsDir: the step
// limits, the variables passed on request (GONOGO_AGENT_ENV), and
// GONOGO_RUNNER_ARGS split like a shell command line (quotes and
// backslashes, nothing expanded). A value that does not split, or that
// holds an unquoted ; & | < or > (which a shell would take as another
// command or a redirection), is refused naming the variable.
func (c Config) RunnerConfig(cmd, agentsDir string) (runner.Config, error) {
	rcfg := runner.Config{Cmd: cmd, Timeout: c.StepTimeout, MaxOutput: int64(c.MaxArtifact), AgentsDir: agentsDir}
	pass, err := runner.ParsePassEnv(c.AgentEnv)
	if err != nil {
		return rcfg, fmt.Errorf("configuration: GONOGO_AGENT_ENV=%q: %v; list variable names separated by commas, for example GONOGO_AGENT_ENV=GITHUB_TOKEN,AWS_*", c.AgentEnv, err)
	}
	rcfg.PassEnv = pass
	args, err := SplitArgs(c.RunnerArgs)
	if err != nil {
		return rcfg, fmt.Errorf("configuration: GONOGO_RUNNER_ARGS=%q %v; quote arguments as in a shell, for example GONOGO_RUNNER_ARGS='--model opus --append-system-prompt \"Be brief.\"'", c.RunnerArgs, err)
	}
	rcfg.Args = args
	return rcfg, nil
}

// SplitArgs splits s into arguments as a shell would, expanding nothing,
// and refuses an unquoted character a shell would act on.
func SplitArgs(s string) ([]string, error) {
	p := shellwords.NewParser()
	p.ParseEnv, p.ParseBacktick = false, false
	args, err := p.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("does not split into arguments (an unclosed quote, or a backslash at the end)")
	}
	if p.Position >= 0 && p.Position < len(s) {
		return nil, fmt.Errorf("holds %q unquoted, which gonogo does not pass to a shell", s[p.Position:p.Position+1])
	}
	return args, nil
}

// ShellQuote joins args into one line SplitArgs splits back into them:
// each in single quotes, a single quote inside ending the quoted part,
// escaped, and starting another.
func ShellQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// AgentMissing says why runner name cannot start its agent with the
// executable cmd (its executable is not found), in words that name the
// executable and how to point at another; nil when it can, or when the
// runner runs nothing.
func AgentMissing(name, cmd string) error {
	info, ok := runner.Lookup(name)
	if !ok {
		return nil // runner.New refuses it, with the valid names
	}
	_, err := info.Find(cmd)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, runner.ErrNoExecutable):
		return fmt.Errorf("the %s runner needs an executable: set --runner-cmd PATH or GONOGO_RUNNER_CMD", name)
	}
	exe := info.Executable(cmd)
	what, how := missingWhy(err, exe, cmd != "")
	return fmt.Errorf("the %s runner's agent %q is %s: %s, or choose another runner with --runner (%s), or --dry-run",
		name, exe, what, how, strings.Join(runner.Names(), ", "))
}

// AgentsMissing says why a run of p on runner name (its executable cmd)
// cannot start one of its agents: the run's own when a step may run on
// it, and each best-of runner but the run's own, which runs its default
// executable (runner.ByName). A run whose every step is a round on other
// runners needs no agent of its own installed.
func AgentsMissing(name, cmd string, p engine.Plan) error {
	if engine.RunsOn(p, name) {
		if err := AgentMissing(name, cmd); err != nil {
			return err
		}
	}
	seen := map[string]bool{name: true}
	for _, s := range p.Steps {
		for _, other := range s.Rules.BestOf {
			if seen[other] {
				continue
			}
			seen[other] = true
			if err := AgentMissing(other, ""); err != nil {
				return fmt.Errorf("best-of: %w", err)
			}
		}
	}
	return nil
}

// missingWhy is what is wrong with the agent exe that info.Find refused
// with err, and how to fix it; given says --runner-cmd or its variable
// named it.
func missingWhy(err error, exe string, given bool) (what, how string) {
	how = "install it, or point at the executable with --runner-cmd PATH (GONOGO_RUNNER_CMD)"
	if given {
		how = "fix --runner-cmd / GONOGO_RUNNER_CMD"
	}
	switch {
	case errors.Is(err, runner.ErrNotExecutable):
		// It is there: say what is wrong with it, not that it is missing.
		if fi, serr := os.Stat(exe); serr == nil && fi.IsDir() && strings.ContainsRune(exe, filepath.Separator) {
			return "a folder, not an executable", "point --runner-cmd / GONOGO_RUNNER_CMD at the executable in it"
		}
		return "not executable", "make it executable (chmod +x), " + how
	case strings.ContainsRune(exe, filepath.Separator):
		return "not there", how
	}
	return "not on PATH", how
}
