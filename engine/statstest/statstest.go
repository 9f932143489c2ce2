// Package statstest records a store of runs whose stats are known by
// construction, for the tests of every front end of gonogo stats (the
// engine's computation, the command line, Slack, /metrics). Each run is
// driven through the engine's own transitions (NewRun, Start, Finish,
// Decide, ChangeSetup), as a service drives it, and kept as the commits a
// store applies; what each run should count is written down as the run is
// made, from the choices that made it, never read back from its journal.
// It imports engine and the standard library only.
//
//	rec := statstest.Generate(300)
//	for _, r := range rec.Runs {
//		for _, c := range r.Commits {
//			if err := store.Commit(ctx, c); err != nil { ... }
//		}
//	}
//	want := rec.Want(engine.StatsQuery{Now: rec.Now})
package statstest

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// Skills and Agents are what the recorded runs run: agent i is the base
// name of AgentCmds[i].
var (
	Skills    = []string{"deliver-prd", "deliver-user-stories", "discover-interviews"}
	Agents    = []string{"claude", "codex"}
	AgentCmds = []string{"/usr/local/bin/claude", "/opt/tools/codex"}
)

// T0 is when the first recorded run starts: a Monday, so the weeks are
// easy to count by hand.
var T0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// Recorded is a generated store: its runs, and when the last of them ends.
type Recorded struct {
	Runs  []Run
	Now   time.Time // after every event
	facts []fact
}

// Run is one run as the commits a store applies, in order.
type Run struct {
	ID      engine.RunID
	Commits []engine.Commit
}

// fact is one thing a run should count, noted as the generator did it.
type fact struct {
	run   int
	skill string
	agent string
	at    time.Time
	step  int
	kind  string // attempt:<result>, decision:<kind>, redo-feedback, edit
	cost  float64
	wait  time.Duration // for a decision: since its checkpoint
	edit  float64       // for an edit: the share of lines it changed
}

// agentText is the agent's artifact: editLines lines.
const editLines = 8

func agentText(run, attempt int) []byte {
	var b strings.Builder
	for i := range editLines {
		fmt.Fprintf(&b, "run %d attempt %d line %d\n", run, attempt, i)
	}
	return []byte(b.String())
}

// edited changes k of the agent's lines: the share changed is 2k / 16.
func edited(body []byte, k int) []byte {
	lines := strings.SplitAfter(string(body), "\n")
	for i := range k {
		lines[i] = "changed by a person " + fmt.Sprint(i) + "\n"
	}
	return []byte(strings.Join(lines, ""))
}

// Generate records n runs. Run i starts 6 hours after run i-1, runs skill
// i%3 with agent (i/3)%2, and follows scenario i%7 (see scenarios); a
// decision comes (i%5+1)*7 minutes after its checkpoint.
func Generate(n int) *Recorded {
	rec := &Recorded{}
	for i := range n {
		d := &driver{rec: rec, i: i, now: T0.Add(time.Duration(i) * 6 * time.Hour),
			skill: Skills[i%len(Skills)], agent: (i / len(Skills)) % len(Agents)}
		scenarios[i%len(scenarios)](d)
		rec.Runs = append(rec.Runs, Run{ID: d.id, Commits: d.commits})
		if d.now.After(rec.Now) {
			rec.Now = d.now
		}
	}
	rec.Now = rec.Now.Add(time.Hour)
	return rec
}

// scenarios are the ways a recorded run goes, one step each.
var scenarios = []func(d *driver){
	func(d *driver) { // PRODUCED, approved as it was
		d.begin(false)
		d.attempt(engine.ResultProduced)
		d.decide(engine.DecideApprove, "")
	},
	func(d *driver) { // PRODUCED, edited: 1, 2 or 4 lines of 8
		d.begin(false)
		d.attempt(engine.ResultProduced)
		d.edit([]int{1, 2, 4}[d.i/7%3])
	},
	func(d *driver) { // FAILED, redone without feedback by the other agent, then approved
		d.begin(false)
		d.attempt(engine.ResultFailed)
		d.decide(engine.DecideRedo, "")
		d.switchAgent()
		d.attempt(engine.ResultProduced)
		d.decide(engine.DecideApprove, "")
	},
	func(d *driver) { // PRODUCED, redone with feedback, approved on attempt 2
		d.begin(false)
		d.attempt(engine.ResultProduced)
		d.decide(engine.DecideRedo, "shorter, please")
		d.attempt(engine.ResultProduced)
		d.decide(engine.DecideApprove, "")
	},
	func(d *driver) { // EMPTY, skipped
		d.begin(false)
		d.attempt(engine.ResultEmpty)
		d.decide(engine.DecideSkip, "")
	},
	func(d *driver) { // PRODUCED, aborted there
		d.begin(false)
		d.attempt(engine.ResultProduced)
		d.decide(engine.DecideAbort, "")
	},
	func(d *driver) { // guarded auto: PRODUCED and went on, nobody decided
		d.begin(true)
		d.attempt(engine.ResultProduced)
	},
}

// driver drives one run through the engine's transitions.
type driver struct {
	rec     *Recorded
	i       int
	id      engine.RunID
	skill   string
	agent   int
	now     time.Time
	r       *engine.Run
	commits []engine.Commit
	// checkpoint is when the step's latest attempt began to wait.
	checkpoint time.Time
	body       []byte // the latest attempt's artifact
}

func (d *driver) setup() engine.Setup {
	return engine.Setup{Runner: "command", RunnerCmd: AgentCmds[d.agent]}
}

func (d *driver) apply(evs []engine.Event, err error, arts ...engine.ArtifactWrite) {
	if err != nil {
		panic(fmt.Sprintf("statstest: run %d: the engine refused a move: %v", d.i, err))
	}
	after := uint64(0)
	if d.r != nil {
		after = d.r.Seq
	} else {
		d.r = &engine.Run{}
	}
	r, err := engine.Fold(d.r, evs)
	if err != nil {
		panic(fmt.Sprintf("statstest: run %d: fold: %v", d.i, err))
	}
	d.r = r
	d.commits = append(d.commits, engine.Commit{Run: r.Clone(), Events: evs, After: after, Artifacts: arts})
}

func (d *driver) tick(dt time.Duration) time.Time {
	d.now = d.now.Add(dt)
	return d.now
}

func (d *driver) begin(auto bool) {
	d.id = engine.RunID(fmt.Sprintf("%s-%08x", d.now.Format("20060102-150405"), d.i))
	p := engine.Plan{Input: engine.InputChain, Source: "statstest", Flags: engine.Flags{ForceAuto: auto, Auto: auto}}
	p.Steps = []engine.PlanStep{{Skill: d.skill, Effort: "effort", Prompt: "write the " + d.skill,
		Category: engine.CategoryContent, Execution: engine.ExecDelegate, Line: 1}}
	s := d.setup()
	d.apply(engine.NewRun(d.id, p, engine.StartOptions{StartedBy: "U-ana", Setup: &s}, d.now))
}

// cost is attempt k's cost: a sum of halves and eighths adds up exactly
// in any order.
func (d *driver) cost() float64 { return float64(d.i%4+1) * 0.125 }

func (d *driver) attempt(res engine.Result) {
	evs, err := engine.Start(d.r, 1, d.tick(time.Minute))
	d.apply(evs, err)
	a := d.r.Step(1).Latest().N
	f := engine.Finished{Result: res, CostUSD: d.cost(), Summary: "an artifact"}
	var arts []engine.ArtifactWrite
	if res == engine.ResultProduced {
		d.body = agentText(d.i, a)
		f.Artifact, f.Size = true, len(d.body)
		arts = append(arts, engine.ArtifactWrite{Step: 1, Attempt: a, Body: d.body})
	}
	if res == engine.ResultFailed {
		f.Reason = "exit status 1"
	}
	at := d.tick(3 * time.Minute)
	evs, err = engine.Finish(d.r, 1, a, f, at)
	d.apply(evs, err, arts...)
	d.checkpoint = at
	d.note(fact{kind: "attempt:" + string(res), at: at, cost: f.CostUSD})
}

func (d *driver) wait() time.Duration { return time.Duration(d.i%5+1) * 7 * time.Minute }

func (d *driver) decide(k engine.DecisionKind, feedback string) {
	w := d.wait()
	at := d.tick(w)
	a := d.r.Step(1).Latest().N
	evs, err := engine.Decide(d.r, engine.Decision{Kind: k, Actor: "U-ana", Step: 1, Attempt: a,
		Key: fmt.Sprintf("k-%d-%d-%s", d.i, a, k), Feedback: feedback}, nil, at)
	d.apply(evs, err)
	kind := "decision:" + string(k)
	if k == engine.DecideApprove && a == 1 {
		kind = "decision:approve-first"
	}
	if k == engine.DecideRedo && feedback != "" {
		kind = "decision:redo-feedback"
	}
	d.note(fact{kind: kind, at: at, wait: w})
}

func (d *driver) edit(lines int) {
	w := d.wait()
	at := d.tick(w)
	a := d.r.Step(1).Latest().N
	body := edited(d.body, lines)
	evs, err := engine.Decide(d.r, engine.Decision{Kind: engine.DecideEdit, Actor: "U-ana", Step: 1, Attempt: a,
		Key: fmt.Sprintf("k-%d-%d-edit", d.i, a)}, &engine.Edit{Size: len(body), Summary: "edited"}, at)
	d.apply(evs, err, engine.ArtifactWrite{Step: 1, Attempt: a, Body: body})
	d.note(fact{kind: "decision:edit", at: at, wait: w, edit: float64(2*lines) / float64(2*editLines)})
}

// switchAgent resumes the run with the other agent, as gonogo resume
// --runner-cmd does.
func (d *driver) switchAgent() {
	d.agent = (d.agent + 1) % len(AgentCmds)
	d.apply(engine.ChangeSetup(d.r, d.setup(), "U-ana", d.tick(time.Minute)))
}

func (d *driver) note(f fact) {
	f.run, f.skill, f.agent, f.step = d.i, d.skill, Agents[d.agent], 1
	d.rec.facts = append(d.rec.facts, f)
}

// Want is what stats should say of the recorded runs for q, tallied from
// the facts noted as the runs were made.
func (rec *Recorded) Want(q engine.StatsQuery) engine.Stats {
	out := engine.Stats{Until: q.Now.UTC(), Skill: q.Skill, Rows: []engine.StatsRow{}, Weeks: []engine.StatsWeek{}}
	if !q.Since.IsZero() {
		s := q.Since.UTC()
		out.Since = &s
	}
	type key struct{ skill, agent string }
	rows := map[key]*bucket{}
	weeks := map[time.Time]*bucket{}
	total := &bucket{}
	runs := map[int]bool{}
	var first time.Time
	for _, f := range rec.facts {
		if !f.in(q) {
			continue
		}
		runs[f.run] = true
		if first.IsZero() || f.at.Before(first) {
			first = f.at
		}
		k := key{f.skill, f.agent}
		w := monday(f.at)
		if rows[k] == nil {
			rows[k] = &bucket{}
		}
		if weeks[w] == nil {
			weeks[w] = &bucket{}
		}
		for _, b := range []*bucket{rows[k], weeks[w], total} {
			b.add(f)
		}
	}
	out.Runs = len(runs)
	keys := make([]key, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.skill != b.skill {
			return strings.Compare(a.skill, b.skill)
		}
		return strings.Compare(a.agent, b.agent)
	})
	for _, k := range keys {
		out.Rows = append(out.Rows, engine.StatsRow{Skill: k.skill, Agent: k.agent, StatsCounts: rows[k].counts()})
	}
	out.Total = total.counts()
	from := q.Since
	if from.IsZero() {
		from = first
	}
	out.Weeks = weekly(weeks, from, q.Now)
	return out
}

// in reports whether q counts f.
func (f fact) in(q engine.StatsQuery) bool {
	return (q.Skill == "" || f.skill == q.Skill) && (q.Since.IsZero() || !f.at.Before(q.Since)) &&
		(q.Now.IsZero() || !f.at.After(q.Now))
}

// weekly lists every week from the week of from to that of now, with
// the figures of those that have some.
func weekly(weeks map[time.Time]*bucket, from, now time.Time) []engine.StatsWeek {
	out := []engine.StatsWeek{}
	if from.IsZero() {
		return out
	}
	for w := monday(from); !w.After(now); w = w.Add(7 * 24 * time.Hour) {
		var c engine.StatsCounts
		if b := weeks[w]; b != nil {
			c = b.counts()
		}
		out = append(out, engine.StatsWeek{Week: w, StatsCounts: c})
	}
	return out
}

// monday is the Monday 00:00 UTC of t's week, counted in days from T0
// (itself a Monday).
func monday(t time.Time) time.Time {
	day := 24 * time.Hour
	base := time.Date(T0.Year(), T0.Month(), T0.Day(), 0, 0, 0, 0, time.UTC)
	weeks := t.Sub(base) / (7 * day)
	if t.Before(base) && t.Sub(base)%(7*day) != 0 {
		weeks--
	}
	return base.Add(weeks * 7 * day)
}

type bucket struct {
	c       engine.StatsCounts
	steps   map[int]bool
	edits   float64
	waits   []time.Duration
	nEdited int
}

func (b *bucket) add(f fact) {
	if b.steps == nil {
		b.steps = map[int]bool{}
	}
	if strings.HasPrefix(f.kind, "attempt:") {
		b.steps[f.run] = true // one step per run
		b.c.Attempts++
		b.c.CostUSD += f.cost
	} else {
		b.waits = append(b.waits, f.wait)
	}
	switch f.kind {
	case "attempt:PRODUCED":
		b.c.Produced++
	case "attempt:EMPTY":
		b.c.Empty++
	case "attempt:FAILED":
		b.c.Failed++
	case "decision:approve-first":
		b.c.Approved++
		b.c.FirstApproved++
	case "decision:approve":
		b.c.Approved++
	case "decision:edit":
		b.c.Approved++
		b.c.Edited++
		b.nEdited++
		b.edits += f.edit
	case "decision:redo":
		b.c.RedoneWithout++
	case "decision:redo-feedback":
		b.c.RedoneWithFeedback++
	case "decision:skip":
		b.c.Skipped++
	case "decision:abort":
		b.c.AbortedAt++
	}
}

func (b *bucket) counts() engine.StatsCounts {
	c := b.c
	c.Steps = len(b.steps)
	c.EditMeasured = b.nEdited
	if b.nEdited > 0 {
		c.EditChange = b.edits / float64(b.nEdited)
	}
	c.Decided = len(b.waits)
	if n := len(b.waits); n > 0 {
		ws := slices.Clone(b.waits)
		slices.Sort(ws)
		m := ws[n/2]
		if n%2 == 0 {
			m = (ws[n/2-1] + ws[n/2]) / 2
		}
		c.DecisionMedianSeconds = m.Seconds()
	}
	if c.Approved > 0 {
		per := c.CostUSD / float64(c.Approved)
		c.CostPerApproved = &per
	}
	return c
}

// StatsRun is the run as engine.ComputeStats reads it: the run after its
// last commit, its whole journal, and the versions of each artifact in
// the order the commits stored them.
func (r Run) StatsRun() engine.StatsRun {
	sr := engine.StatsRun{Versions: map[engine.ArtifactRef][][]byte{}}
	for _, c := range r.Commits {
		sr.Run = c.Run
		sr.Journal = append(sr.Journal, c.Events...)
		for _, a := range c.Artifacts {
			ref := engine.ArtifactRef{Step: a.Step, Attempt: a.Attempt}
			sr.Versions[ref] = append(sr.Versions[ref], a.Body)
		}
	}
	return sr
}

// StatsRuns are all the runs as engine.ComputeStats reads them.
func (rec *Recorded) StatsRuns() []engine.StatsRun {
	out := make([]engine.StatsRun, len(rec.Runs))
	for i, r := range rec.Runs {
		out[i] = r.StatsRun()
	}
	return out
}
