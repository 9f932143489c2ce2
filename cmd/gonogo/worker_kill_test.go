//go:build temporal

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/server/temporaltest"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/hangguard"
	"github.com/gonogo/gonogo/internal/temporalbackend"
	"github.com/gonogo/gonogo/internal/terminal"
	"github.com/gonogo/gonogo/storage/artifacts"
)

// cluster is a real in-process Temporal server, gonogo workers as
// subprocesses (the test binary standing in for gonogo, see TestMain) on
// one data directory and one artifact folder, and a Backend in the test
// process, as another machine's gonogo would hold one.
type cluster struct {
	t         testing.TB
	ts        *temporaltest.TestServer
	b         *temporalbackend.Backend
	env       []string
	heartbeat time.Duration
}

// newTestServer starts a real in-process Temporal server with gonogo's
// namespace set up, and an artifact folder its processes share.
func newTestServer(t testing.TB) (ts *temporaltest.TestServer, arts string, store *artifacts.Dir) {
	t.Helper()
	if tt, ok := t.(*testing.T); ok {
		ts = temporaltest.NewServer(temporaltest.WithT(tt))
	} else {
		ts = temporaltest.NewServer()
		t.Cleanup(ts.Stop)
	}
	if _, err := temporalbackend.Setup(t.Context(), ts.GetDefaultClient(), ts.GetDefaultNamespace(), temporalbackend.DefaultRetention); err != nil {
		t.Fatal(err)
	}
	arts = t.TempDir()
	store, err := artifacts.NewDir(arts)
	if err != nil {
		t.Fatal(err)
	}
	return ts, arts, store
}

func newCluster(t testing.TB, agent string, heartbeat time.Duration) *cluster {
	t.Helper()
	ts, arts, store := newTestServer(t)
	c := &cluster{t: t, ts: ts, heartbeat: heartbeat,
		b: temporalbackend.New(temporalbackend.Config{Client: ts.GetDefaultClient(), Artifacts: store, Heartbeat: heartbeat})}
	c.env = append(os.Environ(), "GONOGO_TEST_AS_MAIN=1", "USER=tester", "GONOGO_LOG_LEVEL=warn",
		"GONOGO_TEMPORAL_ADDR="+ts.GetFrontendHostPort(), "GONOGO_TEMPORAL_NAMESPACE="+ts.GetDefaultNamespace(),
		"GONOGO_DATA_DIR="+t.TempDir(), "GONOGO_ARTIFACTS=dir:"+arts,
		"GONOGO_SKILLS_DIR="+filepath.Join(exampleDir(t), "skills"), "GONOGO_RUNNER=command", "GONOGO_RUNNER_CMD="+agent)
	return c
}

// worker starts a gonogo worker subprocess; it is killed when the test
// ends.
func (c *cluster) worker() *exec.Cmd {
	c.t.Helper()
	self, err := os.Executable()
	if err != nil {
		c.t.Fatal(err)
	}
	w := exec.Command(self, "worker")
	w.Env = c.env
	var out syncBuffer
	w.Stdout, w.Stderr = &out, &out
	if err := w.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() {
		_ = w.Process.Kill()
		_ = w.Wait()
		if c.t.Failed() {
			c.t.Logf("worker %d said:\n%s", w.Process.Pid, out.String())
		}
	})
	return w
}

func (c *cluster) start(chain string) engine.RunID {
	c.t.Helper()
	cat, err := (config{}).LoadSkills(filepath.Join(exampleDir(c.t), "skills"))
	if err != nil {
		c.t.Fatal(err)
	}
	names := strings.Split(chain, " -> ")
	p, err := engine.PreflightChain(engine.ChainExpr{Source: chain, Names: names, Context: "saved searches"}, cat, engine.DefaultPolicy())
	if err != nil {
		c.t.Fatal(err)
	}
	r, err := c.b.Start(c.t.Context(), p, engine.StartOptions{StartedBy: "tester"})
	if err != nil {
		c.t.Fatal(err)
	}
	return r.ID
}

// waitStep waits until step n of run id stands as want; its bound only
// guards against a hang.
func (c *cluster) waitStep(id engine.RunID, n int, want engine.StepStatus) *engine.Run {
	c.t.Helper()
	deadline := hangguard.Deadline(c.t)
	for {
		r, err := c.b.Load(c.t.Context(), id)
		if err == nil && r.Step(n) != nil && r.Step(n).Status == want {
			return r
		}
		if time.Now().After(deadline) {
			got := "unreadable"
			if err == nil && r.Step(n) != nil {
				got = string(r.Step(n).Status)
			}
			c.t.Fatalf("step %d is %s (err %v), want %s", n, got, err, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// history is the events of run id's workflow.
func (c *cluster) history(id engine.RunID) []*historypb.HistoryEvent {
	c.t.Helper()
	var out []*historypb.HistoryEvent
	it := c.ts.GetDefaultClient().GetWorkflowHistory(c.t.Context(), string(id), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			c.t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

// activityEnd is how the cluster recorded the end of the activity named
// activityID in run id's workflow: the close event's type, and for a
// timeout which timeout it was.
func (c *cluster) activityEnd(id engine.RunID, activityID string) (enumspb.EventType, enumspb.TimeoutType) {
	c.t.Helper()
	var scheduled int64
	for _, ev := range c.history(id) {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			if ev.GetActivityTaskScheduledEventAttributes().GetActivityId() == activityID {
				scheduled = ev.GetEventId()
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
			if a := ev.GetActivityTaskTimedOutEventAttributes(); a.GetScheduledEventId() == scheduled {
				return ev.GetEventType(), a.GetFailure().GetTimeoutFailureInfo().GetTimeoutType()
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			if ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId() == scheduled {
				return ev.GetEventType(), enumspb.TIMEOUT_TYPE_UNSPECIFIED
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED:
			if ev.GetActivityTaskFailedEventAttributes().GetScheduledEventId() == scheduled {
				return ev.GetEventType(), enumspb.TIMEOUT_TYPE_UNSPECIFIED
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_CANCELED:
			if ev.GetActivityTaskCanceledEventAttributes().GetScheduledEventId() == scheduled {
				return ev.GetEventType(), enumspb.TIMEOUT_TYPE_UNSPECIFIED
			}
		}
	}
	return enumspb.EVENT_TYPE_UNSPECIFIED, enumspb.TIMEOUT_TYPE_UNSPECIFIED
}

// updateApplier is the identity of the worker that completed the workflow
// task accepting run id's first update.
func (c *cluster) updateApplier(id engine.RunID) string {
	c.t.Helper()
	who := ""
	for _, ev := range c.history(id) {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			who = ev.GetWorkflowTaskCompletedEventAttributes().GetIdentity()
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
			return who
		}
	}
	c.t.Fatalf("run %s accepted no update", id)
	return ""
}

// waitPolling waits until the worker process w polls the runs' task
// queue; its bound only guards against a hang.
func (c *cluster) waitPolling(w *exec.Cmd) {
	c.t.Helper()
	me := strconv.Itoa(w.Process.Pid) + "@"
	deadline := hangguard.Deadline(c.t)
	for {
		res, err := c.ts.GetDefaultClient().DescribeTaskQueue(c.t.Context(), temporalbackend.TaskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		if err == nil && slices.ContainsFunc(res.GetPollers(), func(p *taskqueuepb.PollerInfo) bool { return strings.HasPrefix(p.GetIdentity(), me) }) {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("worker %d never polled task queue %s (err %v)", w.Process.Pid, temporalbackend.TaskQueue, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// parentOf is the parent process of pid, from /proc/PID/stat.
func parentOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		t.Fatal(err)
	}
	return ppid
}

// A worker SIGKILLed mid-step: the step shows interrupted because its
// heartbeat timed out (the cluster's own clock: not a later sweep, not the
// step's time limit), the agent's leftovers are killed when a worker
// starts again on that machine, and a redo that another worker carries out
// completes the run.
func TestKilledWorkerLeavesItsStepInterruptedAndAnotherFinishesTheRun(t *testing.T) {
	pids := t.TempDir()
	agent := writeAgent(t, `cat >/dev/null
if [ -e `+pids+`/first ]; then printf '# PRD\n\nSaved searches, second attempt.\n'; exit 0; fi
touch `+pids+`/first
sleep 3600 &
echo $! > `+pids+`/grandchild
echo $$ > `+pids+`/agent
wait
`)
	c := newCluster(t, agent, 3*time.Second)
	workers := map[int]*exec.Cmd{}
	for range 2 {
		w := c.worker()
		workers[w.Process.Pid] = w
	}
	id := c.start("deliver-prd")
	agentPid := readPidFile(t, filepath.Join(pids, "agent"))
	grandchild := readPidFile(t, filepath.Join(pids, "grandchild"))
	host, ok := workers[parentOf(t, agentPid)]
	if !ok {
		t.Fatalf("the agent's parent %d is none of the workers", parentOf(t, agentPid))
	}
	c.waitStep(id, 1, engine.StepRunning)
	if err := host.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.waitStep(id, 1, engine.StepInterrupted)
	if ev, timeout := c.activityEnd(id, "step-1-attempt-1"); ev != enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT || timeout != enumspb.TIMEOUT_TYPE_HEARTBEAT {
		t.Errorf("the killed worker's attempt ended with %s (%s), want a heartbeat timeout", ev, timeout)
	}
	if !processAlive(grandchild) {
		t.Fatal("the agent's own child died with the worker: the test shows nothing about reaping")
	}
	c.worker() // a worker starting again on the same machine
	waitGone(t, "orphaned agent process", grandchild)

	r, err := c.b.Decide(t.Context(), id, engine.Decision{Kind: engine.DecideRedo, Actor: "tester", Step: 1, Attempt: 1, Key: "redo-after-kill"}, nil)
	if err != nil {
		t.Fatalf("redo: %v", err)
	}
	_ = r
	c.waitStep(id, 1, engine.StepWaiting)
	if _, err := c.b.Decide(t.Context(), id, engine.Decision{Kind: engine.DecideApprove, Actor: "tester", Step: 1, Attempt: 2, Key: "approve"}, nil); err != nil {
		t.Fatalf("approve: %v", err)
	}
	final := c.waitStep(id, 1, engine.StepDone)
	body, err := c.b.Artifact(t.Context(), id, 1, 2)
	if err != nil || !strings.Contains(string(body), "second attempt") {
		t.Errorf("attempt 2's artifact: %q, %v", body, err)
	}
	deadline := hangguard.Deadline(t)
	for !final.Finished() && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		final, _ = c.b.Load(t.Context(), id)
	}
	if final.State != engine.RunCompleted {
		t.Errorf("the run is %s, want completed", final.State)
	}
}

// The worker holding a waiting run's workflow in memory is SIGKILLed: a
// decision sent from another process is applied by another worker, which
// rebuilds the run from history. How soon (the sticky timeout of
// temporalbackend.WorkflowWorkerOptions, a second) is BenchmarkDecide's.
func TestDecisionReachesARunWhoseWorkerDied(t *testing.T) {
	agent := writeAgent(t, `cat >/dev/null
printf '# PRD\n\nSaved searches.\n'
`)
	c := newCluster(t, agent, 3*time.Second)
	first := c.worker()
	id := c.start("deliver-prd -> define-problem-statement")
	c.waitStep(id, 1, engine.StepWaiting)
	// The second worker polls before the first dies, as a pool does.
	second := c.worker()
	c.waitPolling(second)
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	if _, err := c.b.Decide(hangguard.Context(t), id, engine.Decision{Kind: engine.DecideApprove, Actor: "tester", Step: 1, Attempt: 1, Key: "approve-1"}, nil); err != nil {
		t.Fatalf("approve after the worker died: %v", err)
	}
	if who, want := c.updateApplier(id), strconv.Itoa(second.Process.Pid)+"@"; !strings.HasPrefix(who, want) {
		t.Errorf("the decision was applied by worker %q, want the second one (%s...)", who, want)
	}
	c.waitStep(id, 2, engine.StepWaiting)
}

// vars is the cluster's environment as a map, for in-process commands.
func (c *cluster) vars() map[string]string {
	m := map[string]string{}
	for _, kv := range c.env {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "GONOGO_") && k != "GONOGO_TEST_AS_MAIN" {
			m[k] = v
		}
	}
	return m
}

// The terminal commands work against the cluster as against bbolt: run
// starts a run there and asks at its checkpoints, runs lists it, show and
// export read it, decide decides it from another shell.
func TestTerminalCommandsOnTemporal(t *testing.T) {
	agent := writeAgent(t, `cat >/dev/null
printf '# Output of step %s\n\nSaved searches.\n' "$GONOGO_STEP"
`)
	c := newCluster(t, agent, 3*time.Second)
	c.worker()
	vars := c.vars()

	run := gonogo(t, vars, "approve\napprove\n", "run", "--chain", "deliver-prd -> define-problem-statement -- saved searches")
	if run.code != terminal.ExitOK || !strings.Contains(run.stdout, "Run complete") || !strings.Contains(run.stderr, "Started on Temporal") {
		t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s", run.code, run.stdout, run.stderr)
	}
	for _, want := range []string{"✓ Step 1 of 2: deliver-prd: approve", "✓ Step 2 of 2: define-problem-statement: approve", "# Output of step 2"} {
		if !strings.Contains(run.stdout, want) {
			t.Errorf("run's output lacks %q:\n%s", want, run.stdout)
		}
	}
	// The files it points at are on this machine, as on bbolt.
	id1 := strings.Fields(run.stdout)[2]
	if f := filepath.Join(vars["GONOGO_DATA_DIR"], "runs", id1, "02-define-problem-statement.md"); !strings.Contains(run.stdout, "Artifact: "+f) {
		t.Errorf("run's output does not point at %s:\n%s", f, run.stdout)
	} else if b, err := os.ReadFile(f); err != nil || !strings.Contains(string(b), "# Output of step 2") {
		t.Errorf("%s holds %q, %v", f, b, err)
	}

	// A second run left waiting at its first checkpoint (no decision on
	// stdin), then decided from another shell.
	wait := gonogo(t, vars, "", "run", "--chain", "deliver-prd -- saved searches")
	if wait.code != terminal.ExitWaiting {
		t.Fatalf("run with no decision: exit %d, want %d\n%s\n%s", wait.code, terminal.ExitWaiting, wait.stdout, wait.stderr)
	}
	id := strings.Fields(wait.stdout)[2] // "gonogo run ID"
	runs := gonogo(t, vars, "", "runs")
	if runs.code != terminal.ExitOK || !strings.Contains(runs.stdout, id) || !strings.Contains(runs.stdout, "waiting") {
		t.Errorf("runs: exit %d\n%s%s", runs.code, runs.stdout, runs.stderr)
	}
	dec := gonogo(t, vars, "", "decide", id, "approve")
	if dec.code != terminal.ExitOK || !strings.Contains(dec.stdout, "is completed") {
		t.Fatalf("decide: exit %d\n%s%s", dec.code, dec.stdout, dec.stderr)
	}
	show := gonogo(t, vars, "", "show", id)
	if show.code != terminal.ExitOK || !strings.Contains(show.stdout, "decision ") || !strings.Contains(show.stdout, "approve by tester") {
		t.Errorf("show: exit %d\n%s%s", show.code, show.stdout, show.stderr)
	}
	art := gonogo(t, vars, "", "show", id, "--artifact", "1")
	if art.code != terminal.ExitOK || !strings.Contains(art.stdout, "# Output of step 1") {
		t.Errorf("show --artifact: exit %d\n%s%s", art.code, art.stdout, art.stderr)
	}
	exp := gonogo(t, vars, "", "export", id, "--format", "md")
	if exp.code != terminal.ExitOK || !strings.Contains(exp.stdout, "# Audit trail of run "+id) {
		t.Errorf("export: exit %d\n%s%s", exp.code, exp.stdout, exp.stderr)
	}
}
