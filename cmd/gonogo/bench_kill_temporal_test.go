//go:build temporal

package main

import (
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/gonogo/gonogo/engine"
)

// BenchmarkDecisionAfterWorkerKilled measures what
// TestDecisionReachesARunWhoseWorkerDied holds without a clock: how long a
// decision takes, from the call until it is answered, on a run whose
// workflow worker (a gonogo worker process) was SIGKILLed while another
// polled, against a decision on a run whose workers all live, measured in
// the same run on an in-process Temporal server. The dead worker's runs
// wait out the sticky timeout of temporalbackend.WorkflowWorkerOptions
// (a second; Temporal's default is five). Run it with -benchtime 1x: an
// iteration is the whole measurement.
func BenchmarkDecisionAfterWorkerKilled(b *testing.B) {
	const n = 5
	for b.Loop() {
		c := newCluster(b, writeAgent(b, "cat >/dev/null\nprintf '# PRD\\n\\nSaved searches.\\n'\n"), 3*time.Second)
		workers := map[string]*exec.Cmd{}
		spawn := func() {
			w := c.worker()
			c.waitPolling(w)
			workers[strconv.Itoa(w.Process.Pid)] = w
		}
		spawn()
		spawn()
		var live, killed []time.Duration
		for i := range 2 * n {
			id := c.start("deliver-prd -> define-problem-statement")
			c.waitStep(id, 1, engine.StepWaiting)
			kill := i%2 == 1
			if kill {
				pid, _, _ := strings.Cut(c.lastWorkflowTaskBy(id), "@")
				w, ok := workers[pid]
				if !ok {
					b.Fatalf("run %s was last taken by %s, none of the workers", id, pid)
				}
				if err := w.Process.Signal(syscall.SIGKILL); err != nil {
					b.Fatal(err)
				}
				_ = w.Wait()
				delete(workers, pid)
				spawn()
			}
			sent := time.Now()
			if _, err := c.b.Decide(b.Context(), id, engine.Decision{Kind: engine.DecideApprove, Actor: "tester", Step: 1, Attempt: 1,
				Key: "approve-" + string(id)}, nil); err != nil {
				b.Fatal(err)
			}
			took := time.Since(sent)
			if kill {
				killed = append(killed, took)
			} else {
				live = append(live, took)
			}
			c.waitStep(id, 2, engine.StepWaiting)
		}
		slices.Sort(live)
		slices.Sort(killed)
		b.Logf("decisions on a live worker's runs %v, on a killed one's %v", live, killed)
		base, lost := live[len(live)/2], killed[len(killed)/2]
		b.ReportMetric(float64(base)/float64(time.Millisecond), "live-decide-p50-ms")
		b.ReportMetric(float64(lost)/float64(time.Millisecond), "killed-decide-p50-ms")
		b.ReportMetric(float64(lost)/float64(max(base, 1)), "killed/live")
	}
	b.ReportMetric(0, "ns/op") // an op is the whole measurement
}

// lastWorkflowTaskBy is the identity of the worker that completed run
// id's latest workflow task: the one that holds the run in memory.
func (c *cluster) lastWorkflowTaskBy(id engine.RunID) string {
	c.t.Helper()
	who := ""
	for _, ev := range c.history(id) {
		if ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED {
			who = ev.GetWorkflowTaskCompletedEventAttributes().GetIdentity()
		}
	}
	return who
}
