package engine

import (
	"context"
	"slices"
)

// advanceAfter advances a run after a change that is already durable: the
// change stands whatever happens next, so a failure to start the next step
// (gonogo is stopping, say) is logged and the run returned as committed;
// resume picks the step up.
func (s *Service) advanceAfter(ctx context.Context, r *Run) *Run {
	next, err := s.advance(ctx, r.ID)
	if err != nil {
		if !s.isStopping() && ctx.Err() == nil {
			s.log.Error("start the next step", "run", r.ID, "err", err)
		}
		return r
	}
	return next
}

// advance starts every ready step of a run that can have a runner slot and
// queues the others; it returns the run as it then stands.
func (s *Service) advance(ctx context.Context, id RunID) (*Run, error) {
	return s.advanceHeld(ctx, id, 0)
}

// advanceHeld is advance for a run whose step held already has a runner
// slot reserved for it (it was at the head of the queue when a slot came
// free); a reservation the step cannot use is handed on.
func (s *Service) advanceHeld(ctx context.Context, id RunID, held int) (*Run, error) {
	unlock := s.lock(id)
	defer unlock()
	defer func() {
		if held != 0 {
			s.release()
		}
	}()
	r, err := s.store.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	for _, n := range Ready(r) {
		got := n == held
		if got {
			held = 0
		} else {
			got = s.take(queued{id, n})
		}
		if !got {
			if r, err = s.queueStep(ctx, r, n); err != nil {
				return nil, err
			}
			continue
		}
		if r, err = s.startStep(ctx, r, n); err != nil {
			s.release()
			return nil, err
		}
	}
	s.scheduleRetries(r)
	s.scheduleDeadlines(r)
	return r, nil
}

// queueStep records that ready step n of r waits for a runner slot, once:
// a step queued already is left as it is.
func (s *Service) queueStep(ctx context.Context, r *Run, n int) (*Run, error) {
	if r.Step(n).Status != StepPending {
		return r, nil
	}
	evs, err := Queue(r, n, s.now())
	if err != nil {
		return nil, err
	}
	return s.commit(ctx, r, evs, Commit{})
}

// take claims a runner slot for q when one is free and no step queued
// before q waits for it; otherwise it queues q (once) and hands free slots
// to the queue's head. Slots go to queued steps oldest first, so a run that
// keeps advancing cannot starve the others.
func (s *Service) take(q queued) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy < s.slots && (len(s.queue) == 0 || s.queue[0] == q) {
		s.busy++
		s.queue = slices.DeleteFunc(s.queue, func(x queued) bool { return x == q })
		return true
	}
	if !slices.Contains(s.queue, q) {
		s.queue = append(s.queue, q)
	}
	s.dispatchLocked()
	return false
}

// release frees a runner slot and hands it to the oldest queued step.
func (s *Service) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy--
	s.dispatchLocked()
}

// dispatchLocked reserves free slots for the oldest queued steps and
// has Run advance their runs. A queued entry may be spent already (its
// step started another way, or its run ended): advanceHeld then hands the
// slot on.
func (s *Service) dispatchLocked() {
	for !s.stopping && s.busy < s.slots && len(s.queue) > 0 {
		q := s.queue[0]
		s.queue = s.queue[1:]
		s.busy++
		s.spawnLocked(func(ctx context.Context) {
			if _, err := s.advanceHeld(ctx, q.run, q.step); err != nil && ctx.Err() == nil {
				s.log.Error("start queued step", "run", q.run, "step", q.step, "err", err)
			}
		})
	}
}
