//go:build temporal

package temporalbackend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/server/temporaltest"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/hangguard"
)

// testRecoverAfter is how long the tests' envelopes wait for their
// replica before another carries them out.
const testRecoverAfter = 300 * time.Millisecond

// carried is one CarryOut call the tests' Slack replica saw.
type carried struct {
	payload  string
	received time.Time
	at       time.Time
	err      error
}

// slackReplica is what a Slack front end registers on SlackQueue: it
// notes every envelope it is asked to carry out, failing the first
// attempts of those listed in fail.
type slackReplica struct {
	mu    sync.Mutex
	calls map[string][]carried // by envelope id
	fail  map[string]int
}

func (s *slackReplica) carry(_ context.Context, payload []byte, received time.Time) error {
	key, err := envelopeKey(payload)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := carried{payload: string(payload), received: received, at: time.Now()}
	if s.fail[key] > 0 {
		s.fail[key]--
		c.err = errors.New("Slack answered 500")
	}
	s.calls[key] = append(s.calls[key], c)
	return c.err
}

func (s *slackReplica) callsOf(key string) []carried {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]carried(nil), s.calls[key]...)
}

// envelopeKey is the bot's key: the Slack envelope id.
func envelopeKey(payload []byte) (string, error) {
	var env struct {
		EnvelopeID string `json:"envelope_id"`
	}
	if err := json.Unmarshal(payload, &env); err != nil {
		return "", err
	}
	if env.EnvelopeID == "" {
		return "", errors.New("no envelope_id")
	}
	return env.EnvelopeID, nil
}

func envelope(id, text string) []byte {
	return fmt.Appendf(nil, `{"type":"slash_commands","envelope_id":%q,"payload":{"text":%q}}`, id, text)
}

// inboxEnv is a Temporal server with a worker for workflows and one Slack
// replica polling SlackQueue.
func inboxEnv(t *testing.T) (client.Client, *slackReplica) {
	t.Helper()
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	ts.NewWorker(TaskQueue, func(r worker.Registry) { RegisterWorkflow(r) })
	s := &slackReplica{calls: map[string][]carried{}, fail: map[string]int{}}
	ts.NewWorker(SlackQueue, func(r worker.Registry) { RegisterInbox(r, s.carry) })
	return ts.GetDefaultClient(), s
}

func newTestInbox(c client.Client) *Inbox {
	return NewInbox(c, InboxConfig{RecoverAfter: testRecoverAfter, Key: envelopeKey})
}

// envelopeEnded waits for the envelope's workflow to end and returns how
// it ended.
func envelopeEnded(t *testing.T, c client.Client, key string) error {
	t.Helper()
	ctx := hangguard.Context(t)
	err := c.GetWorkflow(ctx, envelopeID(key), "").Get(ctx, nil)
	if ctx.Err() != nil {
		t.Fatalf("envelope %s: its workflow never ended", key)
	}
	return err
}

// TestInbox runs the inbox's cases on one server, each with envelopes of
// its own.
func TestInbox(t *testing.T) {
	c, slack := inboxEnv(t)
	for _, tc := range []struct {
		name string
		test func(t *testing.T, c client.Client, slack *slackReplica)
	}{
		{"done is never carried out", inboxDoneIsNeverCarriedOut},
		{"not done is carried out once", inboxNotDoneIsCarriedOutOnce},
		{"a key recorded already is a duplicate", inboxRecordedTwice},
		{"a failed carry out is retried", inboxRetriesCarryOut},
		{"done of an unknown id", inboxDoneOfUnknownID},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, c, slack) })
	}
}

// An envelope its replica marks done ends its workflow and is never
// carried out again.
func inboxDoneIsNeverCarriedOut(t *testing.T, c client.Client, slack *slackReplica) {
	in := newTestInbox(c)
	id, err := in.Record(t.Context(), envelope("E-done", "/gonogo start plan.md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Done(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	if err := envelopeEnded(t, c, "E-done"); err != nil {
		t.Fatalf("the workflow of an envelope marked done: %v", err)
	}
	if got := slack.callsOf("E-done"); len(got) != 0 {
		t.Errorf("an envelope marked done was carried out %d times", len(got))
	}
	if p, err := in.Pending(t.Context()); p != nil || err != nil {
		t.Errorf("Pending: %v, %v", p, err)
	}
}

// An envelope nobody marks done is carried out once, after RecoverAfter,
// with its payload and the time its replica received it.
func inboxNotDoneIsCarriedOutOnce(t *testing.T, c client.Client, slack *slackReplica) {
	in := newTestInbox(c)
	payload := envelope("E-lost", "approve step 2")
	before := time.Now()
	id, err := in.Record(t.Context(), payload)
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if err := envelopeEnded(t, c, "E-lost"); err != nil {
		t.Fatalf("the workflow of an envelope carried out: %v", err)
	}
	got := slack.callsOf("E-lost")
	if len(got) != 1 {
		t.Fatalf("carried out %d times, want once", len(got))
	}
	if got[0].payload != string(payload) {
		t.Errorf("carried out %s, want %s", got[0].payload, payload)
	}
	if got[0].received.Before(before) || got[0].received.After(after) {
		t.Errorf("received %v, want between %v and %v", got[0].received, before, after)
	}
	if wait := got[0].at.Sub(before); wait < testRecoverAfter {
		t.Errorf("carried out %v after it was recorded, before RecoverAfter (%v)", wait, testRecoverAfter)
	}
	// The replica comes back late: its Done finds the workflow ended.
	if err := in.Done(t.Context(), id); err != nil {
		t.Errorf("done after it was carried out: %v", err)
	}
}

// An envelope sent again, to another replica or the same one, is a
// duplicate while its workflow runs and after it ended; so is one whose
// key is hashed.
func inboxRecordedTwice(t *testing.T, c client.Client, slack *slackReplica) {
	first, second := newTestInbox(c), newTestInbox(c)
	for _, key := range []string{"E-twice", "E twice/über"} {
		payload := envelope(key, "abort")
		id, err := first.Record(t.Context(), payload)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := second.Record(t.Context(), payload); !errors.Is(err, engine.ErrDuplicate) {
			t.Errorf("%q recorded again by another replica: got %v, want ErrDuplicate", key, err)
		}
		if _, err := first.Record(t.Context(), payload); !errors.Is(err, engine.ErrDuplicate) {
			t.Errorf("%q recorded again by the same replica: got %v, want ErrDuplicate", key, err)
		}
		if err := first.Done(t.Context(), id); err != nil {
			t.Fatal(err)
		}
		if err := envelopeEnded(t, c, key); err != nil {
			t.Fatal(err)
		}
		if _, err := second.Record(t.Context(), payload); !errors.Is(err, engine.ErrDuplicate) {
			t.Errorf("%q recorded again after it was done: got %v, want ErrDuplicate", key, err)
		}
		if got := slack.callsOf(key); len(got) != 0 {
			t.Errorf("%q was carried out %d times", key, len(got))
		}
	}
}

// A CarryOut that fails is tried again.
func inboxRetriesCarryOut(t *testing.T, c client.Client, slack *slackReplica) {
	slack.mu.Lock()
	slack.fail["E-flaky"] = 1
	slack.mu.Unlock()
	in := newTestInbox(c)
	if _, err := in.Record(t.Context(), envelope("E-flaky", "redo")); err != nil {
		t.Fatal(err)
	}
	if err := envelopeEnded(t, c, "E-flaky"); err != nil {
		t.Fatalf("the workflow of an envelope carried out on the second attempt: %v", err)
	}
	got := slack.callsOf("E-flaky")
	if len(got) != 2 || got[0].err == nil || got[1].err != nil {
		t.Errorf("attempts %+v: want a failure, then a success", got)
	}
}

// Done of ids this process never gave does nothing.
func inboxDoneOfUnknownID(t *testing.T, c client.Client, slack *slackReplica) {
	in := newTestInbox(c)
	if err := in.Done(t.Context(), 42, 43); err != nil {
		t.Errorf("done of ids this process never gave: %v", err)
	}
}
