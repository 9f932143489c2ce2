package bot_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/internal/fakeslack"
)

// BenchmarkCommandToFirstSight measures, for `/gonogo chain` commands, the
// time from the envelope written to the socket by the fake Slack to the
// first thing the person who typed it sees: an ephemeral message (the
// answer the acknowledgement carries, or one posted later) or the run's
// root message in the channel, whichever comes first. Three commands in
// four start a run; the fourth names a skill that is not installed and is
// refused. The target is a p99 under 300 ms.
//
// As in gonogo serve, the store is fsynced and every envelope is kept in
// the inbox before its ack. Each command goes to a channel of its own, so
// that posting its root message waits for no other run's posts; the runs
// started go on (their first step runs and waits at its checkpoint) while
// later commands arrive.
//
// The baselines, measured in the same run: ack, the acknowledgement of the
// same envelopes (what the person sees first can come no sooner), and
// root, the run's root message in the channel (the first thing the person
// saw before the acknowledgement carried an answer). echo is a bare
// WebSocket round trip on loopback, the floor under any of them.
//
// In the web-api=100ms case every Web API call is held 100 ms by the fake
// Slack, as a Slack a continent away would answer: the acknowledgement
// travels on the open socket, and is not slowed.
func BenchmarkCommandToFirstSight(b *testing.B) {
	b.Run("web-api=loopback", func(b *testing.B) { benchmarkFirstSight(b, 0) })
	b.Run("web-api=100ms", func(b *testing.B) { benchmarkFirstSight(b, 100*time.Millisecond) })
}

func benchmarkFirstSight(b *testing.B, latency time.Duration) {
	srv := newSlack(b)
	startServeOn(b, srv, b.TempDir(), serveSetup{runner: &scriptedRunner{}, parallel: 4, fsync: true, inbox: true, configure: func(c *bot.Config) {
		c.PostInterval, c.ProgressInterval = time.Millisecond, 50*time.Millisecond
	}})
	srv.Delay("", latency)
	echo := echoRoundTrips(b, 1000, 600)

	ctx := context.Background()
	var first, acks, roots []time.Duration
	i := 0
	for b.Loop() {
		user, ch := fmt.Sprintf("U0FIRST%02d", i%20), fmt.Sprintf("C0FIRST%05d", i)
		text, starts := "chain deliver-prd -> deliver-user-stories -- first sight", i%4 != 3
		if !starts {
			text = "chain deliver-prx -- first sight"
		}
		env := srv.SendSlashCommand(slack.SlashCommand{Command: "/gonogo", UserID: user, ChannelID: ch, TeamID: fakeslack.TeamID, Text: text})
		a, err := srv.WaitAck(ctx, env)
		if err != nil {
			b.Fatal(err)
		}
		var seen, root time.Time
		err = srv.WaitFor(ctx, func(st *fakeslack.State) bool {
			for _, e := range st.Ephemerals(user) {
				if e.Channel == ch && (seen.IsZero() || e.Time.Before(seen)) {
					seen = e.Time
				}
			}
			for _, m := range st.Messages(ch) {
				if m.FromBot && m.ThreadTS == "" {
					root = m.Posted
				}
			}
			if !root.IsZero() && (seen.IsZero() || root.Before(seen)) {
				seen = root
			}
			return !seen.IsZero() && (!starts || !root.IsZero())
		})
		if err != nil {
			b.Fatal(err)
		}
		first = append(first, seen.Sub(a.Sent))
		acks = append(acks, a.Latency)
		if starts {
			roots = append(roots, root.Sub(a.Sent))
		}
		i++
	}
	b.StopTimer()
	b.ReportMetric(ms(percentile(first, 50)), "first-p50-ms")
	b.ReportMetric(ms(percentile(first, 99)), "first-p99-ms")
	b.ReportMetric(ms(percentile(acks, 50)), "ack-p50-ms")
	b.ReportMetric(ms(percentile(acks, 99)), "ack-p99-ms")
	b.ReportMetric(ms(percentile(roots, 50)), "root-p50-ms")
	b.ReportMetric(ms(percentile(roots, 99)), "root-p99-ms")
	b.ReportMetric(ms(percentile(echo, 99)), "echo-p99-ms")
	b.ReportMetric(0, "ns/op") // an op is one command seen: its time is first-p50-ms
}
