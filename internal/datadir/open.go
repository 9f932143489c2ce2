package datadir

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/localapi"
	"github.com/gonogo/gonogo/storage"
)

// Open opens the store in data to write, which takes the data directory's
// lock and marks the steps a dead gonogo left running as interrupted, then
// stops the agents that gonogo left running, before any step can be
// redone. It refuses a data directory other users may write (Check). When
// another gonogo holds the lock, the error is a *HeldError naming it if it
// answers on its local API.
func Open(ctx context.Context, data string) (*storage.DB, error) {
	if err := Check(data); err != nil {
		return nil, err
	}
	db, err := storage.Open(data, storage.Options{})
	if errors.Is(err, engine.ErrLocked) {
		if c, cerr := localapi.Dial(ctx, data); cerr == nil {
			c.Close()
			return nil, &HeldError{Data: data, Holder: c.Describe()}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("open the store: %w", err)
	}
	ReapAgents(data, slog.Default())
	return db, nil
}

// HeldError is a data directory another gonogo holds, named by what its
// local API says of itself (its command and pid).
type HeldError struct{ Data, Holder string }

func (h *HeldError) Error() string {
	return fmt.Sprintf("%s holds %s and carries out its runs: wait for it to end or stop it, or use another --data directory", h.Holder, h.Data)
}

func (h *HeldError) Unwrap() error { return engine.ErrLocked }

// OpenToRead opens the store in data for a command that reads it, waiting
// up to wait for its lock: for writing when this user may write it,
// brought up to date as every open does (and the agents a dead gonogo left
// stopped), which only a data directory of theirs alone may be; read-only,
// writing nothing, when they may only read it (another user's store, a
// read-only mount).
func OpenToRead(data string, wait time.Duration) (*storage.DB, error) {
	if storage.Writable(data) {
		if err := Check(data); err != nil {
			return nil, err
		}
	}
	db, err := storage.OpenToRead(data, storage.Options{LockTimeout: wait})
	if err != nil {
		return nil, err
	}
	if !db.ReadOnly() {
		ReapAgents(data, slog.Default())
	}
	return db, nil
}

// Peek reads run id from the store in data, opened to write as Open opens
// it (a store another gonogo holds is its *HeldError), before a command
// starts anything; a run that is not there is nil, for the command to
// report.
func Peek(ctx context.Context, data string, id engine.RunID) (*engine.Run, error) {
	db, err := Open(ctx, data)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	r, err := db.Load(ctx, id)
	if err != nil {
		return nil, nil
	}
	return r, nil
}
