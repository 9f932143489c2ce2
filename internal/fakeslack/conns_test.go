package fakeslack_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/gonogo/gonogo/internal/fakeslack"
)

// waitLive waits until n connections get envelopes.
func waitLive(ctx context.Context, t *testing.T, srv *fakeslack.Server, n int) {
	t.Helper()
	if err := srv.WaitFor(ctx, func(st *fakeslack.State) bool { return len(st.LiveConnections()) == n }); err != nil {
		t.Fatalf("waiting for %d live connections: %v", n, err)
	}
}

// drain returns the requests c received, of the type want, until none came
// for d.
func (c *socketClient) drain(want socketmode.EventType, d time.Duration) []socketmode.Request {
	var out []socketmode.Request
	for {
		select {
		case evt := <-c.events:
			if evt.Type == want && evt.Request != nil {
				out = append(out, *evt.Request)
			}
		case <-time.After(d):
			return out
		}
	}
}

// split sorts requests by type.
func split(evts []socketmode.Event) map[socketmode.EventType][]socketmode.Request {
	out := map[socketmode.EventType][]socketmode.Request{}
	for _, e := range evts {
		if e.Request != nil {
			out[e.Type] = append(out[e.Type], *e.Request)
		}
	}
	return out
}

// all returns the events c received until none came for d.
func (c *socketClient) all(d time.Duration) []socketmode.Event {
	var out []socketmode.Event
	for {
		select {
		case evt := <-c.events:
			out = append(out, evt)
		case <-time.After(d):
			return out
		}
	}
}

func TestEnvelopesAreSpreadOverConnections(t *testing.T) {
	srv := newServer(t)
	ctx := testContext(t)
	a := runSocketClient(t, srv, true)
	waitLive(ctx, t, srv, 1)
	b := runSocketClient(t, srv, true)
	waitLive(ctx, t, srv, 2)
	live := srv.LiveConnections()

	var envs []string
	for range 6 {
		_, env, err := srv.SendMention("C1", "", "U1", "hello")
		if err != nil {
			t.Fatal(err)
		}
		envs = append(envs, env)
	}
	for i, env := range envs {
		ack, err := srv.WaitAck(ctx, env)
		if err != nil {
			t.Fatal(err)
		}
		// The connections take turns, in the order they opened.
		if want := live[i%2]; ack.Conn != want {
			t.Errorf("envelope %d was acked on connection %d, want %d", i, ack.Conn, want)
		}
	}
	for _, e := range srv.Envelopes() {
		if len(e.Deliveries) != 1 || e.Deliveries[0].RetryAttempt != 0 {
			t.Errorf("envelope %s delivered %+v, want once", e.ID, e.Deliveries)
		}
	}
	gotA := a.drain(socketmode.EventTypeEventsAPI, 300*time.Millisecond)
	gotB := b.drain(socketmode.EventTypeEventsAPI, 50*time.Millisecond)
	if len(gotA) != 3 || len(gotB) != 3 {
		t.Errorf("clients received %d and %d events, want 3 each", len(gotA), len(gotB))
	}
	if n := srv.Connections(); n != 2 {
		t.Errorf("Connections() = %d, want 2", n)
	}
	if u := srv.Unacked(); len(u) != 0 {
		t.Errorf("unacked envelopes: %+v", u)
	}
}

func TestDeadConnectionEventsAreRetriedInteractionsLost(t *testing.T) {
	const delay = 300 * time.Millisecond
	srv := newServer(t, fakeslack.WithRetryDelay(delay))
	ctx := testContext(t)
	_, ts, err := webClient(srv).PostMessage("C1", slack.MsgOptionText("step", false),
		slack.MsgOptionBlocks(slack.NewActionBlock("b", slack.NewButtonBlockElement("approve", "v",
			slack.NewTextBlockObject(slack.PlainTextType, "Approve", false, false)))))
	if err != nil {
		t.Fatal(err)
	}
	dying := runSocketClient(t, srv, false) // reads envelopes, never acks
	waitLive(ctx, t, srv, 1)
	other := runSocketClient(t, srv, true)
	waitLive(ctx, t, srv, 2)
	first := srv.LiveConnections()[0]

	// Turns: the dying client's connection gets the 1st, 3rd and 5th.
	_, event, err := srv.SendMention("C1", "", "U1", "run this")
	if err != nil {
		t.Fatal(err)
	}
	_, okEvent, _ := srv.SendMention("C1", "", "U1", "fine")
	command := srv.SendSlashCommand(slack.SlashCommand{UserID: "U1", ChannelID: "C1", Text: "chain a"})
	_, okEvent2, _ := srv.SendMention("C1", "", "U1", "fine too")
	click, err := srv.Click("U1", "C1", ts, "Approve")
	if err != nil {
		t.Fatal(err)
	}
	dying.next(t, socketmode.EventTypeEventsAPI)
	dying.next(t, socketmode.EventTypeSlashCommand)
	dying.next(t, socketmode.EventTypeInteractive)
	for _, env := range []string{okEvent, okEvent2} {
		if _, err := srv.WaitAck(ctx, env); err != nil {
			t.Fatal(err)
		}
	}
	if u := srv.Unacked(); len(u) != 3 {
		t.Fatalf("unacked before the kill: %+v, want 3", u)
	}

	dying.stop()
	// The event comes again on the other connection, its retry marked.
	ack, err := srv.WaitAck(ctx, event)
	if err != nil {
		t.Fatal(err)
	}
	if ack.Conn == first {
		t.Errorf("the retry was acked on the dead connection %d", ack.Conn)
	}
	got := split(other.all(3 * delay))
	var retried *socketmode.Request
	for _, r := range got[socketmode.EventTypeEventsAPI] {
		if r.EnvelopeID == event {
			retried = &r
		}
	}
	if retried == nil || retried.RetryAttempt != 1 || retried.RetryReason != "timeout" {
		t.Errorf("retry on the other connection = %+v, want retry_attempt 1, reason timeout", retried)
	}
	for _, r := range append(got[socketmode.EventTypeSlashCommand], got[socketmode.EventTypeInteractive]...) {
		t.Errorf("an interaction came again: %+v", r)
	}

	checkRetried(t, srv, event, first, delay)
	checkLost(t, srv, command, click)
}

// checkRetried checks that event went first to connection first, then
// once more, a retry, to another at least delay later.
func checkRetried(t *testing.T, srv *fakeslack.Server, event string, first int, delay time.Duration) {
	t.Helper()
	for _, e := range srv.Envelopes() {
		if e.ID != event {
			continue
		}
		d := e.Deliveries
		if len(d) != 2 || d[0].Conn != first || d[1].Conn == first || d[1].RetryAttempt != 1 {
			t.Errorf("the event's deliveries = %+v", d)
		} else if gap := d[1].Sent.Sub(d[0].Sent); gap < delay {
			t.Errorf("the retry came %v after the first sending, want at least %v", gap, delay)
		}
	}
}

// checkLost checks that the envelopes no ack answered are ids, each given
// up after one sending.
func checkLost(t *testing.T, srv *fakeslack.Server, ids ...string) {
	t.Helper()
	u := srv.Unacked()
	var got []string
	for _, e := range u {
		got = append(got, e.ID)
		if !e.Lost || len(e.Deliveries) != 1 || e.Type == "events_api" {
			t.Errorf("envelope %s (%s): lost %t, deliveries %+v; want lost after one", e.ID, e.Type, e.Lost, e.Deliveries)
		}
	}
	if !slices.Equal(got, ids) {
		t.Errorf("unacked envelopes = %v, want %v", got, ids)
	}
}

func TestEventsRetriedAtMostThreeTimes(t *testing.T) {
	srv := newServer(t, fakeslack.WithRetryDelay(50*time.Millisecond))
	ctx := testContext(t)
	c := runSocketClient(t, srv, false) // reconnects after every kill, never acks
	_, event, err := srv.SendMention("C1", "", "U1", "run this")
	if err != nil {
		t.Fatal(err)
	}
	for attempt := 0; attempt <= 3; attempt++ {
		evt := c.next(t, socketmode.EventTypeEventsAPI)
		if evt.Request.EnvelopeID != event || evt.Request.RetryAttempt != attempt {
			t.Fatalf("delivery %d = %+v", attempt, evt.Request)
		}
		err := srv.WaitFor(ctx, func(st *fakeslack.State) bool {
			for _, e := range st.Envelopes() {
				if e.ID == event && len(e.Deliveries) == attempt+1 {
					return true
				}
			}
			return false
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.KillConnection(srv.Envelopes()[0].Deliveries[attempt].Conn); err != nil {
			t.Fatal(err)
		}
	}
	err = srv.WaitFor(ctx, func(st *fakeslack.State) bool {
		u := st.Unacked()
		return len(u) == 1 && u[0].Lost
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range c.drain(socketmode.EventTypeEventsAPI, 300*time.Millisecond) {
		t.Errorf("sent again after three retries: %+v", r)
	}
	if err := srv.KillConnection(99); err == nil {
		t.Error("KillConnection of an unknown connection succeeded")
	}
}

// An envelope Slack has while no connection takes envelopes waits for one
// and is marked Unserved; one sent while a connection is live is not.
func TestEnvelopeWithoutAConnectionIsUnserved(t *testing.T) {
	srv := newServer(t)
	ctx := testContext(t)
	_, early, err := srv.SendMention("C1", "", "U1", "before any connection")
	if err != nil {
		t.Fatal(err)
	}
	runSocketClient(t, srv, true)
	waitLive(ctx, t, srv, 1)
	_, served, err := srv.SendMention("C1", "", "U1", "with a connection")
	if err != nil {
		t.Fatal(err)
	}
	for _, env := range []string{early, served} {
		if _, err := srv.WaitAck(ctx, env); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]bool{}
	for _, e := range srv.Envelopes() {
		got[e.ID] = e.Unserved
	}
	if !got[early] || got[served] {
		t.Errorf("unserved: sent before any connection %t, sent to a live one %t; want true, false", got[early], got[served])
	}
}
