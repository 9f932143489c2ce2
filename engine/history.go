package engine

import (
	"context"
	"errors"
	"fmt"
)

// History is what a store keeps about a run beyond its state: the journal
// and every version of each artifact. An audit trail is built from it
// (engine/audit). It is not part of Store: the rules never read it, and a
// store that keeps no history can still run everything else.
type History interface {
	// Journal returns a run's events in seq order, or an error wrapping
	// ErrNotFound.
	Journal(ctx context.Context, id RunID) ([]Event, error)
	// ArtifactVersions returns every version of an attempt's artifact, the
	// agent's original first, then each edit, or an error wrapping
	// ErrNotFound.
	ArtifactVersions(ctx context.Context, id RunID, step, attempt int) ([][]byte, error)
}

// ErrNoHistory is returned by Service.Journal and Service.ArtifactVersions
// when the service's store keeps no History.
var ErrNoHistory = errors.New("the store keeps no journal or artifact versions")

// Journal returns a run's journal from the service's store, so that a front
// end can hand the run's audit trail on (the Slack bot attaches it to the
// run's thread) without reaching past the engine for the store.
func (s *Service) Journal(ctx context.Context, id RunID) ([]Event, error) {
	h, ok := s.store.(History)
	if !ok {
		return nil, fmt.Errorf("journal of run %s: %w", id, ErrNoHistory)
	}
	return h.Journal(ctx, id)
}

// ArtifactVersions returns every version of an attempt's artifact from the
// service's store: the agent's original, then each edit.
func (s *Service) ArtifactVersions(ctx context.Context, id RunID, step, attempt int) ([][]byte, error) {
	h, ok := s.store.(History)
	if !ok {
		return nil, fmt.Errorf("artifact versions of run %s step %d attempt %d: %w", id, step, attempt, ErrNoHistory)
	}
	return h.ArtifactVersions(ctx, id, step, attempt)
}

// RunWithJournal is a run and its journal from the service's store. The
// journal may run past the run when a change lands between the two reads;
// the run's Seq says where the run stands in it.
func (s *Service) RunWithJournal(ctx context.Context, id RunID) (*Run, []Event, error) {
	r, err := s.Load(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	j, err := s.Journal(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return r, j, nil
}

// StatsSource is where the stats read every run: the service's store.
func (s *Service) StatsSource() StatsSource { return s }

// Stats computes gonogo stats over the runs in the service's store (see
// ReadStats).
func (s *Service) Stats(ctx context.Context, q StatsQuery) (Stats, error) {
	return ReadStats(ctx, s, q)
}
