package main

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/sethvargo/go-envconfig"
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
	StepTimeout  time.Duration `env:"GONOGO_STEP_TIMEOUT, default=30m"`
	MaxArtifact  byteSize      `env:"GONOGO_MAX_ARTIFACT, default=1MiB"`
	MaxPlanBytes byteSize      `env:"GONOGO_MAX_PLAN_BYTES, default=1MiB"`
	MaxParallel  int           `env:"GONOGO_MAX_PARALLEL"`
	RunBudgetUSD float64       `env:"GONOGO_RUN_BUDGET_USD"`
	LogLevel     string        `env:"GONOGO_LOG_LEVEL, default=info"`
}

func loadConfig(ctx context.Context, l envconfig.Lookuper) (config, error) {
	var c config
	if err := envconfig.ProcessWith(ctx, &envconfig.Config{Target: &c, Lookuper: l}); err != nil {
		return c, fmt.Errorf("configuration: %s", envNames(err.Error()))
	}
	if c.StepTimeout <= 0 {
		return c, fmt.Errorf("configuration: GONOGO_STEP_TIMEOUT must be positive, got %s", c.StepTimeout)
	}
	if c.MaxParallel < 0 {
		return c, fmt.Errorf("configuration: GONOGO_MAX_PARALLEL must not be negative, got %d", c.MaxParallel)
	}
	if c.RunBudgetUSD < 0 {
		return c, fmt.Errorf("configuration: GONOGO_RUN_BUDGET_USD must not be negative")
	}
	return c, nil
}

// envNames replaces the Go field names go-envconfig puts in its errors with
// the variables people actually set.
func envNames(msg string) string {
	t := reflect.TypeOf(config{})
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("env"), ",")
		msg = strings.ReplaceAll(msg, f.Name+":", name+":")
	}
	return msg
}

// skillsDir is the skills directory: the flag, GONOGO_SKILLS_DIR, or
// .claude/skills when it exists, else skills.
func (c config) skillsDir() string {
	if c.SkillsDir != "" {
		return c.SkillsDir
	}
	if fi, err := os.Stat(".claude/skills"); err == nil && fi.IsDir() {
		return ".claude/skills"
	}
	return "skills"
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
