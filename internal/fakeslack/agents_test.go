package fakeslack_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

// TestAgentSession: agents.sessions.setStatus through slack-go creates a
// thread's session on its first call, titled as that call says, and sets
// its status on every call; the title of a later call does not count. A
// status Slack does not know, a title over 200 characters, a missing
// channel or thread, and a thread that does not exist are refused as Slack
// refuses them. Stop is offered only while the session is processing.
func TestAgentSession(t *testing.T) {
	srv := newServer(t)
	ctx := testContext(t)
	api := webClient(srv)
	_, root, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("run header", false))
	if err != nil {
		t.Fatal(err)
	}
	set := func(p slack.AgentSessionSetStatusParameters) error {
		_, err := api.SetAgentSessionStatusContext(ctx, p)
		return err
	}
	code := func(err error) string {
		var se slack.SlackErrorResponse
		if errors.As(err, &se) {
			return se.Err
		}
		return ""
	}
	if _, err := srv.StopSession("C1", root, "U1"); err == nil {
		t.Error("Stop on a thread without a session was delivered")
	}
	if err := set(slack.AgentSessionSetStatusParameters{Status: "processing", ChannelID: "C1", ThreadTS: root,
		Title: "gonogo chain run", InitiatorUserID: "U1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.StopSession("C1", root, "U1"); err != nil {
		t.Errorf("Stop while processing: %v", err)
	}
	if err := set(slack.AgentSessionSetStatusParameters{Status: "suspended", ChannelID: "C1", ThreadTS: root, Title: "another"}); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.StopSession("C1", root, "U1"); err == nil {
		t.Error("Stop on a suspended session was delivered: Slack shows it only while processing")
	}
	a, ok := srv.Session("C1", root)
	if !ok || a.Title != "gonogo chain run" || a.Initiator != "U1" || !slices.Equal(a.StatusList(), []string{"processing", "suspended"}) ||
		!slices.Equal(a.Stops, []string{"U1"}) {
		t.Fatalf("session = %+v", a)
	}

	for _, c := range []struct {
		name string
		p    slack.AgentSessionSetStatusParameters
		want string
	}{
		{"unknown status", slack.AgentSessionSetStatusParameters{Status: "thinking", ChannelID: "C1", ThreadTS: root}, "invalid_arguments"},
		{"no channel", slack.AgentSessionSetStatusParameters{Status: "closed", ThreadTS: root}, "channel_not_found"},
		{"no thread", slack.AgentSessionSetStatusParameters{Status: "closed", ChannelID: "C1"}, "invalid_arguments"},
		{"no such thread", slack.AgentSessionSetStatusParameters{Status: "closed", ChannelID: "C1", ThreadTS: "1.000009"}, "invalid_thread_ts"},
		{"long title", slack.AgentSessionSetStatusParameters{Status: "processing", ChannelID: "C1", ThreadTS: root,
			Title: strings.Repeat("t", 201)}, "invalid_arguments"},
	} {
		if err := set(c.p); code(err) != c.want {
			t.Errorf("%s: err = %v, want %s", c.name, err, c.want)
		}
	}
	if v := srv.Violations(); len(v) != 1 || v[0].Path != "/title" || v[0].Got != 201 {
		t.Errorf("violations = %+v, want the long title's", v)
	}
	if a, _ := srv.Session("C1", root); len(a.Statuses) != 2 {
		t.Errorf("refused calls changed the session: %v", a.StatusList())
	}
}
