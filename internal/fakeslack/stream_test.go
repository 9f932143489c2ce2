package fakeslack_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/internal/fakeslack"
)

// TestStream: chat.startStream, chat.appendStream and chat.stopStream
// through slack-go build one streamed message in a thread, a task_update
// replacing the task of its id; a stream in a channel needs its
// recipient, markdown_text is held to 12,000 characters, a chunk that is
// none is refused, and a stopped stream, whether the app or a person's
// Stop stopped it, takes no more appends.
func TestStream(t *testing.T) {
	srv := newServer(t)
	ctx := testContext(t)
	api := webClient(srv)
	_, root, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("run header", false))
	if err != nil {
		t.Fatal(err)
	}
	code := func(err error) string {
		var se slack.SlackErrorResponse
		if errors.As(err, &se) {
			return se.Err
		}
		return ""
	}
	task := func(title string, status slack.TaskCardStatus) slack.TaskUpdateChunk {
		c := slack.NewTaskUpdateChunk("progress", title)
		c.Status = status
		return c
	}
	if _, _, err := api.StartStreamContext(ctx, "C1", slack.MsgOptionTS(root)); code(err) != "invalid_arguments" {
		t.Errorf("a stream in a channel without its recipient: err = %v", err)
	}
	who := []slack.MsgOption{slack.MsgOptionTS(root), slack.MsgOptionRecipientUserID("U1"), slack.MsgOptionRecipientTeamID(fakeslack.TeamID)}
	if _, _, err := api.StartStreamContext(ctx, "C1", append(who, slack.MsgOptionMarkdownText(strings.Repeat("x", 12001)))...); code(err) != "msg_too_long" {
		t.Errorf("13,001 characters of markdown: err = %v", err)
	}
	if _, _, err := api.StartStreamContext(ctx, "C1", append(who, slack.MsgOptionChunks(slack.NewTaskUpdateChunk("", "")))...); code(err) != "invalid_chunks" {
		t.Errorf("a task without id or title: err = %v", err)
	}
	_, ts, err := api.StartStreamContext(ctx, "C1", append(who, slack.MsgOptionChunks(slack.NewMarkdownTextChunk("*Step 1*\n"), task("1 turn", "in_progress")))...)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.AppendStreamContext(ctx, "C1", ts, slack.MsgOptionChunks(task("3 turns", "in_progress"))); err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.StopStreamContext(ctx, "C1", ts, slack.MsgOptionChunks(task("4 turns", "complete"))); err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.AppendStreamContext(ctx, "C1", ts, slack.MsgOptionChunks(task("5 turns", "in_progress"))); code(err) != "message_not_in_streaming_state" {
		t.Errorf("an append to a stopped stream: err = %v", err)
	}
	ss := srv.Streams("C1", root)
	if len(ss) != 1 || ss[0].Markdown != "*Step 1*\n" || len(ss[0].Tasks) != 1 || ss[0].Tasks[0].Title != "4 turns" ||
		ss[0].Tasks[0].Status != "complete" || ss[0].StoppedBy != "app" || ss[0].Calls != 3 {
		t.Fatalf("streams = %+v", ss)
	}
}

// TestStopStopsTheThreadsStreams: Stop on a session stops the thread's
// streams that still stream; an append to one is refused.
func TestStopStopsTheThreadsStreams(t *testing.T) {
	srv := newServer(t)
	ctx := testContext(t)
	api := webClient(srv)
	_, root, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("run header", false))
	if err != nil {
		t.Fatal(err)
	}
	who := []slack.MsgOption{slack.MsgOptionTS(root), slack.MsgOptionRecipientUserID("U1"), slack.MsgOptionRecipientTeamID(fakeslack.TeamID)}
	task := func(title string) slack.TaskUpdateChunk { return slack.NewTaskUpdateChunk("progress", title) }
	if _, err := api.SetAgentSessionStatusContext(ctx, slack.AgentSessionSetStatusParameters{Status: "processing", ChannelID: "C1", ThreadTS: root}); err != nil {
		t.Fatal(err)
	}
	_, ts2, err := api.StartStreamContext(ctx, "C1", append(who, slack.MsgOptionChunks(task("1 turn")))...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.StopSession("C1", root, "U1"); err != nil {
		t.Fatal(err)
	}
	var se slack.SlackErrorResponse
	if _, _, err := api.AppendStreamContext(ctx, "C1", ts2, slack.MsgOptionChunks(task("2 turns"))); !errors.As(err, &se) || se.Err != "message_not_in_streaming_state" {
		t.Errorf("an append to a stream Stop stopped: err = %v", err)
	}
	if ss := srv.Streams("C1", root); len(ss) != 1 || ss[0].StoppedBy != "user" {
		t.Errorf("after Stop: %+v", ss)
	}
}
