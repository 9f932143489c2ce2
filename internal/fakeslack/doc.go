// Package fakeslack is a fake Slack for gonogo's tests. It serves the Web API
// over httptest and the Socket Mode websocket, so that the real slack-go
// clients (slack.Client and socketmode.Client) talk to it exactly as they
// talk to Slack: apps.connections.open, hello, envelopes and acks, WebSocket
// pings, disconnects, form and JSON bodies, 429s with Retry-After, the
// three-step file upload and the token-protected file download.
//
// It owns the fake workspace's state (messages, threads, ephemerals, modals,
// files, user groups), the record of every call, the Block Kit limit checks
// applied to everything the bot sends, and the faults a test injects.
//
// # Use
//
//	srv := fakeslack.New()
//	defer srv.Close()
//	api := slack.New(srv.BotToken(),
//		slack.OptionAPIURL(srv.APIURL()), // or SLACK_API_URL=srv.APIURL()
//		slack.OptionAppLevelToken(srv.AppToken()))
//	client := socketmode.New(api)
//	go client.RunContext(ctx) // and read client.Events, or it stalls
//
//	env := srv.SendSlashCommand(slack.SlashCommand{UserID: "U1", ChannelID: "C1", Text: "chain a -> b"})
//	ack, err := srv.WaitAck(ctx, env) // ack.Latency: envelope written to ack read
//
//	root, err := srv.WaitMessage(ctx, "C1", func(m fakeslack.Message) bool {
//		return strings.Contains(m.Rendered, "Step 1 of 2")
//	})
//	env, err = srv.Click("U1", "C1", root.TS, "Approve") // by action_id or label
//
//	err = srv.WaitFor(ctx, func(st *fakeslack.State) bool {
//		return len(st.Files("C1", root.ThreadTS)) == 2
//	})
//	if v := srv.Violations(); len(v) > 0 {
//		t.Errorf("Block Kit limits broken: %v", v)
//	}
//
// Users act through AddUserMessage, AddFile, SendMention, SendSlashCommand,
// Click and SubmitView; SendInteraction, SendEvent and SendRaw deliver
// hand-made payloads. Envelopes wait in a queue until a client is connected.
// Faults: RateLimit, RateLimitBare, Fail, FailStatus, LoseReply, Delay,
// Redeliver, Disconnect, DropConnection, KillConnection.
//
// # Fidelity
//
// Tokens: apps.connections.open takes only the app-level token, every other
// method only the bot token. A missing token answers not_authed, the other
// kind of token not_allowed_token_type, anything else invalid_auth (which
// socketmode.Client treats as fatal: RunContext returns it).
//
// Web API methods implemented: auth.test, apps.connections.open,
// chat.postMessage, chat.update, chat.postEphemeral, chat.delete, views.open,
// views.push, views.update, files.getUploadURLExternal,
// files.completeUploadExternal, files.info, conversations.replies,
// conversations.history,
// usergroups.users.list, users.info and assistant.threads.setStatus. Others
// answer unknown_method (and are recorded). Uploads, downloads and
// response_url posts are recorded as the calls "upload_url", "url_private"
// and "response_url".
//
// Block Kit: every message, ephemeral, modal and response_url answer is
// checked against Slack's documented limits (50 blocks per message, 100 per
// modal; section text 3,000 characters, fields 10 of 2,000; header 150;
// context 10 elements; actions 25 elements; button label 75, value 2,000;
// action_id and block_id 255, block_ids unique; modal title, submit and close
// 24; private_metadata 3,000; plain_text_input max_length 1 to 3,000 and
// initial_value 3,000; message text 40,000; options, confirm dialogs,
// placeholders, labels, images; markdown blocks 12,000 characters together
// and table blocks one a message, 100 rows of 20 cells, both in messages
// only; no empty text, no block or element type Block Kit lacks). Lengths count UTF-16 code units, the strictest way Slack
// might count, so an emoji outside the Basic Multilingual Plane counts
// twice. CheckBlocks and CheckModal apply the same checks without a
// server, for tests of what a bot renders. A payload
// that breaks one is recorded as a Violation and refused as Slack refuses it
// (invalid_blocks, msg_too_long, or invalid_arguments for views), unless the
// server was made WithLenientBlocks. An upload whose size differs from the
// length declared to files.getUploadURLExternal is refused (HTTP 400) and
// recorded too, and so is a call made before the Retry-After of its 429 ran
// out.
//
// Triggers: a trigger_id opens one view (views.open or views.push) within
// TriggerLife (3 s) of the sending of the interaction that carried it;
// otherwise Slack's errors answer: invalid_trigger_id,
// expired_trigger_id, exchanged_trigger_id. Delay holds a method's calls
// (every method's, with ""), as a slow Slack would, so a test can see
// whether a modal still opens in time.
//
// Acks: a slash command's ack payload is its response message (an
// ephemeral, Ephemeral.Via "ack", or in_channel a message), checked like
// any message. A view_submission's is a response_action: "errors" must
// name input blocks of the view submitted (the modal stays open and
// View.Errors shows them), "update" and "push" carry a checked view, and
// "clear" or no payload closes the modal (View.Closed: views.update then
// answers not_found). A payload on an envelope that accepts none, an
// unknown response_action, an error under a block that is not an input
// and an ack of 20 KB or more are Violations (method "ack").
//
// Several connections: an app may hold several Socket Mode connections at
// once (Slack allows ten; replicas of one app each open theirs), and Slack
// sends each envelope to one of them, not to all. The fake hands envelopes
// to the usable connections (greeted with hello, not asked to leave) in
// turn, in the order they opened; Delivery and Ack.Conn tell which
// connection got and acked which envelope (Envelopes, LiveConnections).
// When a connection dies (closed, reset, a write failing; KillConnection
// as a killed process) with envelopes sent on it and never acknowledged,
// Slack does what it does for an app that did not answer in time: an
// Events API envelope is sent again, retry_attempt one more and
// retry_reason "timeout", to a connection still alive (Slack retries an
// event three times, after a few seconds, a minute and five minutes; the
// fake waits WithRetryDelay, DefaultRetryDelay 1 s, after the envelope's
// last sending, and gives it up after three retries). Interactions
// (block_actions, view_submission) and slash commands are never sent
// again: the person's click or command failed, and Slack showed them an
// error. Unacked lists the envelopes no ack answered, and Lost marks those
// Slack gave up. With a single connection nothing changes while it lives:
// an envelope delivered and not acked is sent again only by Redeliver.
//
// conversations.history lists a channel's top-level messages, newest
// first, with Slack's oldest, latest, inclusive, limit and cursor
// (next_cursor) and reply_count on a thread's root. It and
// conversations.replies return each message's metadata (event_type and
// event_payload, as chat.postMessage's metadata carried them) only with
// include_all_metadata, as Slack does. Duplicates lists the bot's messages
// posted twice in a channel with the same metadata, so that a test can
// check an app that restarts finds what it posted instead of posting it
// again.
//
// assistant.threads.setStatus keeps each thread's loading status: it ends
// when the app replies in the thread (chat.postMessage or a file shared
// there), is set empty or again, or expires two minutes after it was set
// (WithStatusExpiry shortens that for a test); Statuses lists them. As
// the method's schema says, a status and each loading message hold at
// most 50 characters (counted as Block Kit text is) and a status at most
// 10 loading messages: a longer one is a Violation, refused with
// invalid_arguments naming it ("[ERROR] must be no longer than 50
// characters [json-pointer:/loading_messages/1]").
//
// Simplifications: one workspace; any channel id exists; thread_ts is not
// checked against known messages; an envelope delivered on a connection
// that stays open and never acked is not redelivered unless the test calls
// Redeliver; the limit of ten connections is not enforced; a modal is closed only by the answer to
// its submission, never by the person; views.update honours hash;
// Retry-After is whole seconds.
package fakeslack
