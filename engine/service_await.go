package engine

import "context"

// StartAwaited starts a run recorded to await Start (see StartAwaited) and
// its first steps. A person who may not decide on the run is refused with
// ErrNotApprover, a run that does not await Start with
// ErrNotAwaitingStart, a key the store has seen with ErrDuplicate; none
// changes anything.
func (s *Service) StartAwaited(ctx context.Context, id RunID, actor, key string) (*Run, error) {
	r, err := s.personally(ctx, id, actor, Commit{Key: key}, func(r *Run) ([]Event, error) {
		return StartAwaited(r, actor, key, s.now())
	})
	if err != nil {
		return nil, err
	}
	return s.advanceAfter(ctx, r), nil
}

// CancelAwaited ends a run recorded to await Start, with nothing run (see
// CancelAwaited). A person who may not decide on the run is refused with
// ErrNotApprover, a run that does not await Start with
// ErrNotAwaitingStart; neither changes anything.
func (s *Service) CancelAwaited(ctx context.Context, id RunID, actor string) (*Run, error) {
	return s.personally(ctx, id, actor, Commit{}, func(r *Run) ([]Event, error) {
		return CancelAwaited(r, actor, s.now())
	})
}

// personally carries out a person's change to a run under the run's lock:
// it loads the run, refuses a person who may not decide on it
// (MayDecide), computes the change with transition and commits it with c;
// a refusal at any point changes nothing.
func (s *Service) personally(ctx context.Context, id RunID, actor string, c Commit, transition func(r *Run) ([]Event, error)) (*Run, error) {
	unlock := s.lock(id)
	defer unlock()
	r, err := s.store.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := s.MayDecide(ctx, r, actor); err != nil {
		return nil, err
	}
	evs, err := transition(r)
	if err != nil {
		return nil, err
	}
	return s.commit(ctx, r, evs, c)
}
