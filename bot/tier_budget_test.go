package bot

import (
	"errors"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/internal/fakeslack"
	"github.com/gonogo/gonogo/internal/hangguard"
)

// The bot's tiers are Slack's, as the fake Slack enforces them: a tier
// the bot believed higher would bring 429s.
func TestSlackTiersAreTheFakesTiers(t *testing.T) {
	for method, perMinute := range slackTiers {
		l, ok := fakeslack.TierOf(method)
		if !ok || l.Per != time.Minute || l.Calls != perMinute {
			t.Errorf("%s: the bot allows itself %d calls a minute; the fake Slack enforces %v (tiered: %t)", method, perMinute, l, ok)
		}
	}
}

func TestTierBudgetHoldsAllOrNone(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	tb := newTierBudget(map[string]int{"a": 2, "b": 1})
	if until := tb.take(t0, "a", "b"); !until.IsZero() {
		t.Fatalf("first take: wait until %v", until)
	}
	// b has no room: a is not held either.
	if until := tb.take(t0, "a", "b"); until.IsZero() {
		t.Fatal("second take of b: allowed over its tier")
	}
	if until := tb.take(t0, "a"); !until.IsZero() {
		t.Fatalf("a's second call: wait until %v, want room (the failed take held none)", until)
	}
	if until := tb.take(t0, "a"); until.IsZero() {
		t.Fatal("a's third call: allowed over its tier")
	}
	// Made calls leave the window a tierWindow after they were made.
	tb.madeAt("a", t0)
	tb.madeAt("a", t0.Add(time.Second))
	tb.madeAt("b", t0)
	if until := tb.take(t0.Add(2*time.Second), "a"); !until.Equal(t0.Add(tierWindow)) {
		t.Errorf("a, full: try again at %v, want %v", until, t0.Add(tierWindow))
	}
	if until := tb.take(t0.Add(tierWindow), "a", "b"); !until.IsZero() {
		t.Errorf("a and b a window later: wait until %v", until)
	}
	// A held call given back frees its room.
	tb.release("a", "b")
	if until := tb.take(t0.Add(tierWindow), "b"); !until.IsZero() {
		t.Errorf("b after its held call was given back: wait until %v", until)
	}
	// A method with no tier always has room.
	for range 10 {
		if until := tb.take(t0, "chat.postMessage"); !until.IsZero() {
			t.Fatal("an untiered method was held back")
		}
	}
}

// TestUploadsStayInsideTheirTier: once files.getUploadURLExternal's
// tier (100 a minute) is spent, an upload is not made but handed back,
// with when to try again; Slack never answers 429.
func TestUploadsStayInsideTheirTier(t *testing.T) {
	srv := fakeslack.New(fakeslack.WithTiers())
	t.Cleanup(func() {
		for _, v := range srv.Violations() {
			t.Errorf("fake Slack violation: %s %s: %s", v.Method, v.Path, v.Detail)
		}
		srv.Close()
	})
	api := slack.New(srv.BotToken(), slack.OptionAPIURL(srv.APIURL()))
	ctx := hangguard.Context(t)
	s := newSender(api, NewMetrics(), 0, newUpdateBudget(50, 10, time.Minute, time.Second))
	tier := slackTiers["files.getUploadURLExternal"]
	for i := range tier {
		if _, err := s.uploadPrivate(ctx, "a.md", []byte("# A\n")); err != nil {
			t.Fatalf("upload %d of %d: %v", i+1, tier, err)
		}
	}
	begin := time.Now()
	_, err := s.uploadPrivate(ctx, "one-too-many.md", []byte("# B\n"))
	var le *laterError
	if !errors.As(err, &le) || le.until.Before(begin) || le.until.After(begin.Add(tierWindow)) {
		t.Fatalf("upload %d within a minute: err = %v, want a *laterError within a minute", tier+1, err)
	}
	if n := srv.RateLimited(""); n != 0 {
		t.Errorf("Slack answered %d calls 429", n)
	}
	if n := len(srv.Calls("files.getUploadURLExternal")); n != tier {
		t.Errorf("files.getUploadURLExternal called %d times, want %d: the upload handed back was started", n, tier)
	}
}
