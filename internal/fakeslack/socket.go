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
	if s.cfg.lifetime > 0 {
		life = int(math.Ceil(s.cfg.lifetime.Seconds()))
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
		go s.retire(wc, stop)
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
		// The send time is taken before the write: a client may read the
		// frame and ack it before the write call returns here.
		now := time.Now()
		first := out.env != nil && out.env.firstSent.IsZero()
		if first {
			out.env.firstSent = now
		}
		if out.env != nil {
			out.env.deliveries = append(out.env.deliveries, Delivery{Conn: wc.n, RetryAttempt: out.retry, Sent: now})
			wc.inflight = out.env
		}
		s.mu.Unlock()

		err := wc.write(out.frame)

		s.mu.Lock()
		wc.inflight = nil
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
		s.notifyLocked()
		s.mu.Unlock()
	}
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

// retire refreshes a connection at the end of its lifetime: a disconnect,
// nothing more delivered on it, and the connection closed a moment later.
func (s *Server) retire(wc *wsConn, stop chan struct{}) {
	defer s.wg.Done()
	t := time.NewTimer(s.cfg.lifetime)
	defer t.Stop()
	select {
	case <-stop:
		return
	case <-t.C:
	}
	s.mu.Lock()
	wc.draining = true
	s.st.refreshes++
	s.notifyLocked()
	s.mu.Unlock()
	_ = wc.write([]byte(`{"type":"disconnect","reason":"refresh_requested","debug_info":{"host":"fakeslack"}}`))
	select {
	case <-stop:
	case <-time.After(100 * time.Millisecond):
		_ = wc.c.Close()
	}
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
	wc.draining = true
	s.notifyLocked()
	s.mu.Unlock()
	msg := []byte(`{"type":"disconnect","reason":"refresh_requested","debug_info":{"host":"fakeslack"}}`)
	if err := wc.write(msg); err != nil {
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
