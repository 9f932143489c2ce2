package engine

import (
	"context"
	"fmt"
)

// Pause holds a moving run at its next checkpoint (see Pause): steps
// already running finish and wait for a decision, and none starts until the
// run is resumed or decided. A person who may not decide is refused with
// ErrNotApprover, a paused run with ErrPaused, a run waiting or finished
// with ErrNotMoving; none changes anything.
func (s *Service) Pause(ctx context.Context, id RunID, actor string) (*Run, error) {
	return s.personally(ctx, id, actor, Commit{}, func(r *Run) ([]Event, error) {
		return Pause(r, actor, "", s.now())
	})
}

// Unpause resumes a paused run in mode m ("" the run's own) and starts
// what is ready; a run that is not paused refuses with ErrNotPaused.
func (s *Service) Unpause(ctx context.Context, id RunID, actor string, m Mode) (*Run, error) {
	r, err := s.unpause(ctx, id, actor, m)
	if err != nil {
		return nil, err
	}
	return s.advanceAfter(ctx, r), nil
}

// RecordUnpause resumes a paused run as Unpause does but starts nothing:
// for a run no service carries out; it goes on when it is next resumed.
func (s *Service) RecordUnpause(ctx context.Context, id RunID, actor string, m Mode) (*Run, error) {
	return s.unpause(ctx, id, actor, m)
}

func (s *Service) unpause(ctx context.Context, id RunID, actor string, m Mode) (*Run, error) {
	return s.personally(ctx, id, actor, Commit{}, func(r *Run) ([]Event, error) {
		if !r.Paused || r.Finished() {
			return nil, fmt.Errorf("run %s: %w (it is %s)", r.ID, ErrNotPaused, r.State)
		}
		added, err := s.releasedExpansions(ctx, r, actor, m)
		if err != nil {
			return nil, err
		}
		return Unpause(r, actor, m, added, s.now())
	})
}

// releasedExpansions reads the steps each route or decompose step that a
// resume in mode m releases adds, as if actor approved its output.
func (s *Service) releasedExpansions(ctx context.Context, r *Run, actor string, m Mode) (map[int][]PlanStep, error) {
	added := map[int][]PlanStep{}
	for _, n := range Releasable(r, m) {
		st := r.Step(n)
		if !expands(st) {
			continue
		}
		d := Decision{Kind: DecideApprove, Actor: actor, Step: n, Attempt: st.Latest().N}
		var err error
		if added[n], err = s.expansion(ctx, r, st, d, nil); err != nil {
			return nil, err
		}
	}
	return added, nil
}
