package bot_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/fakeslack"
)

// stepShowing reports whether m is a step message with the button label.
func stepShowing(m fakeslack.Message, label string) bool {
	return m.FromBot && strings.HasPrefix(m.Text, "*Step ") &&
		slices.ContainsFunc(m.Buttons(), func(b fakeslack.Button) bool { return b.Text == label })
}

// TestCheckpointOvertakesRunningMessageWhenUpdatesAreSpent runs three
// runs, each in its own channel, whose step runs past its message's post
// (a running message with Cancel), on a fake Slack that enforces Slack's
// tiers, with a chat.update budget of one update at once (then one every
// 30 s) and a chat.delete tier of one a minute. When the steps end, one
// checkpoint takes the update; the others are posted as new messages in
// their threads, and the running message they overtook is removed as
// chat.delete's tier allows: the first at once, after its checkpoint's
// post, the other not yet. Its stale Cancel is refused, and the new
// message's Approve acts on the attempt. Every checkpoint's buttons show
// in one message, and Slack answered no call 429.
func TestCheckpointOvertakesRunningMessageWhenUpdatesAreSpent(t *testing.T) {
	srv := newSlack(t, fakeslack.WithTiers())
	runner := &scriptedRunner{}
	release := runner.holdSkill("deliver-prd")
	defer release()
	const runs, updateLimit = 3, 3
	h := start(t, srv, t.TempDir(), runner, withConfig(func(c *bot.Config) {
		c.PostInterval = time.Second // the fake allows one post a second in a channel
		c.UpdateLimit, c.UpdateBurst = updateLimit, 1
	}))
	bot.SetTier(h.bot, "chat.delete", 1)
	channels := make([]string, runs)
	for i := range channels {
		channels[i] = fmt.Sprintf("C0OVER%d", i)
		env := srv.SendSlashCommand(slack.SlashCommand{Command: "/gonogo", UserID: starter, ChannelID: channels[i],
			TeamID: fakeslack.TeamID, Text: fmt.Sprintf("chain deliver-prd -- run %d", i)})
		ack(t, srv, env)
	}
	running := waitRunningMessages(t, srv, channels)
	release()
	deleted := func(st *fakeslack.State) int { return len(st.Calls("chat.delete")) }
	err := srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool {
		for _, c := range channels {
			if !slices.ContainsFunc(st.Messages(c), func(m fakeslack.Message) bool { return stepShowing(m, "Approve") }) {
				return false
			}
		}
		return deleted(st) > 0
	})
	if err != nil {
		t.Fatalf("the checkpoints did not all show, or no running message was removed: %v\n%s", err, dump(srv))
	}

	// How each checkpoint reached Slack, from the fake's log.
	calls := srv.Calls("")
	postedAt, showing, updates := checkpointCalls(calls)
	for _, c := range channels {
		if showing[c] != 1 {
			t.Errorf("channel %s: %d calls showed the checkpoint's buttons, want 1", c, showing[c])
		}
	}
	if len(postedAt) < runs-1 {
		t.Errorf("%d checkpoints were posted as new messages, want at least %d (the budget carried one update)", len(postedAt), runs-1)
	}
	if updates > updateLimit {
		t.Errorf("%d chat.update calls, over the budget of %d a minute", updates, updateLimit)
	}
	if n := srv.RateLimited(""); n > 0 {
		t.Errorf("Slack answered %d calls 429: %s", n, rateLimitedMethods(calls))
	}

	// The one removal chat.delete's tier allowed so far: a running
	// message a checkpoint overtook, after the checkpoint was posted.
	dels := srv.Calls("chat.delete")
	if len(dels) != 1 {
		t.Fatalf("%d chat.delete calls, want 1 (the bot's tier allows one a minute)", len(dels))
	}
	d := dels[0]
	ch := d.Params.Get("channel")
	if at, ok := postedAt[ch]; !ok || d.Params.Get("ts") != running[ch].TS || !d.Time.After(at) {
		t.Errorf("chat.delete of %s %s at %v; want the running message %s, after its checkpoint's post (at %v)",
			ch, d.Params.Get("ts"), d.Time, running[ch].TS, at)
	}
	if _, ok := srv.Message(ch, running[ch].TS); ok {
		t.Errorf("the running message of %s is still in Slack after its removal", ch)
	}

	// A running message not removed yet: its Cancel is refused, and the
	// checkpoint posted past it decides the attempt.
	var stale string
	for c := range postedAt {
		if c != ch {
			stale = c
		}
	}
	if stale == "" {
		t.Fatal("no second checkpoint was posted as a new message")
	}
	decideOvertaken(t, h, srv, stale, running[stale])
}

// decideOvertaken clicks the stale Cancel of channel's running message,
// which a checkpoint overtook and which is not removed yet, then Approve
// on the checkpoint: the first is refused, the second decides the
// attempt the checkpoint shows.
func decideOvertaken(t *testing.T, h *harness, srv *fakeslack.Server, channel string, running fakeslack.Message) {
	t.Helper()
	old, ok := srv.Message(channel, running.TS)
	if !ok || !stepShowing(old, "Cancel") {
		t.Fatalf("the running message of %s is gone or changed before chat.delete's tier allowed its removal: %+v", channel, old)
	}
	if slices.ContainsFunc(old.Buttons(), func(b fakeslack.Button) bool { return b.Text == "Approve" }) {
		t.Errorf("the running message of %s shows the checkpoint's buttons too", channel)
	}
	click(t, srv, starter, old, "Cancel")
	waitEphemeral(t, srv, starter, "This step has moved on")
	i := slices.IndexFunc(srv.Messages(channel), func(m fakeslack.Message) bool { return stepShowing(m, "Approve") })
	checkpoint := srv.Messages(channel)[i]
	if checkpoint.TS == old.TS || checkpoint.ThreadTS != old.ThreadTS {
		t.Errorf("the checkpoint %s (thread %s) is not a new message in the running message's thread %s", checkpoint.TS, checkpoint.ThreadTS, old.ThreadTS)
	}
	click(t, srv, starter, checkpoint, "Approve")
	r := waitState(t, h.svc, runInChannel(t, h, channel).ID, engine.RunCompleted)
	if l := r.Steps[0].Latest(); r.Steps[0].Status != engine.StepDone || l.N != 1 || l.Result == engine.ResultFailed {
		t.Errorf("step 1 of the run in %s is %s (attempt %d, %s), want done by its first attempt", channel, r.Steps[0].Status, l.N, l.Result)
	}
}

// waitRunningMessages waits for the running message of each channel's
// step and returns them by channel.
func waitRunningMessages(t *testing.T, srv *fakeslack.Server, channels []string) map[string]fakeslack.Message {
	t.Helper()
	running := map[string]fakeslack.Message{}
	err := srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool {
		for _, c := range channels {
			if i := slices.IndexFunc(st.Messages(c), func(m fakeslack.Message) bool { return stepShowing(m, "Cancel") }); i >= 0 {
				running[c] = st.Messages(c)[i]
			}
		}
		return len(running) == len(channels)
	})
	if err != nil {
		t.Fatalf("%d of %d steps got a running message: %v\n%s", len(running), len(channels), err, dump(srv))
	}
	return running
}

// checkpointCalls reads in calls, by channel, when a post showed a
// checkpoint's Approve and how many calls showed it; and counts the
// chat.update calls Slack took.
func checkpointCalls(calls []fakeslack.Call) (postedAt map[string]time.Time, showing map[string]int, updates int) {
	postedAt, showing = map[string]time.Time{}, map[string]int{}
	for _, c := range calls {
		if c.Status != 200 || (c.Method != "chat.postMessage" && c.Method != "chat.update") {
			continue
		}
		if c.Method == "chat.update" {
			updates++
		}
		if !strings.Contains(c.Params.Get("blocks"), bot.ActionApprove) {
			continue
		}
		ch := c.Params.Get("channel")
		showing[ch]++
		if c.Method == "chat.postMessage" {
			postedAt[ch] = c.Time
		}
	}
	return postedAt, showing, updates
}

// runInChannel is the run started in channel.
func runInChannel(t *testing.T, h *harness, channel string) *engine.Run {
	t.Helper()
	list, err := h.db.List(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		r, err := h.db.Load(ctxT(t), s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Origin.Channel == channel {
			return r
		}
	}
	t.Fatalf("no run in %s", channel)
	return nil
}
