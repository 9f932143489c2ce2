package engine

import (
	"context"
	"errors"
	"fmt"
)

// StatsSource is where ReadStats reads runs: a store, the gonogo holding
// one, or a cluster. RunWithJournal is a run and its journal up to the
// run's last event; ArtifactVersions every version of an attempt's
// artifact, the agent's original first, then each edit.
type StatsSource interface {
	List(ctx context.Context) ([]RunSummary, error)
	RunWithJournal(ctx context.Context, id RunID) (*Run, []Event, error)
	ArtifactVersions(ctx context.Context, id RunID, step, attempt int) ([][]byte, error)
}

// StatsComputer is a source that computes the stats itself: a cluster,
// whose List shows people only the newest runs while the stats count
// every run.
type StatsComputer interface {
	Stats(ctx context.Context, q StatsQuery) (Stats, error)
}

// StatsOf computes the figures of src for q, as every front end asks for
// them: src's own Stats when it is a StatsComputer, else ReadStats.
func StatsOf(ctx context.Context, src StatsSource, q StatsQuery) (Stats, error) {
	if c, ok := src.(StatsComputer); ok {
		return c.Stats(ctx, q)
	}
	return ReadStats(ctx, src, q)
}

// ReadStats reads what ComputeStats needs from src and computes the figures for
// q. A run last changed before q.Since is not read: nothing of it is in
// the period. A run listed but gone when read (deleted meanwhile) is left
// out; any other error is returned.
func ReadStats(ctx context.Context, src StatsSource, q StatsQuery) (Stats, error) {
	list, err := src.List(ctx)
	if err != nil {
		return Stats{}, fmt.Errorf("list the runs: %w", err)
	}
	runs := make([]StatsRun, 0, len(list))
	for _, s := range list {
		if !statsMayCount(s, q) {
			continue
		}
		sr, err := readStatsRun(ctx, src, s.ID)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return Stats{}, err
		}
		runs = append(runs, sr)
	}
	return ComputeStats(runs, q), nil
}

// statsMayCount reports whether the run s lists may have something in
// q's period: not when it last changed before the period began.
func statsMayCount(s RunSummary, q StatsQuery) bool {
	return q.Since.IsZero() || s.Updated.IsZero() || !s.Updated.Before(q.Since)
}

func readStatsRun(ctx context.Context, src StatsSource, id RunID) (StatsRun, error) {
	r, j, err := src.RunWithJournal(ctx, id)
	if err != nil {
		return StatsRun{}, fmt.Errorf("run %s: %w", id, err)
	}
	sr := StatsRun{Run: r, Journal: j}
	for _, ref := range EditedAttempts(j) {
		vs, err := src.ArtifactVersions(ctx, id, ref.Step, ref.Attempt)
		if errors.Is(err, ErrNotFound) {
			continue // counted as edited, not measured
		}
		if err != nil {
			return StatsRun{}, fmt.Errorf("run %s step %d attempt %d: its artifact's versions: %w", id, ref.Step, ref.Attempt, err)
		}
		if sr.Versions == nil {
			sr.Versions = map[ArtifactRef][][]byte{}
		}
		sr.Versions[ref] = vs
	}
	return sr, nil
}
