package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"time"
)

// NewRunID returns a new run id: the UTC time, so ids sort by creation, and
// 48 random bits so two runs started in the same second almost never
// collide (Start draws again when they do). It is the service's id source
// unless ServiceConfig.NewID names another.
func NewRunID(now time.Time) RunID {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return RunID(now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:]))
}

// runLock serializes the transitions of one run. It lives only while
// someone holds or waits for it, so the map does not grow with every run
// (or every unknown id) ever named.
type runLock struct {
	mu    sync.Mutex
	users int
}

func (s *Service) lock(id RunID) func() {
	s.mu.Lock()
	l, ok := s.live[id]
	if !ok {
		l = &runLock{}
		s.live[id] = l
	}
	l.users++
	s.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		s.mu.Lock()
		if l.users--; l.users == 0 {
			delete(s.live, id)
		}
		s.mu.Unlock()
	}
}

// commit folds evs into r, commits the change, tells the notifier, and
// returns the run as it now stands.
func (s *Service) commit(ctx context.Context, r *Run, evs []Event, c Commit) (*Run, error) {
	if len(evs) == 0 {
		return r, nil
	}
	after, err := Fold(r, evs)
	if err != nil {
		return nil, err
	}
	c.Run, c.Events, c.After = after, evs, r.Seq
	if err := s.store.Commit(ctx, c); err != nil {
		if !errors.Is(err, ErrFilesPending) {
			return nil, err
		}
		// The change is durable; only its files wait for the next open.
		s.log.Warn("artifact file not written", "run", r.ID, "err", err)
	}
	if s.notifier != nil {
		// after is never changed again (Fold makes new runs), so every
		// notice can share it.
		for _, ev := range evs {
			s.notifier.Notify(Notice{Run: after, Event: ev})
		}
	}
	return after, nil
}
