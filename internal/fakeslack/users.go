package fakeslack

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"
)

// This file holds what users do: post, upload, run the slash command, click,
// submit a modal, mention the bot. Each action reaches the bot the way Slack
// delivers it, as an envelope over Socket Mode.

// AddFile stores a file as if a user had uploaded it, for files.info and its
// url_private, and returns its id. Share it with AddUserMessage or
// SendMention.
func (s *Server) AddFile(name string, content []byte) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	f := &File{ID: s.newIDLocked("F"), Name: name, Title: name, Size: len(content),
		Content: slices.Clone(content), Created: now, uploaded: true}
	f.Mimetype, f.Filetype = fileType(name)
	f.URLPrivate = s.urlPrivate(f)
	s.st.files[f.ID] = f
	s.notifyLocked()
	return f.ID
}

// AddUserMessage posts a message as user in channel (in thread when thread is
// not empty), sharing the files added with AddFile, and returns its ts. It
// sends no event: the bot sees it through conversations.replies.
func (s *Server) AddUserMessage(channel, thread, user, text string, fileIDs ...string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.addUserMessageLocked(channel, thread, user, text, fileIDs)
	if err != nil {
		return "", err
	}
	return m.TS, nil
}

func (s *Server) addUserMessageLocked(channel, thread, user, text string, fileIDs []string) (*Message, error) {
	if channel == "" || user == "" {
		return nil, errors.New("fakeslack: a user message needs a channel and a user")
	}
	for _, id := range fileIDs {
		if f := s.st.files[id]; f == nil || f.FromBot {
			return nil, fmt.Errorf("fakeslack: file %q was not added with AddFile", id)
		}
	}
	now := time.Now()
	for _, id := range fileIDs {
		if f := s.st.files[id]; f.User == "" {
			f.User = user
		}
	}
	m := &Message{Channel: channel, TS: s.newTSLocked(), ThreadTS: thread, User: user, Text: text,
		Posted: now, Updated: now, fileIDs: slices.Clone(fileIDs)}
	m.Rendered = render(m.Text, nil)
	s.addMessageLocked(m)
	s.notifyLocked()
	return m, nil
}

// TriggerID issues a trigger_id for user, for payloads built by hand; a
// modal opened with it is recorded as that user's.
func (s *Server) TriggerID(user string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.newTriggerLocked(user)
}

// SendSlashCommand delivers a slash command (queued until a client is
// connected) and returns its envelope id. Empty fields get Slack's usual
// values: Command "/gonogo", a fresh TriggerID and ResponseURL (answers
// posted there are recorded as ephemerals or messages), the fake workspace's
// team and app, and UserName and ChannelName equal to the ids.
func (s *Server) SendSlashCommand(cmd slack.SlashCommand) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range []struct {
		field *string
		value string
	}{
		{&cmd.Token, verificationToken}, {&cmd.TeamID, TeamID}, {&cmd.TeamDomain, TeamDomain},
		{&cmd.APIAppID, AppID}, {&cmd.Command, "/gonogo"},
	} {
		if *f.field == "" {
			*f.field = f.value
		}
	}
	if cmd.UserName == "" {
		cmd.UserName = strings.ToLower(cmd.UserID)
	}
	if cmd.ChannelName == "" {
		cmd.ChannelName = cmd.ChannelID
	}
	if cmd.TriggerID == "" {
		cmd.TriggerID = s.newTriggerLocked(cmd.UserID)
	}
	if cmd.ResponseURL == "" {
		cmd.ResponseURL = s.newResponseURLLocked(responseTarget{user: cmd.UserID, channel: cmd.ChannelID})
	}
	payload, _ := json.Marshal(cmd) // a struct of strings and a bool
	return s.enqueueLocked(s.newEnvelopeLocked("slash_commands", payload, true))
}

// SendInteraction delivers an interactive payload (block_actions,
// view_submission, ...) and returns its envelope id. payload is raw JSON
// ([]byte, json.RawMessage, string) or a value to marshal, such as a
// slack.InteractionCallback, whose empty TriggerID is filled in. Click and
// SubmitView build the common payloads from what the bot posted.
func (s *Server) SendInteraction(payload any) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch p := payload.(type) {
	case slack.InteractionCallback:
		payload = &p
	}
	if ic, isCallback := payload.(*slack.InteractionCallback); isCallback && ic.TriggerID == "" {
		c := *ic
		c.TriggerID = s.newTriggerLocked(c.User.ID)
		payload = &c
	}
	raw, err := toJSON(payload)
	if err != nil {
		return "", fmt.Errorf("fakeslack: interaction payload: %w", err)
	}
	return s.enqueueLocked(s.newEnvelopeLocked("interactive", raw, true)), nil
}

// SendEvent wraps an Events API event (the inner event, such as an
// app_mention) in its event_callback and delivers it; it returns the
// envelope id. event is raw JSON or a value to marshal.
func (s *Server) SendEvent(event any) (string, error) {
	raw, err := toJSON(event)
	if err != nil {
		return "", fmt.Errorf("fakeslack: event: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sendEventLocked(raw), nil
}

func (s *Server) sendEventLocked(inner json.RawMessage) string {
	s.seq++
	outer, _ := json.Marshal(map[string]any{
		"token": verificationToken, "team_id": TeamID, "api_app_id": AppID,
		"event": inner, "type": "event_callback",
		"event_id": fmt.Sprintf("Ev0FAKE%06d", s.seq), "event_time": time.Now().Unix(),
		"authorizations": []map[string]any{{
			"team_id": TeamID, "user_id": BotUserID, "is_bot": true, "is_enterprise_install": false,
		}},
		"is_ext_shared_channel": false,
	})
	return s.enqueueLocked(s.newEnvelopeLocked("events_api", outer, false))
}

// SendMention posts a message from user that mentions the bot (the mention
// is put in front of text when text lacks it), sharing the given files, and
// delivers the app_mention event Slack sends for it, files included. thread
// empty means a new message at the top of channel.
func (s *Server) SendMention(channel, thread, user, text string, fileIDs ...string) (ts, envelopeID string, err error) {
	mention := "<@" + BotUserID + ">"
	if !strings.Contains(text, mention) {
		text = strings.TrimSpace(mention + " " + text)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.addUserMessageLocked(channel, thread, user, text, fileIDs)
	if err != nil {
		return "", "", err
	}
	event := map[string]any{
		"type": "app_mention", "user": user, "text": text, "ts": m.TS, "channel": channel, "event_ts": m.TS,
	}
	if thread != "" {
		event["thread_ts"] = thread
	}
	if len(fileIDs) > 0 {
		files := []map[string]any{}
		for _, id := range fileIDs {
			files = append(files, s.fileJSONLocked(s.st.files[id]))
		}
		event["files"] = files
		event["upload"] = true
	}
	inner, _ := json.Marshal(event)
	return m.TS, s.sendEventLocked(inner), nil
}

// Click presses a button on a message in channel, as user, and returns the
// block_actions envelope id. button is the button's action_id or, failing
// that, its label.
func (s *Server) Click(user, channel, ts, button string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.st.byKey[msgKey(channel, ts)]
	if m == nil {
		return "", fmt.Errorf("fakeslack: click %q: no message %s in %s", button, ts, channel)
	}
	buttons := m.Buttons()
	i := slices.IndexFunc(buttons, func(b Button) bool { return b.ActionID == button })
	if i < 0 {
		i = slices.IndexFunc(buttons, func(b Button) bool { return b.Text == button })
	}
	if i < 0 {
		var have []string
		for _, b := range buttons {
			have = append(have, fmt.Sprintf("%q (%s)", b.Text, b.ActionID))
		}
		return "", fmt.Errorf("fakeslack: click %q: message %s has no such button; it has %s", button, ts, strings.Join(have, ", "))
	}
	b := buttons[i]
	now := time.Now()
	container := map[string]any{"type": "message", "message_ts": ts, "channel_id": channel, "is_ephemeral": false}
	if m.ThreadTS != "" {
		container["thread_ts"] = m.ThreadTS
	}
	action := map[string]any{
		"type": "button", "action_id": b.ActionID, "block_id": b.BlockID, "value": b.Value,
		"text":      map[string]any{"type": "plain_text", "text": b.Text, "emoji": true},
		"action_ts": fmt.Sprintf("%d.%06d", now.Unix(), now.Nanosecond()/1000),
	}
	if b.Style != "" {
		action["style"] = b.Style
	}
	payload, _ := json.Marshal(map[string]any{
		"type": "block_actions", "token": verificationToken, "api_app_id": AppID,
		"team":       map[string]any{"id": TeamID, "domain": TeamDomain},
		"user":       userJSON(user, false),
		"container":  container,
		"trigger_id": s.newTriggerLocked(user),
		"channel":    map[string]any{"id": channel, "name": channel},
		"message":    s.messageJSONLocked(m),
		"state":      map[string]any{"values": map[string]any{}},
		"response_url": s.newResponseURLLocked(responseTarget{
			user: user, channel: channel, thread: m.ThreadTS, messageTS: ts,
		}),
		"actions": []any{action},
	})
	return s.enqueueLocked(s.newEnvelopeLocked("interactive", payload, true)), nil
}

// SubmitView submits a modal the bot opened, as user, and returns the
// view_submission envelope id. values maps an input element's action_id to
// what the user typed or chose; inputs left out keep their initial_value.
// The ack's payload (Ack.Payload) carries the bot's response_action, which
// the fake applies (see View.Errors and View.Closed); a closed modal
// cannot be submitted.
func (s *Server) SubmitView(user, viewID string, values map[string]string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var v *View
	for _, x := range s.st.views {
		if x.ID == viewID {
			v = x
		}
	}
	if v == nil {
		return "", fmt.Errorf("fakeslack: submit: no view %q was opened", viewID)
	}
	if v.Closed {
		return "", fmt.Errorf("fakeslack: submit: view %s was closed by the answer to its last submission", viewID)
	}
	var blocks []map[string]any
	_ = json.Unmarshal(v.Blocks, &blocks)
	state := map[string]any{}
	used := map[string]bool{}
	for i, b := range blocks {
		el, isMap := b["element"].(map[string]any)
		if str(b["type"]) != "input" || !isMap {
			continue
		}
		blockID, actionID := str(b["block_id"]), str(el["action_id"])
		if blockID == "" {
			blockID = fmt.Sprintf("fake-block-%d", i)
		}
		value, given := values[actionID]
		if !given {
			value = str(el["initial_value"])
		}
		used[actionID] = given
		entry := map[string]any{"type": str(el["type"])}
		switch str(el["type"]) {
		case "static_select", "radio_buttons":
			entry["selected_option"] = map[string]any{"value": value,
				"text": map[string]any{"type": "plain_text", "text": value}}
		default:
			entry["value"] = value
		}
		state[blockID] = map[string]any{actionID: entry}
	}
	for id := range values {
		if !used[id] {
			return "", fmt.Errorf("fakeslack: submit view %s: no input with action_id %q", viewID, id)
		}
	}
	payload, _ := json.Marshal(map[string]any{
		"type": "view_submission", "token": verificationToken, "api_app_id": AppID,
		"team":          map[string]any{"id": TeamID, "domain": TeamDomain},
		"user":          userJSON(user, false),
		"trigger_id":    s.newTriggerLocked(user),
		"view":          s.viewJSON(v, state),
		"response_urls": []any{},
	})
	return s.enqueueLocked(s.newEnvelopeLocked("interactive", payload, true)), nil
}

func toJSON(v any) (json.RawMessage, error) {
	var raw []byte
	switch p := v.(type) {
	case json.RawMessage:
		raw = p
	case []byte:
		raw = p
	case string:
		raw = []byte(p)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		raw = b
	}
	if !json.Valid(raw) {
		return nil, errors.New("not valid JSON (use SendRaw for malformed envelopes)")
	}
	return slices.Clone(json.RawMessage(raw)), nil
}

// responseTarget is where a response_url answer goes.
type responseTarget struct {
	user, channel, thread, messageTS string
	created                          time.Time
	uses                             int
}

// Slack's limits on a response_url: five uses within 30 minutes.
const (
	responseURLUses = 5
	responseURLLife = 30 * time.Minute
)

func (s *Server) newResponseURLLocked(t responseTarget) string {
	s.seq++
	id := strconv.Itoa(s.seq)
	t.created = time.Now()
	s.responses[id] = t
	return s.base + "/response/" + id
}

// AgeResponseURLs makes every response_url issued so far d older, as if
// its click or command had come d earlier: past 30 minutes, Slack refuses
// it (expired_url).
func (s *Server) AgeResponseURLs(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, t := range s.responses {
		t.created = t.created.Add(-d)
		s.responses[id] = t
	}
}

// serveResponseURL takes an answer posted to a response_url: an ephemeral
// to the user by default, a message with response_type in_channel, or a
// change to the clicked message with replace_original or delete_original.
// As Slack does, it takes five answers at most on one url, within 30
// minutes of its envelope; after that it answers 404 (used_url,
// expired_url).
func (s *Server) serveResponseURL(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	body, err := io.ReadAll(r.Body)
	var msg struct {
		Text            string          `json:"text"`
		ThreadTS        string          `json:"thread_ts"`
		Blocks          json.RawMessage `json:"blocks"`
		ResponseType    string          `json:"response_type"`
		ReplaceOriginal bool            `json:"replace_original"`
		DeleteOriginal  bool            `json:"delete_original"`
	}
	if err == nil {
		err = json.Unmarshal(body, &msg)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := r.PathValue("id")
	t, known := s.responses[id]
	var res reply
	switch {
	case known && now.Sub(t.created) > responseURLLife:
		res = reply{status: http.StatusNotFound, text: "expired_url"}
	case known && t.uses >= responseURLUses:
		res = reply{status: http.StatusNotFound, text: "used_url"}
	default:
		res = s.respondLocked(t, known, err, msg.Text, msg.ThreadTS, msg.Blocks, msg.ResponseType, msg.ReplaceOriginal, msg.DeleteOriginal, now)
		if known && res.code() == http.StatusOK {
			t.uses++
			s.responses[id] = t
		}
	}
	// Params say which message the url belongs to (and so which one a
	// replace_original changed).
	params := url.Values{"channel": {t.channel}, "ts": {t.messageTS}}
	s.st.calls = append(s.st.calls, Call{Method: "response_url", Params: params, JSON: body, Status: res.code(), Error: res.errCode(), Time: now})
	s.notifyLocked()
	res.write(w)
}

func (s *Server) respondLocked(t responseTarget, known bool, decodeErr error, text, thread string, rawBlocks json.RawMessage,
	responseType string, replace, del bool, now time.Time) reply {
	if !known {
		return reply{status: http.StatusNotFound, text: "no such response_url"}
	}
	if decodeErr != nil {
		return errorReply("invalid_payload", decodeErr.Error())
	}
	var blocks []any
	if len(rawBlocks) > 0 && string(rawBlocks) != "null" {
		if err := json.Unmarshal(rawBlocks, &blocks); err != nil {
			return errorReply("invalid_blocks_format", err.Error())
		}
	} else {
		rawBlocks = nil
	}
	orig := s.st.byKey[msgKey(t.channel, t.messageTS)]
	if del {
		if orig != nil {
			s.deleteMessageLocked(orig)
		}
		return okReply(nil)
	}
	if res, refused := s.checkMessageLocked("response_url", text, blocks, now); refused {
		return res
	}
	switch {
	case replace && orig != nil:
		orig.Text, orig.Blocks = text, slices.Clone(rawBlocks)
		orig.Rendered = render(orig.Text, orig.Blocks)
		orig.Updates++
		orig.Updated = now
	case responseType == "in_channel":
		if thread == "" {
			thread = t.thread
		}
		m := &Message{Channel: t.channel, TS: s.newTSLocked(), ThreadTS: thread, User: BotUserID, FromBot: true,
			Text: text, Blocks: slices.Clone(rawBlocks), Posted: now, Updated: now}
		m.Rendered = render(m.Text, m.Blocks)
		s.addMessageLocked(m)
	default:
		if thread == "" {
			thread = t.thread
		}
		e := &Ephemeral{Channel: t.channel, User: t.user, ThreadTS: thread, TS: s.newTSLocked(), Via: "response_url",
			Text: text, Blocks: slices.Clone(rawBlocks), Time: now}
		e.Rendered = render(e.Text, e.Blocks)
		s.st.ephemerals = append(s.st.ephemerals, e)
	}
	return okReply(nil)
}
