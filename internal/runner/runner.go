package runner

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// Defaults for the zero values of Config.
const (
	DefaultTimeout   = 30 * time.Minute
	DefaultMaxOutput = 1 << 20
	DefaultKillGrace = time.Second
	DefaultClaudeCmd = "claude"
	DefaultCodexCmd  = "codex"
	DefaultGeminiCmd = "gemini"
)

// stderrKeep is how much of the end of an agent's stderr an Outcome carries.
const stderrKeep = 4 << 10

// Sentinel errors an Outcome.Err wraps; compare with errors.Is. A timeout
// also matches context.DeadlineExceeded and a cancellation context.Canceled.
var (
	ErrTimeout         = errors.New("timed out")
	ErrCancelled       = errors.New("cancelled")
	ErrOutputTooLarge  = errors.New("output too large")
	ErrCommandNotFound = errors.New("agent executable not found")
	// ErrNotExecutable is an agent executable that is there but may not
	// be run (no execute permission, or a folder).
	ErrNotExecutable = errors.New("agent executable not executable")
)

// Config configures a runner. The zero value of every field is usable.
type Config struct {
	Cmd       string        // executable (GONOGO_RUNNER_CMD); for claude "" means "claude"
	Args      []string      // extra arguments, appended after the runner's own
	Timeout   time.Duration // per-step limit (GONOGO_STEP_TIMEOUT); 0 means 30m
	MaxOutput int64         // cap on stdout (GONOGO_MAX_ARTIFACT); 0 means 1 MiB
	Dir       string        // working directory; "" means gonogo's own
	Env       []string      // extra environment (KEY=VALUE), added to what the agent gets of gonogo's (env.go)
	// PassEnv names the variables of gonogo's environment the agent gets
	// even when the rule in env.go withholds them (GONOGO_AGENT_ENV): a
	// name, or a prefix ending in '*'.
	PassEnv []string
	// KillGrace is how long the agent's process group has between SIGTERM
	// and SIGKILL when gonogo stops it (timeout, cancel, output cap); 0
	// means 1s.
	KillGrace time.Duration
	// AgentsDir is where each running agent's process group is recorded
	// (<data>/agents), so that the next gonogo on the data directory can
	// stop what a gonogo that died left running (ReapAgents); "" keeps no
	// records.
	AgentsDir string
}

// Names returns the runner names New accepts, in the order help text
// shows them: those of the runner table (see Infos).
func Names() []string {
	out := make([]string, 0, len(infos))
	for _, i := range infos {
		out = append(out, i.Name)
	}
	return out
}

// New returns the runner called name (one of Names) configured by cfg. It refuses an unknown name, a negative limit, and the
// command runner without an executable.
func New(name string, cfg Config) (engine.Runner, error) {
	if err := cfg.checkLimits(name); err != nil {
		return nil, err
	}
	switch name {
	case "claude":
		return NewClaude(cfg), nil
	case "codex":
		return NewCodex(cfg), nil
	case "gemini":
		return NewGemini(cfg), nil
	case "command":
		if strings.TrimSpace(cfg.Cmd) == "" {
			return nil, errors.New("runner command: no executable given; set GONOGO_RUNNER_CMD or --runner-cmd")
		}
		return NewCommand(cfg), nil
	case "dry-run":
		return DryRun{}, nil
	}
	return nil, fmt.Errorf("unknown runner %q (valid: %s)", name, strings.Join(Names(), ", "))
}

// checkLimits refuses a negative limit; zero is the default.
func (c Config) checkLimits(name string) error {
	if c.Timeout < 0 {
		return fmt.Errorf("runner %s: step timeout %s is negative", name, c.Timeout)
	}
	if c.MaxOutput < 0 {
		return fmt.Errorf("runner %s: output cap %d is negative", name, c.MaxOutput)
	}
	if c.KillGrace < 0 {
		return fmt.Errorf("runner %s: kill grace %s is negative", name, c.KillGrace)
	}
	return nil
}

// DryRun runs nothing: every attempt comes back NotRun.
type DryRun struct{}

// Run implements engine.Runner.
func (DryRun) Run(context.Context, engine.Job, func(engine.Progress)) engine.Outcome {
	return engine.Outcome{NotRun: true}
}

func (c Config) timeout() time.Duration {
	if c.Timeout <= 0 {
		return DefaultTimeout
	}
	return c.Timeout
}

// stepTimeout is the limit of one attempt: the step's own (a workflow's
// timeout:) when it has one, else the runner's.
func (c Config) stepTimeout(job engine.Job) time.Duration {
	if job.Timeout > 0 {
		return job.Timeout
	}
	return c.timeout()
}

func (c Config) maxOutput() int64 {
	if c.MaxOutput <= 0 {
		return DefaultMaxOutput
	}
	return c.MaxOutput
}

func (c Config) killGrace() time.Duration {
	if c.KillGrace <= 0 {
		return DefaultKillGrace
	}
	return c.KillGrace
}

// environ is the environment of the agent of runner ("" for the command
// runner's executable): what env.go's rule passes of gonogo's own, then
// cfg.Env, then the job's GONOGO_* variables (GONOGO_SKILL_DIR when the job
// knows its skill's folder), later entries winning.
func environ(runner string, cfg Config, job engine.Job) []string {
	env := append(ownEnviron(runner, cfg.PassEnv), cfg.Env...)
	env = append(env,
		"GONOGO_RUN_ID="+string(job.Run),
		"GONOGO_STEP="+strconv.Itoa(job.Step),
		"GONOGO_ATTEMPT="+strconv.Itoa(job.Attempt),
		"GONOGO_SKILL="+job.Skill,
	)
	if job.SkillDir != "" {
		env = append(env, "GONOGO_SKILL_DIR="+job.SkillDir)
	}
	return append(env, optionEnv(job.Options)...)
}

// optionEnv passes a workflow step's runner options to the agent as
// GONOGO_OPT_<NAME> (upper case, '-' as '_'), in name order.
func optionEnv(opts map[string]string) []string {
	names := make([]string, 0, len(opts))
	for k := range opts {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]string, 0, len(names))
	for _, k := range names {
		out = append(out, "GONOGO_OPT_"+strings.ToUpper(strings.ReplaceAll(k, "-", "_"))+"="+opts[k])
	}
	return out
}

// sizeText renders a byte count for messages.
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// optionArgs turns a workflow step's runner options into the agent's own
// flags, in name order, through flags (option name to flag). An option the
// runner has no flag for fails the attempt rather than being dropped
// unseen.
func optionArgs(runner string, flags map[string]string, opts map[string]string) ([]string, error) {
	names := make([]string, 0, len(opts))
	for k := range opts {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []string
	for _, k := range names {
		flag, ok := flags[k]
		if !ok {
			known := make([]string, 0, len(flags))
			for n := range flags {
				known = append(known, n)
			}
			sort.Strings(known)
			return nil, fmt.Errorf("runner option %q is not one the %s runner knows (%s)", k, runner, strings.Join(known, ", "))
		}
		out = append(out, flag, opts[k])
	}
	return out, nil
}
