package fakeslack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/gonogo/gonogo/internal/fakeslack"
	"github.com/gonogo/gonogo/internal/hangguard"
)

func newServer(t *testing.T, opts ...fakeslack.Option) *fakeslack.Server {
	t.Helper()
	srv := fakeslack.New(opts...)
	t.Cleanup(srv.Close)
	return srv
}

func webClient(srv *fakeslack.Server) *slack.Client {
	return slack.New(srv.BotToken(), slack.OptionAPIURL(srv.APIURL()))
}

// testContext bounds a test's waits, which only guard against a hang.
func testContext(t *testing.T) context.Context {
	t.Helper()
	return hangguard.Context(t)
}

// socketClient is a running socketmode.Client whose events a test reads.
type socketClient struct {
	*socketmode.Client
	events chan socketmode.Event
	stop   func() // ends the client, as a killed process: its socket closes
}

// runSocketClient runs a socketmode.Client against srv until the test ends.
// With autoAck, every envelope is acked as soon as it arrives, as gonogo's
// consumer loop does.
func runSocketClient(t *testing.T, srv *fakeslack.Server, autoAck bool, opts ...socketmode.Option) *socketClient {
	t.Helper()
	api := slack.New(srv.BotToken(), slack.OptionAPIURL(srv.APIURL()), slack.OptionAppLevelToken(srv.AppToken()))
	c := &socketClient{Client: socketmode.New(api, opts...), events: make(chan socketmode.Event, 200)}
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan struct{})
	forwardDone := make(chan struct{})
	go func() {
		defer close(runDone)
		_ = c.RunContext(ctx)
	}()
	// socketmode.Client.Events blocks the socket when nobody reads it.
	go func() {
		defer close(forwardDone)
		for {
			select {
			case <-ctx.Done():
				return
			case evt := <-c.Events:
				if autoAck && evt.Request != nil && evt.Request.EnvelopeID != "" {
					_ = c.Ack(*evt.Request)
				}
				select {
				case c.events <- evt:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	c.stop = func() {
		cancel()
		<-runDone
		<-forwardDone
	}
	t.Cleanup(c.stop)
	return c
}

// next returns the next event of type want, skipping others.
func (c *socketClient) next(t *testing.T, want socketmode.EventType) socketmode.Event {
	t.Helper()
	timeout := time.After(hangguard.Limit(t))
	for {
		select {
		case evt := <-c.events:
			if evt.Type == want {
				return evt
			}
		case <-timeout:
			t.Fatalf("no %s event came", want)
		}
	}
}

func TestSlashCommandIsDeliveredAckedAndRedelivered(t *testing.T) {
	srv := newServer(t)
	ctx := testContext(t)

	// Sent before any client connects: queued, then delivered after hello.
	env := srv.SendSlashCommand(slack.SlashCommand{UserID: "U1", ChannelID: "C1", Text: "chain a -> b"})
	c := runSocketClient(t, srv, false)

	evt := c.next(t, socketmode.EventTypeSlashCommand)
	cmd, isCmd := evt.Data.(slack.SlashCommand)
	if !isCmd {
		t.Fatalf("slash command event carries %T", evt.Data)
	}
	if cmd.Command != "/gonogo" || cmd.Text != "chain a -> b" || cmd.UserID != "U1" || cmd.ChannelID != "C1" {
		t.Errorf("slash command = %+v", cmd)
	}
	if cmd.TriggerID == "" || cmd.ResponseURL == "" || cmd.TeamID != fakeslack.TeamID {
		t.Errorf("slash command lacks Slack's fields: %+v", cmd)
	}
	if evt.Request.EnvelopeID != env {
		t.Errorf("envelope id = %q, want %q", evt.Request.EnvelopeID, env)
	}
	if srv.Acked(env) {
		t.Fatal("acked before the client acked")
	}
	if err := c.Ack(*evt.Request, map[string]string{"text": "working on it"}); err != nil {
		t.Fatal(err)
	}
	ack, err := srv.WaitAck(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	if ack.Latency <= 0 || ack.Count != 1 || !strings.Contains(string(ack.Payload), "working on it") {
		t.Errorf("ack = %+v (payload %s)", ack, ack.Payload)
	}

	if err := srv.Redeliver(env); err != nil {
		t.Fatal(err)
	}
	again := c.next(t, socketmode.EventTypeSlashCommand)
	if again.Request.EnvelopeID != env || again.Request.RetryAttempt != 1 || again.Request.RetryReason != "timeout" {
		t.Errorf("redelivery = %+v", again.Request)
	}
	_ = c.Ack(*again.Request)
	if err := srv.WaitFor(ctx, func(st *fakeslack.State) bool {
		a, _ := st.Ack(env)
		return a.Count == 2
	}); err != nil {
		t.Fatal(err)
	}
	if n := srv.Connections(); n != 1 {
		t.Errorf("Connections() = %d, want 1", n)
	}
	if err := srv.Redeliver("nope"); err == nil {
		t.Error("Redeliver of an unknown envelope succeeded")
	}
}

func TestRateLimitAnswers429ThenSucceeds(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	api := webClient(srv)
	// 1.5s is announced as 2s; the window is wide enough that the early retry
	// below lands in it even on a loaded machine.
	srv.RateLimit("chat.postMessage", 1, 1500*time.Millisecond)

	_, _, err := api.PostMessage("C1", slack.MsgOptionText("hello", false))
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) {
		t.Fatalf("first post: err = %v, want *slack.RateLimitedError", err)
	}
	if rl.RetryAfter != 2*time.Second {
		t.Errorf("RetryAfter = %v, want 2s (1.5s rounded up to whole seconds)", rl.RetryAfter)
	}

	// Another channel is not held back: the window is per method and channel.
	if _, _, err := api.PostMessage("C2", slack.MsgOptionText("elsewhere", false)); err != nil {
		t.Fatalf("post to another channel: %v", err)
	}
	// Retrying before Retry-After is answered 429 again and recorded.
	if _, _, err := api.PostMessage("C1", slack.MsgOptionText("hello", false)); !errors.As(err, &rl) {
		t.Fatalf("early retry: err = %v, want *slack.RateLimitedError", err)
	}
	if v := srv.Violations(); len(v) != 1 || v[0].Method != "chat.postMessage" {
		t.Errorf("violations = %v, want one early retry of chat.postMessage", v)
	}

	// A caller that waits Retry-After out succeeds.
	time.Sleep(rl.RetryAfter)
	_, ts, err := api.PostMessage("C1", slack.MsgOptionText("hello", false))
	if err != nil {
		t.Fatalf("post after Retry-After: %v", err)
	}
	if got := srv.RateLimited("chat.postMessage"); got != 2 {
		t.Errorf("RateLimited = %d, want 2", got)
	}
	if m, found := srv.Message("C1", ts); !found || m.Text != "hello" {
		t.Errorf("message after the retry = %+v, %t", m, found)
	}
	calls := srv.Calls("chat.postMessage")
	statuses := []int{}
	for _, c := range calls {
		statuses = append(statuses, c.Status)
	}
	if want := []int{429, 200, 429, 200}; !slices.Equal(statuses, want) {
		t.Errorf("statuses = %v, want %v", statuses, want)
	}
	// A post's call names the message it posted, also once it is deleted;
	// a refused one names none.
	if _, _, err := api.DeleteMessage("C1", ts); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if got := srv.Calls("chat.postMessage"); got[3].TS != ts || got[2].TS != "" {
		t.Errorf("the posts' ts are %q and %q, want %q for the last and none for the refused one", got[3].TS, got[2].TS, ts)
	}
}

func TestFailAndFailStatus(t *testing.T) {
	srv := newServer(t)
	api := webClient(srv)
	srv.Fail("chat.postMessage", 1, "fatal_error")
	srv.FailStatus("auth.test", 1, http.StatusServiceUnavailable)

	if _, _, err := api.PostMessage("C1", slack.MsgOptionText("x", false)); err == nil || err.Error() != "fatal_error" {
		t.Errorf("post: err = %v, want fatal_error", err)
	}
	if _, _, err := api.PostMessage("C1", slack.MsgOptionText("x", false)); err != nil {
		t.Errorf("second post: %v", err)
	}
	var sce slack.StatusCodeError
	if _, err := api.AuthTest(); !errors.As(err, &sce) || sce.Code != http.StatusServiceUnavailable {
		t.Errorf("auth.test: err = %v, want a 503 StatusCodeError", err)
	}
	resp, err := api.AuthTest()
	if err != nil || resp.UserID != fakeslack.BotUserID || resp.TeamID != fakeslack.TeamID {
		t.Errorf("auth.test = %+v, %v", resp, err)
	}
}

func TestTokens(t *testing.T) {
	srv := newServer(t)
	ctx := testContext(t)

	bad := slack.New("xoxb-not-the-token", slack.OptionAPIURL(srv.APIURL()))
	if _, err := bad.AuthTest(); err == nil || err.Error() != "invalid_auth" {
		t.Errorf("bad bot token: err = %v, want invalid_auth", err)
	}
	appAsBot := slack.New(srv.AppToken(), slack.OptionAPIURL(srv.APIURL()))
	if _, _, err := appAsBot.PostMessage("C1", slack.MsgOptionText("x", false)); err == nil || err.Error() != "not_allowed_token_type" {
		t.Errorf("app token for chat.postMessage: err = %v, want not_allowed_token_type", err)
	}

	// socketmode gives up at once on invalid_auth: serve can stop with a
	// clear message.
	api := slack.New(srv.BotToken(), slack.OptionAPIURL(srv.APIURL()), slack.OptionAppLevelToken("xapp-wrong"))
	client := socketmode.New(api)
	go func() {
		for range client.Events {
		}
	}()
	// A client that kept trying would run until the hang guard ends ctx.
	if err := client.RunContext(ctx); err == nil || err.Error() != "invalid_auth" {
		t.Errorf("RunContext with a bad app token = %v, want invalid_auth", err)
	}
	if srv.Connections() != 0 {
		t.Error("a client connected with a bad app token")
	}
}

func TestUploadAttachesFileToThread(t *testing.T) {
	srv := newServer(t)
	ctx := testContext(t)
	api := webClient(srv)

	_, root, err := api.PostMessage("C1", slack.MsgOptionText("Run started", false))
	if err != nil {
		t.Fatal(err)
	}
	content := "# PRD\n\nShip it.\n"
	sum, err := api.UploadFileContext(ctx, slack.UploadFileParameters{
		Filename: "01-deliver-prd.md", Title: "Step 1 artifact", Content: content, FileSize: len(content),
		Channel: "C1", ThreadTimestamp: root, InitialComment: "Step 1 of 2: deliver-prd",
	})
	if err != nil {
		t.Fatalf("UploadFileContext: %v", err)
	}
	files := srv.Files("C1", root)
	if len(files) != 1 {
		t.Fatalf("files in thread = %d, want 1", len(files))
	}
	f := files[0]
	if f.ID != sum.ID || string(f.Content) != content || f.Name != "01-deliver-prd.md" || f.Title != "Step 1 artifact" || !f.FromBot {
		t.Errorf("file = %+v", f)
	}
	thread := srv.Thread("C1", root)
	if len(thread) != 2 || len(thread[1].Files) != 1 || thread[1].Text != "Step 1 of 2: deliver-prd" {
		t.Errorf("thread = %+v", thread)
	}
	if got := srv.Files("C1", ""); len(got) != 0 {
		t.Errorf("top-level files of C1 = %d, want 0", len(got))
	}

	// A size that does not match the bytes is refused and recorded.
	_, err = api.UploadFileContext(ctx, slack.UploadFileParameters{
		Filename: "02-x.md", Content: content, FileSize: len(content) + 5, Channel: "C1", ThreadTimestamp: root,
	})
	if err == nil {
		t.Error("upload with a wrong FileSize succeeded")
	}
	if v := srv.Violations(); len(v) != 1 || v[0].Method != "upload_url" || v[0].Got != len(content) {
		t.Errorf("violations = %v", v)
	}

	// Completing an upload whose bytes never arrived fails.
	u, err := api.GetUploadURLExternalContext(ctx, slack.GetUploadURLExternalParameters{FileName: "03.md", FileSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	_, err = api.CompleteUploadExternalContext(ctx, slack.CompleteUploadExternalParameters{
		Files: []slack.FileSummary{{ID: u.FileID}}, Channel: "C1",
	})
	if err == nil || err.Error() != "file_not_found" {
		t.Errorf("complete without upload: err = %v, want file_not_found", err)
	}
}

func TestFileInfoAndDownloadNeedTheBotToken(t *testing.T) {
	srv := newServer(t)
	api := webClient(srv)
	id := srv.AddFile("plan.md", []byte("# Plan\n"))

	f, _, _, err := api.GetFileInfo(id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if f.Name != "plan.md" || f.Mimetype != "text/markdown" || f.Size != 7 || f.URLPrivate == "" {
		t.Errorf("file info = %+v", f)
	}
	var buf bytes.Buffer
	if err := api.GetFile(f.URLPrivate, &buf); err != nil || buf.String() != "# Plan\n" {
		t.Errorf("download with the bot token = %q, %v", buf.String(), err)
	}

	other := slack.New("xoxb-someone-else", slack.OptionAPIURL(srv.APIURL()))
	var sce slack.StatusCodeError
	if err := other.GetFile(f.URLPrivate, &bytes.Buffer{}); !errors.As(err, &sce) || sce.Code != http.StatusForbidden {
		t.Errorf("download with another token: err = %v, want 403", err)
	}
	if _, _, _, err := api.GetFileInfo("F-missing", 0, 0); err == nil || err.Error() != "file_not_found" {
		t.Errorf("info of an unknown file: err = %v", err)
	}
	calls := srv.Calls("url_private")
	if len(calls) != 2 || calls[0].Status != 200 || calls[1].Status != 403 {
		t.Errorf("url_private calls = %+v", calls)
	}
}

func TestDisconnectAndDropMakeTheClientReconnect(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	ctx := testContext(t)
	runSocketClient(t, srv, true)
	if err := srv.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}

	if err := srv.Disconnect(); err != nil {
		t.Fatal(err)
	}
	reconnected := func(n int) func(*fakeslack.State) bool {
		return func(st *fakeslack.State) bool { return st.Connections() == n && st.Connected() }
	}
	if err := srv.WaitFor(ctx, reconnected(2)); err != nil {
		t.Fatal(err)
	}
	env := srv.SendSlashCommand(slack.SlashCommand{UserID: "U1", ChannelID: "C1", Text: "help"})
	if _, err := srv.WaitAck(ctx, env); err != nil {
		t.Fatal(err)
	}

	if err := srv.DropConnection(); err != nil {
		t.Fatal(err)
	}
	if err := srv.WaitFor(ctx, reconnected(3)); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Calls("apps.connections.open")); n != 3 {
		t.Errorf("apps.connections.open called %d times, want 3", n)
	}
}

func TestPingsKeepTheClientConnected(t *testing.T) {
	t.Parallel()
	// A server without pings trips the client's 1s check at the first tick
	// (see TestSilentServerMakesTheClientReconnect); pings every 50ms leave
	// a wide margin for a loaded machine, where goroutines stall for 500ms.
	srv := newServer(t, fakeslack.WithPingInterval(50*time.Millisecond))
	ctx := testContext(t)
	runSocketClient(t, srv, true, socketmode.OptionPingInterval(time.Second))
	if err := srv.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond)
	if n := srv.Connections(); n != 1 {
		t.Errorf("Connections() = %d after 2.5s with pings, want 1", n)
	}
}

func TestSilentServerMakesTheClientReconnect(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakeslack.WithPingInterval(0))
	ctx := testContext(t)
	runSocketClient(t, srv, true, socketmode.OptionPingInterval(300*time.Millisecond))
	if err := srv.WaitFor(ctx, func(st *fakeslack.State) bool { return st.Connections() >= 2 }); err != nil {
		t.Fatal(err)
	}
}

func TestBlockKitViolationsAreRecordedAndRefused(t *testing.T) {
	longLabel := strings.Repeat("x", 80)
	button := slack.NewButtonBlockElement("approve", "run-1", slack.NewTextBlockObject(slack.PlainTextType, longLabel, false, false))
	blocks := slack.MsgOptionBlocks(slack.NewActionBlock("actions", button))

	srv := newServer(t)
	_, _, err := webClient(srv).PostMessage("C1", blocks, slack.MsgOptionText("fallback", false))
	if err == nil || err.Error() != "invalid_blocks" {
		t.Errorf("err = %v, want invalid_blocks", err)
	}
	v := srv.Violations()
	if len(v) != 1 || v[0].Path != "blocks[0].elements[0].text.text" || v[0].Limit != 75 || v[0].Got != 80 {
		t.Fatalf("violations = %v", v)
	}
	if len(srv.Messages("C1")) != 0 {
		t.Error("a refused message was stored")
	}

	lenient := newServer(t, fakeslack.WithLenientBlocks())
	_, ts, err := webClient(lenient).PostMessage("C1", blocks, slack.MsgOptionText("fallback", false))
	if err != nil {
		t.Fatalf("lenient server refused: %v", err)
	}
	m, _ := lenient.Message("C1", ts)
	if len(lenient.Violations()) != 1 || len(m.Buttons()) != 1 || m.Buttons()[0].Text != longLabel {
		t.Errorf("lenient: violations %v, message %+v", lenient.Violations(), m)
	}
}

func TestMessagesUpdateDeleteAndEphemerals(t *testing.T) {
	srv := newServer(t)
	api := webClient(srv)
	header := slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "*Run* 1: Step 1 of 3", false, false), nil, nil)
	_, ts, err := api.PostMessage("C1", slack.MsgOptionBlocks(header), slack.MsgOptionText("Run 1", false),
		slack.MsgOptionMetadata(slack.SlackMetadata{EventType: "gonogo_run", EventPayload: map[string]any{"run": "r1"}}))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := srv.Message("C1", ts)
	if m.Rendered != "Run 1\n*Run* 1: Step 1 of 3" || !strings.Contains(string(m.Metadata), "gonogo_run") {
		t.Errorf("message = %+v", m)
	}

	// An update without blocks keeps them, as Slack does.
	if _, _, _, err := api.UpdateMessage("C1", ts, slack.MsgOptionText("Run 1 (updated)", false)); err != nil {
		t.Fatal(err)
	}
	m, _ = srv.Message("C1", ts)
	if m.Updates != 1 || m.Text != "Run 1 (updated)" || !strings.Contains(m.Rendered, "Step 1 of 3") {
		t.Errorf("updated message = %+v", m)
	}
	if _, _, _, err := api.UpdateMessage("C1", "1.000000", slack.MsgOptionText("x", false)); err == nil || err.Error() != "message_not_found" {
		t.Errorf("update of an unknown message: err = %v", err)
	}

	if _, err := api.PostEphemeral("C1", "U2", slack.MsgOptionText("Only the starter may decide", false), slack.MsgOptionTS(ts)); err != nil {
		t.Fatal(err)
	}
	if e := srv.Ephemerals("U2"); len(e) != 1 || e[0].ThreadTS != ts || e[0].Text != "Only the starter may decide" {
		t.Errorf("ephemerals = %+v", e)
	}
	if len(srv.Ephemerals("U3")) != 0 {
		t.Error("ephemeral shown to the wrong user")
	}

	if _, _, err := api.DeleteMessage("C1", ts); err != nil {
		t.Fatal(err)
	}
	if len(srv.Messages("C1")) != 0 {
		t.Error("deleted message still listed")
	}

	if _, err := api.GetTeamInfo(); err == nil || err.Error() != "unknown_method" {
		t.Errorf("team.info: err = %v, want unknown_method", err)
	}
	if c := srv.Calls("team.info"); len(c) != 1 || c[0].Error != "unknown_method" {
		t.Errorf("team.info calls = %+v", c)
	}
}

func TestThreadRepliesUserGroupsAndUsers(t *testing.T) {
	srv := newServer(t)
	api := webClient(srv)
	file := srv.AddFile("reply.md", []byte("replacement"))
	root, err := srv.AddUserMessage("C1", "", "U1", "starting")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.AddUserMessage("C1", root, "U2", "here is the new version", file); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.AddUserMessage("C1", root, "U2", "x", "F-unknown"); err == nil {
		t.Error("a message with an unknown file was accepted")
	}

	msgs, _, _, err := api.GetConversationReplies(&slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: root})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[0].Text != "starting" || msgs[1].User != "U2" || len(msgs[1].Files) != 1 || msgs[1].Files[0].ID != file {
		t.Errorf("replies = %+v", msgs)
	}
	if _, _, _, err := api.GetConversationReplies(&slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: "9.9"}); err == nil {
		t.Error("replies of an unknown thread succeeded")
	}

	srv.AddUserGroup("S1", "U2", "U3")
	members, err := api.GetUserGroupMembers("S1")
	if err != nil || !slices.Equal(members, []string{"U2", "U3"}) {
		t.Errorf("members = %v, %v", members, err)
	}
	if _, err := api.GetUserGroupMembers("S9"); err == nil || err.Error() != "no_such_subteam" {
		t.Errorf("unknown group: err = %v", err)
	}
	u, err := api.GetUserInfo("U2")
	if err != nil || u.ID != "U2" {
		t.Errorf("user = %+v, %v", u, err)
	}
}

func TestClickOpenViewAndSubmit(t *testing.T) {
	srv := newServer(t)
	ctx := testContext(t)
	api := webClient(srv)
	c := runSocketClient(t, srv, false)

	approve := slack.NewButtonBlockElement("approve", "r1:1:1", slack.NewTextBlockObject(slack.PlainTextType, "Approve", false, false))
	edit := slack.NewButtonBlockElement("edit", "r1:1:1", slack.NewTextBlockObject(slack.PlainTextType, "Edit", false, false))
	_, ts, err := api.PostMessage("C1", slack.MsgOptionTS("100.000001"), slack.MsgOptionText("Step 1 of 1", false),
		slack.MsgOptionBlocks(slack.NewActionBlock("decide", approve, edit)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Click("U1", "C1", ts, "Merge"); err == nil || !strings.Contains(err.Error(), `"Approve" (approve)`) {
		t.Errorf("click on a missing button: err = %v", err)
	}
	env, err := srv.Click("U1", "C1", ts, "Edit")
	if err != nil {
		t.Fatal(err)
	}
	evt := c.next(t, socketmode.EventTypeInteractive)
	cb := evt.Data.(slack.InteractionCallback)
	if cb.Type != slack.InteractionTypeBlockActions || len(cb.ActionCallback.BlockActions) != 1 {
		t.Fatalf("callback = %+v", cb)
	}
	act := cb.ActionCallback.BlockActions[0]
	if act.ActionID != "edit" || act.Value != "r1:1:1" || act.BlockID != "decide" || cb.User.ID != "U1" ||
		cb.Container.MessageTs != ts || cb.Container.ThreadTs != "100.000001" || cb.TriggerID == "" {
		t.Errorf("block action = %+v in %+v", act, cb)
	}
	_ = c.Ack(*evt.Request)
	if _, err := srv.WaitAck(ctx, env); err != nil {
		t.Fatal(err)
	}

	input := slack.NewPlainTextInputBlockElement(nil, "artifact")
	input.Multiline = true
	input.InitialValue = "old text"
	input.MaxLength = 3000
	modal := slack.ModalViewRequest{
		Type:            slack.VTModal,
		Title:           slack.NewTextBlockObject(slack.PlainTextType, "Edit step 1", false, false),
		Submit:          slack.NewTextBlockObject(slack.PlainTextType, "Save", false, false),
		PrivateMetadata: "r1:1:1",
		CallbackID:      "edit",
		Blocks: slack.Blocks{BlockSet: []slack.Block{
			slack.NewInputBlock("artifact-block", slack.NewTextBlockObject(slack.PlainTextType, "Artifact", false, false), nil, input),
		}},
	}
	resp, err := api.OpenView(cb.TriggerID, modal)
	if err != nil {
		t.Fatal(err)
	}
	views := srv.Views()
	if len(views) != 1 || views[0].ID != resp.ID || views[0].User != "U1" || views[0].Title != "Edit step 1" || views[0].PrivateMetadata != "r1:1:1" {
		t.Fatalf("views = %+v (response %+v)", views, resp.View)
	}

	env, err = srv.SubmitView("U1", resp.ID, map[string]string{"artifact": "new text"})
	if err != nil {
		t.Fatal(err)
	}
	evt = c.next(t, socketmode.EventTypeInteractive)
	sub := evt.Data.(slack.InteractionCallback)
	if sub.Type != slack.InteractionTypeViewSubmission || sub.View.ID != resp.ID || sub.View.PrivateMetadata != "r1:1:1" {
		t.Fatalf("submission = %+v", sub)
	}
	if got := sub.View.State.Values["artifact-block"]["artifact"].Value; got != "new text" {
		t.Errorf("submitted value = %q", got)
	}
	_ = c.Ack(*evt.Request, slack.NewErrorsViewSubmissionResponse(map[string]string{"artifact-block": "too long"}))
	ack, err := srv.WaitAck(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ack.Payload), `"response_action":"errors"`) {
		t.Errorf("ack payload = %s", ack.Payload)
	}
	if _, err := srv.SubmitView("U1", resp.ID, map[string]string{"nope": "x"}); err == nil {
		t.Error("submitting an unknown input succeeded")
	}

	modal.Title = slack.NewTextBlockObject(slack.PlainTextType, "Edit step 1 (attempt 2)", false, false)
	if _, err := api.UpdateView(modal, "", "", resp.ID); err != nil {
		t.Fatal(err)
	}
	if v, _ := srv.View(resp.ID); v.Updates != 1 || v.Title != "Edit step 1 (attempt 2)" {
		t.Errorf("updated view = %+v", v)
	}
	modal.Title = slack.NewTextBlockObject(slack.PlainTextType, strings.Repeat("t", 25), false, false)
	if _, err := api.UpdateView(modal, "", "", resp.ID); err == nil || err.Error() != "invalid_arguments" {
		t.Errorf("update with a 25-character title: err = %v", err)
	}
}

func TestMentionWithPlanFile(t *testing.T) {
	srv := newServer(t)
	api := webClient(srv)
	c := runSocketClient(t, srv, true)
	file := srv.AddFile("plan.md", []byte("# Plan\n"))
	ts, _, err := srv.SendMention("C1", "", "U1", "run this --auto", file)
	if err != nil {
		t.Fatal(err)
	}
	evt := c.next(t, socketmode.EventTypeEventsAPI)
	outer := evt.Data.(slackevents.EventsAPIEvent)
	mention, isMention := outer.InnerEvent.Data.(*slackevents.AppMentionEvent)
	if !isMention {
		t.Fatalf("inner event = %T", outer.InnerEvent.Data)
	}
	if mention.TimeStamp != ts || mention.User != "U1" || !strings.Contains(mention.Text, "<@"+fakeslack.BotUserID+"> run this --auto") {
		t.Errorf("mention = %+v", mention)
	}
	if len(mention.Files) != 1 || mention.Files[0].ID != file {
		t.Fatalf("mention files = %+v", mention.Files)
	}
	var buf bytes.Buffer
	if err := api.GetFile(mention.Files[0].URLPrivate, &buf); err != nil || buf.String() != "# Plan\n" {
		t.Errorf("download = %q, %v", buf.String(), err)
	}
	if f := srv.Files("C1", ts); len(f) != 1 || f[0].User != "U1" {
		t.Errorf("files in the mention's thread = %+v", f)
	}
}

func TestResponseURL(t *testing.T) {
	srv := newServer(t)
	api := webClient(srv)
	c := runSocketClient(t, srv, true)
	srv.SendSlashCommand(slack.SlashCommand{UserID: "U1", ChannelID: "C1", Text: "help"})
	cmd := c.next(t, socketmode.EventTypeSlashCommand).Data.(slack.SlashCommand)

	if _, _, err := api.PostMessage("C1", slack.MsgOptionResponseURL(cmd.ResponseURL, slack.ResponseTypeEphemeral),
		slack.MsgOptionText("Commands: chain, run, runs", false)); err != nil {
		t.Fatal(err)
	}
	if e := srv.Ephemerals("U1"); len(e) != 1 || e[0].Text != "Commands: chain, run, runs" {
		t.Errorf("ephemerals = %+v", e)
	}
	if _, _, err := api.PostMessage("C1", slack.MsgOptionResponseURL(cmd.ResponseURL, slack.ResponseTypeInChannel),
		slack.MsgOptionText("Run r1 started", false)); err != nil {
		t.Fatal(err)
	}
	if m := srv.Messages("C1"); len(m) != 1 || m[0].Text != "Run r1 started" {
		t.Errorf("messages = %+v", m)
	}
}

func TestSendRawDeliversMalformedEnvelopes(t *testing.T) {
	srv := newServer(t)
	ctx := testContext(t)
	c := runSocketClient(t, srv, false)
	id := srv.SendRaw([]byte(`{"envelope_id":"raw-1","type":"slash_commands","payload":"not an object"}`))
	if id != "raw-1" {
		t.Fatalf("SendRaw id = %q", id)
	}
	evt := c.next(t, socketmode.EventTypeErrorBadMessage)
	bad := evt.Data.(*socketmode.ErrorBadMessage)
	var env struct {
		EnvelopeID string `json:"envelope_id"`
	}
	if err := json.Unmarshal(bad.Message, &env); err != nil || env.EnvelopeID != "raw-1" {
		t.Fatalf("bad message = %s (%v)", bad.Message, err)
	}
	if err := c.AckCtx(ctx, env.EnvelopeID, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.WaitAck(ctx, "raw-1"); err != nil {
		t.Fatal(err)
	}
}

func TestWaitForReportsTheStateOnTimeout(t *testing.T) {
	srv := newServer(t)
	if _, _, err := webClient(srv).PostMessage("C1", slack.MsgOptionText("Step 1 of 3: deliver-prd", false)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := srv.WaitMessage(ctx, "C1", func(m fakeslack.Message) bool { return strings.Contains(m.Rendered, "Run complete") })
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "Step 1 of 3: deliver-prd") {
		t.Errorf("err = %v", err)
	}
	m, err := srv.WaitMessage(testContext(t), "C1", func(m fakeslack.Message) bool { return strings.Contains(m.Rendered, "Step 1") })
	if err != nil || m.Channel != "C1" {
		t.Errorf("WaitMessage = %+v, %v", m, err)
	}
}

func TestSendInteractionAndEventFromHandMadePayloads(t *testing.T) {
	srv := newServer(t)
	c := runSocketClient(t, srv, true)

	if _, err := srv.SendInteraction(slack.InteractionCallback{
		Type: slack.InteractionTypeBlockActions,
		User: slack.User{ID: "U5"},
		ActionCallback: slack.ActionCallbacks{BlockActions: []*slack.BlockAction{
			{ActionID: "approve", BlockID: "decide", Value: "r1:2:1"},
		}},
	}); err != nil {
		t.Fatal(err)
	}
	cb := c.next(t, socketmode.EventTypeInteractive).Data.(slack.InteractionCallback)
	if cb.User.ID != "U5" || cb.TriggerID == "" || len(cb.ActionCallback.BlockActions) != 1 || cb.ActionCallback.BlockActions[0].Value != "r1:2:1" {
		t.Errorf("callback = %+v", cb)
	}

	if _, err := srv.SendEvent(`{"type":"app_mention","user":"U5","text":"<@U0FAKEBOT01> runs","ts":"1.000001","channel":"C9"}`); err != nil {
		t.Fatal(err)
	}
	outer := c.next(t, socketmode.EventTypeEventsAPI).Data.(slackevents.EventsAPIEvent)
	if m, isMention := outer.InnerEvent.Data.(*slackevents.AppMentionEvent); !isMention || m.Channel != "C9" || m.Text != "<@U0FAKEBOT01> runs" {
		t.Errorf("event = %+v", outer.InnerEvent.Data)
	}

	if _, err := srv.SendEvent("{not json"); err == nil {
		t.Error("SendEvent accepted invalid JSON")
	}
	if _, err := srv.SendInteraction([]byte("{")); err == nil {
		t.Error("SendInteraction accepted invalid JSON")
	}
}

// statusThread starts a thread in C1 on a new fake Slack and returns, with
// what the test needs of it, set, which sets the thread's loading status
// through slack-go.
func statusThread(t *testing.T) (srv *fakeslack.Server, ctx context.Context, api *slack.Client, root string, set func(status string, loading ...string) error) {
	t.Helper()
	srv = newServer(t)
	ctx = testContext(t)
	api = webClient(srv)
	_, root, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("run header", false))
	if err != nil {
		t.Fatal(err)
	}
	set = func(status string, loading ...string) error {
		return api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{
			ChannelID: "C1", ThreadTS: root, Status: status, LoadingMessages: loading})
	}
	return srv, ctx, api, root, set
}

// TestThreadStatus: assistant.threads.setStatus through slack-go shows a
// loading status in an existing thread until the app replies there, clears
// it, or two minutes pass; a thread that does not exist and more than ten
// loading messages are refused as Slack refuses them.
func TestThreadStatus(t *testing.T) {
	srv, ctx, api, root, set := statusThread(t)
	// slack-go sends loading messages joined by commas, as Slack reads
	// them from a form: a comma inside one splits it in two.
	if err := set("is running step 1", "3 turns · 2 tool calls", "a, b"); err != nil {
		t.Fatal(err)
	}
	st := srv.Statuses("C1", root)
	if len(st) != 1 || st[0].Status != "is running step 1" || !slices.Equal(st[0].Loading, []string{"3 turns · 2 tool calls", "a", " b"}) ||
		!st[0].Showing(time.Now()) {
		t.Fatalf("statuses = %+v", st)
	}
	if st[0].Showing(st[0].Set.Add(2*time.Minute + time.Second)) {
		t.Error("a status still shows after two minutes without a reply")
	}
	// A second status replaces the first.
	if err := set("is running step 1 (4 turns)"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("step 1 done", false), slack.MsgOptionTS(root)); err != nil {
		t.Fatal(err)
	}
	st = srv.Statuses("C1", root)
	if len(st) != 2 || st[0].How != "cleared" || st[1].How != "replied" || st[1].Showing(time.Now()) {
		t.Fatalf("after a second status and a reply: %+v", st)
	}
	if err := set("is running step 2"); err != nil {
		t.Fatal(err)
	}
	if err := set(""); err != nil {
		t.Fatal(err)
	}
	if st = srv.Statuses("C1", root); len(st) != 3 || st[2].How != "cleared" || st[2].Showing(time.Now()) {
		t.Fatalf("after clearing: %+v", st)
	}

	err := api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{ChannelID: "C1", ThreadTS: "1.000", Status: "x"})
	if err == nil || !strings.Contains(err.Error(), "invalid_thread_ts") {
		t.Errorf("status in a thread that does not exist: %v", err)
	}
	eleven := make([]string, 11)
	for i := range eleven {
		eleven[i] = fmt.Sprint("m", i)
	}
	if err := set("busy", eleven...); err == nil || len(srv.Violations()) == 0 {
		t.Errorf("11 loading messages: %v, violations %v", err, srv.Violations())
	}
}

// TestThreadStatusLength: the method's schema takes a status and loading
// messages of at most 50 characters (UTF-16 code units, so an emoji
// outside the Basic Multilingual Plane counts two): a longer one is
// refused with invalid_arguments, naming what broke the limit, recorded as
// a Violation, and changes nothing shown.
func TestThreadStatusLength(t *testing.T) {
	srv, _, _, root, set := statusThread(t)
	fifty, emoji25 := strings.Repeat("x", 50), strings.Repeat("🚀", 25)
	if err := set(fifty, fifty, emoji25); err != nil {
		t.Fatalf("a status and loading messages of 50 characters: %v", err)
	}
	for _, c := range []struct {
		name    string
		status  string
		loading []string
		path    string
		got     int
	}{
		{"a status of 51 characters", fifty + "y", nil, "/status", 51},
		{"a loading message of 51 characters", "busy", []string{"ok", fifty + "y"}, "/loading_messages/1", 51},
		{"26 emoji", "busy", []string{emoji25 + "🚀"}, "/loading_messages/0", 52},
	} {
		before := len(srv.Violations())
		err := set(c.status, c.loading...)
		var se slack.SlackErrorResponse
		if !errors.As(err, &se) || se.Err != "invalid_arguments" ||
			len(se.ResponseMetadata.Messages) != 1 || !strings.Contains(se.ResponseMetadata.Messages[0], c.path) {
			t.Errorf("%s: err = %#v, want invalid_arguments naming %s", c.name, err, c.path)
		}
		if vs := srv.Violations(); len(vs) != before+1 || vs[before].Path != c.path || vs[before].Limit != 50 || vs[before].Got != c.got {
			t.Errorf("%s: violations %+v", c.name, vs[before:])
		}
	}
	st := srv.Statuses("C1", root)
	if len(st) != 1 || st[0].Status != fifty || !st[0].Showing(time.Now()) {
		t.Errorf("refused statuses changed what shows: %+v", st)
	}
}

// TestThreadStatusExpiry: a status nobody replies under stops showing when
// it expires (WithStatusExpiry shortens Slack's two minutes), and one set
// again before that replaces it without ever expiring.
func TestThreadStatusExpiry(t *testing.T) {
	// A second leaves room for a loaded machine between the first two
	// settings; the third waits until the second has expired.
	const expiry = time.Second
	srv := newServer(t, fakeslack.WithStatusExpiry(expiry))
	ctx := testContext(t)
	api := webClient(srv)
	_, root, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("run header", false))
	if err != nil {
		t.Fatal(err)
	}
	set := func(status string) {
		t.Helper()
		if err := api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{
			ChannelID: "C1", ThreadTS: root, Status: status}); err != nil {
			t.Fatal(err)
		}
	}
	set("is running step 1")
	set("is running step 1 (2 turns)") // refreshed before it expires
	st := srv.Statuses("C1", root)
	time.Sleep(time.Until(st[len(st)-1].Expires) + 10*time.Millisecond)
	set("is running step 2") // after the second one expired
	st = srv.Statuses("C1", root)
	if len(st) != 3 || st[0].How != "cleared" || st[1].How != "expired" || st[1].Cleared != st[1].Expires ||
		!st[2].Cleared.IsZero() || !st[2].Showing(st[2].Set) || st[2].Showing(st[2].Set.Add(expiry)) {
		t.Fatalf("statuses = %+v", st)
	}
}
