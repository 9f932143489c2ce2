package bot

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
)

// A run's thread shows Slack's loading status while steps run
// (assistant.threads.setStatus, ThreadStatus's words): "gonogo is running
// step 2/3: deliver-prd · 4 turns · 1m 20s" at the foot of the thread. It
// is the live progress, and it spends no chat.update: step messages change
// only with the steps' state. A status Slack refuses is set again at once
// shortened (shortStatus); one refused even so is asked again at the next
// refresh: a refusal never ends a run's live progress.
//
// Slack ends a status when the app replies in the thread, when it is set
// empty, or two minutes after it was set. So gonogo sets it again after
// each of its replies while a step still runs (a workflow's steps that
// run at once share the thread's one status), with the progress of the
// moment at most once per ProgressInterval, and at least every
// StatusRefresh (90 s) so that it does not expire under a step that runs
// long in silence; it clears it when nothing runs and no reply of its own
// ended it. The bot keeps what each thread shows in memory only: after a
// restart the status a thread showed expires, or gonogo's first reply
// ends it.

// statusExpiry is when Slack drops a status nobody replied under.
const statusExpiry = 2 * time.Minute

// shownStatus is the loading status a run's thread was last given.
type shownStatus struct {
	status  string
	loading []string
	set     time.Time // when it was set; zero once a reply of gonogo's or a clear ended it
	// refused is set when Slack refused the thread's status, even
	// shortened: the thread goes without one until retry, then it is
	// asked again (a refusal is never taken as the end of live progress).
	refused bool
	retry   time.Time
	// short is set when Slack took the status only shortened: the full
	// one is tried again at the next refresh, not with every progress.
	short bool
}

func (s shownStatus) showing(now time.Time) bool {
	return !s.set.IsZero() && now.Before(s.set.Add(statusExpiry))
}

// status gives the run's thread the status of the steps that run, or
// clears it; a status that waits for its turn has the run synced again
// then.
func (t *threadSync) status(ctx context.Context) error {
	thread := t.notes[noteThread]
	if thread == "" {
		return nil
	}
	now := time.Now()
	status, loading := ThreadStatus(t.r, t.progress, now)
	if t.streaming {
		status, loading = "", nil
	}
	if until := quietUntil(t.r, t.b.cfg.QuietStart, now); t.inSession && !until.IsZero() {
		// The session's own status says the step runs until then.
		status, loading = "", nil
		t.syncAt(until)
	}
	shown := t.b.statusOf(t.r.ID)
	showing := shown.showing(now)
	changed := status != shown.status || !slices.Equal(loading, shown.loading)
	interval := t.b.cfg.ProgressInterval
	if shown.short {
		interval = t.b.cfg.StatusRefresh
	}
	switch {
	case status == "" && !showing:
		// A streamed step's progress read from the engine is read again
		// as it would be for the status.
		t.pollProgress(now, t.live)
		return nil
	case now.Before(shown.retry):
		t.syncAt(shown.retry)
		return nil
	case status == "", !showing, !now.Before(shown.set.Add(t.b.cfg.StatusRefresh)):
	case changed && !now.Before(shown.set.Add(interval)):
	default:
		next := shown.set.Add(t.b.cfg.StatusRefresh)
		if changed {
			next = shown.set.Add(interval)
		}
		t.syncAt(next)
		t.pollProgress(now, t.live)
		return nil
	}
	full := status
	status, loading, err := t.setStatus(ctx, thread, status, loading)
	var le *laterError
	switch {
	case errors.As(err, &le):
		t.syncAt(le.until)
		return nil
	case refused(err):
		// Not a passing failure, and not the length: the thread goes
		// without a status for a while, its messages are not held back
		// for it, and it is asked again after StatusRefresh.
		if !shown.refused {
			t.b.cfg.Log.Warn("Slack refused the thread's loading status; it is tried again later",
				"run", t.r.ID, "err", err)
		}
		retry := now.Add(t.b.cfg.StatusRefresh)
		t.b.setStatusOf(t.r.ID, shownStatus{refused: true, retry: retry})
		t.syncAt(retry)
		return nil
	case err != nil:
		t.b.cfg.Log.Debug("set the thread's loading status", "run", t.r.ID, "err", err)
		t.syncAt(now.Add(t.b.cfg.ProgressInterval))
		return nil
	}
	if status == "" {
		t.b.forgetStatus(t.r.ID)
		return nil
	}
	t.b.setStatusOf(t.r.ID, shownStatus{status: status, loading: loading, set: now, short: status != full})
	t.syncAt(now.Add(t.b.cfg.StatusRefresh))
	t.pollProgress(now, t.live)
	return nil
}

// LiveProgress is an engine that holds the live progress of its runs'
// running steps for any replica of the bot to read: on a Temporal
// cluster the step activities' heartbeats carry it, and no notice brings
// it to the replica that syncs a run's thread.
type LiveProgress interface {
	// Progress is the latest progress of each running step of run id
	// whose agent has told any, by step number.
	Progress(ctx context.Context, id engine.RunID) (map[int]engine.Progress, error)
}

// liveProgress is the live progress of the run's running steps: read from
// the engine when it holds it and the backend schedules the syncs
// (LiveProgress, Config.ScheduledSyncs), else what its notices brought
// this bot. live says it was read from the engine: nothing tells this
// bot when it changes, so the thread is synced again to show it.
func (t *threadSync) liveProgress(ctx context.Context) (map[int]engine.Progress, bool) {
	lp, ok := t.b.eng.(LiveProgress)
	if !ok || !t.b.cfg.ScheduledSyncs || len(runningSteps(t.r)) == 0 {
		return t.b.progressOf(t.r.ID), false
	}
	p, err := lp.Progress(ctx, t.r.ID)
	if err != nil {
		// The status says which step runs and for how long; the next
		// sync asks again.
		t.b.cfg.Log.Debug("read the run's live progress", "run", t.r.ID, "err", err)
		return nil, true
	}
	return p, true
}

// pollProgress has a run whose progress is read from the engine synced
// again a ProgressInterval from now, so that its status shows the
// progress of that moment, as a notice of progress would have it shown.
func (t *threadSync) pollProgress(now time.Time, live bool) {
	if live {
		t.syncAt(now.Add(t.b.cfg.ProgressInterval))
	}
}

// setStatus sets the thread's status and returns what it shows. Slack
// may count a status's length otherwise than gonogo does (an escaped
// < or a joined emoji): a status it refuses is tried again at once as the
// least it says (shortStatus), without loading messages.
func (t *threadSync) setStatus(ctx context.Context, thread, status string, loading []string) (string, []string, error) {
	err := t.b.send.setStatus(ctx, t.channel, thread, status, loading)
	if !refused(err) || status == "" {
		return status, loading, err
	}
	short := shortStatus(t.r)
	if short == status && len(loading) == 0 {
		return status, loading, err
	}
	t.b.cfg.Log.Debug("Slack refused the thread's loading status; it is set shortened", "run", t.r.ID, "err", err)
	return short, nil, t.b.send.setStatus(ctx, t.channel, thread, short, nil)
}

// quietUntil is when the first of a run's running steps will have run
// quiet; zero when none runs, or one has run that long already.
func quietUntil(r *engine.Run, quiet time.Duration, now time.Time) time.Time {
	var until time.Time
	for _, s := range runningSteps(r) {
		at := s.Latest().Started.Add(quiet)
		if !now.Before(at) {
			return time.Time{}
		}
		if until.IsZero() || at.Before(until) {
			until = at
		}
	}
	return until
}

// refused reports whether Slack refused a call, for a reason that does
// not pass by itself.
func refused(err error) bool {
	var se slack.SlackErrorResponse
	return errors.As(err, &se) && !transient(err)
}

// progressOf is the latest live progress of each of a run's running
// steps, by step number.
func (b *Bot) progressOf(id engine.RunID) map[int]engine.Progress {
	b.mu.Lock()
	defer b.mu.Unlock()
	return maps.Clone(b.progress[id])
}

func (b *Bot) statusOf(id engine.RunID) shownStatus {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.statuses[id]
}

func (b *Bot) setStatusOf(id engine.RunID, s shownStatus) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.statuses[id] = s
}

func (b *Bot) forgetStatus(id engine.RunID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.statuses, id)
}

// replied notes that gonogo replied in a run's thread, which ends the
// status Slack showed there.
func (b *Bot) replied(id engine.RunID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s, ok := b.statuses[id]; ok && !s.refused {
		s.set = time.Time{}
		b.statuses[id] = s
	}
}
