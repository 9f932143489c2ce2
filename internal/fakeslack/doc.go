// Package fakeslack is a fake Slack for gonogo's tests: the Web API over
// httptest and the Socket Mode websocket, so the real slack-go clients talk
// to it exactly as they talk to Slack. It owns the fake workspace's state
// (messages, threads, ephemerals, modals, files, user groups), the record
// of every call, the Block Kit limit checks applied to everything a bot
// sends (Violations; CheckBlocks without a server), and the faults a test
// injects (RateLimit, Fail, LoseReply, Delay, Redeliver, KillConnection...).
//
// It imports slack-go and gorilla/websocket, and no gonogo package. Its
// methods, how closely it follows Slack and what it simplifies:
// docs/testing.md.
//
//	srv := fakeslack.New()
//	defer srv.Close()
//	api := slack.New(srv.BotToken(), slack.OptionAPIURL(srv.APIURL()),
//		slack.OptionAppLevelToken(srv.AppToken()))
//	client := socketmode.New(api) // the bot under test's
//	go client.RunContext(ctx)     // and read client.Events, or it stalls
//	env := srv.SendSlashCommand(slack.SlashCommand{UserID: "U1", ChannelID: "C1", Text: "chain a -> b"})
//	ack, err := srv.WaitAck(ctx, env)
//	step, err := srv.WaitMessage(ctx, "C1", func(m fakeslack.Message) bool {
//		return strings.Contains(m.Rendered, "Step 1 of 2")
//	})
//	env, err = srv.Click("U1", "C1", step.TS, "Approve")
package fakeslack
