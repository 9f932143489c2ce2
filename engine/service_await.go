package engine

import "context"

// StartAwaited starts a run recorded to await Start (see StartAwaited) and
// its first steps. A person who may not decide on the run is refused with
// ErrNotApprover, a run that does not await Start with
// ErrNotAwaitingStart, a key the store has seen with ErrDuplicate; none
// changes anything.
func (s *Service) StartAwaited(ctx context.Context, id RunID, actor, key string) (*Run, error) {
	unlock := s.lock(id)
	r, err := s.store.Load(ctx, id)
	if err == nil {
		err = s.MayDecide(ctx, r, actor)
	}
	if err == nil {
		var evs []Event
		if evs, err = StartAwaited(r, actor, key, s.now()); err == nil {
			r, err = s.commit(ctx, r, evs, Commit{Key: key})
		}
	}
	unlock()
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
	unlock := s.lock(id)
	defer unlock()
	r, err := s.store.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := s.MayDecide(ctx, r, actor); err != nil {
		return nil, err
	}
	evs, err := CancelAwaited(r, actor, s.now())
	if err != nil {
		return nil, err
	}
	return s.commit(ctx, r, evs, Commit{})
}
