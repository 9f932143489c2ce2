package engine

import (
	"context"
	"errors"
	"sync"
)

// errStopping refuses to start work once Run is stopping.
var errStopping = errors.New("gonogo is shutting down")

// Run carries out the work the service's methods hand it (executions,
// starts of queued steps, automatic retries), each in a goroutine given
// ctx, until ctx ends. Then it refuses new work, stops the retry timers,
// and waits for the work under way, whose executions see ctx end and stop
// their agents. A step stopped this way is not recorded as finished: it
// stays running in the store, is marked interrupted when the store is next
// opened, and is offered for redo. Call Run once; steps start only while
// it runs.
func (s *Service) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	done := ctx.Done()
	for {
		select {
		case <-s.wake:
		case <-done:
			done = nil // stopping: from now on, wait only for work owed
		}
		work, finished := s.takeWork(done == nil)
		for _, f := range work {
			wg.Go(func() { f(ctx) })
		}
		if finished {
			wg.Wait()
			return nil
		}
	}
}

// takeWork takes the work handed to Run so far, first starting the stop
// when stop says ctx has ended; finished says Run is stopping and owed
// nothing more.
func (s *Service) takeWork(stop bool) (work []func(context.Context), finished bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if stop && !s.stopping {
		s.stopLocked()
	}
	work = s.work
	s.work = nil
	return work, s.stopping && s.owed == 0
}

// stopLocked starts Run's stop: no new work is taken, and the retry and
// deadline timers are stopped.
func (s *Service) stopLocked() {
	s.stopping = true
	for k, t := range s.retries {
		t.Stop()
		delete(s.retries, k)
	}
	s.stopDeadlinesLocked()
}

// reserveLocked promises Run a piece of work, so that Run, once stopping,
// waits for it to be handed over; it is false once Run is stopping. Every
// promise is settled with handLocked.
func (s *Service) reserveLocked() bool {
	if s.stopping {
		return false
	}
	s.owed++
	return true
}

// handLocked gives Run the work promised by reserveLocked; nil settles
// the promise with no work.
func (s *Service) handLocked(f func(context.Context)) {
	s.owed--
	if f != nil {
		s.work = append(s.work, f)
	}
	select {
	case s.wake <- struct{}{}:
	default: // Run is woken already
	}
}

// spawnLocked hands Run work at once; false once Run is stopping.
func (s *Service) spawnLocked(f func(context.Context)) bool {
	if !s.reserveLocked() {
		return false
	}
	s.handLocked(f)
	return true
}

// isStopping reports whether Run is stopping, so that errors caused by
// the shutdown are not logged as failures.
func (s *Service) isStopping() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopping
}
