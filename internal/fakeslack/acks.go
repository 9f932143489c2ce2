package fakeslack

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// What an acknowledgement's payload does, as Slack treats it. A slash
// command's ack may carry the response message (shown to the person who
// typed the command, or in the channel with response_type in_channel). A
// view_submission's ack may carry a response_action: "errors" keeps the
// modal open and shows each message under the input block it names;
// "update" replaces the modal; "push" stacks a new view on it; "clear",
// or no payload at all, closes it. Slack ignores a payload on an envelope
// that does not accept one (accepts_response_payload false: Events API
// envelopes); the fake records that as a Violation, and so it does a
// payload Slack would refuse or drop.

// maxAckBytes is the size at which Slack drops a Socket Mode response
// without a word.
const maxAckBytes = 20 * 1024

// answerLocked carries out what an ack of env with payload asks for.
func (s *Server) answerLocked(env *envelope, frame []byte, payload json.RawMessage, now time.Time) {
	empty := len(payload) == 0 || string(payload) == "null"
	switch {
	case env == nil || env.raw != nil:
		return
	case len(frame) >= maxAckBytes:
		s.ackViolationLocked(now, "", 0, 0, "an ack of %d bytes: Slack drops Socket Mode responses of 20 KB or more", len(frame))
		return
	case !empty && !env.accepts:
		s.ackViolationLocked(now, "payload", 0, 0, "a %s envelope accepts no response payload; Slack ignores it", env.typ)
		return
	}
	switch env.typ {
	case "slash_commands":
		if !empty {
			s.commandResponseLocked(env, payload, now)
		}
	case "interactive":
		var p struct {
			Type string          `json:"type"`
			View json.RawMessage `json:"view"`
		}
		if json.Unmarshal(env.payload, &p) == nil && p.Type == "view_submission" {
			s.submissionResponseLocked(p.View, payload, empty, now)
		}
	}
}

func (s *Server) ackViolationLocked(now time.Time, path string, limit, got int, format string, args ...any) {
	s.st.violations = append(s.st.violations, Violation{Method: "ack", Path: path, Detail: fmt.Sprintf(format, args...),
		Limit: limit, Got: got, Time: now})
}

// commandResponseLocked shows the message a slash command's ack carried.
func (s *Server) commandResponseLocked(env *envelope, payload json.RawMessage, now time.Time) {
	var cmd struct {
		UserID    string `json:"user_id"`
		ChannelID string `json:"channel_id"`
	}
	_ = json.Unmarshal(env.payload, &cmd)
	var msg struct {
		Text         string          `json:"text"`
		Blocks       json.RawMessage `json:"blocks"`
		ResponseType string          `json:"response_type"`
	}
	if err := json.Unmarshal(payload, &msg); err != nil {
		s.ackViolationLocked(now, "payload", 0, 0, "a slash command's response must be a message object: %v", err)
		return
	}
	var blocks []any
	if len(msg.Blocks) > 0 && string(msg.Blocks) != "null" {
		if err := json.Unmarshal(msg.Blocks, &blocks); err != nil {
			s.ackViolationLocked(now, "payload.blocks", 0, 0, "blocks: %v", err)
			return
		}
	} else {
		msg.Blocks = nil
	}
	if msg.Text == "" && len(blocks) == 0 {
		s.ackViolationLocked(now, "payload", 0, 0, "a slash command's response with neither text nor blocks")
		return
	}
	if s.recordLocked(checkMessage("ack", msg.Text, blocks), now) {
		return
	}
	switch msg.ResponseType {
	case "in_channel":
		m := &Message{Channel: cmd.ChannelID, TS: s.newTSLocked(), User: BotUserID, FromBot: true,
			Text: msg.Text, Blocks: slices.Clone(msg.Blocks), Posted: now, Updated: now}
		m.Rendered = render(m.Text, m.Blocks)
		s.addMessageLocked(m)
	case "", "ephemeral":
		e := &Ephemeral{Channel: cmd.ChannelID, User: cmd.UserID, TS: s.newTSLocked(), Text: msg.Text,
			Blocks: slices.Clone(msg.Blocks), Time: now, Via: "ack"}
		e.Rendered = render(e.Text, e.Blocks)
		s.st.ephemerals = append(s.st.ephemerals, e)
	default:
		s.ackViolationLocked(now, "payload.response_type", 0, 0, "response_type %q, want ephemeral or in_channel", msg.ResponseType)
	}
}

// submissionResponseLocked applies a view_submission's ack to the modal
// submitted (submitted is the view as the payload carried it).
func (s *Server) submissionResponseLocked(submitted, payload json.RawMessage, empty bool, now time.Time) {
	var sv struct {
		ID     string           `json:"id"`
		Blocks []map[string]any `json:"blocks"`
	}
	_ = json.Unmarshal(submitted, &sv)
	var v *View
	for _, x := range s.st.views {
		if x.ID == sv.ID {
			v = x
		}
	}
	if empty {
		if v != nil {
			v.Closed, v.Errors = true, nil
		}
		return
	}
	var resp struct {
		Action string          `json:"response_action"`
		Errors json.RawMessage `json:"errors"`
		View   map[string]any  `json:"view"`
	}
	if err := json.Unmarshal(payload, &resp); err != nil {
		s.ackViolationLocked(now, "payload", 0, 0, "a view_submission's response must be an object: %v", err)
		return
	}
	switch resp.Action {
	case "errors":
		errs, ok := s.fieldErrorsLocked(sv.Blocks, resp.Errors, now)
		if ok && v != nil {
			v.Errors = errs
		}
	case "clear":
		if v != nil {
			v.Closed, v.Errors = true, nil
		}
	case "update", "push":
		if resp.View == nil {
			s.ackViolationLocked(now, "payload.view", 0, 0, "response_action %q needs a view", resp.Action)
			return
		}
		if s.recordLocked(checkView("ack", resp.View), now) {
			return
		}
		raw, _ := json.Marshal(resp.View)
		if resp.Action == "update" && v != nil {
			s.setViewLocked(v, resp.View, raw, now)
			v.Updates++
			v.Errors = nil
			return
		}
		nv := &View{ID: s.newIDLocked("V"), Pushed: true, Opened: now}
		if v != nil {
			nv.User = v.User
		}
		s.setViewLocked(nv, resp.View, raw, now)
		s.st.views = append(s.st.views, nv)
	default:
		s.ackViolationLocked(now, "payload.response_action", 0, 0,
			"response_action %q: Slack knows errors, update, push and clear", resp.Action)
	}
}

// fieldErrorsLocked checks the errors of a response_action "errors": a
// non-empty object whose every key is the block_id of an input block of
// the view submitted and whose every value is a non-empty message. Slack
// answers anything else with a generic "trouble connecting" error in the
// modal instead of the messages.
func (s *Server) fieldErrorsLocked(blocks []map[string]any, raw json.RawMessage, now time.Time) (map[string]string, bool) {
	var errs map[string]any
	if err := json.Unmarshal(raw, &errs); err != nil || len(errs) == 0 {
		s.ackViolationLocked(now, "payload.errors", 0, 0, "response_action errors needs an object of block_id to message, got %s", clip(string(raw), 80))
		return nil, false
	}
	inputs := map[string]bool{}
	for _, b := range blocks {
		if str(b["type"]) == "input" && str(b["block_id"]) != "" {
			inputs[str(b["block_id"])] = true
		}
	}
	keys := make([]string, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := map[string]string{}
	good := true
	for _, k := range keys {
		msg, isText := errs[k].(string)
		switch {
		case !inputs[k]:
			var have []string
			for id := range inputs {
				have = append(have, id)
			}
			sort.Strings(have)
			s.ackViolationLocked(now, "payload.errors."+k, 0, 0, "no input block %q in the view submitted (its inputs: %s)", k, strings.Join(have, ", "))
			good = false
		case !isText || strings.TrimSpace(msg) == "":
			s.ackViolationLocked(now, "payload.errors."+k, 0, 0, "the error of %q must be a non-empty string", k)
			good = false
		default:
			out[k] = msg
		}
	}
	return out, good
}
