package fakeslack

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Slack's loading status for an app in a thread (assistant.threads.setStatus):
// it shows under the thread until the app replies in it, the app clears it
// (an empty status), or two minutes pass without a reply (WithStatusExpiry
// shortens them for a test). The method's schema takes at most 10 loading
// messages, and a status and each loading message of at most 50
// characters; Slack refuses a longer one with invalid_arguments.
const (
	statusExpiry       = 2 * time.Minute
	maxLoadingMessages = 10
	maxStatusLen       = 50
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
	status, loading := req.get("status"), loadingMessages(req)
	if vs := statusViolations(status, loading); len(vs) > 0 && s.recordLocked(vs, now) {
		return errorReply("invalid_arguments", violationMessages(vs)...)
	}
	s.endStatusLocked(channel, thread, now, "cleared")
	if status != "" {
		s.st.statuses = append(s.st.statuses, &ThreadStatus{Channel: channel, ThreadTS: thread, Status: status,
			Loading: loading, Set: now, Expires: now.Add(s.cfg.statusExpiry)})
	}
	return okReply(nil)
}

// loadingMessages are a setStatus call's loading messages: a JSON array,
// or the form's text, which slack-go joins with commas (so Slack splits a
// message that holds one).
func loadingMessages(req *apiRequest) []string {
	if raw, ok := req.fields["loading_messages"]; ok {
		var list []string
		if json.Unmarshal(raw, &list) == nil {
			return list
		}
	}
	if l := req.get("loading_messages"); l != "" {
		return strings.Split(l, ",")
	}
	return nil
}

// statusViolations are what a loading status breaks of the method's
// schema. Lengths count UTF-16 code units, as the Block Kit checks do.
func statusViolations(status string, loading []string) []Violation {
	const method = "assistant.threads.setStatus"
	var vs []Violation
	if n := textLen(status); n > maxStatusLen {
		vs = append(vs, Violation{Method: method, Path: "/status",
			Detail: fmt.Sprintf("must be no longer than %d characters", maxStatusLen), Limit: maxStatusLen, Got: n})
	}
	if len(loading) > maxLoadingMessages {
		vs = append(vs, Violation{Method: method, Path: "/loading_messages",
			Detail: fmt.Sprintf("must have no more than %d items", maxLoadingMessages), Limit: maxLoadingMessages, Got: len(loading)})
	}
	for i, m := range loading {
		if n := textLen(m); n > maxStatusLen {
			vs = append(vs, Violation{Method: method, Path: fmt.Sprintf("/loading_messages/%d", i),
				Detail: fmt.Sprintf("must be no longer than %d characters", maxStatusLen), Limit: maxStatusLen, Got: n})
		}
	}
	return vs
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
