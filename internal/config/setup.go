package config

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/runner"
)

// Setup is the setup recorded with the runs a gonogo starts with runner
// name, the executable cmd and the skills folder skills ("": as Claude
// Code finds them): how it carries out their steps, with paths made
// absolute so that a resume from another directory finds the same agent,
// skills and files.
func (c Config) Setup(name, cmd, skills string) *engine.Setup {
	s := &engine.Setup{Runner: name, RunnerCmd: AbsCmd(cmd), Workflows: AbsPath(c.WorkflowsDir),
		Policy: AbsPath(c.Policy)}
	// RunnerConfig has refused arguments that do not split.
	s.RunnerArgs, _ = SplitArgs(c.RunnerArgs)
	for _, dir := range c.SkillSources(skills).Dirs {
		s.Skills = append(s.Skills, AbsPath(dir))
	}
	return s
}

// Overrides are the flags given to gonogo resume that replace what a run
// recorded: a field counts only when its flag was given.
type Overrides struct {
	Runner, RunnerCmd, Skills                string
	RunnerGiven, RunnerCmdGiven, SkillsGiven bool
}

// Resume is the setup run r (recorded with one) goes on with: as recorded,
// except where o says otherwise. Another runner takes its executable from
// o; naming a runner, even the same one, takes GONOGO_RUNNER_ARGS from c
// again.
func (c Config) Resume(r *engine.Run, o Overrides) (engine.Setup, error) {
	s := *r.Setup.Clone()
	if o.RunnerGiven {
		if o.Runner != s.Runner {
			s.Runner, s.RunnerCmd = o.Runner, AbsCmd(o.RunnerCmd)
		}
		args, err := SplitArgs(c.RunnerArgs)
		if err != nil {
			return s, fmt.Errorf("configuration: GONOGO_RUNNER_ARGS=%q %v", c.RunnerArgs, err)
		}
		s.RunnerArgs = args
	}
	if o.RunnerCmdGiven {
		s.RunnerCmd = AbsCmd(o.RunnerCmd)
	}
	if o.SkillsGiven {
		s.Skills = []string{AbsPath(o.Skills)}
	}
	return s, nil
}

// Apply makes c the configuration setup s says: its workflows folder,
// policy and runner arguments.
func (c *Config) Apply(s engine.Setup) {
	c.WorkflowsDir, c.Policy, c.RunnerArgs = s.Workflows, s.Policy, ShellQuote(s.RunnerArgs)
}

// WorkflowsGone reports whether run r has a route step, which may go on
// with a named workflow, and the workflows folder s records is not there.
func WorkflowsGone(r *engine.Run, s engine.Setup) bool {
	if s.Workflows == "" || !routes(r) {
		return false
	}
	fi, err := os.Stat(s.Workflows)
	return err != nil || !fi.IsDir()
}

func routes(r *engine.Run) bool {
	for i := range r.Steps {
		if r.Steps[i].Rules.Route {
			return true
		}
	}
	return false
}

// AbsCmd makes an executable's path absolute; a bare name (found on PATH,
// like claude) stays as it is, as does "".
func AbsCmd(p string) string {
	if !strings.ContainsRune(p, '/') && !strings.ContainsRune(p, filepath.Separator) {
		return p
	}
	return AbsPath(p)
}

// AbsPath makes a path absolute; "" stays "".
func AbsPath(p string) string {
	if p == "" {
		return p
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// Actor names the person deciding in a terminal: GONOGO_ACTOR, else the
// login name, else the machine.
func Actor(getenv func(string) string) string {
	for _, k := range []string{"GONOGO_ACTOR", "USER", "LOGNAME"} {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			return v
		}
	}
	if h, err := os.Hostname(); err == nil {
		return "terminal@" + h
	}
	return "terminal"
}

// CheckSetup refuses the setup s of run id when what it needs is gone:
// its agent, a skills folder or its policy file, naming the flag that
// points at a replacement.
func CheckSetup(id engine.RunID, s engine.Setup) error {
	if err := checkAgent(id, s); err != nil {
		return err
	}
	for _, dir := range s.Skills {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return fmt.Errorf("the skills folder %s that run %s was started with is gone: point at a replacement with --skills DIR", dir, id)
		}
	}
	if s.Policy != "" {
		if _, err := os.Stat(s.Policy); err != nil {
			return fmt.Errorf("the policy file %s that run %s was started with is gone (%v): put it back to go on", s.Policy, id, innermost(err))
		}
	}
	return nil
}

// checkAgent refuses a setup whose runner runs an agent that is not
// recorded or not there.
func checkAgent(id engine.RunID, s engine.Setup) error {
	info, _ := runner.Lookup(s.Runner)
	if !info.RunsAgent {
		return nil
	}
	cmd := info.Executable(s.RunnerCmd)
	if cmd == "" {
		return fmt.Errorf("run %s runs its steps with the command runner and no agent is recorded: name one with --runner-cmd PATH", id)
	}
	if _, err := exec.LookPath(cmd); err != nil {
		return fmt.Errorf("the agent %s that run %s was started with is gone (%v): point at a replacement with --runner-cmd PATH, or choose another runner with --runner", cmd, id, innermost(err))
	}
	return nil
}

// innermost is what err wraps at its root ("no such file or directory"),
// the words a person can act on, as localapi.RootCause gives them (this
// package does not import the local API and the store it brings).
func innermost(err error) error {
	for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(err) {
		err = u
	}
	return err
}
