package main

import (
	"context"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/datadir"
	"github.com/gonogo/gonogo/internal/terminal"
)

// runReader is what the read commands and decide need of the runs in a
// data directory or on a cluster.
type runReader = datadir.Reader

// storeReader reads an open store.
type storeReader = datadir.Store

// openReader opens the runs for reading: the cluster's when
// GONOGO_TEMPORAL_ADDR names one, else the data directory's (see
// datadir.OpenReader).
func openReader(ctx context.Context, e env, data string) (runReader, error) {
	switch c, ok, err := openCluster(ctx, e, data); {
	case err != nil:
		return nil, err
	case ok:
		return c, nil
	}
	rd, err := datadir.OpenReader(ctx, data)
	if s, ok := rd.(storeReader); ok {
		warnPendingFiles(e, s.DB)
	}
	return rd, err
}

// notRunning is the steps of r that a store read read-only records as
// running though no gonogo runs them (see terminal.NotRunning).
func notRunning(db runReader, r *engine.Run) []*engine.Step {
	if !datadir.ReadOnly(db) {
		return nil
	}
	return terminal.NotRunning(r)
}
