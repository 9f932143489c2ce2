//go:build temporal

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/server/temporaltest"

	"github.com/gonogo/gonogo/internal/hangguard"
	"github.com/gonogo/gonogo/internal/temporalbackend"
	"github.com/gonogo/gonogo/internal/terminal"
)

func TestTemporalSetupIsSafeToRepeat(t *testing.T) {
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	vars := baseVars(t)
	vars["GONOGO_TEMPORAL_ADDR"] = ts.GetFrontendHostPort()
	vars["GONOGO_TEMPORAL_NAMESPACE"] = "gonogo-cli"

	before := gonogo(t, vars, "", "doctor", "--dry-run")
	if before.code != terminal.ExitRefused || !strings.Contains(before.stdout, "namespace gonogo-cli does not exist: run gonogo temporal setup") {
		t.Errorf("doctor before setup: exit %d\n%s%s", before.code, before.stdout, before.stderr)
	}
	first := gonogo(t, vars, "", "temporal", "setup", "--retention", "72h")
	if first.code != terminal.ExitOK || !strings.Contains(first.stdout, "namespace gonogo-cli: created (finished runs kept 3 days)") ||
		!strings.Contains(first.stdout, "search attributes: added GonogoChannel, GonogoStarter, GonogoState") {
		t.Fatalf("first setup: exit %d\nstdout %s\nstderr %s", first.code, first.stdout, first.stderr)
	}
	again := gonogo(t, vars, "", "temporal", "setup")
	if again.code != terminal.ExitOK || !strings.Contains(again.stdout, "namespace gonogo-cli: already there") ||
		!strings.Contains(again.stdout, "search attributes: all there") {
		t.Fatalf("second setup: exit %d\nstdout %s\nstderr %s", again.code, again.stdout, again.stderr)
	}
	after := gonogo(t, vars, "", "doctor", "--dry-run")
	if after.code != terminal.ExitOK || !strings.Contains(after.stdout, "namespace gonogo-cli: ready; no gonogo worker takes steps now") {
		t.Errorf("doctor after setup: exit %d\n%s%s", after.code, after.stdout, after.stderr)
	}
}

// A worker polls both of gonogo's task queues until it is stopped.
func TestWorkerPollsGonogosQueuesUntilStopped(t *testing.T) {
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	vars := baseVars(t)
	vars["GONOGO_TEMPORAL_ADDR"] = ts.GetFrontendHostPort()
	vars["GONOGO_TEMPORAL_NAMESPACE"] = ts.GetDefaultNamespace()
	vars["GONOGO_LOG_LEVEL"] = "warn"

	ctx, stop := context.WithCancel(context.Background())
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- realMain(ctx, env{args: []string{"worker", "--runner", "command", "--runner-cmd", "/bin/true"},
			stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
			lookup: envconfig.MapLookuper(vars), getenv: func(k string) string { return vars[k] }})
	}()
	c := ts.GetDefaultClient()
	for _, q := range []string{temporalbackend.TaskQueue, temporalbackend.StepQueue} {
		deadline := hangguard.Deadline(t)
		for {
			res, err := c.DescribeTaskQueue(t.Context(), q, taskQueueKind(q))
			if err == nil && len(res.GetPollers()) > 0 {
				break
			}
			if time.Now().After(deadline) {
				stop()
				t.Fatalf("no poller on task queue %s (err %v); worker said:\n%s", q, err, errb.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	stop()
	select {
	case code := <-done:
		if code != terminal.ExitOK {
			t.Errorf("worker exit %d, stderr:\n%s", code, errb.String())
		}
	case <-time.After(hangguard.Limit(t)):
		t.Fatal("the worker did not stop once its context ended")
	}
	if !strings.Contains(errb.String(), "runs from task queue gonogo, steps from gonogo-steps") {
		t.Errorf("the worker's start line is missing:\n%s", errb.String())
	}
}

// taskQueueKind is what polls q: workflow tasks on gonogo's run queue,
// activities on its step queue.
func taskQueueKind(q string) enumspb.TaskQueueType {
	if q == temporalbackend.StepQueue {
		return enumspb.TASK_QUEUE_TYPE_ACTIVITY
	}
	return enumspb.TASK_QUEUE_TYPE_WORKFLOW
}
