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

// StatsRunsReader is a source that reads many runs at once, as stats
// count them: a store that reads them in a few transactions instead of
// three reads a run, and decodes only what stats read. StatsRuns calls fn
// with each run of ids that exists, in the order of ids, as readStatsRun
// would give it, or with only what ComputeStats and StatsCache read of
// it: of the run its ID, State, Updated, Seq and each step's N and Skill
// (each step with its StepDef and StepState); of each journal event its
// Seq, Time, Type, Step, Attempt, Actor, Decision, Feedback, Status,
// Result, Artifact, CostUSD, Skill, Agent, Runner and Setup, and of a
// run-started event's Start its Setup; and Versions. A run of ids that
// does not exist is left out; an error of fn stops the reading and is
// returned. engine/statstest.StatsFields keeps just these, and the stats
// tests hold ComputeStats to them.
type StatsRunsReader interface {
	StatsRuns(ctx context.Context, ids []RunID, fn func(StatsRun) error) error
}

// ReadStats reads what ComputeStats needs from src and computes the figures for
// q. A run last changed before q.Since is not read: nothing of it is in
// the period. A run listed but gone when read (deleted meanwhile) is left
// out; any other error is returned. A src that is a StatsRunsReader reads
// the runs at once.
func ReadStats(ctx context.Context, src StatsSource, q StatsQuery) (Stats, error) {
	list, err := src.List(ctx)
	if err != nil {
		return Stats{}, fmt.Errorf("list the runs: %w", err)
	}
	ids := make([]RunID, 0, len(list))
	for _, s := range list {
		if statsMayCount(s, q) {
			ids = append(ids, s.ID)
		}
	}
	// Each run is counted as it is read, by ComputeStats's own counter, so
	// that no more than a batch of runs is held at once.
	c := newStatsCounter(q)
	err = readStatsRuns(ctx, src, ids, func(sr StatsRun) error {
		c.run(&sr)
		return nil
	})
	if err != nil {
		return Stats{}, err
	}
	return c.result(), nil
}

// statsMayCount reports whether the run s lists may have something in
// q's period: not when it last changed before the period began.
func statsMayCount(s RunSummary, q StatsQuery) bool {
	return q.Since.IsZero() || s.Updated.IsZero() || !s.Updated.Before(q.Since)
}

// readStatsRuns calls fn with each run of ids that src still has: at once
// when src is a StatsRunsReader, else one by one.
func readStatsRuns(ctx context.Context, src StatsSource, ids []RunID, fn func(StatsRun) error) error {
	if b, ok := src.(StatsRunsReader); ok {
		return b.StatsRuns(ctx, ids, fn)
	}
	return statsRunsOneByOne(ctx, src, ids, fn)
}

func statsRunsOneByOne(ctx context.Context, src StatsSource, ids []RunID, fn func(StatsRun) error) error {
	for _, id := range ids {
		sr, err := readStatsRun(ctx, src, id)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if err := fn(sr); err != nil {
			return err
		}
	}
	return nil
}

// StatsRuns reads the runs ids from the service's store, at once when the
// store is a StatsRunsReader.
func (s *Service) StatsRuns(ctx context.Context, ids []RunID, fn func(StatsRun) error) error {
	if b, ok := s.store.(StatsRunsReader); ok {
		return b.StatsRuns(ctx, ids, fn)
	}
	return statsRunsOneByOne(ctx, s, ids, fn)
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
