package main

import (
	"context"

	"github.com/sethvargo/go-envconfig"

	"github.com/gonogo/gonogo/engine"
	settings "github.com/gonogo/gonogo/internal/config"
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
