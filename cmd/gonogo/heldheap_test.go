package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"
)

// heapWatch records the live heap each garbage collection finds: a
// finalizer on a sentinel runs after every cycle that found the sentinel
// gone, reads what that cycle marked live, and arms a new sentinel.
// Objects allocated while a cycle marks count as live in it, so with the
// collector running at almost every growth of the heap, a transient as
// big as an artifact is seen while it is held.
type heapWatch struct {
	mu       sync.Mutex
	peak     uint64 // the most live heap a cycle found
	start    uint64 // the cycle count when the watch began
	cycles   uint64 // the cycle count at the last reading
	readings int    // cycles whose live heap was read
	stopped  bool
	samples  []metrics.Sample
}

// sentinel carries a pointer so that it is never packed, with other small
// objects, into a block that outlives it.
type sentinel struct {
	w *heapWatch
	_ [16]byte
}

func (w *heapWatch) arm() {
	runtime.SetFinalizer(&sentinel{w: w}, func(s *sentinel) { s.w.read(true) })
}

// read takes the reading of the last cycle and, from a finalizer, arms the
// next sentinel while the watch runs.
func (w *heapWatch) read(rearm bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	metrics.Read(w.samples)
	live, cycles := w.samples[0].Value.Uint64(), w.samples[1].Value.Uint64()
	if cycles > w.cycles {
		w.peak, w.cycles = max(w.peak, live), cycles
		w.readings++
	}
	if rearm {
		w.arm()
	}
}

// heldPeak runs fn with the collector running at almost every growth of
// the heap (GOGC=1) and returns the most live heap any collection found
// while fn ran, with how many of the collections it read and how many ran.
func heldPeak(fn func()) (peak uint64, readings, cycles int) {
	runtime.GC()
	old := debug.SetGCPercent(1)
	defer debug.SetGCPercent(old)
	w := &heapWatch{samples: []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}}
	metrics.Read(w.samples)
	w.start = w.samples[1].Value.Uint64()
	w.cycles, w.peak = w.start, w.samples[0].Value.Uint64()
	w.mu.Lock()
	w.arm()
	w.mu.Unlock()
	fn()
	w.read(false) // the last cycle, if its finalizer has not run yet
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	return w.peak, w.readings, int(w.cycles - w.start)
}

// touch writes every page of b, as a reader of it would.
func touch(b []byte) {
	for i := 0; i < len(b); i += 4096 {
		b[i] = byte(i)
	}
}

// cycleWhileHeld makes small garbage until two more collections have
// completed, so that one ran from start to end while what the caller holds
// was live: the toy below then depends on no collection's timing. It is
// bounded by a count of allocations, not by time.
func cycleWhileHeld() {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	want := s[0].Value.Uint64() + 2
	for i := 0; i < 1<<20; i++ {
		sink = make([]byte, 64<<10)
		if i%16 == 0 {
			if metrics.Read(s); s[0].Value.Uint64() >= want {
				return
			}
		}
	}
}

// sink keeps cycleWhileHeld's garbage from being optimised away.
var sink []byte

// The watch counts what is held at once, not what was allocated: three
// buffers held together read as three, three dropped one after another
// as one (or two, when a collection that began before one was dropped
// ends after the next is made).
func TestHeldMemoryIsWhatIsHeldAtOnce(t *testing.T) {
	const size = 8 << 20
	base, _, _ := heldPeak(func() { touch(make([]byte, 100)) })
	together, r1, c1 := heldPeak(func() {
		a, b, c := make([]byte, size), make([]byte, size), make([]byte, size)
		for _, x := range [][]byte{a, b, c} {
			touch(x)
		}
		copy(a, c)
		copy(b, a)
		cycleWhileHeld()
		runtime.KeepAlive(a)
		runtime.KeepAlive(b)
		runtime.KeepAlive(c)
	})
	// A collection marks live what was live when it began, so it may
	// count a buffer dropped while it ran: the least of three is the
	// reading.
	var apart uint64
	var r2, c2 int
	for i := range 3 {
		p, r, c := heldPeak(func() {
			for range 3 {
				x := make([]byte, size)
				touch(x)
				copy(x[size/2:], x)
				cycleWhileHeld()
				runtime.KeepAlive(x)
			}
		})
		if i == 0 || p < apart {
			apart, r2, c2 = p, r, c
		}
	}
	held := func(peak uint64) float64 { return (float64(peak) - float64(base)) / size }
	t.Logf("held together: %.2f buffers (%d of %d collections read); one after another: %.2f (%d of %d)",
		held(together), r1, c1, held(apart), r2, c2)
	// What the memory tests rest on: held copies are all seen (so a step
	// holding three reads as three), and copies dropped in turn read as
	// fewer (a collection may still count the one dropped while it ran).
	if h := held(together); h < 2.8 || h > 3.5 {
		t.Errorf("three buffers held at once read as %.2f, want about 3", h)
	}
	if h := held(apart); h > 2.2 {
		t.Errorf("three buffers held one after another read as %.2f, want at most 2 (about 1)", h)
	}
}
