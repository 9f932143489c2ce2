package fakeslack

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// wsConn is one Socket Mode connection. Writes of data frames are serialized
// by wmu; pings go through WriteControl, which gorilla allows concurrently.
type wsConn struct {
	c   *websocket.Conn
	wmu sync.Mutex
	// Guarded by Server.mu.
	n        int  // the connection's number, from 1, in the order they opened
	draining bool // sent a disconnect: deliver nothing more here
	dead     bool // a write failed or the connection was dropped
	ended    bool // its handler has finished: the connection is gone
	// writing is set while the dispatcher writes a frame here; farewell
	// is a disconnect asked for meanwhile, which the dispatcher writes
	// right after that frame: Slack writes nothing on a connection after
	// its disconnect.
	writing  bool
	farewell []byte
	stop     chan struct{} // closed when the connection ends
	// sent are the envelopes written here, for what Slack does with the
	// unacknowledged ones when the connection dies; inflight is the one
	// being written now.
	sent     []*envelope
	inflight *envelope
}

func (wc *wsConn) write(b []byte) error {
	wc.wmu.Lock()
	defer wc.wmu.Unlock()
	if err := wc.c.SetWriteDeadline(time.Now().Add(5 * time.Second)); err != nil {
		return err
	}
	return wc.c.WriteMessage(websocket.TextMessage, b)
}

// envelope is one Socket Mode request, kept for acks and redelivery.
type envelope struct {
	id        string
	typ       string
	payload   json.RawMessage
	accepts   bool
	raw       []byte // SendRaw: written verbatim
	retry     int
	queued    time.Time // when Slack had it to send (first time)
	firstSent time.Time
	sends     int
	// deliveries are its writes to a socket; retrying is set while an
	// automatic retry waits; lost once Slack gave it up unacknowledged.
	deliveries []Delivery
	retrying   bool
	lost       bool
	// unserved is set when no connection took envelopes as Slack had it.
	unserved bool
}

func (e *envelope) frame() []byte {
	if e.raw != nil {
		return e.raw
	}
	reason := ""
	if e.retry > 0 {
		reason = "timeout"
	}
	b, err := json.Marshal(struct {
		EnvelopeID   string          `json:"envelope_id"`
		Type         string          `json:"type"`
		Payload      json.RawMessage `json:"payload"`
		Accepts      bool            `json:"accepts_response_payload"`
		RetryAttempt int             `json:"retry_attempt"`
		RetryReason  string          `json:"retry_reason"`
	}{e.id, e.typ, e.payload, e.accepts, e.retry, reason})
	if err != nil {
		// Payloads are valid JSON by construction (marshalled or checked).
		return []byte(fmt.Sprintf(`{"envelope_id":%q,"type":%q}`, e.id, e.typ))
	}
	return b
}

type outgoing struct {
	env   *envelope
	frame []byte
	retry int // the retry_attempt the frame carries
}

func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request) {
	ticket := r.URL.Query().Get("ticket")
	s.mu.Lock()
	valid, closed := s.tickets[ticket], s.closed
	delete(s.tickets, ticket)
	if !closed {
		s.wg.Add(1)
	}
	s.mu.Unlock()
	if closed {
		http.Error(w, "fakeslack: closed", http.StatusServiceUnavailable)
		return
	}
	defer s.wg.Done()
	if !valid {
		// Slack's URLs from apps.connections.open are single use.
		http.Error(w, "fakeslack: unknown or used ticket "+ticket, http.StatusUnauthorized)
		return
	}
	c, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade has answered the client
	}
	wc := &wsConn{c: c}
	defer c.Close()
	if d := s.cfg.connectDelay; d > 0 {
		time.Sleep(d) // Slack takes a moment before its hello
	}
	if !s.admitted() {
		return
	}

	// Slack counts every connection open for the app, this one included.
	s.mu.Lock()
	open := 1
	for _, x := range s.st.conns {
		if !x.dead {
			open++
		}
	}
	s.mu.Unlock()
	life := 18060
	if d := max(s.cfg.lifetime, s.cfg.announced); d > 0 {
		life = int(math.Ceil(d.Seconds()))
	}
	hello, _ := json.Marshal(map[string]any{
		"type": "hello", "num_connections": open,
		"debug_info":      map[string]any{"host": "fakeslack", "build_number": 1, "approximate_connection_time": life},
		"connection_info": map[string]any{"app_id": AppID},
	})
	if err := wc.write(hello); err != nil {
		return
	}

	stop := make(chan struct{})
	wc.stop = stop
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.st.connections++
	wc.n = s.st.connections
	s.st.conns = append(s.st.conns, wc)
	if s.cfg.pingInterval > 0 {
		s.wg.Add(1)
		go s.ping(wc, stop)
	}
	if s.cfg.lifetime > 0 {
		s.wg.Add(1)
		go s.retire(wc)
	}
	s.notifyLocked()
	s.mu.Unlock()

	s.readAcks(wc)

	close(stop)
	s.mu.Lock()
	wc.dead = true
	for i, x := range s.st.conns {
		if x == wc {
			s.st.conns = append(s.st.conns[:i], s.st.conns[i+1:]...)
			break
		}
	}
	s.connEndedLocked(wc, time.Now())
	s.notifyLocked()
	s.mu.Unlock()
}

// ping sends WebSocket pings, the first at once: slack-go counts the time
// since the last one and reconnects when it grows past its interval.
func (s *Server) ping(wc *wsConn, stop <-chan struct{}) {
	defer s.wg.Done()
	t := time.NewTicker(s.cfg.pingInterval)
	defer t.Stop()
	for {
		if err := wc.c.WriteControl(websocket.PingMessage, []byte("fakeslack"), time.Now().Add(time.Second)); err != nil {
			return
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// readAcks reads the client's messages (acks) until the connection ends.
func (s *Server) readAcks(wc *wsConn) {
	for {
		_, data, err := wc.c.ReadMessage()
		if err != nil {
			return
		}
		now := time.Now()
		var msg struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(data, &msg) != nil || msg.EnvelopeID == "" {
			continue
		}
		s.mu.Lock()
		env := s.st.envelopes[msg.EnvelopeID]
		a := s.st.acks[msg.EnvelopeID]
		if a == nil {
			a = &Ack{EnvelopeID: msg.EnvelopeID, Payload: msg.Payload, Acked: now, Conn: wc.n}
			if env != nil && !env.firstSent.IsZero() {
				a.Sent = env.firstSent
				a.Latency = now.Sub(env.firstSent)
			}
			s.st.acks[msg.EnvelopeID] = a
		}
		a.Count++
		s.answerLocked(env, data, msg.Payload, now)
		s.notifyLocked()
		s.mu.Unlock()
	}
}

// dispatch writes queued envelopes to the usable connections in turn
// (round robin), keeping them queued while no client is connected.
func (s *Server) dispatch() {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return
		}
		if len(s.queue) == 0 || s.st.current() == nil {
			ch := s.changed
			s.mu.Unlock()
			<-ch
			continue
		}
		wc := s.nextConnLocked()
		out := s.queue[0]
		s.queue = s.queue[1:]
		first := s.startSendLocked(wc, out)
		hook := s.beforeWrite
		s.mu.Unlock()

		if hook != nil {
			hook(wc.n)
		}
		err := wc.write(out.frame)

		s.mu.Lock()
		farewell := s.endSendLocked(wc, out, first, err)
		s.notifyLocked()
		s.mu.Unlock()
		if farewell != nil {
			_ = wc.write(farewell)
		}
	}
}

// startSendLocked notes out as being written to wc; first reports whether
// it is the envelope's first delivery.
func (s *Server) startSendLocked(wc *wsConn, out outgoing) (first bool) {
	// The send time is taken before the write: a client may read the
	// frame and ack it before the write call returns.
	now := time.Now()
	first = out.env != nil && out.env.firstSent.IsZero()
	if first {
		out.env.firstSent = now
	}
	if out.env != nil {
		out.env.deliveries = append(out.env.deliveries, Delivery{Conn: wc.n, RetryAttempt: out.retry, Sent: now})
		wc.inflight = out.env
	}
	wc.writing = true
	return first
}

// endSendLocked notes how the write of out to wc ended: a failed write
// queues it again first and forgets the delivery; it returns the farewell
// frame held back while the write was under way, if any.
func (s *Server) endSendLocked(wc *wsConn, out outgoing, first bool, err error) (farewell []byte) {
	wc.inflight, wc.writing = nil, false
	farewell, wc.farewell = wc.farewell, nil
	switch {
	case err != nil:
		s.queue = append([]outgoing{out}, s.queue...)
		wc.dead = true
		if out.env != nil {
			out.env.deliveries = out.env.deliveries[:len(out.env.deliveries)-1]
			if first {
				out.env.firstSent = time.Time{}
			}
		}
	case out.env != nil:
		out.env.sends++
		wc.sent = append(wc.sent, out.env)
		if wc.ended {
			// The connection died while the frame was written.
			s.orphanLocked(out.env, time.Now())
		}
	}
	return farewell
}

func (s *Server) enqueueLocked(env *envelope) string {
	if env.queued.IsZero() {
		env.queued = time.Now()
		env.unserved = s.st.current() == nil
	}
	if s.st.envelopes[env.id] == nil {
		s.st.order = append(s.st.order, env)
	}
	s.st.envelopes[env.id] = env
	s.linkTriggerLocked(env)
	s.queue = append(s.queue, outgoing{env: env, frame: env.frame(), retry: env.retry})
	s.notifyLocked()
	return env.id
}

func (s *Server) newEnvelopeLocked(typ string, payload json.RawMessage, accepts bool) *envelope {
	s.seq++
	return &envelope{id: fmt.Sprintf("fake-env-%06d", s.seq), typ: typ, payload: payload, accepts: accepts}
}

var envelopeIDPattern = regexp.MustCompile(`"envelope_id"\s*:\s*"([^"]*)"`)

// SendRaw writes msg to the client verbatim (queued until a client is
// connected), to try malformed envelopes. It returns the envelope_id found in
// msg, even when msg is not valid JSON, so that acks to it can be awaited;
// "" when there is none.
func (s *Server) SendRaw(msg []byte) string {
	id := ""
	if m := envelopeIDPattern.FindSubmatch(msg); m != nil {
		id = string(m[1])
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	env := &envelope{id: id, raw: append([]byte(nil), msg...)}
	if id == "" {
		s.queue = append(s.queue, outgoing{frame: env.raw})
		s.notifyLocked()
		return ""
	}
	return s.enqueueLocked(env)
}

// Redeliver sends an envelope again with the same envelope_id, as Slack does
// when the ack is late: retry_attempt goes up by one and retry_reason is
// "timeout". Envelopes sent with SendRaw are resent verbatim.
func (s *Server) Redeliver(envelopeID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	env := s.st.envelopes[envelopeID]
	if env == nil {
		return fmt.Errorf("fakeslack: redeliver: no envelope %q was sent", envelopeID)
	}
	if env.raw == nil {
		env.retry++
	}
	s.queue = append(s.queue, outgoing{env: env, frame: env.frame(), retry: env.retry})
	s.notifyLocked()
	return nil
}

// disconnectFrame is Slack's request that the client move to a new
// connection.
var disconnectFrame = []byte(`{"type":"disconnect","reason":"refresh_requested","debug_info":{"host":"fakeslack"}}`)

// farewellLocked asks wc's client to leave: nothing more is delivered on
// wc, and its disconnect goes after the frame being written there now, if
// any, as Slack writes nothing on a connection after its disconnect. It
// returns the write to make once s.mu is released; nil when the dispatcher
// makes it, right after its frame.
func (s *Server) farewellLocked(wc *wsConn) func() error {
	wc.draining = true
	s.notifyLocked()
	if wc.writing {
		wc.farewell = disconnectFrame
		return nil
	}
	return func() error { return wc.write(disconnectFrame) }
}

// retire refreshes a connection at the end of its lifetime.
func (s *Server) retire(wc *wsConn) {
	defer s.wg.Done()
	t := time.NewTimer(s.cfg.lifetime)
	defer t.Stop()
	select {
	case <-wc.stop:
		return
	case <-t.C:
	}
	s.mu.Lock()
	write := s.refreshLocked(wc)
	s.mu.Unlock()
	if write != nil {
		_ = write()
	}
	s.closeSoon(wc)
}

// refreshLocked starts what Slack does at the end of a connection's life:
// a disconnect, and nothing more delivered on it (see farewellLocked).
func (s *Server) refreshLocked(wc *wsConn) func() error {
	s.st.refreshes++
	return s.farewellLocked(wc)
}

// closeSoon closes a refreshed connection a moment after its disconnect,
// unless the client leaves first.
func (s *Server) closeSoon(wc *wsConn) {
	select {
	case <-wc.stop:
	case <-time.After(100 * time.Millisecond):
		_ = wc.c.Close()
	}
}

// Refresh ends Socket Mode connection n's life now (n as in
// LiveConnections or Delivery.Conn), as Slack does once the
// approximate_connection_time its hello announced has passed: a
// disconnect (reason refresh_requested), nothing more delivered on it, and
// the connection closed shortly after unless the client leaves first. For
// tests that choose the moment (WithAnnouncedLifetime).
func (s *Server) Refresh(n int) error {
	s.mu.Lock()
	var wc *wsConn
	for _, c := range s.st.conns {
		if c.n == n && !c.dead && !c.draining {
			wc = c
		}
	}
	if wc == nil || s.closed {
		s.mu.Unlock()
		return fmt.Errorf("fakeslack: no live connection %d: %w", n, ErrNotConnected)
	}
	write := s.refreshLocked(wc)
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		s.closeSoon(wc)
	}()
	if write != nil {
		if err := write(); err != nil {
			return fmt.Errorf("fakeslack: sending disconnect: %w", err)
		}
	}
	return nil
}

// Disconnect asks the connected client to reconnect, with a Socket Mode
// "disconnect" message whose reason is refresh_requested, as Slack does every
// few hours. Nothing more is delivered on that connection; slack-go opens a
// new one (apps.connections.open again), where queued envelopes go.
func (s *Server) Disconnect() error {
	s.mu.Lock()
	wc := s.st.current()
	if wc == nil {
		s.mu.Unlock()
		return ErrNotConnected
	}
	write := s.farewellLocked(wc)
	s.mu.Unlock()
	if write == nil {
		return nil // the dispatcher writes it after its frame
	}
	if err := write(); err != nil {
		return fmt.Errorf("fakeslack: sending disconnect: %w", err)
	}
	return nil
}

// DropConnection closes the connected client's TCP connection without a
// WebSocket close, like a network failure.
func (s *Server) DropConnection() error {
	s.mu.Lock()
	wc := s.st.current()
	if wc == nil {
		s.mu.Unlock()
		return ErrNotConnected
	}
	wc.dead = true
	s.notifyLocked()
	s.mu.Unlock()
	if err := wc.c.UnderlyingConn().Close(); err != nil {
		return fmt.Errorf("fakeslack: dropping the connection: %w", err)
	}
	return nil
}

// WaitConnected waits until a client is connected and has been sent hello.
func (s *Server) WaitConnected(ctx context.Context) error {
	return s.WaitFor(ctx, (*State).Connected)
}

// WaitAck waits for the client's ack of the envelope. Ack.Latency is the
// time from writing the envelope to the socket to the ack.
func (s *Server) WaitAck(ctx context.Context, envelopeID string) (Ack, error) {
	var a Ack
	err := s.WaitFor(ctx, func(st *State) bool {
		var found bool
		a, found = st.Ack(envelopeID)
		return found
	})
	if err != nil {
		return Ack{}, fmt.Errorf("waiting for the ack of %s: %w", envelopeID, err)
	}
	return a, nil
}
