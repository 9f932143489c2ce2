package fakeslack

import (
	"fmt"
	"math"
	"time"
)

// Limit is one of Slack's rate limits: at most Calls calls in any span of
// Per.
type Limit struct {
	Calls int
	Per   time.Duration
}

// Slack's Web API tiers as docs.slack.dev/apis/web-api/rate-limits
// publishes them, "per API method per workspace per app". Slack gives the
// least each tier allows ("50+ per minute") and tolerates bursts; the fake
// allows exactly the least in any minute-long span, so a bot that stays
// under the fake's limits stays under Slack's.
var (
	Tier1 = Limit{Calls: 1, Per: time.Minute}
	Tier2 = Limit{Calls: 20, Per: time.Minute}
	Tier3 = Limit{Calls: 50, Per: time.Minute}
	Tier4 = Limit{Calls: 100, Per: time.Minute}
	// PostsPerChannel is chat.postMessage's limit in one channel: one
	// message a second. Slack allows short bursts over it; the fake does
	// not.
	PostsPerChannel = Limit{Calls: 1, Per: time.Second}
)

// methodTiers is the tier of each method the fake serves, from each
// method's reference page. The methods left out are in Slack's "Special"
// tier with no published number (auth.test, assistant.threads.setStatus,
// chat.startStream, chat.appendStream, agents.sessions.setStatus), which
// the fake does not limit; nor does it limit chat.postMessage across a
// workspace, a limit Slack keeps without publishing it.
var methodTiers = map[string]Limit{
	"apps.connections.open":        Tier1,
	"usergroups.users.list":        Tier2,
	"chat.stopStream":              Tier2,
	"chat.update":                  Tier3,
	"chat.delete":                  Tier3,
	"conversations.history":        Tier3,
	"conversations.replies":        Tier3,
	"chat.postEphemeral":           Tier4,
	"files.getUploadURLExternal":   Tier4,
	"files.completeUploadExternal": Tier4,
	"files.info":                   Tier4,
	"users.info":                   Tier4,
	"views.open":                   Tier4,
	"views.update":                 Tier4,
	"views.push":                   Tier4,
}

// TierOf is the limit the fake holds calls to method to when it enforces
// Slack's tiers, app-wide in the workspace; ok is false for a method it
// does not limit that way (chat.postMessage is limited per channel:
// PostsPerChannel).
func TierOf(method string) (l Limit, ok bool) {
	l, ok = methodTiers[method]
	return l, ok
}

// WithTiers makes the fake enforce Slack's rate limits from the start:
// see EnforceTiers.
func WithTiers() Option {
	return func(c *config) { c.tiers = true }
}

// EnforceTiers turns the enforcement of Slack's rate limits on or off
// (off unless WithTiers): each method's tier (TierOf) across the
// workspace, and chat.postMessage's PostsPerChannel in each channel. A
// call over its limit is answered HTTP 429 with the whole seconds until
// the limit has room again in Retry-After, as Slack answers, and is
// counted by RateLimited; a call to the same limit before that
// Retry-After ended is also recorded as a Violation. Calls answered 429
// spend nothing.
func (s *Server) EnforceTiers(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.tiers = on
}

// SetTier sets the limit the fake holds method's calls to, when it
// enforces the tiers, in place of Slack's: a test that reaches a tier
// without making a hundred calls.
func (s *Server) SetTier(method string, l Limit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tiers.set == nil {
		s.tiers.set = map[string]Limit{}
	}
	s.tiers.set[method] = l
}

// tierLog is what the enforcement of the tiers remembers.
type tierLog struct {
	calls map[string][]time.Time // limit key -> the calls it let through in the last span
	retry map[string]time.Time   // limit key -> the end of the Retry-After it last answered
	set   map[string]Limit       // method -> the limit a test set (SetTier)
}

// limitFor is the limit a call counts against, and its key: the
// channel's for chat.postMessage, the method's otherwise.
func (s *Server) limitFor(method string, req *apiRequest) (string, Limit, bool) {
	if l, ok := s.tiers.set[method]; ok {
		return method, l, true
	}
	if method == "chat.postMessage" {
		return method + " " + req.get("channel"), PostsPerChannel, true
	}
	l, ok := methodTiers[method]
	return method, l, ok
}

// tierLocked answers a call over its limit with a 429, when the tiers are
// enforced, and otherwise counts it.
func (s *Server) tierLocked(method string, req *apiRequest, now time.Time) (reply, bool) {
	if !s.cfg.tiers {
		return reply{}, false
	}
	key, l, ok := s.limitFor(method, req)
	if !ok {
		return reply{}, false
	}
	if s.tiers.calls == nil {
		s.tiers.calls, s.tiers.retry = map[string][]time.Time{}, map[string]time.Time{}
	}
	if until, ok := s.tiers.retry[key]; ok && now.Before(until) {
		s.st.violations = append(s.st.violations, Violation{Method: method, Time: now,
			Detail: fmt.Sprintf("called again %v before the Retry-After of its 429 ended", until.Sub(now).Round(time.Millisecond))})
	}
	in := s.tiers.calls[key]
	for len(in) > 0 && !now.Before(in[0].Add(l.Per)) {
		in = in[1:]
	}
	if len(in) < l.Calls {
		s.tiers.calls[key] = append(in, now)
		return reply{}, false
	}
	s.tiers.calls[key] = in
	secs := max(1, int(math.Ceil(in[0].Add(l.Per).Sub(now).Seconds())))
	s.tiers.retry[key] = now.Add(time.Duration(secs) * time.Second)
	s.st.rateLimited[method]++
	return rateLimited(secs), true
}
