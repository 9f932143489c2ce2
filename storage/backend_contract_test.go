package storage

import (
	"context"
	"sync"
	"testing"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/engine/backendtest"
)

// engine.Service over the bbolt store keeps the backend contract: what
// the front ends call and read answers as on every backend, and its runs
// read the same from the store once the gonogo holding it has gone.
func TestBackendContract(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, parts backendtest.Parts) backendtest.Opened {
		dir := t.TempDir()
		db, err := Open(dir, Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		svc := engine.NewService(engine.ServiceConfig{Store: db, Catalog: parts.Catalog, Runner: parts.Runner,
			Notifier: parts.Notifier, MaxParallel: 2})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- svc.Run(ctx) }()
		// stop is the holding gonogo going away: its service stops, then
		// its store closes.
		stop := sync.OnceFunc(func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
			if err := db.Close(); err != nil {
				t.Error(err)
			}
		})
		t.Cleanup(stop)
		b := heldStore{Service: svc, db: db}
		return backendtest.Opened{
			Backend: b,
			// Another gonogo reaches the holder's service through its
			// local API (internal/localapi), which calls these methods.
			Other: func() backendtest.Backend { return b },
			Halt: func() backendtest.Reader {
				stop()
				return openStore(t, dir, Options{NoSync: true})
			},
		}
	})
}

// heldStore is the bbolt backend as a gonogo holding the store serves
// it: the service acts, and the store answers what the service does not
// read itself (a run's journal, its artifacts' versions), as gonogo show
// and export read them.
type heldStore struct {
	*engine.Service
	db *DB
}

func (h heldStore) Journal(ctx context.Context, id engine.RunID) ([]engine.Event, error) {
	return h.db.Journal(ctx, id)
}

func (h heldStore) ArtifactVersions(ctx context.Context, id engine.RunID, step, attempt int) ([][]byte, error) {
	return h.db.ArtifactVersions(ctx, id, step, attempt)
}
