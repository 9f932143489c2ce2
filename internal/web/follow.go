package web

import (
	"sync"

	"github.com/gonogo/gonogo/engine"
)

// followers wakes the event streams following a run when a form of this
// server changed it, so that the other pages open on the run show a
// decision made on one as soon as it is recorded, not at their next look
// (Options.PollEvery), which is for changes made elsewhere.
type followers struct {
	mu   sync.Mutex
	next map[engine.RunID]chan struct{}
}

// wake returns a channel closed at the next change of run id; take it
// before reading the run, so a change made in between is not missed.
func (f *followers) wake(id engine.RunID) <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.next == nil {
		f.next = map[engine.RunID]chan struct{}{}
	}
	ch, ok := f.next[id]
	if !ok {
		ch = make(chan struct{})
		f.next[id] = ch
	}
	return ch
}

// changed wakes every stream following run id. A run nobody follows
// leaves nothing behind.
func (f *followers) changed(id engine.RunID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ch, ok := f.next[id]; ok {
		close(ch)
		delete(f.next, id)
	}
}
