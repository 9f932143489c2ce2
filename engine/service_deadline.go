package engine

import (
	"context"
	"errors"
	"time"
)

// scheduleDeadlines sets a timer for the next deadline of each step of r
// that waits for a decision (DeadlineDue); when it fires, the service acts
// on every deadline of the run that has passed by then. Deadlines are read
// from the stored run, so one pending when gonogo stopped is scheduled
// again on resume, and one the journal says was acted on never is.
func (s *Service) scheduleDeadlines(r *Run) {
	for i := range r.Steps {
		st := &r.Steps[i]
		due, ok := DeadlineDue(r, st)
		if !ok {
			continue
		}
		key := execKey{r.ID, st.N, st.Latest().N}
		s.mu.Lock()
		if _, set := s.due[key]; !set && !s.stopping {
			s.due[key] = time.AfterFunc(max(due.Sub(s.now()), 0), func() {
				s.mu.Lock()
				defer s.mu.Unlock()
				delete(s.due, key)
				s.spawnLocked(func(ctx context.Context) { s.deadline(ctx, key) })
			})
		}
		s.mu.Unlock()
	}
}

// stopDeadlinesLocked stops every deadline timer (Run is stopping); the
// caller holds s.mu.
func (s *Service) stopDeadlinesLocked() {
	for k, t := range s.due {
		t.Stop()
		delete(s.due, k)
	}
}

// deadline acts on what is overdue in k's run: it commits the reminders
// and the timeouts that leave a step waiting, and decides the aborts of
// the timeouts that abort (as TimeoutActor, with a key that makes each
// count once); then it sets the timer for the next deadline.
func (s *Service) deadline(ctx context.Context, k execKey) {
	unlock := s.lock(k.run)
	r, err := s.store.Load(ctx, k.run)
	var aborts []Decision
	if err == nil {
		var evs []Event
		evs, aborts = Overdue(r, s.now())
		r, err = s.commit(ctx, r, evs, Commit{})
	}
	unlock()
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("act on a decision deadline", "run", k.run, "err", err)
		}
		return
	}
	s.timeoutAborts(ctx, k.run, aborts)
	if len(aborts) == 0 {
		s.scheduleDeadlines(r)
	}
}

// timeoutAborts decides the aborts of run id's timeouts; one a person
// decided before, or that was made already, is no failure.
func (s *Service) timeoutAborts(ctx context.Context, id RunID, aborts []Decision) {
	for _, d := range aborts {
		_, err := s.Decide(ctx, id, d, nil)
		switch {
		case err == nil, ctx.Err() != nil:
		case errors.Is(err, ErrDuplicate), errors.Is(err, ErrStale), errors.Is(err, ErrNotWaiting):
			// A person decided first, or the abort was made already.
		default:
			s.log.Error("abort on decision timeout", "run", id, "err", err)
		}
	}
}
