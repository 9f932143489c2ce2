package bot_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/fakeslack"
)

// Delivery: envelopes Slack sends twice, clicks made twice, 429s, and a
// Socket Mode connection that goes away.

func TestRedeliveredSlashCommandStartsOneRun(t *testing.T) {
	srv := newSlack(t)
	dir := t.TempDir()
	h := start(t, srv, dir, &scriptedRunner{})

	env := slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	if err := srv.Redeliver(env); err != nil {
		t.Fatal(err)
	}
	waitAcks(t, srv, env, 2)
	waitStep(t, srv, 1, "deliver-prd", "Approve")
	settle(srv, 100*time.Millisecond, 2*time.Second)
	if n := h.runCount(); n != 1 {
		t.Fatalf("%d runs after a redelivered command, want 1", n)
	}

	// After a restart the bot has forgotten the envelopes it saw; the
	// store has not.
	h.stop()
	h = start(t, srv, dir, &scriptedRunner{})
	if err := srv.Redeliver(env); err != nil {
		t.Fatal(err)
	}
	waitAcks(t, srv, env, 3)
	settle(srv, 100*time.Millisecond, 2*time.Second)
	if n := h.runCount(); n != 1 {
		t.Errorf("%d runs after a redelivery across a restart, want 1", n)
	}
	if n := len(botMessages(srv, "*Step 1 of")); n != 1 {
		t.Errorf("%d step 1 messages, want 1", n)
	}
	// The first delivery's acknowledgement said what starts; the
	// redeliveries say nothing.
	if es := srv.Ephemerals(starter); len(es) != 1 || es[0].Via != "ack" || !strings.Contains(es[0].Text, "Starting") {
		t.Errorf("the starter was told %+v, want only the first delivery's answer", es)
	}
}

func TestRedeliveredClickAppliesOnce(t *testing.T) {
	srv := newSlack(t)
	dir := t.TempDir()
	h := start(t, srv, dir, &scriptedRunner{})

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories -> measure-experiment-design")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approve")
	env := click(t, srv, starter, step1, "Approve")
	if err := srv.Redeliver(env); err != nil {
		t.Fatal(err)
	}
	waitAcks(t, srv, env, 2)
	waitStep(t, srv, 2, "deliver-user-stories", "Approve")
	settle(srv, 100*time.Millisecond, 2*time.Second)
	id := h.onlyRun().ID
	if ds := h.decisions(id); len(ds) != 1 {
		t.Fatalf("journal holds %d decisions after a redelivered click, want 1: %+v", len(ds), ds)
	}

	// Across a restart the store's idempotency key catches it.
	h.stop()
	h = start(t, srv, dir, &scriptedRunner{})
	if err := srv.Redeliver(env); err != nil {
		t.Fatal(err)
	}
	waitAcks(t, srv, env, 3)
	settle(srv, 100*time.Millisecond, 2*time.Second)
	if ds := h.decisions(id); len(ds) != 1 {
		t.Errorf("journal holds %d decisions after a redelivery across a restart, want 1: %+v", len(ds), ds)
	}
	if r := h.onlyRun(); r.Steps[1].Status != engine.StepWaiting {
		t.Errorf("step 2 is %s, want waiting", r.Steps[1].Status)
	}
}

func TestDoubleClickAppliesOnce(t *testing.T) {
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), &scriptedRunner{})

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approve")
	// Two clicks on the same button: two envelopes, two action times.
	first, err := srv.Click(starter, channel, step1.TS, "Approve")
	if err != nil {
		t.Fatal(err)
	}
	second, err := srv.Click(starter, channel, step1.TS, "Approve")
	if err != nil {
		t.Fatal(err)
	}
	ack(t, srv, first)
	ack(t, srv, second)

	e := waitEphemeral(t, srv, starter, "moved on")
	if e.ThreadTS != step1.ThreadTS {
		t.Errorf("the refusal is not in the run's thread")
	}
	waitStep(t, srv, 2, "deliver-user-stories", "Approve")
	settle(srv, 100*time.Millisecond, 2*time.Second)
	if ds := h.decisions(h.onlyRun().ID); len(ds) != 1 {
		t.Errorf("journal holds %d decisions after a double click, want 1: %+v", len(ds), ds)
	}
	if n := len(afterAcks(srv.Ephemerals(starter))); n != 1 {
		t.Errorf("%d ephemerals to the starter, want 1", n)
	}
}

func TestRateLimitsAreWaitedOutAndNothingIsDropped(t *testing.T) {
	srv := newSlack(t)
	// Decisions show through the clicks' response_urls; the headers'
	// refreshes are the chat.update calls here, made as the runs change.
	h := start(t, srv, t.TempDir(), &scriptedRunner{}, withConfig(func(c *bot.Config) { c.MessageUpdateInterval = time.Millisecond }))
	srv.RateLimit("chat.postMessage", 2, time.Second)
	srv.RateLimit("chat.update", 2, time.Second)

	// Two runs in one channel, so two threads are kept up to date at once.
	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories")
	slash(t, srv, approver, "chain measure-experiment-design")
	var a, b fakeslack.Message
	err := srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool {
		a, b = fakeslack.Message{}, fakeslack.Message{}
		for _, m := range st.Messages(channel) {
			switch {
			case strings.HasPrefix(m.Text, "*Step 1 of 2: deliver-prd") && len(m.Buttons()) == 5:
				a = m
			case strings.HasPrefix(m.Text, "*Step 1 of 1: measure-experiment-design") && len(m.Buttons()) == 5:
				b = m
			}
		}
		return a.TS != "" && b.TS != ""
	})
	if err != nil {
		t.Fatalf("the step messages did not arrive: %v\n%s", err, dump(srv))
	}
	click(t, srv, starter, a, "Approve")
	click(t, srv, approver, b, "Approve")
	waitStep(t, srv, 2, "deliver-user-stories", "Approve")
	waitText(t, srv, "Run complete", "measure-experiment-design")
	waitFiles(t, srv, a.ThreadTS, "01-deliver-prd.md", "02-deliver-user-stories.md")
	waitFiles(t, srv, b.ThreadTS, "01-measure-experiment-design.md")

	if got := srv.RateLimited("chat.postMessage"); got < 2 {
		t.Errorf("chat.postMessage was answered 429 %d times, want at least 2", got)
	}
	if got := srv.RateLimited("chat.update"); got < 2 {
		t.Errorf("chat.update was answered 429 %d times, want at least 2", got)
	}
	for _, method := range []string{"chat.postMessage", "chat.update"} {
		if _, limited := h.bot.Metrics().Calls(method); limited != int64(srv.RateLimited(method)) {
			t.Errorf("metrics count %d 429s of %s, fake Slack sent %d", limited, method, srv.RateLimited(method))
		}
	}
	for _, v := range srv.Violations() {
		if strings.Contains(v.Detail, "Retry-After") {
			t.Errorf("%s called before its Retry-After ended: %s", v.Method, v.Detail)
		}
	}
	// Each message was posted once: every header, step and end message.
	if n := len(botMessages(srv, "*Step 1 of 2")); n != 1 {
		t.Errorf("%d step 1 messages of the first run, want 1", n)
	}
	var roots int
	for _, m := range srv.Messages(channel) {
		if m.FromBot && m.ThreadTS == "" {
			roots++
		}
	}
	if roots != 2 {
		t.Errorf("%d run headers, want 2", roots)
	}
}

func TestDisconnectsAreSurvived(t *testing.T) {
	srv := newSlack(t)
	runner := &scriptedRunner{}
	release := runner.holdSkill("deliver-user-stories")
	defer release()
	h := start(t, srv, t.TempDir(), runner)
	conns := srv.Connections()

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories -> measure-experiment-design")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Approve")
	click(t, srv, starter, step1, "Approve")
	waitStep(t, srv, 2, "Running", "Cancel")

	// Slack asks for a new connection (refresh_requested) while step 2 runs.
	if err := srv.Disconnect(); err != nil {
		t.Fatal(err)
	}
	waitConnections(t, srv, conns+1)
	release()
	step2 := waitStep(t, srv, 2, "deliver-user-stories", "Approve")
	click(t, srv, starter, step2, "Approve")
	step3 := waitStep(t, srv, 3, "measure-experiment-design", "Approve")

	// The network drops the connection; a click made meanwhile waits in
	// Slack's queue and arrives on the new connection.
	if err := srv.DropConnection(); err != nil {
		t.Fatal(err)
	}
	env, err := srv.Click(starter, channel, step3.TS, "Approve")
	if err != nil {
		t.Fatal(err)
	}
	waitConnections(t, srv, conns+2)
	ack(t, srv, env)
	waitText(t, srv, "Run complete")
	if r := h.onlyRun(); r.State != engine.RunCompleted {
		t.Errorf("run is %s, want completed", r.State)
	}
	if !h.bot.Metrics().Connected() {
		t.Error("metrics say the bot is not connected")
	}
}

// waitConnections waits until the bot opened n connections in all and is
// connected on the last.
func waitConnections(t *testing.T, srv *fakeslack.Server, n int) {
	t.Helper()
	err := srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool { return st.Connections() >= n && st.Connected() })
	if err != nil {
		t.Fatalf("the bot did not reconnect (%d connections, want %d): %v", srv.Connections(), n, err)
	}
}
