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

// storeReader reads an open store; noStore is a data directory without
// one.
type (
	storeReader = datadir.Store
	noStore     = datadir.NoStore
)

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

// Pause records a pause in a store no gonogo holds.
func (s storeDecider) Pause(ctx context.Context, id engine.RunID, actor string) (*engine.Run, bool, error) {
	r, err := s.svc.Pause(ctx, id, actor)
	return r, false, err
}

// Unpause records a resume in a store no gonogo holds; the run goes on
// with gonogo resume.
func (s storeDecider) Unpause(ctx context.Context, id engine.RunID, actor string, m engine.Mode) (*engine.Run, bool, error) {
	r, err := s.svc.RecordUnpause(ctx, id, actor, m)
	return r, false, err
}
