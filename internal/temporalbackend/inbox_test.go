package temporalbackend

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/gonogo/gonogo/internal/record"
)

// The envelope records' names are in every envelope workflow's history:
// a release that renamed one would misread the envelopes waiting.
func TestEnvelopeRecordsKeepTheirNames(t *testing.T) {
	for _, c := range []struct {
		rec  any
		want string
	}{
		{envelopeRecord{V: 1, Payload: []byte("hi"), RecoverAfterNS: 5, SlackQueue: "q", ReceivedUnixNano: 7},
			`{"v":1,"payload":"aGk=","recover_after_ns":5,"slack_queue":"q","received_unix_nano":7}`},
		{carryRecord{V: 1, Payload: []byte("hi"), ReceivedUnixNano: 7}, `{"v":1,"payload":"aGk=","received_unix_nano":7}`},
	} {
		b, err := json.Marshal(c.rec)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("%T: %s, want %s", c.rec, b, c.want)
		}
	}
}

// An envelope from a newer gonogo is refused, by its workflow and by
// CarryOut, and never carried out; one of this release is carried out
// with its payload and the time it was received.
func TestEnvelopeFromANewerGonogoIsRefused(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	var calls []string
	var at time.Time
	carry := func(_ context.Context, payload []byte, received time.Time) error {
		calls, at = append(calls, string(payload)), received
		return nil
	}

	wf := s.NewTestWorkflowEnvironment()
	RegisterWorkflow(wf)
	RegisterInbox(wf, carry)
	wf.ExecuteWorkflow(EnvelopeWorkflowName, envelopeRecord{V: record.Version + 1, Payload: []byte("{}"),
		RecoverAfterNS: int64(time.Second), SlackQueue: SlackQueue})
	if err := wf.GetWorkflowError(); err == nil || !strings.Contains(err.Error(), record.ErrNewer.Error()) {
		t.Errorf("the workflow of an envelope from a newer gonogo: %v", err)
	}

	act := s.NewTestActivityEnvironment()
	RegisterInbox(act, carry)
	if _, err := act.ExecuteActivity(CarryOutActivity, carryRecord{V: record.Version + 1, Payload: []byte("{}")}); err == nil ||
		!strings.Contains(err.Error(), record.ErrNewer.Error()) {
		t.Errorf("CarryOut of an envelope from a newer gonogo: %v", err)
	}
	if len(calls) != 0 {
		t.Fatalf("an envelope from a newer gonogo was carried out: %q", calls)
	}

	received := time.Date(2031, 4, 2, 9, 0, 0, 123, time.UTC)
	if _, err := act.ExecuteActivity(CarryOutActivity, carryRecord{V: record.Version, Payload: []byte(`{"a":1}`),
		ReceivedUnixNano: received.UnixNano()}); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 1 || calls[0] != `{"a":1}` || !at.Equal(received) {
		t.Errorf("carried out %q received %v, want {\"a\":1} received %v", calls, at, received)
	}
}

// A "done" that arrives while CarryOut runs changes nothing: the
// workflow ends with CarryOut's result, once.
func TestDoneWhileCarryingOut(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	wf := s.NewTestWorkflowEnvironment()
	RegisterWorkflow(wf)
	calls := 0
	RegisterInbox(wf, func(context.Context, []byte, time.Time) error {
		calls++
		return errors.New("Slack is down")
	})
	// After the first attempt failed, while the next waits its backoff.
	wf.RegisterDelayedCallback(func() { wf.SignalWorkflow(sigDone, nil) }, 1500*time.Millisecond)
	wf.ExecuteWorkflow(EnvelopeWorkflowName, envelopeRecord{V: record.Version, Payload: []byte("{}"),
		RecoverAfterNS: int64(time.Second), SlackQueue: SlackQueue})
	if err := wf.GetWorkflowError(); err == nil || !strings.Contains(err.Error(), "Slack is down") {
		t.Errorf("the workflow of an envelope whose CarryOut always fails: %v", err)
	}
	if calls != carryAttempts {
		t.Errorf("CarryOut tried %d times, want %d", calls, carryAttempts)
	}
}

// A key that is a plain name is the workflow id's tail as it is; any
// other is hashed, and no two keys share an id.
func TestEnvelopeIDs(t *testing.T) {
	if got := envelopeID("1d2c-e_f.3"); got != EnvelopeIDPrefix+"1d2c-e_f.3" {
		t.Errorf("a plain key: %s", got)
	}
	seen := map[string]string{}
	for _, k := range []string{"a b", "a/b", "", strings.Repeat("a", 201), strings.Repeat("a", 200), "über", "a b "} {
		id := envelopeID(k)
		if other, ok := seen[id]; ok {
			t.Errorf("keys %q and %q share id %s", k, other, id)
		}
		seen[id] = k
		if k != strings.Repeat("a", 200) && !strings.HasPrefix(id, EnvelopeIDPrefix+"sha256:") {
			t.Errorf("key %q: id %s is not hashed", k, id)
		}
	}
}
