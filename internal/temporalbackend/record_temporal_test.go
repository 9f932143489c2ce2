//go:build temporal

package temporalbackend

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/proto"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/hangguard"
)

var update = flag.Bool("update", false, "record the workflow histories in testdata")

// recorded are the runs whose histories testdata keeps: a run carried to
// its end through every kind of decision, one left waiting for a decision
// (the case a new release must not break), one cancelled and aborted
// while steps ran, one whose workflow was cancelled through Temporal, the
// latest workflow of a run that continued as new (its input is a whole
// journal and its artifact keys), a run with a Slack thread (its syncs,
// its notes, and its workflow open until its thread is done), and an
// envelope that its replica never marked done, carried out through the
// Slack queue on a second attempt; and a best-of step whose two
// candidates ran at once and one was picked.
var recorded = []struct {
	name string
	run  func(e *env) engine.RunID
}{
	{"completed", func(e *env) engine.RunID {
		id := e.start()
		waiting(e.t, e.b, id, 1, 1)
		e.decide(id, 1, engine.DecideRedo, "name the metrics", nil)
		waiting(e.t, e.b, id, 1, 2)
		e.decide(id, 1, engine.DecideEdit, "", []byte("# PRD\n\nEdited by the team.\n"))
		waiting(e.t, e.b, id, 2, 1)
		e.decide(id, 2, engine.DecideSkip, "", nil)
		ended(e.t, e.b, id)
		return id
	}},
	{"waiting", func(e *env) engine.RunID {
		id := e.start()
		waiting(e.t, e.b, id, 1, 1)
		e.decide(id, 1, engine.DecideApprove, "", nil)
		waiting(e.t, e.b, id, 2, 1)
		e.decide(id, 2, engine.DecideRedo, "shorter", nil)
		waiting(e.t, e.b, id, 2, 2)
		return id
	}},
	{"continued-as-new", func(e *env) engine.RunID {
		e.b = New(e.config(func(c *Config) { c.HistoryLimit = 40 }))
		id := e.start()
		waiting(e.t, e.b, id, 1, 1)
		for a := 1; a <= 4; a++ {
			e.decide(id, 1, engine.DecideRedo, "", nil)
			waiting(e.t, e.b, id, 1, a+1)
		}
		return id
	}},
	{"workflow-cancelled", func(e *env) engine.RunID {
		e.t.Cleanup(e.runner.holdSkill("deliver-prd"))
		id := e.start()
		<-e.runner.started
		if err := e.ts.GetDefaultClient().CancelWorkflow(e.t.Context(), string(id), ""); err != nil {
			e.t.Fatal(err)
		}
		ended(e.t, e.b, id)
		return id
	}},
	{"slack-sync", func(e *env) engine.RunID {
		// A run with a Slack thread: syncs after each change, and a
		// finished run's workflow open until its thread is done.
		fake := &fakeSlack{allowDone: true}
		e.b = New(e.config(func(c *Config) { c.SlackQueue = e.q.slack }))
		fake.b = e.b.(*Backend)
		e.worker(e.q.slack, func(r worker.Registry) { RegisterSlack(r, fake) })
		id := e.start()
		waiting(e.t, e.b, id, 1, 1)
		if err := fake.b.SetNotes(e.t.Context(), id, map[string]string{"thread": "1.1"}); err != nil {
			e.t.Fatal(err)
		}
		e.decide(id, 1, engine.DecideApprove, "", nil)
		waiting(e.t, e.b, id, 2, 1)
		e.decide(id, 2, engine.DecideApprove, "", nil)
		ended(e.t, e.b, id)
		workflowClosed(e.t, e.ts.GetDefaultClient(), id)
		return id
	}},
	{"cancelled-aborted", func(e *env) engine.RunID {
		e.t.Cleanup(e.runner.holdSkill("deliver-prd"))
		id := e.start()
		<-e.runner.started
		if err := e.b.Cancel(e.t.Context(), id, 1, 1, "U-bob"); err != nil {
			e.t.Fatal(err)
		}
		waiting(e.t, e.b, id, 1, 1)
		e.decide(id, 1, engine.DecideRedo, "", nil)
		<-e.runner.started
		if _, err := e.b.Abort(e.t.Context(), id, "U-ana"); err != nil {
			e.t.Fatal(err)
		}
		ended(e.t, e.b, id)
		return id
	}},
	{"best-of-pick", func(e *env) engine.RunID {
		id := e.startBestOf(false)
		r := picking(e.t, e.b, id, 1, 1)
		d, err := engine.PickDecision(r, 1, 1, "U-ana", "")
		if err != nil {
			e.t.Fatal(err)
		}
		d.Key = "pick-1"
		if _, err := e.b.Decide(e.t.Context(), id, d, nil); err != nil {
			e.t.Fatal(err)
		}
		waiting(e.t, e.b, id, 2, 1)
		return id
	}},
	{"envelope-recovered", func(e *env) engine.RunID {
		slack := &slackReplica{calls: map[string][]carried{}, fail: map[string]int{"E-recorded": 1}}
		e.worker(e.q.slack, func(r worker.Registry) { RegisterInbox(r, slack.carry) })
		in := NewInbox(e.ts.GetDefaultClient(), InboxConfig{RecoverAfter: testRecoverAfter, Key: envelopeKey,
			TaskQueue: e.q.flows, SlackQueue: e.q.slack})
		if _, err := in.Record(e.t.Context(), envelope("E-recorded", "/gonogo start plan.md")); err != nil {
			e.t.Fatal(err)
		}
		if err := e.ts.GetDefaultClient().GetWorkflow(e.t.Context(), envelopeID("E-recorded"), "").Get(e.t.Context(), nil); err != nil {
			e.t.Fatal(err)
		}
		return engine.RunID(envelopeID("E-recorded"))
	}},
}

// recordedScenarios are the conformance scenarios whose histories
// testdata keeps too: timers (a retry's backoff, decision deadlines), a
// pause, an agent's rate limit waited out, and a decompose step expanded on
// an edit (an activity run by an update).
var recordedScenarios = []string{"retry-with-backoff", "decision-timeout-aborts", "pause-while-running", "rate-limit-wait", "decompose-at-a-checkpoint"}

func init() {
	for _, sc := range scenarios {
		if slices.Contains(recordedScenarios, sc.name) {
			run := sc.run
			recorded = append(recorded, struct {
				name string
				run  func(e *env) engine.RunID
			}{sc.name, func(e *env) engine.RunID {
				id := run(e)
				ended(e.t, e.b, id)
				return id
			}})
		}
	}
}

// TestRecordHistories records, with -update, the workflow histories the
// untagged TestReplayRecordedHistories replays. Without -update it
// checks that each recording still replays against a fresh history.
func TestRecordHistories(t *testing.T) {
	for _, rc := range recorded {
		t.Run(rc.name, func(t *testing.T) {
			e := temporalEnv(t)
			id := rc.run(e)
			h := settledHistory(t, e.ts.GetDefaultClient(), id)
			b, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(h)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "history-"+rc.name+".json")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			tmp := filepath.Join(t.TempDir(), filepath.Base(path))
			if err := os.WriteFile(tmp, b, 0o644); err != nil {
				t.Fatal(err)
			}
			replayFile(t, tmp)
		})
	}
}

// TestLargeArtifactsStayOutOfHistory: with 1 MiB artifacts (and a 1 MiB
// edit), no payload in the run's history reaches 64 KiB: bodies go to the
// ArtifactStore, history keeps their keys.
func TestLargeArtifactsStayOutOfHistory(t *testing.T) {
	e := temporalEnv(t)
	e.runner.mu.Lock()
	e.runner.pad = 1 << 20
	e.runner.mu.Unlock()
	id := e.startWith(func(p *engine.Plan, _ *engine.StartOptions) { p.Flags.Thread = true })
	waiting(t, e.b, id, 1, 1)
	edit := []byte(strings.Repeat("An edited line of the artifact.\n", (1<<20)/32))
	e.decide(id, 1, engine.DecideEdit, "", edit)
	waiting(t, e.b, id, 2, 1)
	got, err := e.b.Artifact(t.Context(), id, 2, 1)
	if err != nil || len(got) < 1<<20 {
		t.Fatalf("step 2's artifact: %d bytes, %v", len(got), err)
	}
	e.decide(id, 2, engine.DecideApprove, "", nil)
	ended(t, e.b, id)
	it := e.ts.GetDefaultClient().GetWorkflowHistory(t.Context(), string(id), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	largest := 0
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if n := proto.Size(ev); n > largest {
			largest = n
		}
	}
	if largest >= 64<<10 {
		t.Errorf("a history event of %d bytes", largest)
	}
	t.Logf("largest history event: %d bytes", largest)
}

// settledHistory is the history of the run's latest workflow (a run that
// continued as new has a new one) once its workflow has done what it had
// to: no workflow task is waiting or under way.
func settledHistory(t *testing.T, c client.Client, id engine.RunID) *historypb.History {
	t.Helper()
	deadline := hangguard.Deadline(t)
	for {
		it := c.GetWorkflowHistory(t.Context(), string(id), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		h := &historypb.History{}
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			h.Events = append(h.Events, ev)
		}
		n := len(h.Events)
		busy := n < 3 || h.Events[n-1].GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED ||
			h.Events[n-1].GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED
		if !busy || time.Now().After(deadline) {
			return h
		}
		time.Sleep(50 * time.Millisecond)
	}
}
