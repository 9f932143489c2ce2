package terminal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// driver walks one run in the terminal: it prints what happens and asks for
// a decision at each checkpoint, from a person on a terminal or line by
// line from a script.
type driver struct {
	e       IO
	out     io.Writer // every line goes through engine.Printable
	raw     io.Writer // stdout itself, for the live line's cursor moves
	in      *lineReader
	tty     bool // a person answers at a terminal (stdin is one): prompts, short answers
	live    bool // stdout is a terminal: a live progress line, and $EDITOR may open
	svc     Backend
	data    string
	actor   string
	box     *Inbox
	maxEdit int64
	// every is how often a running step is reported when stdout is not a
	// terminal (a CI log, a pipe to tee), so the log shows it is alive.
	every time.Duration

	running  map[int]*liveStep // steps running now, by number
	progStep int               // the running step the terminal's live line shows
	spin     int
	drawn    bool
	shown    map[string]bool
	started  string // the attempt whose start line was printed last
	// typedEOF says a person's terminal closed its input while steps ran:
	// nothing more is read until a checkpoint asks.
	typedEOF bool
	// remote says the run is carried out on a Temporal cluster: this
	// terminal follows it, and stopping leaves it going on there. seen is
	// the last journal event the terminal was told of (or that the run it
	// began to drive held).
	remote bool
	seen   uint64
}

// IO is where the terminal reads and writes, and how it reads the
// environment ($VISUAL, $EDITOR).
type IO struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
}

// Options are what a terminal needs to know of its run's setting.
type Options struct {
	// Data is the data directory the run's files are under, named in the
	// commands the terminal suggests; empty when nothing of the run is on
	// this machine (a run on a Temporal cluster).
	Data string
	// Actor is who decides at this terminal.
	Actor string
	// MaxEdit caps an edited artifact read back, in bytes.
	MaxEdit int64
	// Every is how often a running step is reported when stdout is not a
	// terminal; 30 s when zero.
	Every time.Duration
	// Remote says the run is carried out on a Temporal cluster: this
	// terminal follows it, and stopping leaves it going on there.
	Remote bool
}

// Driver follows one run in the terminal.
type Driver = driver

// New returns a terminal that follows runs of svc, told of their news
// through box.
func New(io IO, svc Backend, box *Inbox, o Options) *Driver {
	every := o.Every
	if every <= 0 {
		every = 30 * time.Second
	}
	// The agent's words reach the terminal in previews, summaries,
	// reasons and journal lines: all of it is sanitised on the way out.
	raw := RawWriter(io.Stdout)
	io.Stdout, io.Stderr = Printable(io.Stdout), Printable(io.Stderr)
	return &driver{
		e: io, out: io.Stdout, raw: raw, in: newLineReader(io.Stdin), tty: IsTerminal(io.Stdin), live: IsTerminal(raw),
		svc: svc, data: o.Data, actor: o.Actor, box: box, maxEdit: o.MaxEdit, every: every, remote: o.Remote,
		running: map[int]*liveStep{}, shown: map[string]bool{},
	}
}

// Drive follows the run until it completes, is aborted, halts, or waits
// for a decision that stdin does not give. It returns the exit code.
func (d *driver) Drive(ctx context.Context, r *engine.Run) int {
	tick := time.NewTicker(150 * time.Millisecond)
	defer tick.Stop()
	// What r holds already was told before the drive began.
	d.seen = max(d.seen, r.Seq)
	for {
		var failed bool
		if r, failed = d.takeNews(ctx, r); failed {
			return ExitUsage
		}
		if d.endOnTheWay(ctx, r) {
			continue
		}
		if r.Finished() {
			return d.Finish(r)
		}
		next, code, done := d.advance(ctx, r, tick.C)
		if done {
			return code
		}
		if next != nil && next.Seq > r.Seq {
			r = next
		}
	}
}

// endOnTheWay reports whether the run ended while the events that ended
// it are still on their way: they are shown before the end. Every notice
// of a commit carries the run as the whole commit left it, so the first
// of them shows the run ended before the others (a best-of step's pick,
// the run's end) have reached the box; on a cluster, this terminal's own
// decision ends the run before its events come back.
func (d *driver) endOnTheWay(ctx context.Context, r *engine.Run) bool {
	return r.Finished() && d.seen < r.Seq && d.awaitNews(ctx)
}

// advance asks a person what the run waits on them for or, when it waits
// on nobody, waits for what moves it on.
func (d *driver) advance(ctx context.Context, r *engine.Run, tick <-chan time.Time) (next *engine.Run, code int, done bool) {
	next, code, done = d.askPerson(ctx, r)
	if done || next != nil {
		return next, code, done
	}
	return d.wait(ctx, r, tick)
}

// askPerson asks a person what the run waits on them for, if anything: the
// decision at a checkpoint, or to resume the run they paused. Decisions
// are asked for once no step runs: a workflow's other branches run on
// meanwhile, and their output does not break into the question. A step
// gonogo retries by itself is not asked about.
func (d *driver) askPerson(ctx context.Context, r *engine.Run) (next *engine.Run, code int, done bool) {
	if s := engine.NextDecision(r); s != nil {
		next, code, done = d.checkpoint(ctx, r, s)
		return orSame(next, r), code, done
	}
	if HeldByPerson(r) {
		next, code, done = d.paused(ctx, r)
		return orSame(next, r), code, done
	}
	return nil, 0, false
}

// orSame is next, or r when there is no next: asking was answered.
func orSame(next, r *engine.Run) *engine.Run {
	if next == nil {
		return r
	}
	return next
}

// wait waits for what moves the run on while nothing is asked: a line
// typed (pause, abort), news of the run, or a tick of the live line; and
// says what stopping leaves when ctx ends.
func (d *driver) wait(ctx context.Context, r *engine.Run, tick <-chan time.Time) (next *engine.Run, code int, done bool) {
	select {
	case lr := <-d.typed(r):
		d.in.took()
		return d.typedLine(ctx, r, lr), 0, false
	case <-d.box.signal:
	case <-tick:
		if d.live {
			d.draw(r)
		} else {
			d.report(r)
		}
	case <-ctx.Done():
		d.clearLine()
		d.stoppedRunning(r)
		return nil, ExitWaiting, true
	}
	return nil, 0, false
}

// stoppedRunning says what stopping gonogo leaves of a run under way.
func (d *driver) stoppedRunning(r *engine.Run) {
	if d.remote {
		fmt.Fprintf(d.out, "Stopped following. The run goes on on the cluster.\nFollow it again with: gonogo resume %s\n", r.ID)
		return
	}
	fmt.Fprintf(d.out, "Stopped. The run is kept; the running step will be offered for redo.\nContinue with: gonogo resume %s%s\n", r.ID, DataFlag(d.data))
}

func (d *driver) event(ctx context.Context, r *engine.Run, ev engine.Event) {
	s := r.Step(ev.Step)
	switch ev.Type {
	case engine.EvStepQueued:
		d.clearLine()
		fmt.Fprintf(d.out, "… %s queued: waiting for a free runner slot\n", StepTitle(r, s))
	case engine.EvStepStarted:
		d.clearLine()
		d.stepStarted(r, s, ev)
	case engine.EvStepFinished:
		d.clearLine()
		delete(d.running, ev.Step)
		d.stepBlock(ctx, r, s, ev)
	case engine.EvStepInterrupted:
		d.clearLine()
		delete(d.running, ev.Step)
		fmt.Fprintf(d.out, "! %s was interrupted: %s. Redo it or abort.\n", StepTitle(r, s), InterruptedWhy(s))
	case engine.EvDecision:
		d.clearLine()
		d.decided(r, s, ev)
	case engine.EvModeChanged:
		fmt.Fprintf(d.out, "Mode is now %s\n", ev.Mode)
	case engine.EvRunPaused, engine.EvRunResumed, engine.EvStepReleased:
		d.clearLine()
		d.pauseEvent(r, s, ev)
	case engine.EvStepsAdded:
		d.clearLine()
		d.stepsAdded(r, s, ev)
	}
}

// stepStarted announces an attempt starting and starts following it on
// the live line.
func (d *driver) stepStarted(r *engine.Run, s *engine.Step, ev engine.Event) {
	now := time.Now()
	d.running[ev.Step], d.progStep = &liveStep{start: now, said: now}, ev.Step
	fmt.Fprintf(d.out, "\n▶ %s%s\n", StepTitle(r, s), startedWhich(ev))
	d.threadNote(r, s)
	d.started = fmt.Sprintf("%d/%d", ev.Step, ev.Attempt)
}

// startedWhich names the attempt that started when it is not a step's
// first: a best-of candidate and its runner, or a redo.
func startedWhich(ev engine.Event) string {
	switch {
	case ev.Candidate > 0:
		return fmt.Sprintf(" (candidate %d on %s)", ev.Candidate, ev.Runner)
	case ev.Attempt > 1:
		return fmt.Sprintf(" (attempt %d)", ev.Attempt)
	}
	return ""
}

// decided prints a decision taken, and what a skip hands on instead.
func (d *driver) decided(r *engine.Run, s *engine.Step, ev engine.Event) {
	fmt.Fprintf(d.out, "✓ %s: %s by %s at %s\n", StepTitle(r, s), DecisionWords(ev), ev.Actor, ev.Time.Local().Format("15:04:05"))
	if ev.Decision == engine.DecideSkip {
		d.skipNote(r, s)
	}
}

// stepsAdded prints the steps a step's output added to the run.
func (d *driver) stepsAdded(r *engine.Run, s *engine.Step, ev engine.Event) {
	what := "added"
	if s != nil && s.Rules.Decompose != "" {
		what = "split its work into"
	}
	var ids []string
	for _, a := range ev.Added {
		ids = append(ids, a.ID)
	}
	fmt.Fprintf(d.out, "+ %s %s %d steps: %s\n", StepTitle(r, s), what, len(ev.Added), Clip(strings.Join(ids, ", "), 200))
}

// DecisionWords says what a decision was, in the words of the decision
// lines ("redo (attempt 2) with feedback "..."").
func DecisionWords(ev engine.Event) string {
	what := string(ev.Decision)
	switch {
	case ev.Decision == engine.DecidePick:
		what += fmt.Sprintf(" of candidate %d (attempt %d)", ev.Candidate, ev.Attempt)
	case ev.Attempt > 1:
		what += fmt.Sprintf(" (attempt %d)", ev.Attempt)
	}
	if ev.Feedback != "" {
		word := "feedback"
		if ev.Decision == engine.DecidePick {
			word = "note"
		}
		what += fmt.Sprintf(" with %s %q", word, Clip(OneLine(ev.Feedback), 80))
	}
	return what
}

// threadNote says, as a threaded step starts, whose artifact it is handed
// when the step before it was skipped.
func (d *driver) threadNote(r *engine.Run, s *engine.Step) {
	if s == nil || s.ThreadFrom == 0 || r.DryRun {
		return
	}
	from, passed := engine.ThreadSource(r, s)
	if len(passed) == 0 {
		return
	}
	var why []string
	for _, p := range passed {
		why = append(why, fmt.Sprintf("step %d (%s) %s", p.N, p.Skill, passedWhy(p)))
	}
	if from == nil {
		fmt.Fprintf(d.out, "  Input:    none: %s, and nothing before it is handed on\n", strings.Join(why, ", "))
		return
	}
	fmt.Fprintf(d.out, "  Input:    the confirmed artifact of step %d (%s), as %s\n", from.N, from.Skill, strings.Join(why, ", "))
}

// passedWhy says why step p handed no artifact on to the threaded step
// after it.
func passedWhy(p *engine.Step) string {
	if p.Status == engine.StepDone {
		return "confirmed no artifact"
	}
	if p.Rules.Optional {
		return "was given up on (optional)"
	}
	return "was skipped"
}

// skipNote says, at the skip of s, what the threaded steps that take its
// artifact are handed instead.
func (d *driver) skipNote(r *engine.Run, s *engine.Step) {
	if s == nil || !r.Thread || r.DryRun {
		return
	}
	for i := range r.Steps {
		next := &r.Steps[i]
		if next.ThreadFrom != s.N || next.Status != engine.StepPending {
			continue
		}
		d.handedInstead(r, next)
	}
}

// handedInstead says what threaded step next is handed in place of the
// artifact of the step skipped before it.
func (d *driver) handedInstead(r *engine.Run, next *engine.Step) {
	fmt.Fprintf(d.out, "  Step %d (%s) takes this step's artifact: ", next.N, next.Skill)
	if from, _ := engine.ThreadSource(r, next); from != nil {
		fmt.Fprintf(d.out, "it is handed the confirmed artifact of step %d (%s) instead.\n", from.N, from.Skill)
		return
	}
	fmt.Fprintln(d.out, "it runs without one, as nothing before it is handed on.")
}

// stopped says gonogo stopped at the checkpoint of s, the run kept.
func (d *driver) stopped(r *engine.Run, s *engine.Step) {
	if d.remote {
		fmt.Fprintf(d.out, "\nStopped following. The run waits on the cluster at %s.\nDecide from any machine with gonogo decide %s approve|skip|redo|abort, or follow it again with: gonogo resume %s\n", StepTitle(r, s), r.ID, r.ID)
		return
	}
	fmt.Fprintf(d.out, "\nStopped. The run is kept, waiting at %s.\nContinue with: gonogo resume %s%s\n", StepTitle(r, s), r.ID, DataFlag(d.data))
}

// Interrupted announces, as a run resumes, the steps gonogo stopped in.
func (d *driver) Interrupted(r *engine.Run) {
	for i := range r.Steps {
		if s := &r.Steps[i]; s.Status == engine.StepInterrupted {
			fmt.Fprintf(d.out, "! %s was interrupted: %s. Redo it or abort.\n", StepTitle(r, s), InterruptedWhy(s))
		}
	}
}

// Waiting shows, as a run resumes, the steps it waits on as they stand.
func (d *driver) Waiting(ctx context.Context, r *engine.Run) {
	for i := range r.Steps {
		s := &r.Steps[i]
		l := s.Latest()
		if s.Status != engine.StepWaiting || l == nil {
			continue
		}
		for _, a := range waitingShown(s, l) {
			d.stepBlock(ctx, r, s, finishedEvent(s, a))
		}
	}
}

// waitingShown is the attempts a waiting step shows: its candidates while
// one is picked, else its latest attempt l.
func waitingShown(s *engine.Step, l *engine.Attempt) []*engine.Attempt {
	if engine.Picking(s) {
		return engine.Candidates(s)
	}
	return []*engine.Attempt{l}
}

// finishedEvent is the event that finished attempt a of step s, as the
// step's block prints it.
func finishedEvent(s *engine.Step, a *engine.Attempt) engine.Event {
	return engine.Event{Type: engine.EvStepFinished, Step: s.N, Attempt: a.N, Result: a.Result,
		Reason: a.Reason, Summary: a.Summary, Artifact: a.Artifact, File: a.File, CostUSD: a.CostUSD, Usage: a.Usage, Status: s.Status}
}

// StepTitle is the engine's title of a step in plain text; "run" for none.
func StepTitle(r *engine.Run, s *engine.Step) string {
	if s == nil {
		return "run"
	}
	return engine.Title(r, s).String()
}

// leave ends the terminal session at a checkpoint stdin did not answer;
// the run waits in the store.
func (d *driver) leave(r *engine.Run, s *engine.Step) int {
	if d.tty {
		fmt.Fprintln(d.out)
	}
	l := s.Latest()
	if l != nil && l.Result == engine.ResultFailed {
		// The reason was printed with the step's result just above.
		fmt.Fprintf(d.out, "Run halted at %s: FAILED\nContinue with: gonogo resume %s%s (redo or abort)\n", StepTitle(r, s), r.ID, DataFlag(d.data))
		return ExitRefused
	}
	if s.Status == engine.StepInterrupted {
		fmt.Fprintf(d.out, "Run halted at %s: interrupted\nContinue with: gonogo resume %s%s (redo or abort)\n", StepTitle(r, s), r.ID, DataFlag(d.data))
		return ExitWaiting
	}
	fmt.Fprintf(d.out, "Run waiting for a decision at %s\nContinue with: gonogo resume %s%s\n", StepTitle(r, s), r.ID, DataFlag(d.data))
	return ExitWaiting
}

// Finish prints the end of a run: the completion table, or the abort.
func (d *driver) Finish(r *engine.Run) int {
	d.clearLine()
	fmt.Fprintln(d.out)
	code := ExitOK
	if r.State == engine.RunAborted {
		fmt.Fprintf(d.out, "Run halted: %s (%s)\n", r.ID, r.Halt)
		code = ExitRefused
	} else {
		fmt.Fprintf(d.out, "Run complete: %s\n", r.ID)
	}
	PrintSteps(d.out, r, d.data)
	PrintLeftovers(d.out, r.Plan)
	if r.CostUSD > 0 {
		fmt.Fprintf(d.out, "Total cost: $%.2f\n", r.CostUSD)
	}
	return code
}

func RandomKey() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// takeNews shows what the notices waiting for the terminal say of run r,
// and returns the run as it stands after them; failed says one reported
// an error, which ends the drive.
func (d *driver) takeNews(ctx context.Context, r *engine.Run) (*engine.Run, bool) {
	for _, n := range d.box.drain() {
		if n.Run == nil || n.Run.ID != r.ID {
			continue
		}
		if n.Err != nil {
			d.newsFailed(r, n.Err)
			return r, true
		}
		if n.Progress != nil {
			d.progressed(n)
			continue
		}
		if n.Run.Seq > r.Seq {
			r = n.Run
		}
		d.seen = max(d.seen, n.Event.Seq)
		d.event(ctx, n.Run, n.Event)
	}
	return r, false
}

// newsFailed says a notice reported an error, and how to go on.
func (d *driver) newsFailed(r *engine.Run, err error) {
	d.clearLine()
	fmt.Fprintf(d.e.Stderr, "gonogo: %v\nNothing already recorded was lost; fix the cause and continue with: gonogo resume %s%s\n", err, r.ID, DataFlag(d.data))
}

// progressed keeps a running step's progress for the live line, which
// shows the step that progressed last.
func (d *driver) progressed(n engine.Notice) {
	if ls := d.running[n.Event.Step]; ls != nil {
		ls.progress, d.progStep = n.Progress, n.Event.Step
	}
}

// awaitNews waits, up to two seconds, for news of the run a remote driver
// follows; it reports whether any came.
func (d *driver) awaitNews(ctx context.Context) bool {
	t := time.NewTimer(2 * time.Second)
	defer t.Stop()
	select {
	case <-d.box.signal:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// Backend is what the terminal asks while it follows a run: the run and
// its artifacts, and the decisions a person takes at its checkpoints.
type Backend interface {
	Load(ctx context.Context, id engine.RunID) (*engine.Run, error)
	Artifact(ctx context.Context, id engine.RunID, step, attempt int) ([]byte, error)
	Decide(ctx context.Context, id engine.RunID, d engine.Decision, body []byte) (*engine.Run, error)
	Pause(ctx context.Context, id engine.RunID, actor string) (*engine.Run, error)
	Unpause(ctx context.Context, id engine.RunID, actor string, m engine.Mode) (*engine.Run, error)
	Abort(ctx context.Context, id engine.RunID, actor string) (*engine.Run, error)
}

// InterruptedWhy says why step s was interrupted: the worker running it
// was lost, or gonogo stopped while it ran.
func InterruptedWhy(s *engine.Step) string {
	if engine.WorkerLost(s) {
		return "the worker running it was lost"
	}
	return "gonogo stopped while it ran"
}
