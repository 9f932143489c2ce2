package bot

import (
	"maps"
	"sync"
	"time"
)

// slackTiers is how many calls a minute Slack allows each tiered Web API
// method the bot calls, app-wide in a workspace: the least of the method's
// published tier (docs.slack.dev/apis/web-api/rate-limits: Tier 2 is "20+
// per minute", Tier 3 "50+", Tier 4 "100+"). chat.update has a budget of
// its own (updateBudget), chat.postMessage is paced per channel, and the
// methods of Slack's "Special" tier with no published number
// (assistant.threads.setStatus, agents.sessions.setStatus,
// chat.startStream, chat.appendStream) have none.
var slackTiers = map[string]int{
	"usergroups.users.list":        20,
	"chat.stopStream":              20,
	"chat.delete":                  50,
	"conversations.history":        50,
	"conversations.replies":        50,
	"chat.postEphemeral":           100,
	"files.getUploadURLExternal":   100,
	"files.completeUploadExternal": 100,
	"files.info":                   100,
	"views.open":                   100,
	"views.update":                 100,
}

// tierWindow is the span a tier counts calls in: a minute, and a margin
// for the time a call takes to reach Slack after it is counted here.
const tierWindow = time.Minute + 2*time.Second

// tierBudget keeps the bot's calls of each tiered method (slackTiers)
// inside Slack's tier by construction, instead of waiting out the 429s
// that going over it brings: a call is made only when fewer calls than
// the tier allows were made in the last tierWindow, counting those about
// to be made (held).
type tierBudget struct {
	mu     sync.Mutex
	limits map[string]int
	made   map[string][]time.Time // method -> its calls in the last window
	held   map[string]int         // method -> calls allowed and not made yet
}

func newTierBudget(limits map[string]int) *tierBudget {
	return &tierBudget{limits: limits, made: map[string][]time.Time{}, held: map[string]int{}}
}

// take holds a call of each of methods at now, all or none, and returns
// the zero time; or, when one of them has no room, holds none and returns
// when to try again. A method with no tier always has room.
func (t *tierBudget) take(now time.Time, methods ...string) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	var until time.Time
	for _, m := range methods {
		limit, ok := t.limits[m]
		if !ok {
			continue
		}
		made := t.made[m]
		for len(made) > 0 && !now.Before(made[0].Add(tierWindow)) {
			made = made[1:]
		}
		t.made[m] = made
		if len(made)+t.held[m] < limit {
			continue
		}
		// The oldest call leaves the window first; calls held and not
		// made yet leave it a window after they are made, at the earliest.
		at := now.Add(time.Second)
		if len(made) > 0 && len(made) >= limit {
			at = made[0].Add(tierWindow)
		}
		if at.After(until) {
			until = at
		}
	}
	if !until.IsZero() {
		return until
	}
	for _, m := range methods {
		if _, ok := t.limits[m]; ok {
			t.held[m]++
		}
	}
	return time.Time{}
}

// madeAt counts a held call of method as made at now.
func (t *tierBudget) madeAt(method string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.limits[method]; !ok {
		return
	}
	t.held[method] = max(0, t.held[method]-1)
	t.made[method] = append(t.made[method], now)
}

// release gives back a held call of each of methods that will not be
// made.
func (t *tierBudget) release(methods ...string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, m := range methods {
		if _, ok := t.limits[m]; ok {
			t.held[m] = max(0, t.held[m]-1)
		}
	}
}

// set makes method's tier perMinute calls, for this budget only.
func (t *tierBudget) set(method string, perMinute int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	limits := maps.Clone(t.limits) // not slackTiers itself
	limits[method] = perMinute
	t.limits = limits
}
