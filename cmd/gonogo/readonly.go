package main

import (
	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/terminal"
)

// notRunning is the steps of r that a store read read-only records as
// running though no gonogo runs them (see terminal.NotRunning).
func notRunning(db runReader, r *engine.Run) []*engine.Step {
	if !readOnly(db) {
		return nil
	}
	return terminal.NotRunning(r)
}

// readOnly reports whether db is a store this user may only read.
func readOnly(db runReader) bool {
	sr, ok := db.(storeReader)
	return ok && sr.ReadOnly()
}
