package fakeslack

import (
	"encoding/json"
	"net/http"
	"time"
)

// TriggerLife is how long Slack accepts a trigger_id: three seconds from
// when the interaction that carries it was sent. A trigger opens one view.
const TriggerLife = 3 * time.Second

// trigger is a trigger_id the fake issued.
type trigger struct {
	user   string
	issued time.Time
	env    *envelope // the envelope that carries it, once enqueued
	used   bool
}

// expiresLocked is when the trigger stops opening views: TriggerLife after
// the envelope carrying it was first written to the socket, or after it
// was issued when no envelope carries it yet (TriggerID, for payloads
// built by hand).
func (t *trigger) expiresLocked() time.Time {
	if t.env != nil && !t.env.firstSent.IsZero() {
		return t.env.firstSent.Add(TriggerLife)
	}
	return t.issued.Add(TriggerLife)
}

// linkTriggerLocked ties the trigger_id an envelope's payload carries, when
// the fake issued it, to the envelope: its life runs from the envelope's
// sending.
func (s *Server) linkTriggerLocked(env *envelope) {
	if env.raw != nil || len(env.payload) == 0 {
		return
	}
	var p struct {
		TriggerID string `json:"trigger_id"`
	}
	if json.Unmarshal(env.payload, &p) != nil || p.TriggerID == "" {
		return
	}
	if t := s.triggers[p.TriggerID]; t != nil && t.env == nil {
		t.env = env
	}
}

// exchangeTriggerLocked checks a trigger_id given to views.open or
// views.push at now, as Slack does: unknown (invalid_trigger_id), past its
// life (expired_trigger_id) or used already (exchanged_trigger_id). A
// usable trigger is returned; it is spent by the caller once the view is
// opened.
func (s *Server) exchangeTriggerLocked(id string, now time.Time) (*trigger, reply, bool) {
	t := s.triggers[id]
	switch {
	case t == nil:
		return nil, errorReply("invalid_trigger_id"), false
	case t.used:
		return nil, errorReply("exchanged_trigger_id"), false
	case now.After(t.expiresLocked()):
		return nil, errorReply("expired_trigger_id"), false
	}
	return t, reply{}, true
}

// Delay holds every call to a Web API method for d before the fake acts on
// it and answers, as a slow Slack (or a slow network) would: the call
// takes effect, and its answer arrives, d after it was made. method ""
// sets the delay of every method that has none of its own; a method's own
// delay, zero included, wins over it, so Delay("", 2*time.Second) with
// Delay("views.open", 0) slows everything but views.open. Uploads,
// downloads and response_url posts are not delayed. A call's Time is when
// it was made.
func (s *Server) Delay(method string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delays[method] = max(d, 0)
}

// delayFor is how long a call to method is held.
func (s *Server) delayFor(method string) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d, ok := s.delays[method]; ok {
		return d
	}
	return s.delays[""]
}

// hold waits out a call's delay; it reports false when the server closed
// or the client gave up meanwhile.
func (s *Server) hold(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	s.mu.Lock()
	s.st.held++
	s.notifyLocked()
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.st.held--
		s.notifyLocked()
		s.mu.Unlock()
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.done:
		return false
	case <-r.Context().Done():
		return false
	}
}
