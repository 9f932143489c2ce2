package fakeslack

import (
	"strings"
	"time"
)

// Slack's loading status for an app in a thread (assistant.threads.setStatus):
// it shows under the thread until the app replies in it, the app clears it
// (an empty status), or two minutes pass without a reply (WithStatusExpiry
// shortens them for a test).
const (
	statusExpiry       = 2 * time.Minute
	maxLoadingMessages = 10
)

// ThreadStatus is the loading status an app set in one thread.
type ThreadStatus struct {
	Channel  string
	ThreadTS string
	Status   string
	// Loading are the messages Slack rotates through while it shows.
	Loading []string
	Set     time.Time
	// Expires is when it stops showing unless the app replies, clears or
	// replaces it first: two minutes after Set (WithStatusExpiry).
	Expires time.Time
	// Cleared is when it stopped showing: cleared by the app, replaced by
	// the app's reply, or expired; zero while it shows.
	Cleared time.Time
	How     string // "cleared", "replied" or "expired" once Cleared is set
}

// Showing reports whether the status still shows at t.
func (ts ThreadStatus) Showing(t time.Time) bool {
	return ts.Status != "" && (ts.Cleared.IsZero() || t.Before(ts.Cleared)) && t.Before(ts.Expires)
}

// assistantThreadsSetStatus answers assistant.threads.setStatus: the
// channel and a message of it that starts (or is in) the thread must
// exist; an empty status clears the one shown.
func (s *Server) assistantThreadsSetStatus(req *apiRequest, now time.Time) reply {
	channel, thread := req.get("channel_id"), req.get("thread_ts")
	switch {
	case channel == "":
		return errorReply("channel_not_found")
	case thread == "":
		return errorReply("invalid_arguments", "[ERROR] missing required field: thread_ts")
	case !req.has("status"):
		return errorReply("invalid_arguments", "[ERROR] missing required field: status")
	}
	if _, ok := s.st.byKey[msgKey(channel, thread)]; !ok {
		return errorReply("invalid_thread_ts")
	}
	var loading []string
	if l := req.get("loading_messages"); l != "" {
		loading = strings.Split(l, ",")
	}
	if len(loading) > maxLoadingMessages {
		s.recordLocked([]Violation{{Method: "assistant.threads.setStatus", Path: "loading_messages",
			Detail: "more than 10 loading messages", Limit: maxLoadingMessages, Got: len(loading)}}, now)
		return errorReply("invalid_arguments", "[ERROR] loading_messages: no more than 10 items")
	}
	s.endStatusLocked(channel, thread, now, "cleared")
	status := req.get("status")
	if status != "" {
		s.st.statuses = append(s.st.statuses, &ThreadStatus{Channel: channel, ThreadTS: thread, Status: status,
			Loading: loading, Set: now, Expires: now.Add(s.cfg.statusExpiry)})
	}
	return okReply(nil)
}

// endStatusLocked stops the status shown in a thread, if one shows.
func (s *Server) endStatusLocked(channel, thread string, now time.Time, how string) {
	for _, st := range s.st.statuses {
		if st.Channel == channel && st.ThreadTS == thread && st.Cleared.IsZero() {
			if exp := st.Expires; now.After(exp) {
				st.Cleared, st.How = exp, "expired"
			} else {
				st.Cleared, st.How = now, how
			}
		}
	}
}

// Statuses returns every loading status set in a thread, oldest first.
func (st *State) Statuses(channel, thread string) []ThreadStatus {
	var out []ThreadStatus
	for _, s := range st.statuses {
		if s.Channel == channel && s.ThreadTS == thread {
			c := *s
			c.Loading = append([]string(nil), s.Loading...)
			out = append(out, c)
		}
	}
	return out
}

// Statuses returns every loading status set in a thread, oldest first.
func (s *Server) Statuses(channel, thread string) []ThreadStatus {
	return read(s, func(st *State) []ThreadStatus { return st.Statuses(channel, thread) })
}
