package bot_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/internal/fakeslack"
)

// A step's artifact is attached to the step's own message (file_ids), a
// redo's to the same message, and no message is posted for a file alone
// but the run's audit trail.
func TestArtifactRidesOnItsStepMessage(t *testing.T) {
	srv := newSlack(t)
	start(t, srv, t.TempDir(), &scriptedRunner{})

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories -- mobile checkout")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approve")
	thread := step1.ThreadTS
	if err := srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool {
		m, _ := st.Message(channel, step1.TS)
		return len(m.Files) == 1
	}); err != nil {
		t.Fatalf("step 1's message does not carry its artifact: %v\n%s", err, dump(srv))
	}
	step1, _ = srv.Message(channel, step1.TS)
	if got := step1.Files[0].Name; got != "01-deliver-prd.md" {
		t.Errorf("step 1's message carries %q, want 01-deliver-prd.md", got)
	}
	click(t, srv, starter, step1, "Redo")
	view := waitView(t, srv, 0)
	if _, err := srv.SubmitView(starter, view.ID, nil); err != nil {
		t.Fatal(err)
	}
	if err := srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool {
		m, _ := st.Message(channel, step1.TS)
		return len(m.Files) == 2
	}); err != nil {
		t.Fatalf("the redo's artifact is not on step 1's message: %v\n%s", err, dump(srv))
	}
	step1 = waitStep(t, srv, 1, "deliver-prd", "attempt 2", "Approve")
	click(t, srv, starter, step1, "Approve")
	step2 := waitStep(t, srv, 2, "deliver-user-stories", "Approve")
	click(t, srv, starter, step2, "Approve")
	waitText(t, srv, "Run complete")
	if err := srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool { return len(st.Files(channel, thread)) == 4 }); err != nil {
		t.Fatalf("want 3 artifacts and the audit trail in the thread: %v", err)
	}
	for _, m := range srv.Thread(channel, thread) {
		if len(m.Files) == 0 {
			continue
		}
		if m.TS == step1.TS || m.TS == step2.TS {
			continue
		}
		if len(m.Files) != 1 || !strings.HasPrefix(m.Files[0].Name, "audit-") {
			t.Errorf("message %s posted for files %v alone: a step's artifact goes on its own message", m.TS, m.Files)
		}
	}
}

// When files.getUploadURLExternal's tier has no room, a checkpoint's
// buttons show without waiting for its artifact, and the artifact is
// shared in the thread, with a message of its own, once the tier has
// room: Slack never answers 429, and no chat.update is spent on it.
func TestCheckpointDoesNotWaitForItsArtifactsTier(t *testing.T) {
	srv := newSlack(t, fakeslack.WithTiers())
	srv.SetTier("files.getUploadURLExternal", fakeslack.Limit{Calls: 1, Per: time.Minute})
	// Posts a second apart in the channel, as deployed: the fake holds
	// them to that.
	h := start(t, srv, t.TempDir(), &scriptedRunner{}, withConfig(func(c *bot.Config) { c.PostInterval = bot.DefaultPostInterval }))
	bot.SetTier(h.bot, "files.getUploadURLExternal", 1)

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories -- mobile checkout")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approve")
	if len(step1.Files) != 1 {
		t.Fatalf("step 1's message carries %d files, want its artifact", len(step1.Files))
	}
	click(t, srv, starter, step1, "Approve")
	// Step 1's upload spent the tier's one call of the minute.
	step2 := waitStep(t, srv, 2, "deliver-user-stories", "Approve")
	if len(step2.Files) != 0 {
		t.Fatalf("step 2's message carries %s: its checkpoint waited for the upload", step2.Files[0].Name)
	}
	updatesBefore := len(srv.Calls("chat.update"))

	// The tier has room again: the next sync shares the artifact.
	srv.SetTier("files.getUploadURLExternal", fakeslack.Tier4)
	bot.SetTier(h.bot, "files.getUploadURLExternal", fakeslack.Tier4.Calls)
	click(t, srv, starter, step2, "Approve")
	waitText(t, srv, "Run complete")
	shared := waitMsg(t, srv, "step 2's artifact shared in the thread", func(m fakeslack.Message) bool {
		return m.ThreadTS == step1.ThreadTS && len(m.Files) == 1 && m.Files[0].Name == "02-deliver-user-stories.md"
	})
	if shared.TS == step2.TS {
		t.Error("step 2's artifact was attached to its message: a chat.update spent on a file")
	}
	if m, _ := srv.Message(channel, step2.TS); len(m.Files) != 0 {
		t.Errorf("step 2's message carries %s as well", m.Files[0].Name)
	}
	for _, c := range srv.Calls("chat.update")[updatesBefore:] {
		if strings.Contains(c.Params.Get("file_ids"), "F") {
			t.Errorf("a chat.update attached files %s", c.Params.Get("file_ids"))
		}
	}
	if n := srv.RateLimited(""); n != 0 {
		t.Errorf("Slack answered %d calls 429: %s", n, rateLimitedMethods(srv.Calls("")))
	}
}
