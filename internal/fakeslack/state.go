package fakeslack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Message is a message in a channel, posted by the bot (chat.postMessage,
// files.completeUploadExternal, a response_url) or added by the test as a
// user's (AddUserMessage, SendMention).
type Message struct {
	Channel  string
	TS       string
	ThreadTS string // empty for a message at the top of the channel
	User     string // BotUserID for what the bot posted
	FromBot  bool
	Text     string
	Blocks   json.RawMessage // as sent; nil when the message has none
	Metadata json.RawMessage // as sent; nil when the message has none
	// Rendered is Text followed by every "text" string found in Blocks, in
	// document order, one per line: section text, fields, button labels,
	// context, headers. Assert on it with strings.Contains.
	Rendered string
	Files    []File // files shared with this message
	Updates  int    // how many chat.update calls changed it
	Posted   time.Time
	Updated  time.Time

	fileIDs []string
}

// Ephemeral is a message only one user sees (chat.postEphemeral, a
// response_url answer that is not in_channel, or the answer a slash
// command's acknowledgement carried).
type Ephemeral struct {
	Channel  string
	User     string
	ThreadTS string
	TS       string
	Text     string
	Blocks   json.RawMessage
	Rendered string
	Time     time.Time
	// Via is how the app sent it: "chat.postEphemeral", "response_url",
	// or "ack" (the payload of a slash command's acknowledgement).
	Via string
}

// View is a modal the bot opened (views.open or views.push) and maybe
// updated since (views.update).
type View struct {
	ID              string
	ExternalID      string
	Type            string
	CallbackID      string
	PrivateMetadata string
	Title           string
	// User is the user the trigger_id was issued to, when the fake issued it.
	User      string
	TriggerID string
	Pushed    bool
	Blocks    json.RawMessage
	JSON      json.RawMessage // the whole view object as last sent by the bot
	Rendered  string          // title, then every text in Blocks
	Hash      string
	Updates   int
	Opened    time.Time
	Updated   time.Time
	// Errors are the field errors the modal shows: the last
	// response_action "errors" its submission was answered with, by
	// block_id; nil once a submission was accepted.
	Errors map[string]string
	// Closed is set once a submission was answered without errors (or with
	// response_action "clear"): Slack closed the modal, and views.update
	// finds it no more.
	Closed bool
}

// File is a file the bot uploaded (files.getUploadURLExternal and the upload
// URL) or the test added as a user's (AddFile).
type File struct {
	ID         string
	Name       string
	Title      string
	Mimetype   string
	Filetype   string
	Size       int // the length declared to files.getUploadURLExternal, or len(Content)
	Content    []byte
	User       string
	FromBot    bool
	URLPrivate string // needs "Authorization: Bearer <bot token>" to download
	Created    time.Time

	uploaded bool
}

// Call is one request to the Web API (or to an upload URL, url_private or a
// response_url, recorded as the pseudo-methods "upload_url", "url_private"
// and "response_url").
type Call struct {
	Method string
	Params url.Values      // form fields and query parameters, without the token
	JSON   json.RawMessage // the body when it was JSON
	Status int             // HTTP status of the answer
	Error  string          // the Slack error code when ok was false
	// Time is when the call was made. Calls are listed in the order the
	// fake answered them, which differs only for calls held by Delay.
	Time time.Time
	// TS is the ts of the message a chat.postMessage posted: a message
	// deleted since is still known by its post.
	TS string
}

// Violation is a Block Kit or API limit the bot broke.
type Violation struct {
	Method string // the method that carried the payload
	Path   string // where: "blocks[3].accessory.text.text", "view.title.text", "text"
	Detail string // what is wrong, with the limit
	Limit  int    // the limit broken; 0 when the rule is not a number
	Got    int    // what was sent; 0 when the rule is not a number
	Time   time.Time
}

func (v Violation) String() string {
	if v.Path == "" {
		return v.Method + ": " + v.Detail
	}
	return v.Method + " " + v.Path + ": " + v.Detail
}

// Ack is what the client answered to an envelope.
type Ack struct {
	EnvelopeID string
	Payload    json.RawMessage // nil for a bare ack
	Sent       time.Time       // when the envelope was first written to the socket
	Acked      time.Time       // when the first ack arrived
	Latency    time.Duration   // Acked - Sent
	Count      int             // acks received for this envelope (more than 1 after a redelivery)
	Conn       int             // the number of the connection the first ack came on
}

// Button is a button element found in a message's blocks.
type Button struct {
	BlockID  string
	ActionID string
	Text     string
	Value    string
	Style    string
	URL      string
	Confirm  bool // the button asks for confirmation first
}

// State is everything the fake Slack holds. WaitFor hands it to its
// condition while holding the server's lock: read it there, and do not call
// the Server's methods from the condition (they take the same lock).
type State struct {
	messages    []*Message
	byKey       map[string]*Message // channel + " " + ts
	ephemerals  []*Ephemeral
	views       []*View
	files       map[string]*File
	calls       []Call
	violations  []Violation
	envelopes   map[string]*envelope
	order       []*envelope // envelopes in the order they were made
	acks        map[string]*Ack
	connections int
	conns       []*wsConn
	rateLimited map[string]int
	groups      map[string][]string
	statuses    []*ThreadStatus
	sessions    []*AgentSession
	streams     []*Stream
	refreshes   int
	held        int // calls a Delay holds right now
	waiting     int // connections waiting to be admitted (AdmitConnections)
}

func newState() State {
	return State{
		byKey:       map[string]*Message{},
		files:       map[string]*File{},
		envelopes:   map[string]*envelope{},
		acks:        map[string]*Ack{},
		rateLimited: map[string]int{},
		groups:      map[string][]string{},
	}
}

func msgKey(channel, ts string) string { return channel + " " + ts }

// Messages returns the messages in channel in the order they were posted,
// replies included; an empty channel means every channel.
func (st *State) Messages(channel string) []Message {
	var out []Message
	for _, m := range st.messages {
		if channel == "" || m.Channel == channel {
			out = append(out, st.copyMessage(m))
		}
	}
	return out
}

// Message returns the message with that ts in channel.
func (st *State) Message(channel, ts string) (Message, bool) {
	m, ok := st.byKey[msgKey(channel, ts)]
	if !ok {
		return Message{}, false
	}
	return st.copyMessage(m), true
}

// Thread returns the thread's root (when it is known) and its replies, in
// the order they were posted.
func (st *State) Thread(channel, ts string) []Message {
	var out []Message
	for _, m := range st.messages {
		if m.Channel == channel && (m.TS == ts || m.ThreadTS == ts) {
			out = append(out, st.copyMessage(m))
		}
	}
	return out
}

// Ephemerals returns the ephemeral messages shown to user; an empty user
// means everyone's.
func (st *State) Ephemerals(user string) []Ephemeral {
	var out []Ephemeral
	for _, e := range st.ephemerals {
		if user == "" || e.User == user {
			c := *e
			c.Blocks = slices.Clone(e.Blocks)
			out = append(out, c)
		}
	}
	return out
}

// Views returns the modals the bot opened or pushed, in that order.
func (st *State) Views() []View {
	out := make([]View, 0, len(st.views))
	for _, v := range st.views {
		out = append(out, copyView(v))
	}
	return out
}

// View returns the view with that id.
func (st *State) View(id string) (View, bool) {
	for _, v := range st.views {
		if v.ID == id {
			return copyView(v), true
		}
	}
	return View{}, false
}

// Files returns the files shared in a thread (its root included), or, when
// thread is empty, with the top-level messages of channel; an empty channel
// means every shared file. Files uploaded but never shared are not listed.
func (st *State) Files(channel, thread string) []File {
	var out []File
	for _, m := range st.messages {
		switch {
		case channel == "":
		case m.Channel != channel:
			continue
		case thread == "" && m.ThreadTS != "":
			continue
		case thread != "" && m.TS != thread && m.ThreadTS != thread:
			continue
		}
		for _, id := range m.fileIDs {
			if f, ok := st.files[id]; ok {
				out = append(out, copyFile(f))
			}
		}
	}
	return out
}

// Calls returns the calls made to method; an empty method means every call.
func (st *State) Calls(method string) []Call {
	var out []Call
	for _, c := range st.calls {
		if method == "" || c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// Violations returns every limit the bot broke, in order.
func (st *State) Violations() []Violation { return slices.Clone(st.violations) }

// Acked reports whether the client acknowledged the envelope.
func (st *State) Acked(envelopeID string) bool { return st.acks[envelopeID] != nil }

// Ack returns the client's answer to the envelope.
func (st *State) Ack(envelopeID string) (Ack, bool) {
	a, ok := st.acks[envelopeID]
	if !ok {
		return Ack{}, false
	}
	return *a, true
}

// Connections returns how many times a client opened the Socket Mode
// websocket.
func (st *State) Connections() int { return st.connections }

// Connected reports whether a client is connected and not asked to leave, so
// that envelopes sent now are delivered at once.
func (st *State) Connected() bool { return st.current() != nil }

// Refreshes returns how many connections Slack retired at the end of
// their lifetime (WithConnectionLifetime, Refresh).
func (st *State) Refreshes() int { return st.refreshes }

// Waiting returns how many Socket Mode connections are open and wait to
// be admitted (AdmitConnections).
func (st *State) Waiting() int { return st.waiting }

// Held returns how many Web API calls a Delay holds right now: made, not
// yet taken in.
func (st *State) Held() int { return st.held }

// AckDelays returns, for every envelope acked, how long after Slack had it
// to send the ack came: Slack wants interactions and commands acked
// within 3 seconds, or the person sees an error.
func (st *State) AckDelays() map[string]time.Duration {
	out := map[string]time.Duration{}
	for id, a := range st.acks {
		if env := st.envelopes[id]; env != nil && !env.queued.IsZero() {
			out[id] = a.Acked.Sub(env.queued)
		}
	}
	return out
}

// RateLimited returns how many calls to method ("" for all) were answered
// 429.
func (st *State) RateLimited(method string) int {
	if method == "" {
		n := 0
		for _, c := range st.rateLimited {
			n += c
		}
		return n
	}
	return st.rateLimited[method]
}

func (st *State) current() *wsConn {
	for i := len(st.conns) - 1; i >= 0; i-- {
		if c := st.conns[i]; !c.draining && !c.dead {
			return c
		}
	}
	return nil
}

func (st *State) copyMessage(m *Message) Message {
	c := *m
	c.Blocks = slices.Clone(m.Blocks)
	c.Metadata = slices.Clone(m.Metadata)
	c.fileIDs = slices.Clone(m.fileIDs)
	c.Files = nil
	for _, id := range m.fileIDs {
		if f, ok := st.files[id]; ok {
			c.Files = append(c.Files, copyFile(f))
		}
	}
	return c
}

func copyView(v *View) View {
	c := *v
	c.Blocks = slices.Clone(v.Blocks)
	c.JSON = slices.Clone(v.JSON)
	c.Errors = maps.Clone(v.Errors)
	return c
}

func copyFile(f *File) File {
	c := *f
	c.Content = slices.Clone(f.Content)
	return c
}

// dump describes the state in a few lines, for the error of a wait that
// timed out.
func (st *State) dump() string {
	var b strings.Builder
	fmt.Fprintf(&b, "fake Slack: %d messages, %d ephemerals, %d views, %d violations, %d connections (connected: %t)\n",
		len(st.messages), len(st.ephemerals), len(st.views), len(st.violations), st.connections, st.Connected())
	for _, m := range st.messages {
		if b.Len() > 4000 {
			b.WriteString("  ...\n")
			break
		}
		who := m.User
		if m.FromBot {
			who = "bot"
		}
		fmt.Fprintf(&b, "  %s ts=%s thread=%s %s: %s\n", m.Channel, m.TS, m.ThreadTS, who, clip(m.Rendered, 160))
	}
	for _, v := range st.violations {
		fmt.Fprintf(&b, "  violation: %s\n", v)
	}
	return b.String()
}

func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " | ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "..."
}

// Buttons returns the buttons in the message's actions blocks and section
// accessories, in document order.
func (m Message) Buttons() []Button { return buttonsIn(m.Blocks) }

func buttonsIn(raw json.RawMessage) []Button {
	var blocks []map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &blocks) != nil {
		return nil
	}
	var out []Button
	add := func(blockID string, el any) {
		e, ok := el.(map[string]any)
		if !ok || str(e["type"]) != "button" {
			return
		}
		out = append(out, Button{
			BlockID:  blockID,
			ActionID: str(e["action_id"]),
			Text:     textOf(e["text"]),
			Value:    str(e["value"]),
			Style:    str(e["style"]),
			URL:      str(e["url"]),
			Confirm:  e["confirm"] != nil,
		})
	}
	for _, b := range blocks {
		id := str(b["block_id"])
		switch str(b["type"]) {
		case "actions":
			els, _ := b["elements"].([]any)
			for _, el := range els {
				add(id, el)
			}
		case "section":
			add(id, b["accessory"])
		}
	}
	return out
}

// render joins text and every "text" and "title" string in blocks, in document order.
// It walks the JSON tokens rather than decoded maps, whose order is random.
func render(first string, raw json.RawMessage) string {
	w := &textWalk{}
	if first != "" {
		w.parts = append(w.parts, first)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	for len(raw) > 0 {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch t := tok.(type) {
		case json.Delim:
			w.delim(t)
		case string:
			w.str(t)
		default:
			w.consumed()
		}
	}
	return strings.Join(w.parts, "\n")
}

// textWalk gathers the "text" strings of a JSON document, token by token.
type textWalk struct {
	stack []*jsonFrame
	parts []string
}

// jsonFrame is an object or array the walk is in; in an object, whether
// the next string is a key, and the last key read.
type jsonFrame struct {
	object    bool
	expectKey bool
	key       string
}

// consumed notes a value read: in an object, a key comes next.
func (w *textWalk) consumed() {
	if n := len(w.stack); n > 0 && w.stack[n-1].object {
		w.stack[n-1].expectKey = true
	}
}

func (w *textWalk) delim(t json.Delim) {
	switch t {
	case '{':
		w.consumed()
		w.stack = append(w.stack, &jsonFrame{object: true, expectKey: true})
	case '[':
		w.consumed()
		w.stack = append(w.stack, &jsonFrame{})
	default:
		w.stack = w.stack[:len(w.stack)-1]
	}
}

func (w *textWalk) str(t string) {
	if n := len(w.stack); n > 0 && w.stack[n-1].object {
		top := w.stack[n-1]
		if top.expectKey {
			top.key, top.expectKey = t, false
			return
		}
		if (top.key == "text" || top.key == "title") && t != "" { // a plan's and a task card's title are strings
			w.parts = append(w.parts, t)
		}
	}
	w.consumed()
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// textOf returns the text of a text object.
func textOf(v any) string {
	m, _ := v.(map[string]any)
	return str(m["text"])
}
