package bot

import (
	"sync"
	"time"
)

// updatePriority orders the updates that wait for the budget.
type updatePriority int

const (
	// updateCheckpoint shows a step waiting for a decision: its buttons.
	updateCheckpoint updatePriority = iota
	// updateDecision shows a decision a person just took: whoever
	// clicked is looking at the message for it.
	updateDecision
	// updateState shows another change of state: a step started, a
	// notice that has moved on.
	updateState
	// updateMinor refreshes a message: the run's header.
	updateMinor
)

// updateBudget is the app-wide budget of chat.update calls: a token
// bucket holding up to burst tokens, refilled at (limit-burst)/window, so
// that no window-long span sees more than limit updates, whatever the load.
//
// When it runs low, a checkpoint goes first, then a person's decision: a
// change of state leaves one token in the bucket and a minor update two
// (reserve), and an update waits behind the updates of its own priority or
// higher that were turned away before it. A minor
// update also waits interval after the last update of the same message,
// so that a burst of changes is shown in one update; the others are never
// held back that way, as each comes from a person's click or a step's end.
type updateBudget struct {
	mu       sync.Mutex
	rate     float64 // tokens a second
	burst    float64
	interval time.Duration
	tokens   float64
	at       time.Time            // when tokens was counted
	last     map[string]time.Time // message -> its last update
	told     map[string]turn      // message turned away -> when it was told to come back
	// keepTurns says that a message turned away keeps its turn: true
	// when the same bot asks again for it (see New).
	keepTurns bool
}

// reserve is how many tokens an update of p leaves in the bucket for the
// updates above it: none for a checkpoint or a decision, which people
// wait for.
func (p updatePriority) reserve() float64 {
	return float64(max(0, p-updateDecision))
}

// abandoned is how long past its turn a message turned away keeps its
// place: one that never came back (its run ended) stops holding others.
const abandoned = 30 * time.Second

// turn is when an update turned away was told to come back.
type turn struct {
	at   time.Time
	prio updatePriority
}

func newUpdateBudget(limit, burst int, window, interval time.Duration) *updateBudget {
	return &updateBudget{
		rate: float64(limit-burst) / window.Seconds(), burst: float64(burst), interval: interval,
		tokens: float64(burst), last: map[string]time.Time{}, told: map[string]turn{}, keepTurns: true,
	}
}

// take spends a token on an update of msg at now and returns the zero
// time, or, when the update may not be made yet, returns when to try again.
func (u *updateBudget) take(msg string, prio updatePriority, now time.Time) time.Time {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.at.IsZero() {
		u.tokens = min(u.burst, u.tokens+now.Sub(u.at).Seconds()*u.rate)
	}
	u.at = now
	need := 1 + min(prio.reserve(), u.burst-1)
	earliest := now
	if last, ok := u.last[msg]; ok && prio == updateMinor && now.Before(last.Add(u.interval)) {
		earliest = last.Add(u.interval)
	}
	// Updates turned away earlier go first: a request takes a token only
	// when no other message of its priority or higher holds an earlier
	// turn (a fresh request holds none), so under a long overload a
	// checkpoint waits its turn instead of losing it to newer ones.
	mine, waiting := u.told[msg]
	ahead := u.turnAhead(msg, prio, now)
	if u.tokens >= need && !earliest.After(now) && !ahead {
		u.tokens--
		u.last[msg] = now
		delete(u.told, msg)
		u.prune(now)
		return time.Time{}
	}
	if u.tokens >= need && !ahead {
		return earliest
	}
	// A message asked about again keeps its turn (also when it comes back
	// a little late), unless it has become more urgent.
	if waiting && mine.prio <= prio {
		if mine.at.After(now) {
			return mine.at
		}
		return now.Add(time.Duration(float64(time.Second) / u.rate))
	}
	at := u.comeBack(msg, prio, need, earliest, now)
	if u.keepTurns {
		u.told[msg] = turn{at, prio}
	}
	return at
}

// turnAhead reports whether another message of prio or higher holds a
// turn before msg's (any turn, when msg holds none) that is not
// abandoned.
func (u *updateBudget) turnAhead(msg string, prio updatePriority, now time.Time) bool {
	mine, waiting := u.told[msg]
	for m, t := range u.told {
		if m != msg && t.prio <= prio && (!waiting || t.at.Before(mine.at)) && now.Sub(t.at) < abandoned {
			return true
		}
	}
	return false
}

// comeBack is when an update of msg turned away at now is told to come
// back: updates turned away together are told to come back one token
// apart, behind those of their priority or higher still waiting, rather
// than all at once for the same token; never before earliest.
func (u *updateBudget) comeBack(msg string, prio updatePriority, need float64, earliest, now time.Time) time.Time {
	queued := 0
	for m, t := range u.told {
		if m != msg && t.at.After(now) && t.prio <= prio {
			queued++
		}
	}
	at := now.Add(time.Duration((need - u.tokens + float64(queued)) / u.rate * float64(time.Second)))
	if tick := now.Add(time.Duration(float64(time.Second) / u.rate)); at.Before(tick) {
		at = tick // never sooner than a token can come back
	}
	if at.Before(earliest) {
		at = earliest
	}
	return at
}

// settled gives up msg's turn: the message shows what it should without
// a chat.update (an earlier update or a click's response_url showed it).
// A turn left behind would hold every update of its priority or lower
// until it is abandoned.
func (u *updateBudget) settled(msg string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.told, msg)
}

// posted counts a message's post as its last update, so that a minor
// update of a message just posted (the run's header, whose first step
// started as it was posted) waits the interval like any other and shows
// the changes of that second at once.
func (u *updateBudget) posted(msg string, now time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.last[msg] = now
	u.prune(now)
}

// prune forgets messages whose interval is long over, so that a bot that
// runs for months does not keep every message it ever updated.
func (u *updateBudget) prune(now time.Time) {
	if len(u.last)+len(u.told) < 1024 {
		return
	}
	for k, t := range u.last {
		if now.Sub(t) > u.interval {
			delete(u.last, k)
		}
	}
	for k, t := range u.told {
		if now.Sub(t.at) > abandoned {
			delete(u.told, k)
		}
	}
}
