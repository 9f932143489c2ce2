package bot

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
)

// A run's thread is an agent session (docs.slack.dev/ai/agent-sessions)
// when the app is declared an agent (the manifest's features.agent_view):
// processing while gonogo works on the run, suspended while the run waits
// on people, closed once it ends, and titled with the run's title. Slack
// shows a Stop button while it is processing, which cancels the running
// step as the step's Cancel button does (onSessionStopped).
//
// The status is set only where it changes, and the change is noted with
// the run (noteSession), so that a restart neither sets it again nor
// leaves a session open. A wait on people shorter than QuietStart (a
// checkpoint approved at once) leaves the session processing: like a
// step's message, a status that would show for a moment is not worth a
// call. While the session says a step runs, the thread's loading status
// (sync_status.go) waits for the step to have run QuietStart too.
//
// A workspace or app without agent sessions refuses the method
// (sessionsRefused): gonogo logs why once and stops calling it, and its
// threads show the loading status as they did before.

// noteSession is the status the run's agent session was last given.
const noteSession = "session"

// The agent session's statuses gonogo sets (agents.sessions.setStatus).
const (
	sessionProcessing = slack.AgentSessionStatusProcessing
	sessionSuspended  = slack.AgentSessionStatusSuspended
	sessionClosed     = slack.AgentSessionStatusClosed
)

// maxSessionTitle is Slack's limit on a session's title.
const maxSessionTitle = 200

// sessionStatus is the status a run's agent session shows and, when it
// is suspended, since when the run has waited on people at a step's end. "" is no session: a
// run that awaits Start has not begun.
func sessionStatus(r *engine.Run, now time.Time) (status string, since time.Time) {
	switch {
	case engine.AwaitingStart(r):
		return "", time.Time{}
	case r.Finished():
		return sessionClosed, time.Time{}
	case len(runningSteps(r)) > 0:
		return sessionProcessing, time.Time{}
	}
	waiting := engine.WaitingOn(r)
	if len(waiting) == 0 && !r.Paused {
		return sessionProcessing, time.Time{} // gonogo moves the run on by itself
	}
	for _, s := range waiting {
		if l := s.Latest(); l != nil && l.Finished.After(since) {
			since = l.Finished
		}
	}
	// A person's pause, or an interrupted step, has no wait to outlast:
	// since stays zero and the session is suspended at once.
	if since.After(now) {
		since = now
	}
	return sessionSuspended, since
}

// SessionTitle is the title of a run's agent session: the run's title and
// what it runs, within Slack's limit.
func SessionTitle(r *engine.Run) string {
	title := runTitle(r.Input, r.Plan.Source)
	if r.Input != engine.InputWorkflow && clean(r.Plan.Source) != "" {
		title += ": " + clean(r.Plan.Source)
	}
	return plain(title, maxSessionTitle)
}

// session gives the run's thread the agent-session status of the run's
// state, and says whether the thread is a session.
func (t *threadSync) session(ctx context.Context) bool {
	thread, shown := t.notes[noteThread], t.notes[noteSession]
	if thread == "" || !t.b.sessionsOn() {
		return false
	}
	now := time.Now()
	want, since := sessionStatus(t.r, now)
	settle := max(t.b.cfg.QuietStart, 0)
	switch {
	case want == "" || want == shown:
		return shown != ""
	case want == sessionClosed && shown == "":
		return false // never opened: nothing to close
	case want == sessionSuspended && shown == sessionProcessing && now.Before(since.Add(settle)):
		t.syncAt(since.Add(settle))
		return true
	}
	title := ""
	if shown == "" {
		title = SessionTitle(t.r) // Slack takes it only as the session is created
	}
	err := t.b.send.setSession(ctx, t.channel, thread, want, title, t.r.StartedBy)
	var le *laterError
	switch {
	case errors.As(err, &le):
		t.syncAt(le.until)
		return shown != ""
	case sessionsRefused(err):
		t.b.noSessions(err)
		return false
	case err != nil:
		t.b.cfg.Log.Debug("set the thread's agent session status", "run", t.r.ID, "status", want, "err", err)
		t.syncAt(now.Add(t.b.cfg.ProgressInterval))
		return shown != ""
	}
	if err := t.note(ctx, noteSession, want); err != nil {
		t.b.cfg.Log.Warn("note the thread's agent session status", "run", t.r.ID, "err", err)
	}
	return true
}

// refusedSessionErrors are the answers of a workspace or an app that has
// no agent sessions: the method is unknown there, the app is not declared
// an agent, or its token lacks the scope.
var refusedSessionErrors = []string{"unknown_method", "not_allowed", "not_allowed_token_type", "missing_scope",
	"no_permission", "access_denied", "feature_not_enabled"}

func sessionsRefused(err error) bool {
	var se slack.SlackErrorResponse
	return errors.As(err, &se) && slices.Contains(refusedSessionErrors, se.Err)
}

// sessionsOn says whether gonogo gives its threads agent sessions: until
// the workspace refuses the method.
func (b *Bot) sessionsOn() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.sessionsOff
}

// noSessions stops gonogo calling agents.sessions.setStatus in the
// workspace, and logs why the first time.
func (b *Bot) noSessions(err error) {
	b.mu.Lock()
	first := !b.sessionsOff
	b.sessionsOff = true
	b.mu.Unlock()
	if first {
		b.cfg.Log.Warn("Slack refused agent sessions (the app needs features.agent_view in its manifest and the assistant:write scope); run threads show the loading status instead",
			"err", err)
	}
}
