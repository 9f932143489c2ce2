package fakeslack_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/internal/fakeslack"
)

// updateTimes makes n chat.update calls on one message and returns the
// first error.
func updateTimes(api *slack.Client, ch, ts string, n int) (int, error) {
	for i := range n {
		if _, _, _, err := api.UpdateMessage(ch, ts, slack.MsgOptionText(fmt.Sprintf("v%d", i), false)); err != nil {
			return i, err
		}
	}
	return n, nil
}

func TestTiersHoldChatUpdateToTier3AcrossTheWorkspace(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakeslack.WithTiers())
	api := webClient(srv)
	_, ts, err := api.PostMessage("C1", slack.MsgOptionText("hello", false))
	if err != nil {
		t.Fatal(err)
	}
	tier, ok := fakeslack.TierOf("chat.update")
	if !ok || tier != fakeslack.Tier3 {
		t.Fatalf("TierOf(chat.update) = %v, %t; want Tier 3", tier, ok)
	}
	// A minute holds every call below, however slow the machine: the
	// first Tier 3 calls pass, the next is refused.
	if n, err := updateTimes(api, "C1", ts, tier.Calls); err != nil {
		t.Fatalf("update %d of %d inside the tier: %v", n+1, tier.Calls, err)
	}
	_, _, _, err = api.UpdateMessage("C1", ts, slack.MsgOptionText("one too many", false))
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) {
		t.Fatalf("update %d within a minute: err = %v, want *slack.RateLimitedError", tier.Calls+1, err)
	}
	if rl.RetryAfter < time.Second || rl.RetryAfter > time.Minute {
		t.Errorf("Retry-After = %v, want whole seconds up to a minute (until the first update leaves the window)", rl.RetryAfter)
	}
	if m, _ := srv.Message("C1", ts); m.Text != fmt.Sprintf("v%d", tier.Calls-1) {
		t.Errorf("the message shows %q: the refused update changed it", m.Text)
	}
	// Another method has a limit of its own.
	if _, err := api.PostEphemeral("C1", "U1", slack.MsgOptionText("just you", false)); err != nil {
		t.Errorf("chat.postEphemeral after chat.update's tier is spent: %v", err)
	}
	// Calling again inside the Retry-After is refused and recorded.
	if _, _, _, err := api.UpdateMessage("C1", ts, slack.MsgOptionText("again", false)); !errors.As(err, &rl) {
		t.Fatalf("update inside the Retry-After: err = %v, want *slack.RateLimitedError", err)
	}
	if v := srv.Violations(); len(v) != 1 || v[0].Method != "chat.update" {
		t.Errorf("violations = %v, want the one early call of chat.update", v)
	}
	if got, all := srv.RateLimited("chat.update"), srv.RateLimited(""); got != 2 || all != 2 {
		t.Errorf("RateLimited(chat.update) = %d, RateLimited(\"\") = %d; want 2 and 2", got, all)
	}
	// Switched off, the fake limits nothing.
	srv.EnforceTiers(false)
	if _, _, _, err := api.UpdateMessage("C1", ts, slack.MsgOptionText("unlimited", false)); err != nil {
		t.Errorf("update with the tiers off: %v", err)
	}
}

func TestTiersHoldPostsToOneAChannelASecond(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakeslack.WithTiers())
	api := webClient(srv)
	if _, _, err := api.PostMessage("C1", slack.MsgOptionText("first", false)); err != nil {
		t.Fatal(err)
	}
	_, _, err := api.PostMessage("C1", slack.MsgOptionText("second", false))
	if calls := srv.Calls("chat.postMessage"); calls[1].Time.Sub(calls[0].Time) >= time.Second {
		t.Skip("the machine took a second between two calls: nothing to check")
	}
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter != time.Second {
		t.Fatalf("second post to C1 within a second: err = %v, want a 429 with Retry-After: 1", err)
	}
	if _, _, err := api.PostMessage("C2", slack.MsgOptionText("elsewhere", false)); err != nil {
		t.Errorf("post to another channel: %v", err)
	}
	if got := srv.RateLimited("chat.postMessage"); got != 1 {
		t.Errorf("RateLimited = %d, want 1", got)
	}
}

func TestTiersAreOffByDefault(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	api := webClient(srv)
	_, ts, err := api.PostMessage("C1", slack.MsgOptionText("hello", false))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.PostMessage("C1", slack.MsgOptionText("at once", false)); err != nil {
		t.Errorf("second post: %v", err)
	}
	if n, err := updateTimes(api, "C1", ts, fakeslack.Tier3.Calls+10); err != nil {
		t.Errorf("update %d: %v", n+1, err)
	}
	if got := srv.RateLimited(""); got != 0 {
		t.Errorf("RateLimited = %d, want 0", got)
	}
}
