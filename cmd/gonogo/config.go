package main

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/parse"
)

// config is gonogo's environment, read with go-envconfig. A command-line
// flag wins over its variable.
type config struct {
	DataDir      string        `env:"GONOGO_DATA_DIR, default=./gonogo-data"`
	SkillsDir    string        `env:"GONOGO_SKILLS_DIR"`
	WorkflowsDir string        `env:"GONOGO_WORKFLOWS_DIR, default=workflows"`
	Policy       string        `env:"GONOGO_POLICY"`
	Runner       string        `env:"GONOGO_RUNNER, default=claude"`
	RunnerCmd    string        `env:"GONOGO_RUNNER_CMD"`
	RunnerArgs   string        `env:"GONOGO_RUNNER_ARGS"`
	AgentEnv     string        `env:"GONOGO_AGENT_ENV"` // runner.ParsePassEnv
	StepTimeout  time.Duration `env:"GONOGO_STEP_TIMEOUT, default=30m"`
	MaxArtifact  byteSize      `env:"GONOGO_MAX_ARTIFACT, default=1MiB"`
	MaxPlanBytes byteSize      `env:"GONOGO_MAX_PLAN_BYTES, default=1MiB"`
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

func loadConfig(ctx context.Context, l envconfig.Lookuper) (config, error) {
	var c config
	if err := processEnv(ctx, &c, l); err != nil {
		return c, err
	}
	if c.StepTimeout <= 0 {
		return c, fmt.Errorf("configuration: GONOGO_STEP_TIMEOUT must be positive, got %s (for example GONOGO_STEP_TIMEOUT=30m)", c.StepTimeout)
	}
	if c.ProgressInterval <= 0 {
		return c, fmt.Errorf("configuration: GONOGO_PROGRESS_INTERVAL must be positive, got %s (for example GONOGO_PROGRESS_INTERVAL=30s)", c.ProgressInterval)
	}
	if c.RateLimitWait <= 0 {
		return c, fmt.Errorf("configuration: GONOGO_RATE_LIMIT_WAIT must be positive, got %s (for example GONOGO_RATE_LIMIT_WAIT=1m)", c.RateLimitWait)
	}
	if c.RateLimitTries < 0 {
		return c, fmt.Errorf("configuration: GONOGO_RATE_LIMIT_TRIES must not be negative, got %d (for example GONOGO_RATE_LIMIT_TRIES=5; 0 fails a rate-limited step at once)", c.RateLimitTries)
	}
	if c.MaxParallel < 0 {
		return c, fmt.Errorf("configuration: GONOGO_MAX_PARALLEL must not be negative, got %d (for example GONOGO_MAX_PARALLEL=4; unset, the number of CPUs)", c.MaxParallel)
	}
	if c.RunBudgetUSD < 0 || math.IsNaN(c.RunBudgetUSD) || math.IsInf(c.RunBudgetUSD, 0) {
		return c, fmt.Errorf("configuration: GONOGO_RUN_BUDGET_USD must be an amount of dollars, zero or more, got %g (for example GONOGO_RUN_BUDGET_USD=5.00)", c.RunBudgetUSD)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return c, fmt.Errorf("configuration: GONOGO_LOG_LEVEL=%q is not a log level (debug, info, warn or error); for example GONOGO_LOG_LEVEL=debug", c.LogLevel)
	}
	return c, nil
}

// processEnv reads the environment into target (a pointer to a struct
// with env tags) with go-envconfig, after checking every number, duration,
// flag and size that is set, so that a malformed one is refused naming the
// variable, what it holds and a good value, rather than in go-envconfig's
// words. A field's `example` tag gives the good value; else its default.
// rateLimit is how the service waits out an agent's rate limit.
func (c config) rateLimit() engine.RateLimit {
	if c.RateLimitTries == 0 {
		// The engine reads a zero RateLimit as its default: ask for no
		// wait with a wait and no tries.
		return engine.RateLimit{Wait: c.RateLimitWait}
	}
	return engine.RateLimit{Wait: c.RateLimitWait, Tries: c.RateLimitTries}
}

func processEnv(ctx context.Context, target any, l envconfig.Lookuper) error {
	t := reflect.TypeOf(target).Elem()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("env")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			continue
		}
		v, ok := l.Lookup(name)
		if !ok || v == "" {
			continue
		}
		if what := malformed(f.Type, v); what != "" {
			return fmt.Errorf("configuration: %s=%q is not %s; for example %s=%s", name, v, what, name, envExample(f, opts))
		}
	}
	if err := envconfig.ProcessWith(ctx, &envconfig.Config{Target: target, Lookuper: l}); err != nil {
		return fmt.Errorf("configuration: %s", envNames(t, err.Error()))
	}
	return nil
}

var (
	durationType = reflect.TypeOf(time.Duration(0))
	byteSizeType = reflect.TypeOf(byteSize(0))
)

// malformed says what v should be for a field of type t ("a duration with
// a unit"), or "" when v reads as one.
func malformed(t reflect.Type, v string) string {
	v = strings.TrimSpace(v)
	switch {
	case t == durationType:
		if _, err := time.ParseDuration(v); err != nil {
			return "a duration with a unit (s, m or h)"
		}
		return ""
	case t == byteSizeType:
		var b byteSize
		if b.UnmarshalText([]byte(v)) != nil {
			return "a size above zero (bytes, or a number with KiB, MiB, GiB, KB, MB or GB)"
		}
		return ""
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return "a whole number"
		}
	case reflect.Float64:
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return "a number written with a decimal point"
		}
	case reflect.Bool:
		if _, err := strconv.ParseBool(v); err != nil {
			return "true or false"
		}
	}
	return ""
}

// envExample is a good value for field f: its example tag, else its
// default, else one for its type.
func envExample(f reflect.StructField, opts string) string {
	if ex := f.Tag.Get("example"); ex != "" {
		return ex
	}
	for _, o := range strings.Split(opts, ",") {
		if d, ok := strings.CutPrefix(strings.TrimSpace(o), "default="); ok && d != "" {
			return d
		}
	}
	switch {
	case f.Type == durationType:
		return "30m"
	case f.Type == byteSizeType:
		return "1MiB"
	case f.Type.Kind() == reflect.Float64:
		return "5.00"
	case f.Type.Kind() == reflect.Bool:
		return "true"
	}
	return "4"
}

// envNames replaces the Go field names go-envconfig puts in its errors with
// the variables people actually set.
func envNames(t reflect.Type, msg string) string {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("env"), ",")
		msg = strings.ReplaceAll(msg, f.Name+":", name+":")
	}
	return msg
}

// skillsDir is the skills folder named by GONOGO_SKILLS_DIR, or "" when
// the skills are found as Claude Code finds them (see skillSources).
func (c config) skillsDir() string {
	return c.SkillsDir
}

// skillSources says where skills and leaf agents are read from (see
// parse.FindSkills): explicit, else as Claude Code finds them from home.
func (c config) skillSources(explicit string) parse.SkillSources {
	return parse.FindSkills(c.Home, explicit)
}

// loadSkills reads the installed skills (see parse.LoadInstalled); a
// skills folder that hides its skills one folder down is named with what
// to set instead, the flag or (when it came from there) the variable.
func (c config) loadSkills(explicit string) (*parse.Catalog, error) {
	return parse.LoadInstalled(c.Home, explicit, func(inner string) string {
		if explicit == c.SkillsDir {
			return "GONOGO_SKILLS_DIR=" + terminal.ShellWord(inner)
		}
		return "--skills " + terminal.ShellWord(inner)
	})
}

// byteSize is a size in bytes written as a number with an optional unit
// (B, KB, KiB, MB, MiB, GB, GiB).
type byteSize int64

func (b *byteSize) UnmarshalText(t []byte) error {
	s := strings.TrimSpace(string(t))
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return fmt.Errorf("%q is not a size (examples: 1048576, 512KiB, 1MiB)", string(t))
	}
	*b = byteSize(n * mult)
	return nil
}

// String writes the size in the largest binary unit that holds it exactly.
func (b *byteSize) String() string {
	n := int64(*b)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n > 0 && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

func (b *byteSize) Set(s string) error { return b.UnmarshalText([]byte(s)) }

// Type names the value in help: --max-plan-bytes size.
func (b *byteSize) Type() string { return "size" }
