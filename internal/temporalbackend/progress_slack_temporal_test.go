//go:build temporal

package temporalbackend

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"go.temporal.io/sdk/worker"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/fakeslack"
	"github.com/gonogo/gonogo/internal/hangguard"
)

// slackRuns is the Backend as a serve replica's bot drives it (gonogo
// serve on Temporal wires the same).
type slackRuns struct{ *Backend }

func (s slackRuns) List(ctx context.Context) ([]engine.RunSummary, error) {
	return s.Backend.List(ctx, 50)
}

// A step's live progress, as its runner reports it, reaches the loading
// status of the run's Slack thread on Temporal as on bbolt: the bot that
// syncs the thread reads it from the step activity's heartbeats (turns,
// tool calls, the last tool), and reads it again while the step runs.
func TestSlackThreadShowsTheRunningStepsProgress(t *testing.T) {
	e := temporalEnv(t)
	release := e.runner.holdSkill("deliver-prd")
	defer release()
	b := New(e.config(func(c *Config) { c.SlackQueue = e.q.slack }))
	srv := fakeslack.New()
	t.Cleanup(srv.Close)
	// A workspace that streams shows the progress in the step's stream;
	// this one refuses streaming, so the loading status carries it.
	srv.Fail("chat.startStream", 1<<20, "not_allowed")
	sb, err := bot.New(bot.Config{AppToken: srv.AppToken(), BotToken: srv.BotToken(), APIURL: srv.APIURL(),
		Catalog: e.cat, Policy: engine.DefaultPolicy(), PostInterval: time.Millisecond,
		ProgressInterval: 100 * time.Millisecond, QuietStart: -1, ScheduledSyncs: true}, slackRuns{b})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sb.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("bot.Run: %v", err)
		}
	})
	select {
	case <-sb.Ready():
	case <-time.After(hangguard.Limit(t)):
		t.Fatal("the bot never connected")
	}
	e.worker(e.q.slack, func(r worker.Registry) { RegisterSlack(r, sb) })

	const channel = "C0PROGRESS"
	env := srv.SendSlashCommand(slack.SlashCommand{Command: "/gonogo", UserID: "U0START", ChannelID: channel,
		TeamID: fakeslack.TeamID, Text: "chain deliver-prd -> deliver-user-stories -- live progress"})
	wctx, stop := context.WithTimeout(context.Background(), hangguard.Limit(t))
	defer stop()
	if _, err := srv.WaitAck(wctx, env); err != nil {
		t.Fatal(err)
	}
	// The fake runner reports 1 turn, 2 tool calls and Read as the step
	// starts, then holds it running.
	want := []string{"is running step 1/2: deliver-prd · 1 turn · ", "2 tool calls", "last tool: Read"}
	var shown []fakeslack.ThreadStatus
	err = srv.WaitFor(wctx, func(st *fakeslack.State) bool {
		shown = nil
		for _, m := range st.Messages(channel) {
			for _, s := range st.Statuses(channel, m.TS) {
				shown = append(shown, s)
				text := s.Status + "\n" + strings.Join(s.Loading, "\n")
				if s.Showing(time.Now()) && containsEvery(text, want) {
					return true
				}
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("the thread never showed the step's progress %q: %v; statuses %+v", want, err, shown)
	}
}

func containsEvery(s string, want []string) bool {
	for _, w := range want {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}
