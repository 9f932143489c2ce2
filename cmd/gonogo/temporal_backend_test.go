package main

import "github.com/gonogo/gonogo/internal/temporalbackend"

// The Temporal backend stands in for engine.Service wherever run, resume
// and demo drive one: it has every method they call.
var _ backend = (*temporalbackend.Backend)(nil)
