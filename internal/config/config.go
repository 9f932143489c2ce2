package config

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/parse"
)

// Config is gonogo's environment, read with go-envconfig. A command-line
// flag wins over its variable.
type Config struct {
	DataDir      string        `env:"GONOGO_DATA_DIR, default=./gonogo-data"`
	SkillsDir    string        `env:"GONOGO_SKILLS_DIR"`
	WorkflowsDir string        `env:"GONOGO_WORKFLOWS_DIR, default=workflows"`
	Policy       string        `env:"GONOGO_POLICY"`
	Runner       string        `env:"GONOGO_RUNNER, default=claude"`
	RunnerCmd    string        `env:"GONOGO_RUNNER_CMD"`
	RunnerArgs   string        `env:"GONOGO_RUNNER_ARGS"`
	AgentEnv     string        `env:"GONOGO_AGENT_ENV"` // runner.ParsePassEnv
	StepTimeout  time.Duration `env:"GONOGO_STEP_TIMEOUT, default=30m"`
	MaxArtifact  ByteSize      `env:"GONOGO_MAX_ARTIFACT, default=1MiB"`
	MaxPlanBytes ByteSize      `env:"GONOGO_MAX_PLAN_BYTES, default=1MiB"`
	MaxParallel  int           `env:"GONOGO_MAX_PARALLEL" example:"4"`
	RunBudgetUSD float64       `env:"GONOGO_RUN_BUDGET_USD" example:"5.00"`
	LogLevel     string        `env:"GONOGO_LOG_LEVEL, default=info"`
	// RateLimitWait is the first wait after an agent's rate limit or
	// overload (each next one doubles); RateLimitTries how many times
	// gonogo redoes the step by itself before it fails.
	RateLimitWait  time.Duration `env:"GONOGO_RATE_LIMIT_WAIT, default=1m"`
	RateLimitTries int           `env:"GONOGO_RATE_LIMIT_TRIES, default=5"`
	// ProgressInterval is how often a running step is reported when
	// stdout is not a terminal.
	ProgressInterval time.Duration `env:"GONOGO_PROGRESS_INTERVAL, default=30s"`
	// Home is the user's home directory, for Claude Code's personal
	// folders (~/.claude/skills, ~/.claude/agents); unset, there are none.
	Home string `env:"HOME"`
}

// Load reads the environment l gives and checks what go-envconfig cannot:
// durations that must be positive, counts and amounts that must not be
// negative, a log level slog knows. Every refusal starts "configuration:"
// and names the variable with a good value.
func Load(ctx context.Context, l envconfig.Lookuper) (Config, error) {
	var c Config
	if err := Process(ctx, &c, l); err != nil {
		return c, err
	}
	return c, c.check()
}

// check refuses the first value out of range, in the order of the fields.
func (c Config) check() error {
	for _, p := range []struct {
		bad bool
		msg string
	}{
		{c.StepTimeout <= 0, fmt.Sprintf("GONOGO_STEP_TIMEOUT must be positive, got %s (for example GONOGO_STEP_TIMEOUT=30m)", c.StepTimeout)},
		{c.ProgressInterval <= 0, fmt.Sprintf("GONOGO_PROGRESS_INTERVAL must be positive, got %s (for example GONOGO_PROGRESS_INTERVAL=30s)", c.ProgressInterval)},
		{c.RateLimitWait <= 0, fmt.Sprintf("GONOGO_RATE_LIMIT_WAIT must be positive, got %s (for example GONOGO_RATE_LIMIT_WAIT=1m)", c.RateLimitWait)},
		{c.RateLimitTries < 0, fmt.Sprintf("GONOGO_RATE_LIMIT_TRIES must not be negative, got %d (for example GONOGO_RATE_LIMIT_TRIES=5; 0 fails a rate-limited step at once)", c.RateLimitTries)},
		{c.MaxParallel < 0, fmt.Sprintf("GONOGO_MAX_PARALLEL must not be negative, got %d (for example GONOGO_MAX_PARALLEL=4; unset, the number of CPUs)", c.MaxParallel)},
		{c.RunBudgetUSD < 0 || math.IsNaN(c.RunBudgetUSD) || math.IsInf(c.RunBudgetUSD, 0), fmt.Sprintf("GONOGO_RUN_BUDGET_USD must be an amount of dollars, zero or more, got %g (for example GONOGO_RUN_BUDGET_USD=5.00)", c.RunBudgetUSD)},
		{!validLevel(c.LogLevel), fmt.Sprintf("GONOGO_LOG_LEVEL=%q is not a log level (debug, info, warn or error); for example GONOGO_LOG_LEVEL=debug", c.LogLevel)},
	} {
		if p.bad {
			return errors.New("configuration: " + p.msg)
		}
	}
	return nil
}

func validLevel(s string) bool {
	var level slog.Level
	return level.UnmarshalText([]byte(s)) == nil
}

// Level is the log level GONOGO_LOG_LEVEL names; info when it names none
// (Load has refused that already).
func (c Config) Level() slog.Level {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return slog.LevelInfo
	}
	return level
}

// RateLimit is how the service waits out an agent's rate limit.
func (c Config) RateLimit() engine.RateLimit {
	if c.RateLimitTries == 0 {
		// The engine reads a zero RateLimit as its default: ask for no
		// wait with a wait and no tries.
		return engine.RateLimit{Wait: c.RateLimitWait}
	}
	return engine.RateLimit{Wait: c.RateLimitWait, Tries: c.RateLimitTries}
}

// SkillSources says where skills and leaf agents are read from (see
// parse.FindSkills): explicit, else as Claude Code finds them from home.
func (c Config) SkillSources(explicit string) parse.SkillSources {
	return parse.FindSkills(c.Home, explicit)
}
