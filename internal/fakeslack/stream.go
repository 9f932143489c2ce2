package fakeslack

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Streamed messages (chat.startStream, chat.appendStream, chat.stopStream;
// docs.slack.dev/reference/methods/chat.startStream): an app starts a
// message in a thread and appends to it until it stops it. Each call may
// carry markdown_text (at most 12,000 characters) and chunks, a JSON array
// of markdown_text, task_update, plan_update and blocks chunks; a
// task_update with the id of an earlier one updates that task. In a
// channel (not a DM) chat.startStream needs the recipient_user_id and
// recipient_team_id of the person the stream answers. A stream stopped
// (by the app, or by Slack when a person presses Stop on the agent
// session) takes no more appends: message_not_in_streaming_state.
const maxStreamMarkdown = 12000

// Stream is one streamed message.
type Stream struct {
	Channel, ThreadTS, TS string
	Recipient, Team       string
	Markdown              string       // every markdown_text appended, in order
	Tasks                 []StreamTask // each task as last updated, in the order first seen
	Calls                 int          // start, appends and stop
	Stopped               time.Time
	StoppedBy             string // "app", or "user" when Stop stopped it
}

// StreamTask is a task_update chunk as last streamed for its id.
type StreamTask struct {
	ID, Title, Status, Details, Output string
}

type streamChunk struct {
	Type    string `json:"type"`
	Text    string `json:"text"`
	ID      string `json:"id"`
	Title   string `json:"title"`
	Status  string `json:"status"`
	Details string `json:"details"`
	Output  string `json:"output"`
}

var chunkTypes = map[string]bool{"markdown_text": true, "task_update": true, "plan_update": true, "blocks": true}

// streamContent reads a stream call's markdown_text and chunks.
func (s *Server) streamContent(method string, req *apiRequest, now time.Time) (string, []streamChunk, reply, bool) {
	md := req.get("markdown_text")
	if n := textLen(md); n > maxStreamMarkdown {
		v := Violation{Method: method, Path: "/markdown_text",
			Detail: fmt.Sprintf("must be no longer than %d characters", maxStreamMarkdown), Limit: maxStreamMarkdown, Got: n}
		if s.recordLocked([]Violation{v}, now) {
			return "", nil, errorReply("msg_too_long", violationMessages([]Violation{v})...), false
		}
	}
	var chunks []streamChunk
	if raw, ok := req.raw("chunks"); ok {
		if err := json.Unmarshal(raw, &chunks); err != nil {
			return "", nil, errorReply("invalid_chunks", "[ERROR] chunks must be an array of chunk objects"), false
		}
		for i, c := range chunks {
			if !chunkTypes[c.Type] || (c.Type == "task_update" && (c.ID == "" || c.Title == "")) {
				return "", nil, errorReply("invalid_chunks", fmt.Sprintf("[ERROR] chunk %d is not a valid chunk [json-pointer:/chunks/%d]", i, i)), false
			}
		}
	}
	return md, chunks, reply{}, true
}

func (st *Stream) apply(md string, chunks []streamChunk) {
	st.Calls++
	st.Markdown += md
	for _, c := range chunks {
		switch c.Type {
		case "markdown_text":
			st.Markdown += c.Text
		case "task_update":
			t := StreamTask{ID: c.ID, Title: c.Title, Status: c.Status, Details: c.Details, Output: c.Output}
			found := false
			for i := range st.Tasks {
				if st.Tasks[i].ID == c.ID {
					st.Tasks[i], found = t, true
				}
			}
			if !found {
				st.Tasks = append(st.Tasks, t)
			}
		}
	}
}

func (s *Server) chatStartStream(req *apiRequest, now time.Time) reply {
	channel, thread := req.get("channel"), req.get("thread_ts")
	user, team := req.get("recipient_user_id"), req.get("recipient_team_id")
	switch {
	case channel == "":
		return errorReply("channel_not_found")
	case !strings.HasPrefix(channel, "D") && (user == "" || team == ""):
		return errorReply("invalid_arguments", "[ERROR] recipient_user_id and recipient_team_id are required when streaming to a channel")
	}
	if thread != "" {
		if _, ok := s.st.byKey[msgKey(channel, thread)]; !ok {
			return errorReply("invalid_thread_ts")
		}
	}
	md, chunks, res, ok := s.streamContent("chat.startStream", req, now)
	if !ok {
		return res
	}
	st := &Stream{Channel: channel, ThreadTS: thread, TS: s.newTSLocked(), Recipient: user, Team: team}
	st.apply(md, chunks)
	s.st.streams = append(s.st.streams, st)
	return okReply(map[string]any{"channel": channel, "ts": st.TS})
}

// streamCallLocked is an append or a stop: the stream must be streaming.
func (s *Server) streamCallLocked(method string, req *apiRequest, now time.Time) (*Stream, reply, bool) {
	channel, ts := req.get("channel"), req.get("ts")
	if channel == "" {
		return nil, errorReply("channel_not_found"), false
	}
	var st *Stream
	for _, x := range s.st.streams {
		if x.Channel == channel && x.TS == ts {
			st = x
		}
	}
	switch {
	case st == nil:
		return nil, errorReply("message_not_found"), false
	case !st.Stopped.IsZero():
		return nil, errorReply("message_not_in_streaming_state"), false
	}
	md, chunks, res, ok := s.streamContent(method, req, now)
	if !ok {
		return nil, res, false
	}
	st.apply(md, chunks)
	return st, okReply(map[string]any{"channel": channel, "ts": st.TS}), true
}

func (s *Server) chatAppendStream(req *apiRequest, now time.Time) reply {
	_, res, _ := s.streamCallLocked("chat.appendStream", req, now)
	return res
}

func (s *Server) chatStopStream(req *apiRequest, now time.Time) reply {
	st, res, ok := s.streamCallLocked("chat.stopStream", req, now)
	if ok {
		st.Stopped, st.StoppedBy = now, "app"
	}
	return res
}

// stopStreamsLocked stops the streams of a thread that still stream, as
// Slack does when a person presses Stop, and returns their ts.
func (s *Server) stopStreamsLocked(channel, thread string, now time.Time) []string {
	stopped := []string{}
	for _, st := range s.st.streams {
		if st.Channel == channel && st.ThreadTS == thread && st.Stopped.IsZero() {
			st.Stopped, st.StoppedBy = now, "user"
			stopped = append(stopped, st.TS)
		}
	}
	return stopped
}

// Streams returns the streamed messages of a thread, oldest first.
func (st *State) Streams(channel, thread string) []Stream {
	var out []Stream
	for _, x := range st.streams {
		if x.Channel == channel && x.ThreadTS == thread {
			c := *x
			c.Tasks = append([]StreamTask(nil), x.Tasks...)
			out = append(out, c)
		}
	}
	return out
}

// Streams returns the streamed messages of a thread, oldest first.
func (s *Server) Streams(channel, thread string) []Stream {
	return read(s, func(st *State) []Stream { return st.Streams(channel, thread) })
}
