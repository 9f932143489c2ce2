package engine

import (
	"fmt"
	"time"
)

// A run may be recorded before anything of it runs, so that people see
// exactly what will run and one who may decide starts it (the Slack
// preview with Start and Cancel). Such a run (StartOptions.AwaitStart) is
// paused by AwaitStartActor from its start: it keeps the plan, mode and
// options it was previewed with, survives a restart as any paused run
// does, and nothing of it runs until StartAwaited resumes it or, from the
// terminal, Unpause does; CancelAwaited ends it with nothing run. Who may
// start or cancel it is who may decide on it (MayDecide), and a Start
// carries an idempotency key, so a click delivered twice starts it once.

// AwaitStartActor holds a run recorded to await Start.
const AwaitStartActor = "gonogo (awaiting Start)"

const awaitStartReason = "awaiting Start: nothing runs until a person who may decide starts it"

// CancelledBeforeStart is the reason of the end of a run cancelled while
// it awaited Start.
const CancelledBeforeStart = "cancelled before it started"

// AwaitingStart reports whether r waits for Start: recorded with
// StartOptions.AwaitStart, and neither started nor ended since.
func AwaitingStart(r *Run) bool {
	return r.Paused && r.PausedBy == AwaitStartActor && !r.Finished()
}

// StartAwaited starts a run that awaits Start, on actor's word: the run
// resumes in its mode, its first steps ready to start. key is the
// idempotency key of the start (the click), recorded with it. A run that
// does not await Start is refused with ErrNotAwaitingStart, so a late or
// repeated Start never resumes a run a person paused since.
func StartAwaited(r *Run, actor, key string, now time.Time) ([]Event, error) {
	if err := awaiting(r); err != nil {
		return nil, err
	}
	evs, err := Unpause(r, actor, "", nil, now)
	if err != nil {
		return nil, err
	}
	evs[0].Key = key
	return evs, nil
}

// CancelAwaited ends a run that awaits Start, on actor's word, with
// nothing run (aborted, reason CancelledBeforeStart). A run that does not
// await Start is refused with ErrNotAwaitingStart, so a late Cancel never
// aborts a run that has started.
func CancelAwaited(r *Run, actor string, now time.Time) ([]Event, error) {
	if err := awaiting(r); err != nil {
		return nil, err
	}
	return AbortRun(r, actor, CancelledBeforeStart, now)
}

func awaiting(r *Run) error {
	switch {
	case AwaitingStart(r):
		return nil
	case r.Finished():
		return fmt.Errorf("run %s: %w: it is %s", r.ID, ErrNotAwaitingStart, r.State)
	}
	return fmt.Errorf("run %s: %w: it has started", r.ID, ErrNotAwaitingStart)
}
