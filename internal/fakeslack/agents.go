package fakeslack

import (
	"fmt"
	"slices"
	"time"
)

// Agent sessions (docs.slack.dev/ai/agent-sessions): an app declared an
// agent (the manifest's features.agent_view, which adds the
// assistant:write scope) gives a thread a session with
// agents.sessions.setStatus, which creates the session on its first call
// and sets its status on every call. The method takes a status (active,
// processing, suspended or closed), the channel_id and, for a thread in a
// channel, the thread_ts of the thread's root; a title of at most 200
// characters and an initiator_user_id, both used only when the call
// creates the session. While a session is processing Slack shows a Stop
// button; a click sends the app agent_session_stopped (StopSession) and
// leaves the status as it was: the app moves it on.
//
// A workspace or app without agent sessions refuses the method; a test
// makes it so with Fail (e.g. "not_allowed" or "missing_scope").
const maxSessionTitle = 200

// sessionStatuses are the statuses agents.sessions.setStatus accepts.
var sessionStatuses = []string{"active", "processing", "suspended", "closed"}

// AgentSession is one thread's agent session.
type AgentSession struct {
	Channel   string
	ThreadTS  string
	Title     string
	Initiator string
	// Statuses are the statuses the app set, oldest first: the first
	// call created the session.
	Statuses []SessionStatus
	// Stops are the users who pressed Stop, in order.
	Stops []string
}

// SessionStatus is one status an app set on its session.
type SessionStatus struct {
	Status string
	Set    time.Time
}

// Status is the session's current status.
func (a AgentSession) Status() string {
	if len(a.Statuses) == 0 {
		return ""
	}
	return a.Statuses[len(a.Statuses)-1].Status
}

// StatusList is the session's statuses in the order they were set.
func (a AgentSession) StatusList() []string {
	out := make([]string, 0, len(a.Statuses))
	for _, s := range a.Statuses {
		out = append(out, s.Status)
	}
	return out
}

func (s *Server) agentsSessionsSetStatus(req *apiRequest, now time.Time) reply {
	const method = "agents.sessions.setStatus"
	channel, thread, status := req.get("channel_id"), req.get("thread_ts"), req.get("status")
	switch {
	case !req.has("status"):
		return errorReply("invalid_arguments", "[ERROR] missing required field: status")
	case !slices.Contains(sessionStatuses, status):
		return errorReply("invalid_arguments", fmt.Sprintf("[ERROR] status must be one of %v [json-pointer:/status]", sessionStatuses))
	case channel == "":
		return errorReply("channel_not_found")
	case thread == "":
		return errorReply("invalid_arguments", "[ERROR] missing required field: thread_ts")
	}
	root, ok := s.st.byKey[msgKey(channel, thread)]
	if !ok || (root.ThreadTS != "" && root.ThreadTS != root.TS) {
		return errorReply("invalid_thread_ts")
	}
	title := req.get("title")
	if n := textLen(title); n > maxSessionTitle {
		v := Violation{Method: method, Path: "/title",
			Detail: fmt.Sprintf("must be no longer than %d characters", maxSessionTitle), Limit: maxSessionTitle, Got: n}
		if s.recordLocked([]Violation{v}, now) {
			return errorReply("invalid_arguments", violationMessages([]Violation{v})...)
		}
	}
	a := s.sessionLocked(channel, thread)
	if a == nil {
		// Title and initiator count only when the call creates the session.
		a = &AgentSession{Channel: channel, ThreadTS: thread, Title: title, Initiator: req.get("initiator_user_id")}
		s.st.sessions = append(s.st.sessions, a)
	}
	a.Statuses = append(a.Statuses, SessionStatus{Status: status, Set: now})
	out := map[string]any{"status": status, "agent_status": status}
	if a.Title != "" {
		out["title"] = a.Title
	}
	return okReply(out)
}

func (s *Server) sessionLocked(channel, thread string) *AgentSession {
	for _, a := range s.st.sessions {
		if a.Channel == channel && a.ThreadTS == thread {
			return a
		}
	}
	return nil
}

// StopSession is user pressing Stop on the thread's agent session, which
// Slack shows only while the session is processing: it delivers
// agent_session_stopped (listing the app's streams in the thread that
// were still streaming, which Slack stops) and returns its envelope id.
// The session keeps its status.
func (s *Server) StopSession(channel, thread, user string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.sessionLocked(channel, thread)
	switch {
	case a == nil:
		return "", fmt.Errorf("fakeslack: no agent session in thread %s of %s", thread, channel)
	case a.Status() != "processing":
		return "", fmt.Errorf("fakeslack: the session is %s: Slack shows Stop only while it is processing", a.Status())
	}
	a.Stops = append(a.Stops, user)
	stopped := s.stopStreamsLocked(channel, thread, time.Now())
	inner, _ := toJSON(map[string]any{
		"type": "agent_session_stopped", "channel": channel, "thread_ts": thread, "user": user,
		"streaming_message_ts": stopped, "event_ts": s.newTSLocked(),
	})
	s.notifyLocked()
	return s.sendEventLocked(inner), nil
}

// Session returns the agent session of a thread.
func (st *State) Session(channel, thread string) (AgentSession, bool) {
	for _, a := range st.sessions {
		if a.Channel == channel && a.ThreadTS == thread {
			c := *a
			c.Statuses = slices.Clone(a.Statuses)
			c.Stops = slices.Clone(a.Stops)
			return c, true
		}
	}
	return AgentSession{}, false
}

// Session returns the agent session of a thread.
func (s *Server) Session(channel, thread string) (AgentSession, bool) {
	type found struct {
		a  AgentSession
		ok bool
	}
	f := read(s, func(st *State) found { a, ok := st.Session(channel, thread); return found{a, ok} })
	return f.a, f.ok
}
