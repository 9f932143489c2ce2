package engine

import (
	"context"
	"errors"
	"time"
)

// scheduleRetries sets a timer for each step of r that waits for an
// automatic retry; when it fires, the service redoes the step as
// RetryActor, with a key that makes the redo count once. A retry is due
// from the stored run, so one that was waiting when gonogo stopped is
// scheduled again on resume.
func (s *Service) scheduleRetries(r *Run) {
	for i := range r.Steps {
		s.scheduleRetry(r, &r.Steps[i])
	}
}

// scheduleRetry sets the timer of st's automatic retry, if it waits for
// one and has none set yet.
func (s *Service) scheduleRetry(r *Run, st *Step) {
	due, _, _, ok := RetryDue(st)
	if !ok {
		return
	}
	key := execKey{r.ID, st.N, st.Latest().N}
	if r.PausedByPerson() {
		// A person holds the run; resuming it schedules the retry.
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, set := s.retries[key]; set || s.stopping {
		return
	}
	rk := retryKey{key, RetryActorFor(st)}
	s.retries[key] = time.AfterFunc(max(due.Sub(s.now()), 0), func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.retries, rk.execKey)
		s.spawnLocked(func(ctx context.Context) { s.retry(ctx, rk) })
	})
}

// retryKey is an automatic retry: the attempt it follows and who makes it.
type retryKey struct {
	execKey
	actor string
}

// retry redoes the attempt k follows, when its backoff is over.
func (s *Service) retry(ctx context.Context, k retryKey) {
	d := Decision{Kind: DecideRedo, Actor: k.actor, Step: k.step, Attempt: k.attempt, Key: RetryKey(k.run, k.step, k.attempt)}
	_, err := s.Decide(ctx, k.run, d, nil)
	switch {
	case err == nil, ctx.Err() != nil:
	case errors.Is(err, ErrDuplicate), errors.Is(err, ErrStale), errors.Is(err, ErrNotWaiting):
		// A person decided first, or the retry was made already.
	case errors.Is(err, ErrPaused):
		// A person paused the run: the retry is scheduled again when it
		// is resumed.
	default:
		s.log.Error("retry step", "run", k.run, "step", k.step, "err", err)
	}
}
