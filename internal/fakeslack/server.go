package fakeslack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Identities of the fake workspace.
const (
	DefaultBotToken = "xoxb-0000000000-fake-bot-token"
	DefaultAppToken = "xapp-1-A0FAKE00001-fake-app-token"
	TeamID          = "T0FAKE00001"
	TeamDomain      = "fake-workspace"
	AppID           = "A0FAKE00001"
	BotUserID       = "U0FAKEBOT01"
	BotID           = "B0FAKEBOT01"

	// verificationToken is the deprecated token Slack still puts in payloads.
	verificationToken = "fake-verification-token"
)

// ErrNotConnected is returned by Disconnect and DropConnection when no client
// is connected.
var ErrNotConnected = errors.New("fakeslack: no Socket Mode client is connected")

// ErrClosed is returned by the waits once the server is closed.
var ErrClosed = errors.New("fakeslack: server closed")

type config struct {
	botToken     string
	appToken     string
	pingInterval time.Duration
	lenient      bool
	lifetime     time.Duration // 0: connections live until dropped
	announced    time.Duration // hello's approximate_connection_time, when lifetime is 0
	connectDelay time.Duration // how long apps.connections.open takes
	statusExpiry time.Duration
	retryDelay   time.Duration // how long an orphaned Events API envelope waits for its retry
	tiers        bool          // Slack's rate limits are enforced (EnforceTiers)
}

// Option configures a Server.
type Option func(*config)

// WithConnectionLifetime makes Slack refresh every Socket Mode connection
// d after it opened, as it does every few hours: hello announces d (whole
// seconds, rounded up) as approximate_connection_time, and when d has
// passed the connection gets a disconnect (reason refresh_requested),
// nothing more is delivered on it, and it is closed shortly after.
func WithConnectionLifetime(d time.Duration) Option {
	return func(c *config) { c.lifetime = d }
}

// WithConnectDelay makes a new Socket Mode connection wait d for its
// hello, as opening a connection takes Slack a moment: envelopes sent
// meanwhile wait for a connection.
func WithConnectDelay(d time.Duration) Option {
	return func(c *config) { c.connectDelay = d }
}

// WithTokens sets the bot token (xoxb-) and the app-level token (xapp-) the
// server accepts instead of DefaultBotToken and DefaultAppToken.
func WithTokens(bot, app string) Option {
	return func(c *config) { c.botToken, c.appToken = bot, app }
}

// WithPingInterval sets how often the server sends a WebSocket ping on each
// Socket Mode connection (default 1s; the first goes out right after hello).
// slack-go reconnects when no ping arrives within its own interval (30s,
// socketmode.OptionPingInterval), so keep this well below the client's. Zero
// or less sends no pings at all, to see the client give up on a silent
// server.
func WithPingInterval(d time.Duration) Option {
	return func(c *config) { c.pingInterval = d }
}

// WithLenientBlocks makes the server accept payloads that break a Block Kit
// limit: the violation is still recorded, but the call succeeds and the
// message or view is stored. By default the server answers as Slack does
// (invalid_blocks, msg_too_long, invalid_arguments) and stores nothing.
func WithLenientBlocks() Option {
	return func(c *config) { c.lenient = true }
}

// WithStatusExpiry sets how long a thread's loading status
// (assistant.threads.setStatus) shows without a reply before it expires:
// two minutes, as on Slack, unless a test needs to see an app outlive a
// shorter one.
func WithStatusExpiry(d time.Duration) Option {
	return func(c *config) { c.statusExpiry = d }
}

// Server is a fake Slack: the Web API and the Socket Mode websocket over one
// httptest server. It is safe for concurrent use.
type Server struct {
	cfg      config
	http     *httptest.Server
	base     string // http://127.0.0.1:port, no trailing slash
	upgrader websocket.Upgrader
	started  time.Time

	mu        sync.Mutex
	st        State
	changed   chan struct{} // closed and replaced on every change
	closed    bool
	queue     []outgoing
	lastConn  int // the number of the connection the last envelope went to
	seq       int
	tsSeq     int64
	tickets   map[string]bool
	triggers  map[string]*trigger
	responses map[string]responseTarget
	faults    map[string]*fault
	windows   map[string]time.Time     // method + " " + channel -> end of its Retry-After
	delays    map[string]time.Duration // method ("" for every method) -> how long its calls are held
	tiers     tierLog                  // the calls counted against Slack's rate limits
	done      chan struct{}            // closed by Close: held calls give up
	gate      connGate                 // which new connections are greeted (AdmitConnections)
	// beforeWrite runs between the dispatcher's choosing connection n and its writing there.
	beforeWrite func(n int)

	wg sync.WaitGroup // the dispatcher, socket handlers and pingers
}

// New starts a fake Slack. Close it when done.
func New(opts ...Option) *Server {
	cfg := config{botToken: DefaultBotToken, appToken: DefaultAppToken, pingInterval: time.Second, statusExpiry: statusExpiry,
		retryDelay: DefaultRetryDelay}
	for _, opt := range opts {
		opt(&cfg)
	}
	s := &Server{
		cfg:       cfg,
		started:   time.Now(),
		st:        newState(),
		changed:   make(chan struct{}),
		tickets:   map[string]bool{},
		triggers:  map[string]*trigger{},
		responses: map[string]responseTarget{},
		faults:    map[string]*fault{},
		windows:   map[string]time.Time{},
		delays:    map[string]time.Duration{},
		done:      make(chan struct{}),
		// slack-go dials with "Origin: https://api.slack.com", which the
		// default same-origin check would refuse.
		upgrader: websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/{method}", s.serveAPI)
	mux.HandleFunc("/socket", s.serveSocket)
	mux.HandleFunc("POST /upload/{file}", s.serveUpload)
	mux.HandleFunc("GET /files-pri/{slug}/{name...}", s.serveDownload)
	mux.HandleFunc("POST /response/{id}", s.serveResponseURL)
	s.http = httptest.NewServer(mux)
	s.base = s.http.URL
	s.wg.Add(1)
	go s.dispatch()
	return s
}

// Close disconnects every client, stops the server's goroutines and shuts
// the HTTP server down.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.done)
	conns := append([]*wsConn(nil), s.st.conns...)
	s.notifyLocked()
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.c.Close()
	}
	s.wg.Wait()
	s.http.Close()
}

// APIURL is the Web API base URL, ending with "/", for slack.OptionAPIURL and
// SLACK_API_URL.
func (s *Server) APIURL() string { return s.base + "/api/" }

// BotToken is the bot token the server accepts.
func (s *Server) BotToken() string { return s.cfg.botToken }

// AppToken is the app-level token the server accepts for
// apps.connections.open.
func (s *Server) AppToken() string { return s.cfg.appToken }

// notifyLocked wakes every wait. Call it with mu held after any change.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Server) newIDLocked(prefix string) string {
	s.seq++
	return fmt.Sprintf("%s0FAKE%05d", prefix, s.seq)
}

// newTSLocked returns a message timestamp, unique and increasing, in Slack's
// "seconds.micros" form.
func (s *Server) newTSLocked() string {
	s.tsSeq++
	sec := s.started.Unix() + s.tsSeq/1_000_000
	return fmt.Sprintf("%d.%06d", sec, s.tsSeq%1_000_000)
}

func (s *Server) newTriggerLocked(user string) string {
	s.seq++
	id := fmt.Sprintf("%d.%d.fake-trigger-%06d", s.started.Unix(), s.seq, s.seq)
	s.triggers[id] = &trigger{user: user, issued: time.Now()}
	return id
}

// read runs f on the state under the lock.
func read[T any](s *Server, f func(*State) T) T {
	s.mu.Lock()
	defer s.mu.Unlock()
	return f(&s.st)
}

// WaitFor waits until cond holds, checking it now and after every change
// (a call, an ack, a connection). cond runs with the server's lock held: it
// must only read st, and must not call the Server's methods. When ctx ends
// first, the error describes what the fake Slack holds.
func (s *Server) WaitFor(ctx context.Context, cond func(st *State) bool) error {
	for {
		s.mu.Lock()
		ok := cond(&s.st)
		ch, closed := s.changed, s.closed
		var dump string
		if !ok && ctx.Err() != nil {
			dump = s.st.dump()
		}
		s.mu.Unlock()
		switch {
		case ok:
			return nil
		case closed:
			return ErrClosed
		case dump != "":
			return fmt.Errorf("fakeslack: condition not met: %w\n%s", ctx.Err(), dump)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			// Check once more, so that the error carries the last state.
		}
	}
}

// WaitMessage waits for a message in channel (any thread; every channel when
// channel is empty) that match accepts, and returns it.
func (s *Server) WaitMessage(ctx context.Context, channel string, match func(Message) bool) (Message, error) {
	var found Message
	err := s.WaitFor(ctx, func(st *State) bool {
		for _, m := range st.Messages(channel) {
			if match(m) {
				found = m
				return true
			}
		}
		return false
	})
	return found, err
}

// Messages returns the messages in channel in the order they were posted,
// replies included; an empty channel means every channel.
func (s *Server) Messages(channel string) []Message {
	return read(s, func(st *State) []Message { return st.Messages(channel) })
}

// Message returns the message with that ts in channel.
func (s *Server) Message(channel, ts string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.Message(channel, ts)
}

// Thread returns a thread's root (when known) and replies, in order.
func (s *Server) Thread(channel, ts string) []Message {
	return read(s, func(st *State) []Message { return st.Thread(channel, ts) })
}

// Ephemerals returns the ephemeral messages shown to user ("" for all).
func (s *Server) Ephemerals(user string) []Ephemeral {
	return read(s, func(st *State) []Ephemeral { return st.Ephemerals(user) })
}

// Views returns the modals the bot opened or pushed.
func (s *Server) Views() []View { return read(s, (*State).Views) }

// View returns the view with that id.
func (s *Server) View(id string) (View, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.View(id)
}

// Files returns the files shared in a thread; see State.Files.
func (s *Server) Files(channel, thread string) []File {
	return read(s, func(st *State) []File { return st.Files(channel, thread) })
}

// Calls returns the calls made to method ("" for all).
func (s *Server) Calls(method string) []Call {
	return read(s, func(st *State) []Call { return st.Calls(method) })
}

// Violations returns every limit the bot broke.
func (s *Server) Violations() []Violation { return read(s, (*State).Violations) }

// RateLimited returns how many calls to method ("" for all) were
// answered 429.
func (s *Server) RateLimited(method string) int {
	return read(s, func(st *State) int { return st.RateLimited(method) })
}

// Connections returns how many times a client opened the websocket.
func (s *Server) Connections() int { return read(s, (*State).Connections) }

// Acked reports whether the client acknowledged the envelope.
func (s *Server) Acked(envelopeID string) bool {
	return read(s, func(st *State) bool { return st.Acked(envelopeID) })
}

// AddUserGroup registers a user group (S...) for usergroups.users.list.
func (s *Server) AddUserGroup(id string, members ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.groups[id] = append([]string(nil), members...)
	s.notifyLocked()
}

// reply is the answer to a call.
type reply struct {
	status     int            // 0 means 200
	retryAfter string         // the Retry-After header, when set
	body       map[string]any // a JSON body
	text       string         // a plain body, when body is nil
}

func okReply(fields map[string]any) reply {
	body := map[string]any{"ok": true}
	for k, v := range fields {
		body[k] = v
	}
	return reply{body: body}
}

func errorReply(code string, messages ...string) reply {
	body := map[string]any{"ok": false, "error": code}
	if len(messages) > 0 {
		body["response_metadata"] = map[string]any{"messages": messages}
	}
	return reply{body: body}
}

func rateLimited(secs int) reply {
	return reply{status: http.StatusTooManyRequests, retryAfter: strconv.Itoa(secs),
		body: map[string]any{"ok": false, "error": "ratelimited"}}
}

func (r reply) code() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}

func (r reply) errCode() string {
	if r.body == nil {
		return ""
	}
	if okv, _ := r.body["ok"].(bool); okv {
		return ""
	}
	return str(r.body["error"])
}

func (r reply) write(w http.ResponseWriter) {
	if r.retryAfter != "" {
		w.Header().Set("Retry-After", r.retryAfter)
	}
	if r.body == nil {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(r.code())
		_, _ = io.WriteString(w, r.text)
		return
	}
	b, err := json.Marshal(r.body)
	if err != nil {
		http.Error(w, "fakeslack: encoding the answer: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(r.code())
	_, _ = w.Write(b)
}

// apiRequest is a Web API call as slack-go sends it: a form (token in the
// form), a JSON body (token in the Authorization header) or a GET query.
type apiRequest struct {
	token  string
	form   url.Values
	body   []byte
	fields map[string]json.RawMessage
}

// get returns a parameter from the form or, as a string, from the JSON body.
func (r *apiRequest) get(key string) string {
	if vs, ok := r.form[key]; ok && len(vs) > 0 {
		return vs[0]
	}
	raw, ok := r.fields[key]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// raw returns a parameter as JSON: the JSON body's value, or a form field
// holding JSON text.
func (r *apiRequest) raw(key string) ([]byte, bool) {
	if v, ok := r.fields[key]; ok {
		return v, true
	}
	if vs, ok := r.form[key]; ok && len(vs) > 0 {
		return []byte(vs[0]), true
	}
	return nil, false
}

func (r *apiRequest) has(key string) bool {
	_, inForm := r.form[key]
	_, inJSON := r.fields[key]
	return inForm || inJSON
}

func readAPIRequest(r *http.Request) (*apiRequest, error) {
	req := &apiRequest{form: url.Values{}}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/json" {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return req, fmt.Errorf("reading the JSON body: %w", err)
		}
		req.body = body
		for k, v := range r.URL.Query() {
			req.form[k] = v
		}
		if len(bytes.TrimSpace(body)) > 0 {
			if err := json.Unmarshal(body, &req.fields); err != nil {
				return req, fmt.Errorf("decoding the JSON body: %w", err)
			}
		}
	} else {
		if err := r.ParseForm(); err != nil {
			return req, fmt.Errorf("decoding the form: %w", err)
		}
		for k, v := range r.Form {
			req.form[k] = v
		}
	}
	req.token = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if req.token == "" {
		req.token = req.form.Get("token")
	}
	req.form.Del("token")
	return req, nil
}

// authLocked checks the token: the app-level token opens connections, the
// bot token does everything else, as in Slack.
func (s *Server) authLocked(method, token string) (reply, bool) {
	want, other := s.cfg.botToken, s.cfg.appToken
	if method == "apps.connections.open" {
		want, other = other, want
	}
	switch token {
	case want:
		return reply{}, false
	case "":
		return errorReply("not_authed"), true
	case other:
		return errorReply("not_allowed_token_type"), true
	default:
		return errorReply("invalid_auth"), true
	}
}

func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	method := r.PathValue("method")
	made := time.Now()
	req, err := readAPIRequest(r)
	if !s.hold(r, s.delayFor(method)) {
		http.Error(w, "fakeslack: closed", http.StatusServiceUnavailable)
		return
	}
	now := time.Now()
	s.mu.Lock()
	var res reply
	switch {
	case err != nil:
		res = errorReply("invalid_form_data", err.Error())
	default:
		res = s.callLocked(method, req, now)
	}
	call := Call{Method: method, Params: req.form, Status: res.code(), Error: res.errCode(), Time: made}
	if method == "chat.postMessage" && res.body != nil {
		call.TS, _ = res.body["ts"].(string)
	}
	if req.body != nil {
		call.JSON = json.RawMessage(req.body)
	}
	s.st.calls = append(s.st.calls, call)
	lose := false
	if f := s.faults[method]; f != nil && f.loseTimes > 0 && err == nil {
		f.loseTimes--
		lose = true
	}
	s.notifyLocked()
	s.mu.Unlock()
	if lose {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, herr := hj.Hijack(); herr == nil {
				_ = conn.Close()
				return
			}
		}
	}
	res.write(w)
}

func (s *Server) callLocked(method string, req *apiRequest, now time.Time) reply {
	if res, bad := s.authLocked(method, req.token); bad {
		return res
	}
	if res, hit := s.faultLocked(method, req, now); hit {
		return res
	}
	if res, over := s.tierLocked(method, req, now); over {
		return res
	}
	h, found := apiMethods[method]
	if !found {
		return errorReply("unknown_method")
	}
	return h(s, req, now)
}

// recordLocked adds violations and reports whether the call must be refused.
func (s *Server) recordLocked(vs []Violation, now time.Time) bool {
	for i := range vs {
		vs[i].Time = now
	}
	s.st.violations = append(s.st.violations, vs...)
	return len(vs) > 0 && !s.cfg.lenient
}

func violationMessages(vs []Violation) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		out = append(out, "[ERROR] "+v.Detail+" [json-pointer:"+v.Path+"]")
	}
	return out
}
