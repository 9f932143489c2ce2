package fakeslack

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// DefaultRetryDelay is how long after its last sending the fake sends again
// an Events API envelope whose connection died before acknowledging it
// (Slack waits about three seconds, then one and five minutes; the fake
// keeps tests short).
const DefaultRetryDelay = time.Second

// maxRetries is how many times Slack sends an Events API envelope again
// before giving it up.
const maxRetries = 3

// WithRetryDelay sets how long after it was last sent an Events API
// envelope left unacknowledged by a connection that died is sent again
// (DefaultRetryDelay unless set).
func WithRetryDelay(d time.Duration) Option {
	return func(c *config) { c.retryDelay = max(d, 0) }
}

// Delivery is one writing of an envelope to a Socket Mode connection.
type Delivery struct {
	Conn         int // the connection's number (1 for the first opened)
	RetryAttempt int // the retry_attempt the envelope carried
	Sent         time.Time
}

// Envelope is a Socket Mode request Slack had to send, as a test sees it.
type Envelope struct {
	ID string
	// Type is events_api, interactive or slash_commands; empty for
	// SendRaw.
	Type       string
	Payload    json.RawMessage // as sent (the whole frame for SendRaw)
	Queued     time.Time
	Deliveries []Delivery // in order; none while it waits for a connection
	Acked      bool
	// Lost is set once Slack gave the envelope up unacknowledged: the
	// connection it was sent on died, and it is an interaction or a slash
	// command (never sent again: the person saw an error), or an Events
	// API envelope whose retries ran out.
	Lost bool
	// Unserved is set when no connection took envelopes as Slack had it
	// (none open, or every one asked to leave): it waited for one.
	Unserved bool
}

// Envelopes returns every envelope Slack had to send, in the order they
// were made.
func (st *State) Envelopes() []Envelope {
	out := make([]Envelope, 0, len(st.order))
	for _, e := range st.order {
		out = append(out, st.envelopeRecord(e))
	}
	return out
}

// Unacked returns the envelopes sent at least once that no ack answered,
// in the order they were made: those still awaited and those Slack gave up
// (Lost).
func (st *State) Unacked() []Envelope {
	var out []Envelope
	for _, e := range st.order {
		if len(e.deliveries) > 0 && st.acks[e.id] == nil {
			out = append(out, st.envelopeRecord(e))
		}
	}
	return out
}

// LiveConnections returns the numbers of the connections envelopes are
// delivered to now (open, greeted, not asked to leave), oldest first.
func (st *State) LiveConnections() []int {
	var out []int
	for _, c := range st.conns {
		if !c.draining && !c.dead {
			out = append(out, c.n)
		}
	}
	return out
}

// OpenConnections returns the numbers of the Socket Mode connections open
// now, asked to leave or not, oldest first.
func (st *State) OpenConnections() []int {
	var out []int
	for _, c := range st.conns {
		if !c.dead {
			out = append(out, c.n)
		}
	}
	return out
}

func (st *State) envelopeRecord(e *envelope) Envelope {
	p := slices.Clone(e.payload)
	if e.raw != nil {
		p = slices.Clone(json.RawMessage(e.raw))
	}
	return Envelope{ID: e.id, Type: e.typ, Payload: p, Queued: e.queued, Unserved: e.unserved,
		Deliveries: slices.Clone(e.deliveries), Acked: st.acks[e.id] != nil, Lost: e.lost}
}

// Envelopes returns every envelope Slack had to send, in order.
func (s *Server) Envelopes() []Envelope { return read(s, (*State).Envelopes) }

// Unacked returns the envelopes sent that no ack answered.
func (s *Server) Unacked() []Envelope { return read(s, (*State).Unacked) }

// LiveConnections returns the numbers of the connections that get
// envelopes now.
func (s *Server) LiveConnections() []int { return read(s, (*State).LiveConnections) }

// nextConnLocked picks the connection for the next envelope: the usable
// connections take turns, in the order they opened.
func (s *Server) nextConnLocked() *wsConn {
	var first *wsConn
	for _, c := range s.st.conns {
		if c.draining || c.dead {
			continue
		}
		if first == nil {
			first = c
		}
		if c.n > s.lastConn {
			s.lastConn = c.n
			return c
		}
	}
	if first != nil {
		s.lastConn = first.n
	}
	return first
}

// connEndedLocked does what Slack does with the envelopes a connection
// that just died left unacknowledged.
func (s *Server) connEndedLocked(wc *wsConn, now time.Time) {
	wc.ended = true
	for _, env := range wc.sent {
		s.orphanLocked(env, now)
	}
	wc.sent = nil
}

// orphanLocked handles an envelope whose connection died: once acked,
// nothing; an Events API envelope is sent again, with retry_attempt one
// more and retry_reason "timeout", the retry delay after its last
// sending, to whichever connection is usable then; anything else is lost.
func (s *Server) orphanLocked(env *envelope, now time.Time) {
	if env.raw != nil || s.st.acks[env.id] != nil || env.retrying || env.lost {
		return
	}
	if env.typ != "events_api" || env.retry >= maxRetries {
		env.lost = true
		return
	}
	env.retrying = true
	wait := s.cfg.retryDelay
	if n := len(env.deliveries); n > 0 {
		wait = max(env.deliveries[n-1].Sent.Add(wait).Sub(now), 0)
	}
	time.AfterFunc(wait, func() { s.retryOrphan(env) })
}

func (s *Server) retryOrphan(env *envelope) {
	s.mu.Lock()
	defer s.mu.Unlock()
	env.retrying = false
	if s.closed || s.st.acks[env.id] != nil {
		return
	}
	env.retry++
	s.queue = append(s.queue, outgoing{env: env, frame: env.frame(), retry: env.retry})
	s.notifyLocked()
}

// KillConnection ends Socket Mode connection n (a number from
// LiveConnections or Delivery.Conn) as when the process at its end is
// killed: the TCP connection closes without a WebSocket close. slack-go,
// if it still runs, reconnects.
func (s *Server) KillConnection(n int) error {
	s.mu.Lock()
	var wc *wsConn
	for _, c := range s.st.conns {
		if c.n == n && !c.dead {
			wc = c
		}
	}
	if wc == nil {
		s.mu.Unlock()
		return fmt.Errorf("fakeslack: no open connection %d: %w", n, ErrNotConnected)
	}
	wc.dead = true
	s.notifyLocked()
	s.mu.Unlock()
	if err := wc.c.UnderlyingConn().Close(); err != nil {
		return fmt.Errorf("fakeslack: killing connection %d: %w", n, err)
	}
	return nil
}

// WithAnnouncedLifetime makes hello announce d (whole seconds, rounded
// up) as approximate_connection_time, as WithConnectionLifetime does, but
// Slack ends no connection by itself: the test refreshes one when it
// chooses (Refresh).
func WithAnnouncedLifetime(d time.Duration) Option {
	return func(c *config) { c.announced = d }
}

// AdmitConnections lets the first n Socket Mode connections (in the order
// they were opened) be greeted; a later one waits, open and silent (no
// hello, no envelopes), until a later call admits it (State.Waiting counts
// them). n < 0 admits every connection, as by default. For tests that
// choose when a client's next connection comes up.
func (s *Server) AdmitConnections(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gate.limited, s.gate.admit = n >= 0, n
	s.notifyLocked()
}

// connGate is which new connections are greeted; the zero value greets
// every one.
type connGate struct {
	limited bool
	admit   int // while limited, how many connections may be greeted
	greeted int // connections greeted so far
}

// admitted waits until a new connection may be greeted (AdmitConnections);
// false when the server closed first.
func (s *Server) admitted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.waiting++
	s.notifyLocked()
	for s.gate.limited && s.gate.greeted >= s.gate.admit && !s.closed {
		ch := s.changed
		s.mu.Unlock()
		<-ch
		s.mu.Lock()
	}
	s.st.waiting--
	s.notifyLocked()
	if s.closed {
		return false
	}
	s.gate.greeted++
	return true
}
