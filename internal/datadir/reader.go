package datadir

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/localapi"
	"github.com/gonogo/gonogo/storage"
)

// Reader is what the read commands and decide need of the runs in a data
// directory: the store itself when this gonogo can open it (Store), the
// local API of the gonogo that holds it (*localapi.Client), or no store at
// all (NoStore).
type Reader interface {
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

// Store reads an open store.
type Store struct{ *storage.DB }

// LockProbe is how long a read command waits for the store's lock before
// it asks the gonogo holding it instead.
const LockProbe = 200 * time.Millisecond

// OpenReader opens the runs of data for reading: the store when it is
// free (a Store), else through the local API of the gonogo holding it.
func OpenReader(ctx context.Context, data string) (Reader, error) {
	// Reading creates nothing: a data directory without a store (a typo
	// in --data, or nothing run yet) has no runs.
	switch none, err := storage.Missing(data); {
	case err != nil:
		return nil, fmt.Errorf("open the store: %w", err)
	case none:
		return NoStore{}, nil
	}
	db, err := OpenToRead(data, LockProbe)
	if err == nil {
		return Store{db}, nil
	}
	if !errors.Is(err, engine.ErrLocked) {
		return nil, fmt.Errorf("open the store: %w", err)
	}
	return localapi.Dial(ctx, data)
}

// ReadOnly reports whether rd is a store this user may only read.
func ReadOnly(rd Reader) bool {
	s, ok := rd.(Store)
	return ok && s.ReadOnly()
}

// NoStore is a data directory without a store: no runs, nothing decided.
type NoStore struct{}

func (NoStore) List(context.Context) ([]engine.RunSummary, error) { return nil, nil }
func (NoStore) Load(context.Context, engine.RunID) (*engine.Run, error) {
	return nil, engine.ErrNotFound
}
func (NoStore) RunWithJournal(context.Context, engine.RunID) (*engine.Run, []engine.Event, error) {
	return nil, nil, engine.ErrNotFound
}
func (NoStore) Artifact(context.Context, engine.RunID, int, int) ([]byte, error) {
	return nil, engine.ErrNotFound
}
func (NoStore) ArtifactSums(context.Context, engine.RunID) ([]storage.ArtifactSum, error) {
	return nil, engine.ErrNotFound
}
func (NoStore) Decide(context.Context, engine.RunID, engine.Decision) (*engine.Run, bool, error) {
	return nil, false, engine.ErrNotFound
}
func (NoStore) ArtifactVersions(context.Context, engine.RunID, int, int) ([][]byte, error) {
	return nil, engine.ErrNotFound
}
func (NoStore) Close() error { return nil }
