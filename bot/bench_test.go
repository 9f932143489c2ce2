package bot_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/internal/fakeslack"
)

// BenchmarkEnvelopeToAck measures how long the bot takes to acknowledge a
// Socket Mode envelope (written to the socket by the fake Slack, to the
// ack read back) with 1,000 runs in the store, 100 of them waiting for a
// decision, while it carries out what it acknowledged: clicks on the
// waiting runs' Approve buttons, and slash commands that start runs and
// list them. The target is a p99 under 5 ms on loopback.
//
// As in gonogo serve, the store is fsynced and every envelope is kept in
// the inbox (one fsynced bbolt transaction in the data directory's
// inbox.db, shared with any envelope arriving at the same moment) before
// it is acknowledged, while the runs' own transitions commit and fsync to
// the store beside it. The no-inbox case, measured apart, is a bot without
// an inbox, which acknowledges at once and keeps envelopes in memory only:
// the difference is what keeping them on disk costs the ack.
//
// The baseline, measured in the same run, is a bare WebSocket round trip
// on the same kind of socket (gorilla/websocket over loopback, the library
// under both slack-go and the fake Slack): a frame of an envelope's size
// written, a small answer read back. ack-p99/echo-p99 is what the bot
// adds to the wire.
//
// Listing runs reads every run's summary from the store, the heaviest work
// an envelope asks for; the second mix replaces it with help, to show what
// the ack's tail owes to it.
func BenchmarkEnvelopeToAck(b *testing.B) {
	b.Run("mix=click,chain,runs", func(b *testing.B) { benchmarkEnvelopeToAck(b, "runs", true) })
	b.Run("mix=click,chain,help", func(b *testing.B) { benchmarkEnvelopeToAck(b, "help", true) })
	b.Run("mix=click,chain,runs/no-inbox", func(b *testing.B) { benchmarkEnvelopeToAck(b, "runs", false) })
}

func benchmarkEnvelopeToAck(b *testing.B, second string, inbox bool) {
	const (
		total   = 1000
		waiting = 100
		voters  = 20
	)
	srv := newSlack(b)
	dir := b.TempDir()
	var approvers []string
	for i := range voters {
		approvers = append(approvers, fmt.Sprintf("U0VOTER%02d", i))
	}
	seedStore(b, dir, total, waiting, approvers...)
	startServeOn(b, srv, dir, serveSetup{runner: &scriptedRunner{}, parallel: 4, fsync: true, inbox: inbox, configure: func(c *bot.Config) {
		c.Approvers = approvers
		c.PostInterval, c.ProgressInterval = time.Millisecond, 50*time.Millisecond
	}})
	var steps []fakeslack.Message
	err := srv.WaitFor(ctxT(b), func(st *fakeslack.State) bool {
		steps = steps[:0]
		for _, m := range st.Messages(channel) {
			if strings.HasPrefix(m.Text, "*Step 1 of 1") && slices.ContainsFunc(m.Buttons(), func(x fakeslack.Button) bool { return x.Text == "Approve" }) {
				steps = append(steps, m)
			}
		}
		return len(steps) == waiting
	})
	if err != nil {
		b.Fatalf("the waiting runs' messages were not posted (%d of %d): %v", len(steps), waiting, err)
	}
	settle(srv, 200*time.Millisecond, 10*time.Second)

	// A block_actions envelope carries the clicked message; its blocks are
	// the bulk of it.
	echo := echoRoundTrips(b, 2000, len(steps[0].Blocks)+1500)

	ctx := context.Background()
	var acks []time.Duration
	i, clicks := 0, 0
	for b.Loop() {
		// Half clicks, a quarter commands that start a run, a quarter the
		// second command.
		var env string
		switch user := approvers[i%voters]; i % 4 {
		case 0:
			env = srv.SendSlashCommand(slack.SlashCommand{Command: "/gonogo", UserID: user, ChannelID: channel,
				TeamID: fakeslack.TeamID, Text: "chain deliver-prd -- benchmark"})
		case 1:
			env = srv.SendSlashCommand(slack.SlashCommand{Command: "/gonogo", UserID: user, ChannelID: channel,
				TeamID: fakeslack.TeamID, Text: second})
		default:
			m := steps[clicks%waiting]
			if env, err = srv.Click(approvers[(clicks/waiting)%voters], channel, m.TS, "Approve"); err != nil {
				b.Fatal(err)
			}
			clicks++
		}
		a, err := srv.WaitAck(ctx, env)
		if err != nil {
			b.Fatal(err)
		}
		acks = append(acks, a.Latency)
		i++
	}
	b.StopTimer()
	p50, p99 := percentile(acks, 50), percentile(acks, 99)
	e50, e99 := percentile(echo, 50), percentile(echo, 99)
	b.ReportMetric(ms(p50), "ack-p50-ms")
	b.ReportMetric(ms(p99), "ack-p99-ms")
	b.ReportMetric(ms(e50), "echo-p50-ms")
	b.ReportMetric(ms(e99), "echo-p99-ms")
	b.ReportMetric(float64(p50)/float64(max(e50, 1)), "ack-p50/echo-p50")
	b.ReportMetric(float64(p99)/float64(max(e99, 1)), "ack-p99/echo-p99")
	b.ReportMetric(0, "ns/op") // an op is a wait for an ack: its time is ack-p50-ms
}

// echoRoundTrips measures n WebSocket round trips over loopback: the
// server writes a frame of size bytes, the client reads it and answers
// with an ack-sized frame, the server reads that. Timed on the server's
// side, as the fake Slack times an envelope.
func echoRoundTrips(b *testing.B, n, size int) []time.Duration {
	b.Helper()
	frame := []byte(`{"envelope_id":"bench","type":"interactive","payload":"` + strings.Repeat("x", max(size-60, 0)) + `"}`)
	up := websocket.Upgrader{}
	out := make(chan []time.Duration, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			out <- nil
			return
		}
		defer c.Close()
		lat := make([]time.Duration, 0, n)
		for range n {
			if err := c.WriteMessage(websocket.TextMessage, frame); err != nil {
				break
			}
			sent := time.Now()
			if _, _, err := c.ReadMessage(); err != nil {
				break
			}
			lat = append(lat, time.Since(sent))
		}
		out <- lat
	}))
	defer srv.Close()
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	answer := []byte(`{"envelope_id":"bench"}`)
	for range n {
		if _, _, err := c.ReadMessage(); err != nil {
			b.Fatal(err)
		}
		if err := c.WriteMessage(websocket.TextMessage, answer); err != nil {
			b.Fatal(err)
		}
	}
	lat := <-out
	if len(lat) != n {
		b.Fatalf("echo baseline: %d of %d round trips", len(lat), n)
	}
	return lat
}

func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[min(max(i-1, 0), len(s)-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
