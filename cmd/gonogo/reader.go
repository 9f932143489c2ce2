package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/localapi"
	"github.com/gonogo/gonogo/storage"
)

// runReader is what the read commands and decide need of the runs in a
// data directory: the store itself when this gonogo can open it, or the
// local API of the gonogo that holds it.
type runReader interface {
	List(ctx context.Context) ([]engine.RunSummary, error)
	Load(ctx context.Context, id engine.RunID) (*engine.Run, error)
	// RunWithJournal is a run and its journal up to the run's last event.
	RunWithJournal(ctx context.Context, id engine.RunID) (*engine.Run, []engine.Event, error)
	Artifact(ctx context.Context, id engine.RunID, step, attempt int) ([]byte, error)
	ArtifactSums(ctx context.Context, id engine.RunID) ([]storage.ArtifactSum, error)
	// ArtifactVersions is every version of an attempt's artifact, the
	// agent's original first, then each edit.
	ArtifactVersions(ctx context.Context, id engine.RunID, step, attempt int) ([][]byte, error)
	Close() error
}

// storeReader reads an open store.
type storeReader struct{ *storage.DB }

// lockProbe is how long a read command waits for the store's lock before
// it asks the gonogo holding it instead.
const lockProbe = 200 * time.Millisecond

// openReader opens the runs of a data directory for reading: the store
// when it is free, else through the local API of the gonogo holding it.
func openReader(ctx context.Context, e env, data string) (runReader, error) {
	switch c, ok, err := openCluster(ctx, e, data); {
	case err != nil:
		return nil, err
	case ok:
		return c, nil
	}
	// Reading creates nothing: a data directory without a store (a typo
	// in --data, or nothing run yet) has no runs.
	switch none, err := storage.Missing(data); {
	case err != nil:
		return nil, fmt.Errorf("open the store: %w", err)
	case none:
		return noStore{}, nil
	}
	db, err := openToRead(data, lockProbe)
	if err == nil {
		warnPendingFiles(e, db)
		return storeReader{db}, nil
	}
	if !errors.Is(err, engine.ErrLocked) {
		return nil, fmt.Errorf("open the store: %w", err)
	}
	return localapi.Dial(ctx, data)
}

// noStore is a data directory without a store: no runs, nothing decided.
type noStore struct{}

func (noStore) List(context.Context) ([]engine.RunSummary, error) { return nil, nil }
func (noStore) Load(context.Context, engine.RunID) (*engine.Run, error) {
	return nil, engine.ErrNotFound
}
func (noStore) RunWithJournal(context.Context, engine.RunID) (*engine.Run, []engine.Event, error) {
	return nil, nil, engine.ErrNotFound
}
func (noStore) Artifact(context.Context, engine.RunID, int, int) ([]byte, error) {
	return nil, engine.ErrNotFound
}
func (noStore) ArtifactSums(context.Context, engine.RunID) ([]storage.ArtifactSum, error) {
	return nil, engine.ErrNotFound
}
func (noStore) Decide(context.Context, engine.RunID, engine.Decision) (*engine.Run, bool, error) {
	return nil, false, engine.ErrNotFound
}
func (noStore) ArtifactVersions(context.Context, engine.RunID, int, int) ([][]byte, error) {
	return nil, engine.ErrNotFound
}
func (noStore) Close() error { return nil }

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
