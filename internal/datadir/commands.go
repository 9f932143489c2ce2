package datadir

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/terminal"
)

// Decide carries out one gonogo decide on dc (held: another gonogo holds
// data and carries the decision out), printing to stdout and stderr, and
// returns its exit code.
func Decide(ctx context.Context, stdout, stderr io.Writer, dc Decider, held bool, req terminal.DecideRequest) int {
	r, err := dc.Load(ctx, req.Run)
	if errors.Is(err, engine.ErrNotFound) {
		return terminal.Fail(stderr, "decide", fmt.Errorf("no run %s %s (see gonogo runs)", req.Run, Where(dc, req.Data)))
	}
	if err != nil {
		return terminal.Fail(stderr, "decide", err)
	}
	if req.Key == "" {
		req.Key = "local:" + terminal.RandomKey()
	} else if code, answered := answerKey(stdout, stderr, r, req); answered {
		return code
	}
	s, err := req.StepOf(r)
	if err != nil {
		return refuseOrFail(stderr, err)
	}
	if err := terminal.NeedsHolder(r, s, req.Kind, held, req.Data); err != nil {
		return terminal.Fail(stderr, "decide", err)
	}
	d := req.Decision(s)
	after, carried, err := dc.Decide(ctx, r.ID, d)
	if errors.Is(err, engine.ErrDuplicate) || errors.Is(err, engine.ErrKeyReused) {
		// Another decide with the key got there first: the run as it
		// now stands says whether it was this decision.
		if now, lerr := dc.Load(ctx, r.ID); lerr == nil {
			if code, answered := answerKey(stdout, stderr, now, req); answered {
				return code
			}
		}
	}
	if err != nil {
		return refuseOrFail(stderr, err)
	}
	v := terminal.Recorded{Run: after, Data: req.Data, Holder: HolderName(dc, held), Carried: carried}
	v.Decided(stdout, d)
	return terminal.ExitOK
}

// answerKey answers a decision whose --key run r has recorded a decision
// under: already decided (exit 0) when it is the decision asked for,
// refused (exit 1), naming the recorded one, when the key was used for
// another. answered is false when r recorded nothing under the key.
func answerKey(stdout, stderr io.Writer, r *engine.Run, req terminal.DecideRequest) (code int, answered bool) {
	rec, err := engine.KeyedBefore(r, req.Asked())
	switch {
	case err != nil:
		return refuseOrFail(stderr, err), true
	case rec == nil:
		return 0, false
	}
	fmt.Fprintf(stdout, "Already decided with key %s on run %s: %s; nothing applied twice.\n", req.Key, r.ID, engine.DescribeDecision(*rec))
	return terminal.ExitOK, true
}

// refuseOrFail prints err and returns 1 for a refusal under the run's
// rules, 2 for anything else.
func refuseOrFail(stderr io.Writer, err error) int {
	if errors.Is(err, terminal.ErrRefused) || engine.IsRefusal(err) {
		fmt.Fprintf(stderr, "gonogo decide: REFUSED: %s\n", strings.TrimSuffix(err.Error(), ": "+terminal.ErrRefused.Error()))
		return terminal.ExitRefused
	}
	return terminal.Fail(stderr, "decide", err)
}

// Pause carries out one gonogo pause of run id in data on p (held:
// another gonogo holds data and pauses the run), as who, and returns its
// exit code.
func Pause(ctx context.Context, stdout, stderr io.Writer, p Pauser, held bool, data string, id engine.RunID, who string) int {
	r, carried, err := p.Pause(ctx, id, who)
	switch {
	case errors.Is(err, engine.ErrNotFound):
		return terminal.Fail(stderr, "pause", fmt.Errorf("no run %s %s (see gonogo runs)", id, Where(p, data)))
	case errors.Is(err, engine.ErrPaused):
		fmt.Fprintf(stdout, "Nothing changed: %v.\n", err)
		return terminal.ExitOK
	case errors.Is(err, engine.ErrNotMoving):
		fmt.Fprintf(stderr, "gonogo pause: REFUSED: %v\n", err)
		return terminal.ExitRefused
	case err != nil:
		return terminal.Fail(stderr, "pause", err)
	}
	terminal.Recorded{Run: r, Data: data, Holder: HolderName(p, held), Carried: carried}.Paused(stdout, who)
	return terminal.ExitOK
}

// ResumeHeld resumes, in mode m ("" its own), a paused run id that the
// gonogo holding data carries out, through p, its local API. It reports
// done when it did (or refused to): the caller goes on with its own resume
// otherwise.
func ResumeHeld(ctx context.Context, stdout, stderr io.Writer, p Pauser, data string, id engine.RunID, who string, m engine.Mode) (code int, done bool) {
	r, err := p.Load(ctx, id)
	if err != nil || !r.Paused {
		return 0, false
	}
	r, carried, err := p.Unpause(ctx, id, who, m)
	if err != nil {
		if errors.Is(err, engine.ErrNotPaused) {
			fmt.Fprintf(stdout, "Nothing changed: %v.\n", err)
			return terminal.ExitOK, true
		}
		return terminal.Fail(stderr, "resume", err), true
	}
	terminal.Recorded{Run: r, Data: data, Holder: HolderName(p, true), Carried: carried}.Resumed(stdout, who)
	return terminal.ExitOK, true
}
