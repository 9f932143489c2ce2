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
// Step 2 of 3: deliver-prd (4 turns · 9 tool calls · 1m 20s)" at the foot
// of the thread. It is the live progress, and it spends no chat.update:
// step messages change only with the steps' state.
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
	off     bool      // Slack refused a status in this thread: it is not asked again
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
	status, loading := ThreadStatus(t.r, t.b.progressOf(t.r.ID), now)
	shown := t.b.statusOf(t.r.ID)
	showing := shown.showing(now)
	changed := status != shown.status || !slices.Equal(loading, shown.loading)
	switch {
	case shown.off, status == "" && !showing:
		return nil
	case status == "", !showing, !now.Before(shown.set.Add(t.b.cfg.StatusRefresh)):
	case changed && !now.Before(shown.set.Add(t.b.cfg.ProgressInterval)):
	default:
		next := shown.set.Add(t.b.cfg.StatusRefresh)
		if changed {
			next = shown.set.Add(t.b.cfg.ProgressInterval)
		}
		t.syncAt(next)
		return nil
	}
	err := t.b.send.setStatus(ctx, t.channel, thread, status, loading)
	var le *laterError
	var se slack.SlackErrorResponse
	switch {
	case errors.As(err, &le):
		t.syncAt(le.until)
		return nil
	case errors.As(err, &se) && !transient(err):
		// Not a passing failure (a workspace or thread that takes no
		// status): the thread goes without one, and its messages are not
		// held back for it.
		t.b.cfg.Log.Warn("Slack refused the thread's loading status; the run's thread goes without one",
			"run", t.r.ID, "err", se.Err)
		t.b.setStatusOf(t.r.ID, shownStatus{off: true})
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
	t.b.setStatusOf(t.r.ID, shownStatus{status: status, loading: loading, set: now})
	t.syncAt(now.Add(t.b.cfg.StatusRefresh))
	return nil
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
	if s, ok := b.statuses[id]; ok && !s.off {
		s.set = time.Time{}
		b.statuses[id] = s
	}
}
