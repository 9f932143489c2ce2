package fakeslack_test

import (
	"strings"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/gonogo/gonogo/internal/fakeslack"
)

func TestSlashCommandAckAnswersThePerson(t *testing.T) {
	srv := newServer(t)
	ctx := testContext(t)
	c := runSocketClient(t, srv, false)

	env := srv.SendSlashCommand(slack.SlashCommand{UserID: "U1", ChannelID: "C1", Text: "chain a"})
	evt := c.next(t, socketmode.EventTypeSlashCommand)
	answer := &slack.Msg{Text: "Starting a", Blocks: slack.Blocks{BlockSet: []slack.Block{
		slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "▶️ Starting *a*", false, false), nil, nil)}}}
	if err := c.Ack(*evt.Request, answer); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.WaitAck(ctx, env); err != nil {
		t.Fatal(err)
	}
	es := srv.Ephemerals("U1")
	if len(es) != 1 || es[0].Via != "ack" || es[0].Channel != "C1" || !strings.Contains(es[0].Rendered, "Starting *a*") {
		t.Fatalf("the ack's answer shows as %+v, want an ephemeral to U1 in C1", es)
	}

	// A response in the channel, and one Block Kit refuses.
	env = srv.SendSlashCommand(slack.SlashCommand{UserID: "U1", ChannelID: "C1", Text: "x"})
	evt = c.next(t, socketmode.EventTypeSlashCommand)
	_ = c.Ack(*evt.Request, map[string]any{"response_type": "in_channel", "text": "for all"})
	if _, err := srv.WaitAck(ctx, env); err != nil {
		t.Fatal(err)
	}
	if m := srv.Messages("C1"); len(m) != 1 || m[0].Text != "for all" || !m[0].FromBot {
		t.Errorf("an in_channel answer shows as %+v", m)
	}
	env = srv.SendSlashCommand(slack.SlashCommand{UserID: "U1", ChannelID: "C1", Text: "y"})
	evt = c.next(t, socketmode.EventTypeSlashCommand)
	_ = c.Ack(*evt.Request, map[string]any{"blocks": []any{map[string]any{"type": "section",
		"text": map[string]any{"type": "mrkdwn", "text": strings.Repeat("x", 3001)}}}})
	if _, err := srv.WaitAck(ctx, env); err != nil {
		t.Fatal(err)
	}
	if v := srv.Violations(); len(v) != 1 || v[0].Method != "ack" {
		t.Errorf("an answer with a 3,001-character section: violations %v", v)
	}
	if n := len(srv.Ephemerals("U1")); n != 1 {
		t.Errorf("a refused answer was shown: %d ephemerals", n)
	}
}

func TestEventAckPayloadIsAViolation(t *testing.T) {
	srv := newServer(t)
	ctx := testContext(t)
	c := runSocketClient(t, srv, false)
	_, env, err := srv.SendMention("C1", "", "U1", "run this")
	if err != nil {
		t.Fatal(err)
	}
	evt := c.next(t, socketmode.EventTypeEventsAPI)
	_ = c.Ack(*evt.Request, map[string]string{"text": "on it"})
	if _, err := srv.WaitAck(ctx, env); err != nil {
		t.Fatal(err)
	}
	if v := srv.Violations(); len(v) != 1 || !strings.Contains(v[0].Detail, "accepts no response payload") {
		t.Errorf("violations = %v", v)
	}
	if n := len(srv.Ephemerals("")); n != 0 {
		t.Errorf("an events_api ack's payload was shown")
	}
}

// openEditModal opens a modal with one input (block "artifact-block") on
// a click's trigger.
func openEditModal(t *testing.T, srv *fakeslack.Server, c *socketClient) string {
	t.Helper()
	input := slack.NewPlainTextInputBlockElement(nil, "artifact")
	modal := plainModal("Edit")
	modal.Submit = slack.NewTextBlockObject(slack.PlainTextType, "Save", false, false)
	modal.Blocks.BlockSet = append(modal.Blocks.BlockSet,
		slack.NewInputBlock("artifact-block", slack.NewTextBlockObject(slack.PlainTextType, "Artifact", false, false), nil, input))
	resp, err := webClient(srv).OpenView(clickedTrigger(t, srv, c), modal)
	if err != nil {
		t.Fatal(err)
	}
	return resp.ID
}

func TestSubmissionAckErrorsKeepTheModalOpen(t *testing.T) {
	srv := newServer(t)
	ctx := testContext(t)
	c := runSocketClient(t, srv, false)
	id := openEditModal(t, srv, c)

	submit := func(value string, answer any) {
		t.Helper()
		env, err := srv.SubmitView("U1", id, map[string]string{"artifact": value})
		if err != nil {
			t.Fatal(err)
		}
		evt := c.next(t, socketmode.EventTypeInteractive)
		if answer == nil {
			_ = c.Ack(*evt.Request)
		} else {
			_ = c.Ack(*evt.Request, answer)
		}
		if _, err := srv.WaitAck(ctx, env); err != nil {
			t.Fatal(err)
		}
	}

	submit("", slack.NewErrorsViewSubmissionResponse(map[string]string{"artifact-block": "the artifact is empty"}))
	if v, _ := srv.View(id); v.Closed || v.Errors["artifact-block"] != "the artifact is empty" {
		t.Errorf("after an errors answer the view is %+v", v)
	}
	if v := srv.Violations(); len(v) != 0 {
		t.Fatalf("violations = %v", v)
	}

	// An error under a block that is not an input of the view: Slack shows
	// a generic failure instead.
	submit("x", slack.NewErrorsViewSubmissionResponse(map[string]string{"no-such-block": "bad"}))
	v := srv.Violations()
	if len(v) != 1 || !strings.Contains(v[0].Detail, `no input block "no-such-block"`) || !strings.Contains(v[0].Detail, "artifact-block") {
		t.Errorf("violations = %v", v)
	}
	submit("x", map[string]string{"response_action": "explode"})
	if v := srv.Violations(); len(v) != 2 || !strings.Contains(v[1].Detail, `"explode"`) {
		t.Errorf("violations = %v", v)
	}

	// A bare ack accepts the submission: Slack closes the modal.
	submit("new text", nil)
	if v, _ := srv.View(id); !v.Closed || v.Errors != nil {
		t.Errorf("after a bare ack the view is %+v", v)
	}
	if _, err := webClient(srv).UpdateView(plainModal("Too late"), "", "", id); err == nil || err.Error() != "not_found" {
		t.Errorf("views.update of a closed modal: err = %v, want not_found", err)
	}
	if _, err := srv.SubmitView("U1", id, nil); err == nil {
		t.Error("a closed modal was submitted")
	}
}
