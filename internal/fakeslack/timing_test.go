package fakeslack_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/gonogo/gonogo/internal/fakeslack"
	"github.com/gonogo/gonogo/internal/hangguard"
)

func plainModal(title string) slack.ModalViewRequest {
	return slack.ModalViewRequest{
		Type:  slack.VTModal,
		Title: slack.NewTextBlockObject(slack.PlainTextType, title, false, false),
		Close: slack.NewTextBlockObject(slack.PlainTextType, "OK", false, false),
		Blocks: slack.Blocks{BlockSet: []slack.Block{
			slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "Loading…", false, false), nil, nil),
		}},
	}
}

// clickedTrigger posts a message with a button, clicks it as U1 and returns
// the trigger_id the bot received, once the click was written to the socket.
func clickedTrigger(t *testing.T, srv *fakeslack.Server, c *socketClient) string {
	t.Helper()
	btn := slack.NewButtonBlockElement("edit", "v", slack.NewTextBlockObject(slack.PlainTextType, "Edit", false, false))
	_, ts, err := webClient(srv).PostMessage("C1", slack.MsgOptionText("step", false), slack.MsgOptionBlocks(slack.NewActionBlock("b", btn)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Click("U1", "C1", ts, "Edit"); err != nil {
		t.Fatal(err)
	}
	evt := c.next(t, socketmode.EventTypeInteractive)
	_ = c.Ack(*evt.Request)
	return evt.Data.(slack.InteractionCallback).TriggerID
}

func TestTriggerOpensOneViewAndExpires(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	api := webClient(srv)
	c := runSocketClient(t, srv, false)

	if _, err := api.OpenView("123.456.made-up", plainModal("Edit")); err == nil || err.Error() != "invalid_trigger_id" {
		t.Errorf("a trigger the fake never issued: err = %v, want invalid_trigger_id", err)
	}

	trigger := clickedTrigger(t, srv, c)
	if _, err := api.OpenView(trigger, plainModal("Edit")); err != nil {
		t.Fatal(err)
	}
	if _, err := api.OpenView(trigger, plainModal("Edit again")); err == nil || err.Error() != "exchanged_trigger_id" {
		t.Errorf("a trigger used twice: err = %v, want exchanged_trigger_id", err)
	}
	if n := len(srv.Views()); n != 1 {
		t.Errorf("%d views open, want 1", n)
	}

	// A views.open that reaches Slack more than 3 s after the click was
	// sent finds its trigger expired: here the call itself is held.
	late := clickedTrigger(t, srv, c)
	srv.Delay("views.open", fakeslack.TriggerLife+200*time.Millisecond)
	if _, err := api.OpenView(late, plainModal("Late")); err == nil || err.Error() != "expired_trigger_id" {
		t.Errorf("a trigger used after %v: err = %v, want expired_trigger_id", fakeslack.TriggerLife, err)
	}
}

func TestDelayHoldsCallsButTheOnesExempted(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	api := webClient(srv)
	c := runSocketClient(t, srv, false)
	trigger := clickedTrigger(t, srv, c)

	// An exempted call is not held at all: with every other call held an
	// hour, it still comes back (a held one would meet the context's end).
	unheld := func(what string, call func(ctx context.Context) error) {
		t.Helper()
		if err := call(hangguard.Context(t)); err != nil {
			t.Errorf("%s was held or failed: %v", what, err)
		}
	}
	srv.Delay("", time.Hour)
	srv.Delay("views.open", 0)
	unheld("views.open, exempted,", func(ctx context.Context) error {
		_, err := api.OpenViewContext(ctx, trigger, plainModal("Edit"))
		return err
	})

	const d = 300 * time.Millisecond
	srv.Delay("", d)
	begin := time.Now()
	if _, _, err := api.PostMessage("C1", slack.MsgOptionText("slow", false)); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(begin); took < d {
		t.Errorf("chat.postMessage took %v, want at least the delay %v", took, d)
	}
	calls := srv.Calls("chat.postMessage")
	last := calls[len(calls)-1]
	m := srv.Messages("C1")
	if posted := m[len(m)-1].Posted; posted.Sub(last.Time) < d {
		t.Errorf("the call was made at %v and took effect at %v: want the delay between", last.Time, posted)
	}

	srv.Delay("", time.Hour)
	srv.Delay("", 0)
	unheld(`auth.test after Delay("", 0)`, func(ctx context.Context) error {
		_, err := api.AuthTestContext(ctx)
		return err
	})

	// Closing the server ends a held call at once.
	srv.Delay("", time.Hour)
	done := make(chan error, 1)
	go func() { _, err := api.AuthTest(); done <- err }()
	if err := srv.WaitFor(testContext(t), func(st *fakeslack.State) bool { return st.Held() == 1 }); err != nil {
		t.Fatalf("the call was never held: %v", err)
	}
	srv.Close()
	// The call is held an hour: one that comes back at all was let go.
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "503") {
			t.Errorf("a held call after Close: err = %v", err)
		}
	case <-time.After(hangguard.Limit(t)):
		t.Fatal("Close left a held call waiting")
	}
}
