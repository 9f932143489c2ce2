package engine

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// StatsCache is ComputeStats made incremental, for a caller that asks for
// the figures of every run again and again (/metrics, at each scrape). It
// keeps each run's own part of the figures, as ComputeStats's one pass
// counts them for that run, so that counting again reads and counts only
// the runs that may have changed. A finished run's journal does not change
// (the engine refuses every move on it), so its part is kept for as long
// as its listing shows it finished and unchanged; a run not finished is
// read again each time. Parts add up to what ComputeStats gives over the
// same runs for the same query (a sum of costs added in another order may
// differ in a float's last bits). It is safe for concurrent use.
type StatsCache struct {
	reading sync.Mutex // one Read at a time
	mu      sync.Mutex
	parts   map[RunID]*statsPart
}

// statsPart is one run's tallies, and what they were counted from.
type statsPart struct {
	seq     uint64    // how far the run's journal went
	updated time.Time // the run's last change
	final   bool      // the run had finished
	q       StatsQuery
	last    time.Time // the run's latest event, counted or not
	rows    map[rowKey]*tally
	weeks   map[time.Time]*tally
	total   tally
	runs    int
	first   time.Time
}

// NewStatsCache is an empty cache.
func NewStatsCache() *StatsCache {
	return &StatsCache{parts: map[RunID]*statsPart{}}
}

// holds reports whether p's tallies are the run's for q: counted for the
// same period start and skill, and for q's end, or for an end past every
// event of the run when q's end is past them too.
func (p *statsPart) holds(q StatsQuery) bool {
	if !p.q.Since.Equal(q.Since) || p.q.Skill != q.Skill {
		return false
	}
	if p.q.Now.Equal(q.Now) {
		return true
	}
	within := func(now time.Time) bool { return now.IsZero() || !p.last.After(now) }
	return within(p.q.Now) && within(q.Now)
}

// Add counts sr for q, in place of what the cache kept of that run. The
// run added again at the same journal length, for a query its part holds
// for, is not counted again.
func (c *StatsCache) Add(sr StatsRun, q StatsQuery) {
	r := sr.Run
	if r == nil {
		return
	}
	c.mu.Lock()
	old := c.parts[r.ID]
	c.mu.Unlock()
	if old != nil && old.seq == r.Seq && old.holds(q) {
		return
	}
	pc := newStatsCounter(q)
	pc.run(&sr)
	p := &statsPart{seq: r.Seq, updated: r.Updated, final: r.Finished(), q: q,
		rows: pc.rows, weeks: pc.weeks, total: pc.total, runs: pc.runs, first: pc.first}
	for i := range sr.Journal {
		if ev := &sr.Journal[i]; (ev.Seq <= r.Seq || r.Seq == 0) && ev.Time.After(p.last) {
			p.last = ev.Time
		}
	}
	c.mu.Lock()
	c.parts[r.ID] = p
	c.mu.Unlock()
}

// Fresh reports whether the part kept of the run s lists still holds for
// q, so that the run need not be read again: counted when the run had
// finished, still finished with the same last change, and counted for
// q's period (see Add).
func (c *StatsCache) Fresh(s RunSummary, q StatsQuery) bool {
	c.mu.Lock()
	p := c.parts[s.ID]
	c.mu.Unlock()
	return p != nil && p.final && (s.State == RunCompleted || s.State == RunAborted) &&
		s.Updated.Equal(p.updated) && p.holds(q)
}

// Forget drops every run's part but those of ids.
func (c *StatsCache) Forget(ids []RunID) {
	keep := make(map[RunID]bool, len(ids))
	for _, id := range ids {
		keep[id] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range c.parts {
		if !keep[id] {
			delete(c.parts, id)
		}
	}
}

// Result is the figures for q of the runs ids, each as last added: what
// ComputeStats gives for q over the same runs. A run not added, or whose
// part was counted for another query (see Add), is left out.
func (c *StatsCache) Result(ids []RunID, q StatsQuery) Stats {
	m := newStatsCounter(q)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		p := c.parts[id]
		if p == nil || !p.holds(q) {
			continue
		}
		for k, t := range p.rows {
			m.row(k).merge(t)
		}
		for w, t := range p.weeks {
			m.week(w).merge(t)
		}
		m.total.merge(&p.total)
		m.runs += p.runs
		if !p.first.IsZero() && (m.first.IsZero() || p.first.Before(m.first)) {
			m.first = p.first
		}
	}
	return m.result()
}

// Read is ReadStats made incremental: it lists src, reads (at once, when
// src is a StatsRunsReader) and adds each run that is not Fresh, forgets
// the runs no longer listed, and returns Result. A run listed but gone
// when read is left out.
func (c *StatsCache) Read(ctx context.Context, src StatsSource, q StatsQuery) (Stats, error) {
	c.reading.Lock()
	defer c.reading.Unlock()
	list, err := src.List(ctx)
	if err != nil {
		return Stats{}, fmt.Errorf("list the runs: %w", err)
	}
	var stale []RunID
	kept := map[RunID]bool{}
	for _, s := range list {
		switch {
		case !statsMayCount(s, q):
		case c.Fresh(s, q):
			kept[s.ID] = true
		default:
			stale = append(stale, s.ID)
		}
	}
	err = readStatsRuns(ctx, src, stale, func(sr StatsRun) error {
		if sr.Run != nil {
			c.Add(sr, q)
			kept[sr.Run.ID] = true
		}
		return nil
	})
	if err != nil {
		return Stats{}, err
	}
	ids := make([]RunID, 0, len(kept))
	for _, s := range list {
		if kept[s.ID] {
			ids = append(ids, s.ID)
		}
	}
	c.Forget(ids)
	return c.Result(ids, q), nil
}

// merge adds o's counts to t's; the figures done derives (the edit
// change, the median wait, the cost per approval) are left to done.
func (t *tally) merge(o *tally) {
	a, b := &t.StatsCounts, &o.StatsCounts
	for _, f := range []struct{ to, from *int }{
		{&a.Steps, &b.Steps}, {&a.Attempts, &b.Attempts}, {&a.Produced, &b.Produced}, {&a.Empty, &b.Empty},
		{&a.Failed, &b.Failed}, {&a.Approved, &b.Approved}, {&a.FirstApproved, &b.FirstApproved},
		{&a.Edited, &b.Edited}, {&a.EditMeasured, &b.EditMeasured}, {&a.RedoneWithFeedback, &b.RedoneWithFeedback},
		{&a.RedoneWithout, &b.RedoneWithout}, {&a.Skipped, &b.Skipped}, {&a.AbortedAt, &b.AbortedAt},
		{&a.PicksWon, &b.PicksWon},
	} {
		*f.to += *f.from
	}
	a.CostUSD += b.CostUSD
	t.editSum += o.editSum
	t.waits = append(t.waits, o.waits...)
}
