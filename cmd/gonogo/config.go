package main

import (
	"context"

	"github.com/sethvargo/go-envconfig"

	"github.com/gonogo/gonogo/engine"
	settings "github.com/gonogo/gonogo/internal/config"
	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/parse"
)

// config is gonogo's environment (internal/config reads and checks it). A
// command-line flag wins over its variable.
type config struct{ settings.Config }

func loadConfig(ctx context.Context, l envconfig.Lookuper) (config, error) {
	c, err := settings.Load(ctx, l)
	return config{c}, err
}

// processEnv reads the environment into target, refusing a malformed
// value by its variable (see settings.Process).
func processEnv(ctx context.Context, target any, l envconfig.Lookuper) error {
	return settings.Process(ctx, target, l)
}

// rateLimit is how the service waits out an agent's rate limit
// (Config.RateLimit, by the name the worker's wiring calls it).
func (c config) rateLimit() engine.RateLimit { return c.RateLimit() }

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
