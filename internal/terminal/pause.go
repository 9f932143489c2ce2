package terminal

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gonogo/gonogo/engine"
)

// A person at a terminal pauses a run by typing p (and Enter) while a step
// runs; the run then waits at the step's checkpoint, which offers its
// decisions and [c]ontinue. While gonogo waits out an agent's rate limit,
// r redoes the step at once and b aborts.

// HeldByPerson reports whether r waits only because a person paused it:
// no step runs and none waits for a decision.
func HeldByPerson(r *engine.Run) bool {
	return engine.StandingOf(r).Stand == engine.StandPaused
}

func ModeWord(m engine.Mode) string {
	if m == engine.ModeGuardedAuto {
		return "auto"
	}
	return "checkpointed"
}

// ResumeWords reads a line that resumes a paused run: c, continue or resume
// go on in the run's mode; with "checkpointed" after them, checkpointed.
func ResumeWords(line string) (engine.Mode, bool) {
	word, rest, _ := strings.Cut(strings.ToLower(strings.TrimSpace(line)), " ")
	if !resumeWord[word] {
		return "", false
	}
	m, ok := resumeMode[strings.TrimSpace(rest)]
	return m, ok
}

var resumeWord = map[string]bool{"c": true, "continue": true, "resume": true}

// resumeMode is the mode a word after the resume word asks for; none goes
// on in the run's own mode.
var resumeMode = map[string]engine.Mode{"": "", "checkpointed": engine.ModeCheckpointed}

// unpause resumes a paused run on the terminal's word.
func (d *driver) unpause(ctx context.Context, r *engine.Run, m engine.Mode) (*engine.Run, int, bool) {
	next, err := d.svc.Unpause(ctx, r.ID, d.actor, m)
	switch {
	case err == nil:
		return next, 0, false
	case errors.Is(err, engine.ErrNotPaused):
		return d.refused(ctx, r.ID, err)
	default:
		fmt.Fprintf(d.e.Stderr, "gonogo: the run was not resumed: %v\n", err)
		return nil, ExitUsage, true
	}
}

// paused asks what to do with a run a person paused that has no step to
// decide on (it was paused before its next step started).
func (d *driver) paused(ctx context.Context, r *engine.Run) (*engine.Run, int, bool) {
	if d.tty {
		fmt.Fprintf(d.out, "Run paused by %s. [c]ontinue %s a[b]ort > ", r.PausedBy, ModeWord(r.Mode))
	}
	select {
	case lr := <-d.in.poll():
		d.in.took()
		return d.pausedAnswer(ctx, r, lr)
	case <-d.box.signal:
		// Something happened meanwhile (it was resumed from another
		// shell, say): the caller reads it and asks again if need be.
		if d.tty {
			fmt.Fprintln(d.out)
		}
		return nil, 0, false
	case <-ctx.Done():
		d.stoppedPaused(r)
		return nil, ExitWaiting, true
	}
}

// stoppedPaused says what stopping gonogo leaves of a paused run.
func (d *driver) stoppedPaused(r *engine.Run) {
	if d.remote {
		fmt.Fprintf(d.out, "\nStopped following. The run stays paused on the cluster.\nFollow it again with: gonogo resume %s\n", r.ID)
		return
	}
	fmt.Fprintf(d.out, "\nStopped. The run is kept, paused.\nContinue with: gonogo resume %s%s\n", r.ID, DataFlag(d.data))
}

// pausedAnswer carries out the line read at a paused run's prompt.
func (d *driver) pausedAnswer(ctx context.Context, r *engine.Run, lr lineResult) (*engine.Run, int, bool) {
	line, err := lr.line, lr.err
	if tooLong(err) {
		return d.notAnAnswer(r, err)
	}
	if err != nil && strings.TrimSpace(line) == "" {
		d.leavePaused(r)
		return nil, ExitWaiting, true
	}
	if m, ok := ResumeWords(line); ok {
		return d.unpause(ctx, r, m)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "b", "abort":
		return d.abortPaused(ctx, r)
	case "":
		return nil, 0, false
	}
	return d.notAnAnswer(r, fmt.Errorf("%q is not an answer here; expected continue, continue checkpointed or abort", Clip(strings.TrimSpace(line), 40)))
}

// leavePaused says, as the input ends at a paused run's prompt, that the
// run stays paused, and how to go on.
func (d *driver) leavePaused(r *engine.Run) {
	if d.tty {
		fmt.Fprintln(d.out)
	}
	fmt.Fprintf(d.out, "Run paused by %s: no step starts until it is resumed.\nContinue with: gonogo resume %s%s\n", r.PausedBy, r.ID, DataFlag(d.data))
}

// abortPaused aborts a paused run, once a person at a terminal confirms.
func (d *driver) abortPaused(ctx context.Context, r *engine.Run) (*engine.Run, int, bool) {
	if d.tty && !d.confirmAbort(ctx, r, nil) {
		return nil, 0, false
	}
	next, err := d.svc.Abort(ctx, r.ID, d.actor)
	if err != nil {
		fmt.Fprintln(d.e.Stderr, "gonogo:", err)
		return nil, ExitUsage, true
	}
	return next, 0, false
}

// notAnAnswer says why a line did not answer the paused run: a person at
// a terminal is asked again; a script leaves the run paused (exit 2).
func (d *driver) notAnAnswer(r *engine.Run, err error) (*engine.Run, int, bool) {
	fmt.Fprintln(d.e.Stderr, "gonogo:", err)
	if !d.tty {
		fmt.Fprintf(d.e.Stderr, "The run is kept, paused: gonogo resume %s%s\n", r.ID, DataFlag(d.data))
		return nil, ExitUsage, true
	}
	return nil, 0, false
}

// typed is where a line a person types while steps run (or while a rate
// limit is waited out) arrives; nil, which never delivers, when nobody
// types at a terminal or nothing is under way.
func (d *driver) typed(r *engine.Run) <-chan lineResult {
	if !d.tty || d.typedEOF || r.Finished() {
		return nil
	}
	if r.State == engine.RunRunning || rateLimitWait(r) != nil {
		return d.in.poll()
	}
	return nil
}

// rateLimitWait is the step whose rate limit gonogo waits out, or nil.
func rateLimitWait(r *engine.Run) *engine.Step {
	for i := range r.Steps {
		s := &r.Steps[i]
		if _, _, _, ok := engine.RetryDue(s); ok && engine.RetryActorFor(s) == engine.RateLimitActor {
			return s
		}
	}
	return nil
}

// typedLine carries out a line typed while steps run: p pauses the run;
// during a rate-limit wait, a decision on the waiting step is taken.
func (d *driver) typedLine(ctx context.Context, r *engine.Run, lr lineResult) *engine.Run {
	line := strings.TrimSpace(lr.line)
	if tooLong(lr.err) {
		d.clearLine()
		fmt.Fprintln(d.e.Stderr, "gonogo:", lr.err)
		return nil
	}
	if lr.err != nil && line == "" {
		d.typedEOF = true
		return nil
	}
	d.clearLine()
	switch strings.ToLower(line) {
	case "":
		return nil
	case "p", "pause":
		next, err := d.svc.Pause(ctx, r.ID, d.actor)
		if err != nil {
			fmt.Fprintln(d.out, "gonogo:", err)
			return nil
		}
		return next
	}
	if s := rateLimitWait(r); s != nil {
		return d.decideWaiting(ctx, r, s, line)
	}
	fmt.Fprintln(d.out, "While a step runs, p pauses the run once it finishes (Ctrl-C stops gonogo; the run is kept).")
	return nil
}

// decideWaiting takes the decision a line gives on step s, whose rate
// limit gonogo waits out.
func (d *driver) decideWaiting(ctx context.Context, r *engine.Run, s *engine.Step, line string) *engine.Run {
	dec, body, err := d.parseDecision(ctx, r, s, line, engine.Allowed(s))
	if err != nil {
		fmt.Fprintln(d.e.Stderr, "gonogo:", err)
		return nil
	}
	if dec == nil {
		return nil
	}
	dec.Step, dec.Attempt, dec.Actor, dec.Key = s.N, AttemptN(s.Latest()), d.actor, "cli:"+RandomKey()
	next, err := d.svc.Decide(ctx, r.ID, *dec, body)
	if err != nil {
		fmt.Fprintln(d.e.Stderr, "gonogo:", err)
		return nil
	}
	return next
}

// pauseEvent prints a pause, a resume, or a held step going on.
func (d *driver) pauseEvent(r *engine.Run, s *engine.Step, ev engine.Event) {
	at := ev.Time.Local().Format("15:04:05")
	switch ev.Type {
	case engine.EvRunPaused:
		d.pausedEvent(ev, at)
	case engine.EvRunResumed:
		d.resumedEvent(r, ev, at)
	case engine.EvStepReleased:
		fmt.Fprintf(d.out, "✓ %s: goes on, as the run resumed in %s mode.\n", StepTitle(r, s), ModeWord(r.Mode))
	}
}

// pausedEvent says who paused the run and what that holds back.
func (d *driver) pausedEvent(ev engine.Event, at string) {
	if ev.Actor != engine.RateLimitActor {
		fmt.Fprintf(d.out, "‖ Run paused by %s at %s: running steps finish and wait at a checkpoint; no step starts until it is resumed.\n", ev.Actor, at)
		return
	}
	fmt.Fprintf(d.out, "‖ Paused: %s\n", ev.Reason)
	if d.tty {
		fmt.Fprintln(d.out, "  gonogo redoes the step by itself; meanwhile r redoes it now, b aborts.")
	}
}

// resumedEvent says who resumed the run, and in which mode it goes on.
func (d *driver) resumedEvent(r *engine.Run, ev engine.Event, at string) {
	if ev.Actor == engine.RateLimitActor {
		fmt.Fprintf(d.out, "▶ Rate limit waited out at %s: redoing the step.\n", at)
		return
	}
	mode := r.Mode
	if ev.Mode != "" {
		mode = ev.Mode
	}
	fmt.Fprintf(d.out, "▶ Run resumed by %s at %s (%s).\n", ev.Actor, at, ModeWord(mode))
}
