package engine

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// pulseStore is a memStore that keeps a pulse: the times it was told.
type pulseStore struct {
	*memStore
	mu    sync.Mutex
	beats []time.Time
}

func (p *pulseStore) Alive(at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.beats = append(p.beats, at)
}

func (p *pulseStore) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.beats)
}

// While a step runs, a store that keeps a pulse is told every PulseEvery
// that gonogo is alive; once no step runs, it is told nothing more.
func TestPulseWhileAStepRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ps *pulseStore
		h := newHarnessWith(t, 2, true, func(h *harness, cfg *ServiceConfig) {
			ps = &pulseStore{memStore: h.store}
			cfg.Store = ps
		})
		id := h.start(h.chain(Flags{ForceAuto: true}, "deliver-prd"))
		synctest.Wait()
		if n := ps.count(); n != 0 {
			t.Fatalf("%d pulses before any time passed", n)
		}
		time.Sleep(3*PulseEvery + PulseEvery/2)
		synctest.Wait()
		if n := ps.count(); n != 3 {
			t.Fatalf("%d pulses in 3.5 PulseEvery of a running step, want 3", n)
		}
		h.runner.gate <- struct{}{}
		synctest.Wait()
		h.expect(id, RunCompleted, "done/PRODUCED")
		time.Sleep(10 * PulseEvery)
		synctest.Wait()
		if n := ps.count(); n != 3 {
			t.Fatalf("%d pulses once no step ran, want still 3", n)
		}
	})
}
