package engine

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// What the decisions teach: per skill and agent, how its attempts went and
// what people decided on them, computed from the runs' journals and
// nothing else (no counter is kept twice), so a run's figures are the
// same whichever store holds its journal. gonogo stats, /gonogo stats in
// Slack and /metrics all count with ComputeStats's one counter (ReadStats
// feeds it each run as it is read; StatsCache keeps each run's part).

// StatsRun is one run as ComputeStats reads it: the run (for its steps' skills),
// its journal up to the run's last event, and the stored versions of each
// attempt a person edited (EditedAttempts lists them), as
// History.ArtifactVersions gives them. An edited attempt without versions
// counts as edited, with no measure of how much.
type StatsRun struct {
	Run      *Run
	Journal  []Event
	Versions map[ArtifactRef][][]byte
}

// StatsQuery is what ComputeStats counts: the events at or after Since (zero: all
// of them) and up to Now, of the attempts of Skill ("" for every skill).
// Weeks run from the week of Since (or of the first event counted) to the
// week of Now.
type StatsQuery struct {
	Since time.Time
	Now   time.Time
	Skill string
}

// Stats is what ComputeStats computed. Its JSON shape is documented in the README
// (gonogo stats --json).
type Stats struct {
	Since *time.Time `json:"since"` // nil: all time
	Until time.Time  `json:"until"`
	Skill string     `json:"skill,omitempty"`
	// Runs is how many runs have an event counted.
	Runs  int         `json:"runs"`
	Rows  []StatsRow  `json:"rows"`  // by skill, then agent
	Weeks []StatsWeek `json:"weeks"` // oldest first, each week of the period, empty ones included
	Total StatsCounts `json:"total"`
}

// RunsCounted says how many runs were counted, as every front end words
// it: "1 run", "3 runs".
func (s Stats) RunsCounted() string {
	if s.Runs == 1 {
		return "1 run"
	}
	return fmt.Sprintf("%d runs", s.Runs)
}

// StatsRow is one skill run by one agent.
type StatsRow struct {
	Skill string `json:"skill"`
	Agent string `json:"agent"`
	StatsCounts
}

// StatsWeek is one week, Monday 00:00 UTC to the next.
type StatsWeek struct {
	Week time.Time `json:"week"`
	StatsCounts
}

// StatsCounts are the figures of a row, a week or the total. A fact is
// counted in the week of the event that records it: an attempt when it
// finished, a decision when it was made.
type StatsCounts struct {
	// Steps is how many steps had an attempt finish; Attempts how many
	// attempts an agent ran, each PRODUCED, EMPTY or FAILED (an attempt
	// lost when gonogo stopped is FAILED).
	Steps    int `json:"steps"`
	Attempts int `json:"attempts"`
	Produced int `json:"produced"`
	Empty    int `json:"empty"`
	Failed   int `json:"failed"`
	// The decisions people made (gonogo's own retries and timeouts are
	// not counted), each the one that settled a checkpoint (a vote short
	// of a quorum is not): Approved is approve, edit or a best-of pick; FirstApproved the
	// steps whose first attempt PRODUCED and was approved as it was;
	// Edited the attempts edited (which approves them), EditChange the
	// mean share of their lines the edits changed (see EditChange), over
	// EditMeasured of them whose versions the store kept.
	Approved           int     `json:"approved"`
	FirstApproved      int     `json:"approved_first_attempt"`
	Edited             int     `json:"edited"`
	EditChange         float64 `json:"edit_change"`
	EditMeasured       int     `json:"edit_measured"`
	RedoneWithFeedback int     `json:"redone_with_feedback"`
	RedoneWithout      int     `json:"redone_without_feedback"`
	Skipped            int     `json:"skipped"`
	AbortedAt          int     `json:"aborted_at"`
	// PicksWon is how many best-of picks chose this agent's attempt.
	PicksWon int `json:"picks_won"`
	// DecisionMedianSeconds is the exact median time from a checkpoint
	// (its attempt finished, or was lost) to its decision, over Decided
	// decisions; 0 when there is none.
	Decided               int     `json:"decided"`
	DecisionMedianSeconds float64 `json:"decision_median_seconds"`
	// CostUSD is what the attempts cost; CostPerApproved that over
	// Approved (nil when nothing was approved).
	CostUSD         float64  `json:"cost_usd"`
	CostPerApproved *float64 `json:"cost_per_approved_usd"`
}

// AgentName is the agent a setup runs, as stats names it: the base name of
// its executable when one is set ("codex" for /usr/local/bin/codex), else
// the runner's name ("claude", "dry-run"); "(not recorded)" for a run
// recorded before setups were kept.
func AgentName(s *Setup) string {
	switch {
	case s == nil:
		return "(not recorded)"
	case s.RunnerCmd != "":
		return filepath.Base(strings.ReplaceAll(s.RunnerCmd, `\`, "/"))
	case s.Runner != "":
		return s.Runner
	}
	return "claude"
}

// AttemptAgent is the agent that runs an attempt on setup s, as stats
// names it: a best-of candidate's own runner when it has one, else the
// setup's agent (AgentName); "" when neither is known (s is nil). Each
// backend records it with the attempt's end (Finished.Agent), from the
// setup that actually ran the attempt.
func AttemptAgent(s *Setup, runner string) string {
	switch {
	case runner != "":
		return runner
	case s == nil:
		return ""
	}
	return AgentName(s)
}

// EditedAttempts lists the attempts of a journal a person edited, each
// once, in journal order: the versions StatsRun.Versions needs.
func EditedAttempts(journal []Event) []ArtifactRef {
	var out []ArtifactRef
	for _, ev := range journal {
		if ev.Type == EvDecision && ev.Decision == DecideEdit {
			ref := ArtifactRef{ev.Step, ev.Attempt}
			if !slices.Contains(out, ref) {
				out = append(out, ref)
			}
		}
	}
	return out
}

// ComputeStats computes the figures of runs for q: one pass over each
// journal, by the counter ReadStats and StatsCache count with too.
func ComputeStats(runs []StatsRun, q StatsQuery) Stats {
	c := newStatsCounter(q)
	for i := range runs {
		c.run(&runs[i])
	}
	return c.result()
}

type rowKey struct{ skill, agent string }

// tally gathers one row's, week's or the total's figures; counts are
// finished by done.
type tally struct {
	StatsCounts
	editSum float64
	waits   []time.Duration
}

func (t *tally) done() StatsCounts {
	c := t.StatsCounts
	if c.EditMeasured > 0 {
		c.EditChange = t.editSum / float64(c.EditMeasured)
	}
	c.Decided = len(t.waits)
	c.DecisionMedianSeconds = median(t.waits).Seconds()
	if c.Approved > 0 {
		per := c.CostUSD / float64(c.Approved)
		c.CostPerApproved = &per
	}
	return c
}

// median is the exact median of ds (the mean of the middle two of an even
// count), 0 for none; ds is sorted in place.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	m := len(ds) / 2
	if len(ds)%2 == 1 {
		return ds[m]
	}
	return ds[m-1] + (ds[m]-ds[m-1])/2
}

// attemptSeen is what the pass keeps of one attempt of the run it reads.
type attemptSeen struct {
	row        rowKey
	counted    bool      // its result was counted (once: finished or lost)
	result     Result    // its result, once known
	agentArt   bool      // the agent's artifact was stored
	checkpoint time.Time // when it began to wait for a decision
}

type statsCounter struct {
	q     StatsQuery
	rows  map[rowKey]*tally
	weeks map[time.Time]*tally
	total tally
	runs  int
	first time.Time // the earliest event counted

	// per run, cleared between runs
	attempts map[ArtifactRef]*attemptSeen
	stepSeen map[stepSeenKey]bool
}

// stepSeenKey makes a step count once per row, per week and in the total.
type stepSeenKey struct {
	step  int
	row   rowKey
	week  time.Time
	where byte // 'r' row, 'w' week, 't' total
}

func newStatsCounter(q StatsQuery) *statsCounter {
	return &statsCounter{q: q, rows: map[rowKey]*tally{}, weeks: map[time.Time]*tally{},
		attempts: map[ArtifactRef]*attemptSeen{}, stepSeen: map[stepSeenKey]bool{}}
}

// WeekOf is the start of t's week: Monday 00:00 UTC.
func WeekOf(t time.Time) time.Time {
	t = t.UTC()
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	back := (int(day.Weekday()) + 6) % 7 // days since Monday
	return day.AddDate(0, 0, -back)
}

// in reports whether an event at t is in the period.
func (c *statsCounter) in(t time.Time) bool {
	return (c.q.Since.IsZero() || !t.Before(c.q.Since)) && (c.q.Now.IsZero() || !t.After(c.q.Now))
}

// add counts f for row k in the week of t and in the total.
func (c *statsCounter) add(k rowKey, t time.Time, f func(*tally)) {
	if c.first.IsZero() || t.Before(c.first) {
		c.first = t
	}
	f(c.row(k))
	f(c.week(WeekOf(t)))
	f(&c.total)
}

// row is row k's tally, new if none.
func (c *statsCounter) row(k rowKey) *tally {
	r := c.rows[k]
	if r == nil {
		r = &tally{}
		c.rows[k] = r
	}
	return r
}

// week is the tally of the week starting w, new if none.
func (c *statsCounter) week(w time.Time) *tally {
	wk := c.weeks[w]
	if wk == nil {
		wk = &tally{}
		c.weeks[w] = wk
	}
	return wk
}

// step counts step n once for row k, for the week of t and in the total.
func (c *statsCounter) step(n int, k rowKey, t time.Time) {
	w := WeekOf(t)
	for _, s := range []struct {
		key stepSeenKey
		t   *tally
	}{
		{stepSeenKey{step: n, row: k, where: 'r'}, c.rows[k]},
		{stepSeenKey{step: n, week: w, where: 'w'}, c.weeks[w]},
		{stepSeenKey{step: n, where: 't'}, &c.total},
	} {
		if !c.stepSeen[s.key] {
			c.stepSeen[s.key] = true
			s.t.Steps++
		}
	}
}

func (c *statsCounter) run(sr *StatsRun) {
	r := sr.Run
	if r == nil {
		return
	}
	clear(c.attempts)
	clear(c.stepSeen)
	var setup *Setup
	counted := false
	for i := range sr.Journal {
		ev := &sr.Journal[i]
		if ev.Seq > r.Seq && r.Seq > 0 {
			break // past the run as read
		}
		switch ev.Type {
		case EvRunStarted:
			if ev.Start != nil {
				setup = ev.Start.Setup
			}
		case EvSetupChanged:
			setup = ev.Setup
		case EvStepStarted:
			c.started(r, ev, setup)
		case EvStepFinished, EvStepInterrupted:
			counted = c.finished(ev) || counted
		case EvDecision:
			counted = c.decided(sr, ev) || counted
		}
	}
	if counted {
		c.runs++
	}
}

func (c *statsCounter) started(r *Run, ev *Event, setup *Setup) {
	st := r.Step(ev.Step)
	if st == nil {
		return
	}
	skill := ev.Skill
	if skill == "" {
		skill = st.Skill
	}
	// Until the attempt's end names the agent that ran it, it counts for
	// the one its run was set up with (or its candidate's runner).
	agent := AttemptAgent(setup, ev.Runner)
	if agent == "" {
		agent = AgentName(nil)
	}
	c.attempts[ArtifactRef{ev.Step, ev.Attempt}] = &attemptSeen{row: rowKey{skill, agent}}
}

// finished counts an attempt's result, once: its step-finished event, or
// the step-interrupted event of an attempt lost (FAILED).
func (c *statsCounter) finished(ev *Event) bool {
	a := c.attempts[ArtifactRef{ev.Step, ev.Attempt}]
	if a == nil || a.counted {
		return false
	}
	a.counted = true
	res := ev.Result
	if ev.Type == EvStepInterrupted {
		res = ResultFailed
	} else {
		a.agentArt = ev.Artifact
		if ev.Agent != "" {
			// The backend that ran the attempt recorded its agent (on
			// Temporal, the worker's, which the run's setup may not be).
			a.row.agent = ev.Agent
		}
	}
	a.result = res
	if ev.Status == StepWaiting || ev.Type == EvStepInterrupted {
		a.checkpoint = ev.Time
	}
	if (c.q.Skill != "" && a.row.skill != c.q.Skill) || !c.in(ev.Time) {
		return false
	}
	if res != ResultProduced && res != ResultEmpty && res != ResultFailed {
		return false // nothing ran: a dry run, or a manual step
	}
	c.add(a.row, ev.Time, func(t *tally) {
		t.Attempts++
		t.CostUSD += ev.CostUSD
		switch res {
		case ResultProduced:
			t.Produced++
		case ResultEmpty:
			t.Empty++
		case ResultFailed:
			t.Failed++
		}
	})
	c.step(ev.Step, a.row, ev.Time)
	return true
}

// decided counts a person's decision that settled a checkpoint.
func (c *statsCounter) decided(sr *StatsRun, ev *Event) bool {
	a := c.attempts[ArtifactRef{ev.Step, ev.Attempt}]
	if a == nil || ownActor(ev.Actor) || ev.Status == StepWaiting {
		return false
	}
	if (c.q.Skill != "" && a.row.skill != c.q.Skill) || !c.in(ev.Time) {
		return false
	}
	change, measured := 0.0, false
	if ev.Decision == DecideEdit {
		change, measured = editChange(sr.Versions[ArtifactRef{ev.Step, ev.Attempt}], a.agentArt)
	}
	var wait time.Duration
	waited := !a.checkpoint.IsZero() && !ev.Time.Before(a.checkpoint)
	if waited {
		wait = ev.Time.Sub(a.checkpoint)
	}
	c.add(a.row, ev.Time, func(t *tally) {
		if waited {
			t.waits = append(t.waits, wait)
		}
		t.decision(ev, a, change, measured)
	})
	return true
}

// decision counts a settling decision on attempt a in t.
func (t *tally) decision(ev *Event, a *attemptSeen, change float64, measured bool) {
	switch ev.Decision {
	case DecideApprove:
		t.Approved++
		if ev.Attempt == 1 && a.result == ResultProduced {
			t.FirstApproved++
		}
	case DecideEdit:
		t.Approved++
		t.Edited++
		if measured {
			t.EditMeasured++
			t.editSum += change
		}
	case DecideRedo:
		if ev.Feedback != "" {
			t.RedoneWithFeedback++
		} else {
			t.RedoneWithout++
		}
	case DecideSkip:
		t.Skipped++
	case DecideAbort:
		t.AbortedAt++
	case DecidePick:
		// A pick names the candidate picked: its row is its agent's, which
		// won, and its artifact is the one approved.
		t.PicksWon++
		t.Approved++
	}
}

// editChange measures an edit from an attempt's stored versions: the
// agent's own (the first, when the agent's artifact was stored; else an
// empty text) against the last, the one approved.
func editChange(vs [][]byte, agentStored bool) (float64, bool) {
	var before []byte
	if agentStored {
		if len(vs) < 2 {
			return 0, false
		}
		before = vs[0]
	}
	if len(vs) == 0 {
		return 0, false
	}
	return EditChange(before, vs[len(vs)-1]), true
}

func (c *statsCounter) result() Stats {
	out := Stats{Until: c.q.Now.UTC(), Skill: c.q.Skill, Runs: c.runs, Rows: []StatsRow{}, Weeks: []StatsWeek{},
		Total: c.total.done()}
	if !c.q.Since.IsZero() {
		s := c.q.Since.UTC()
		out.Since = &s
	}
	keys := make([]rowKey, 0, len(c.rows))
	for k := range c.rows {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b rowKey) int {
		if x := strings.Compare(a.skill, b.skill); x != 0 {
			return x
		}
		return strings.Compare(a.agent, b.agent)
	})
	for _, k := range keys {
		out.Rows = append(out.Rows, StatsRow{Skill: k.skill, Agent: k.agent, StatsCounts: c.rows[k].done()})
	}
	from := c.q.Since
	if from.IsZero() {
		from = c.first
	}
	if from.IsZero() {
		return out
	}
	last := c.q.Now
	if last.IsZero() {
		for w := range c.weeks {
			if w.After(last) {
				last = w
			}
		}
	}
	for w := WeekOf(from); !w.After(last); w = w.AddDate(0, 0, 7) {
		var counts StatsCounts
		if t := c.weeks[w]; t != nil {
			counts = t.done()
		}
		out.Weeks = append(out.Weeks, StatsWeek{Week: w, StatsCounts: counts})
	}
	return out
}
