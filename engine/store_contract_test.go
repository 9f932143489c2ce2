package engine_test

import (
	"testing"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/engine/storetest"
)

// The in-memory store the engine's tests run the service on keeps the
// Store contract, so what they show holds on bbolt too. It has no data
// directory: the cases about files are skipped.
func TestMemStoreKeepsTheStoreContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) func() storetest.Opened {
		m := engine.NewMemStore()
		opened := false
		return func() storetest.Opened {
			if opened {
				// Reopening an in-memory store is its recovery; what it
				// holds stays.
				if err := m.Restart(); err != nil {
					t.Fatalf("reopen: %v", err)
				}
			}
			opened = true
			return storetest.Opened{Store: m, Close: func() error { return nil }, Journal: m.Journal, Versions: m.Versions}
		}
	})
}
