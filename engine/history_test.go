package engine

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
)

// historyStore is the in-memory store with the History a real store keeps.
type historyStore struct{ *memStore }

func (h historyStore) ArtifactVersions(ctx context.Context, id RunID, step, attempt int) ([][]byte, error) {
	return h.Versions(ctx, id, step, attempt)
}

// A front end reads a run's journal and artifact versions through the
// service, from a store that keeps them; a store that does not says so
// with ErrNoHistory rather than an empty history.
func TestServiceHandsOnTheStoresHistory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarnessWith(t, 2, false, func(h *harness, c *ServiceConfig) { c.Store = historyStore{h.store} })
		id := h.start(h.chain(Flags{}, "deliver-prd"))
		synctest.Wait()
		h.decide(id, 1, DecideEdit, "", []byte("# edited by a person\n"))
		synctest.Wait()

		j, err := h.svc.Journal(t.Context(), id)
		if err != nil || len(j) == 0 || j[0].Type != EvRunStarted || j[len(j)-1].Type != EvRunFinished {
			t.Fatalf("Journal = %d events, %v; want the run's whole journal", len(j), err)
		}
		vs, err := h.svc.ArtifactVersions(t.Context(), id, 1, 1)
		if err != nil || len(vs) != 2 || string(vs[1]) != "# edited by a person\n" {
			t.Fatalf("ArtifactVersions = %q, %v; want the agent's original then the edit", vs, err)
		}
		if _, err := h.svc.Journal(t.Context(), "no-such-run"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Journal of an unknown run: %v, want ErrNotFound", err)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 2, false)
		id := h.start(h.chain(Flags{}, "deliver-prd"))
		synctest.Wait()
		if _, err := h.svc.Journal(t.Context(), id); !errors.Is(err, ErrNoHistory) {
			t.Errorf("Journal from a store without history: %v, want ErrNoHistory", err)
		}
		if _, err := h.svc.ArtifactVersions(t.Context(), id, 1, 1); !errors.Is(err, ErrNoHistory) {
			t.Errorf("ArtifactVersions from a store without history: %v, want ErrNoHistory", err)
		}
	})
}
