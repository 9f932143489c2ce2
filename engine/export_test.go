package engine

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// MemStore is the engine tests' in-memory store, exported to this
// package's external tests so that engine/storetest checks it against the
// Store contract (store_contract_test.go); storetest imports engine, so
// the engine's internal tests cannot run it themselves.
type MemStore = memStore

// NewMemStore returns an empty in-memory store.
func NewMemStore() *MemStore { return newMemStore() }

// Restart is what reopening a store does after gonogo stopped.
func (m *memStore) Restart() error { return m.restart(time.Now()) }

// Journal returns a run's events in seq order.
func (m *memStore) Journal(_ context.Context, id RunID) ([]Event, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.runs[id] == nil {
		return nil, fmt.Errorf("run %s: %w", id, ErrNotFound)
	}
	return slices.Clone(m.journals[id]), nil
}

// Versions returns every version of an attempt's artifact, oldest first.
func (m *memStore) Versions(_ context.Context, id RunID, step, attempt int) ([][]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	vs := m.arts[artKey{id, step, attempt}]
	if len(vs) == 0 {
		return nil, fmt.Errorf("artifact of run %s step %d attempt %d: %w", id, step, attempt, ErrNotFound)
	}
	out := make([][]byte, len(vs))
	for i, v := range vs {
		out[i] = slices.Clone(v)
	}
	return out, nil
}
