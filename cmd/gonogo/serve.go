package main

import (
	"context"
	"fmt"
)

// cmdServe is the Slack bot. This version of gonogo has no Slack front end
// yet; the terminal (gonogo run) drives the same engine.
func cmdServe(_ context.Context, e env, _ config, _ []string) int {
	fmt.Fprintln(e.stderr, "gonogo serve: the Slack bot is not part of this version yet; use gonogo run in a terminal")
	return exitUsage
}
