package fakeslack_test

import (
	"context"
	"fmt"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/gonogo/gonogo/internal/fakeslack"
)

// A bot connected over Socket Mode receives a slash command, acks it and
// answers in a thread; the test reads what the fake Slack holds.
func Example() {
	srv := fakeslack.New()
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	defer cancel()

	api := slack.New(srv.BotToken(), slack.OptionAPIURL(srv.APIURL()), slack.OptionAppLevelToken(srv.AppToken()))
	client := socketmode.New(api)
	runCtx, stop := context.WithCancel(ctx)
	running := make(chan struct{})
	go func() {
		defer close(running)
		_ = client.RunContext(runCtx)
	}()
	// The bot's side: read Events always (a full channel stalls the
	// socket), ack at once, then work.
	handling := make(chan struct{})
	go func() {
		defer close(handling)
		for {
			select {
			case <-runCtx.Done():
				return
			case evt := <-client.Events:
				if evt.Type != socketmode.EventTypeSlashCommand {
					continue
				}
				_ = client.Ack(*evt.Request)
				cmd := evt.Data.(slack.SlashCommand)
				_, root, _ := api.PostMessage(cmd.ChannelID, slack.MsgOptionText("Run r1: "+cmd.Text, false))
				_, _, _ = api.PostMessage(cmd.ChannelID, slack.MsgOptionTS(root), slack.MsgOptionText("Step 1 of 1: deliver-prd", false))
			}
		}
	}()
	defer func() { stop(); <-running; <-handling }()

	env := srv.SendSlashCommand(slack.SlashCommand{UserID: "U1", ChannelID: "C1", Text: "chain deliver-prd"})

	if _, err := srv.WaitAck(ctx, env); err != nil {
		fmt.Println(err)
		return
	}
	step, err := srv.WaitMessage(ctx, "C1", func(m fakeslack.Message) bool { return m.ThreadTS != "" })
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range srv.Thread("C1", step.ThreadTS) {
		fmt.Println(m.Rendered)
	}
	fmt.Println("violations:", len(srv.Violations()))
	// Output:
	// Run r1: chain deliver-prd
	// Step 1 of 1: deliver-prd
	// violations: 0
}
