package fakeslack

import (
	"fmt"
	"math"
	"net/http"
	"time"
)

// fault is what a test injected into the calls of one method: the next
// calls answered 429, an error, an HTTP status, or a lost reply.
type fault struct {
	rateTimes   int
	retryAfter  time.Duration
	failTimes   int
	failCode    string
	statusTimes int
	status      int
	loseTimes   int
	bareTimes   int // 429s without a Retry-After header
}

func (s *Server) faultFor(method string) *fault {
	f := s.faults[method]
	if f == nil {
		f = &fault{}
		s.faults[method] = f
	}
	return f
}

// RateLimit makes the next times calls to method answer HTTP 429 with a
// Retry-After header. Slack sends whole seconds and slack-go parses only
// whole seconds, so retryAfter is rounded up to the next second (300ms
// becomes "1"); zero sends "Retry-After: 0". A call to the same method (and
// the same channel, when the call names one) before the announced time has
// passed is answered 429 again and recorded as a Violation: the bot must wait
// the Retry-After out.
func (s *Server) RateLimit(method string, times int, retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.faultFor(method)
	f.rateTimes, f.retryAfter = times, retryAfter
}

// Fail makes the next times calls to method answer {"ok":false,"error":slackError}.
func (s *Server) Fail(method string, times int, slackError string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.faultFor(method)
	f.failTimes, f.failCode = times, slackError
}

// RateLimitBare makes the next times calls to method answer HTTP 429 with
// no Retry-After header, as Slack's edge sometimes does: the caller has to
// choose how long to wait.
func (s *Server) RateLimitBare(method string, times int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faultFor(method).bareTimes = times
}

// LoseReply makes the next times calls to method take effect and then lose
// their answer: the connection is cut before a byte of it is written, as a
// network failure after Slack acted would (slack-go reports a network
// error, and the caller cannot tell whether the call happened).
func (s *Server) LoseReply(method string, times int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faultFor(method).loseTimes = times
}

// FailStatus makes the next times calls to method answer with an HTTP status
// (500, 503: an outage), which slack-go reports as a slack.StatusCodeError.
func (s *Server) FailStatus(method string, times int, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.faultFor(method)
	f.statusTimes, f.status = times, status
}

func retryAfterSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int(math.Ceil(d.Seconds()))
}

// faultLocked answers a call with an injected fault, if one is due.
func (s *Server) faultLocked(method string, req *apiRequest, now time.Time) (reply, bool) {
	key := method + " " + req.get("channel")
	if until, ok := s.windows[key]; ok && now.Before(until) {
		left := until.Sub(now)
		s.st.violations = append(s.st.violations, Violation{
			Method: method,
			Detail: fmt.Sprintf("called again %v before the Retry-After of its 429 ended", left.Round(time.Millisecond)),
			Time:   now,
		})
		s.st.rateLimited[method]++
		return rateLimited(retryAfterSeconds(left)), true
	}
	f := s.faults[method]
	switch {
	case f == nil:
		return reply{}, false
	case f.rateTimes > 0:
		f.rateTimes--
		secs := retryAfterSeconds(f.retryAfter)
		if secs > 0 {
			s.windows[key] = now.Add(time.Duration(secs) * time.Second)
		}
		s.st.rateLimited[method]++
		return rateLimited(secs), true
	case f.bareTimes > 0:
		f.bareTimes--
		s.st.rateLimited[method]++
		res := rateLimited(0)
		res.retryAfter = ""
		return res, true
	case f.statusTimes > 0:
		f.statusTimes--
		return reply{status: f.status, text: http.StatusText(f.status)}, true
	case f.failTimes > 0:
		f.failTimes--
		return errorReply(f.failCode), true
	}
	return reply{}, false
}
