//go:build temporal

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/fakeslack"
	"github.com/gonogo/gonogo/internal/hangguard"
	"github.com/gonogo/gonogo/internal/temporalbackend"
)

// Two gonogo serve replicas of one Slack app on one Temporal cluster, one
// SIGKILLed under load: every envelope Slack saw acknowledged is carried
// out exactly once, every run ends as its decisions dictate, and no post
// is duplicated or missing.

// replicaPlan is what the people in run i's channel decide at step 1.
func replicaPlan(i int) string {
	switch i % 10 {
	case 3:
		return bot.ActionAbort
	case 1, 6:
		return bot.ActionRedo
	case 4:
		return bot.ActionSkip
	}
	return bot.ActionApprove
}

const (
	replicaStarter = "U0REPL001"
	replicaChain   = "chain deliver-prd -> measure-experiment-design"
)

var replicaChannelRE = regexp.MustCompile(`^C0REPL(\d{3})$`)

type replicaTest struct {
	t     *testing.T
	srv   *fakeslack.Server
	b     *temporalbackend.Backend
	c     client.Client
	env   []string
	self  string
	mu    sync.Mutex
	procs []*serveProc
	logs  []*syncBuffer

	done    map[string]bool // "channel ref" of each step attempt decided (its envelopes acked)
	acked   []string        // every envelope Slack saw acknowledged
	clicks  int
	tried   map[string]string   // the outcome of the last press on each "channel ref" not done
	sent    map[string][]string // the envelopes of each channel's presses
	killed  bool
	started map[int]bool // runs whose command was acked
	// redone counts, by "channel step", the interrupted attempts the
	// person redid: a step whose worker the cluster counted lost (a
	// heartbeat not recorded in time on a starved machine) is offered for
	// redo, and a person redoes it before going on with the plan.
	redone map[string]int
}

func newReplicaTest(t *testing.T) *replicaTest {
	t.Helper()
	ts, arts, store := newTestServer(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	srv := fakeslack.New()
	t.Cleanup(srv.Close)
	rt := &replicaTest{t: t, srv: srv, self: self, done: map[string]bool{}, tried: map[string]string{}, sent: map[string][]string{}, started: map[int]bool{}, redone: map[string]int{},
		b: temporalbackend.New(temporalbackend.Config{Client: ts.GetDefaultClient(), Artifacts: store}), c: ts.GetDefaultClient()}
	agent := writeAgent(t, `cat >/dev/null
sleep 0.$(( $(od -An -N1 -tu1 /dev/urandom) % 4 ))
printf '# %s, attempt %s\n\nA paragraph of real work for run %s.\n' "$GONOGO_SKILL" "$GONOGO_ATTEMPT" "$GONOGO_RUN_ID"`)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GONOGO_") && !strings.HasPrefix(kv, "SLACK_") {
			rt.env = append(rt.env, kv)
		}
	}
	rt.env = append(rt.env, "GONOGO_TEST_AS_MAIN=1", "USER=tester", "GONOGO_LOG_LEVEL=info",
		"GONOGO_TEMPORAL_ADDR="+ts.GetFrontendHostPort(), "GONOGO_TEMPORAL_NAMESPACE="+ts.GetDefaultNamespace(),
		"GONOGO_ARTIFACTS=dir:"+arts,
		"GONOGO_SKILLS_DIR="+filepath.Join(exampleDir(t), "skills"), "GONOGO_RUNNER=command", "GONOGO_RUNNER_CMD="+agent,
		"SLACK_API_URL="+srv.APIURL(), "SLACK_APP_TOKEN="+srv.AppToken(), "SLACK_BOT_TOKEN="+srv.BotToken(),
		"GONOGO_SLACK_UPDATES_PER_MINUTE=600",
		// 50 runs at once under -race on two cores can starve the one step
		// worker past the 10 s default; this test is about replicas, and
		// the lost-worker tests (worker_kill_test.go) keep their own.
		"GONOGO_TEMPORAL_HEARTBEAT=30s")
	if os.Getenv("GONOGO_REPLICAS_DEBUG") != "" {
		rt.env = append(rt.env, "GONOGO_LOG_LEVEL=debug")
	}
	t.Cleanup(func() {
		rt.mu.Lock()
		defer rt.mu.Unlock()
		for _, p := range rt.procs {
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			dir := os.Getenv("GONOGO_REPLICAS_DEBUG")
			for i, l := range rt.logs {
				if dir != "" {
					_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("process-%d.log", i)), []byte(l.String()), 0o600)
				}
				t.Logf("process %d said:\n%s", i, tail(l.String(), 8000))
			}
		}
	})
	return rt
}

// describe logs what the cluster says a workflow waits on.
func (rt *replicaTest) describe(wid string) {
	d, err := rt.c.DescribeWorkflowExecution(context.Background(), wid, "")
	if err != nil {
		rt.t.Logf("describe %s: %v", wid, err)
		return
	}
	rt.t.Logf("workflow %s: %s, history %d events, pending workflow task %v", wid, d.GetWorkflowExecutionInfo().GetStatus(),
		d.GetWorkflowExecutionInfo().GetHistoryLength(), d.GetPendingWorkflowTask())
	for _, a := range d.GetPendingActivities() {
		rt.t.Logf("  activity %s attempt %d state %s last failure %v", a.GetActivityType().GetName(), a.GetAttempt(), a.GetState(), a.GetLastFailure().GetMessage())
	}
	list, err := rt.c.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Query: "ExecutionStatus = 'Running'"})
	if err == nil {
		for _, ex := range list.GetExecutions() {
			rt.t.Logf("  running: %s %s", ex.GetType().GetName(), ex.GetExecution().GetWorkflowId())
		}
	}
}

// logCount counts the lines of every process's log that contain s.
func (rt *replicaTest) logCount(s string) int {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	n := 0
	for _, l := range rt.logs {
		n += strings.Count(l.String(), s)
	}
	return n
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// spawn starts gonogo with args on a data directory of its own.
func (rt *replicaTest) spawn(args ...string) *serveProc {
	rt.t.Helper()
	cmd := exec.Command(rt.self, args...)
	cmd.Env = append(slices.Clone(rt.env), "GONOGO_DATA_DIR="+rt.t.TempDir())
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		rt.t.Fatal(err)
	}
	p := &serveProc{cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	rt.mu.Lock()
	rt.procs = append(rt.procs, p)
	rt.logs = append(rt.logs, out)
	rt.mu.Unlock()
	return p
}

func (rt *replicaTest) waitAck(env string, d time.Duration) bool {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if _, err := rt.srv.WaitAck(ctx, env); err != nil {
		return false
	}
	rt.acked = append(rt.acked, env)
	return true
}

// press clicks action on cd's message and, for Redo, submits the modal it
// opens; it reports whether Slack saw every envelope acknowledged.
func (rt *replicaTest) press(cd candidate, action string) bool {
	key := cd.msg.Channel + " " + cd.ref.Value()
	views := len(rt.srv.Views())
	env, err := rt.srv.Click(replicaStarter, cd.msg.Channel, cd.msg.TS, action)
	if err != nil {
		rt.tried[key] = err.Error()
		return false // the message changed since it was read
	}
	rt.clicks++
	rt.sent[cd.msg.Channel] = append(rt.sent[cd.msg.Channel], env)
	if !rt.waitAck(env, 2*time.Second) {
		rt.tried[key] = "click " + env + " not acknowledged within 2 s"
		return false
	}
	if action != bot.ActionRedo {
		return true
	}
	var modal fakeslack.View
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = rt.srv.WaitFor(ctx, func(st *fakeslack.State) bool {
		vs := st.Views()
		for i := len(vs) - 1; i >= views; i-- {
			ref, err := bot.ParseStepRef(vs[i].PrivateMetadata)
			if vs[i].CallbackID == bot.ModalRedo && err == nil && ref == cd.ref {
				modal = vs[i]
				return true
			}
		}
		return false
	})
	if err != nil {
		rt.tried[key] = "no redo modal within 10 s of click " + env
		return false // the replica died before it opened the modal: click again
	}
	env, err = rt.srv.SubmitView(modal.User, modal.ID, map[string]string{bot.InputFeedback: "tighten the scope"})
	if err != nil {
		rt.tried[key] = err.Error()
		return false
	}
	rt.sent[cd.msg.Channel] = append(rt.sent[cd.msg.Channel], env)
	if !rt.waitAck(env, 2*time.Second) {
		rt.tried[key] = "submission " + env + " not acknowledged within 2 s"
		return false
	}
	return true
}

// decideWaiting decides every step that waits as its run's plan says, once
// (again when an envelope of the decision was never acknowledged: the
// person clicks again), and redoes every interrupted step, which the plan
// did not count. It reports how many decisions it made, and how many of
// them were such redos.
func (rt *replicaTest) decideWaiting() (n, redos int) {
	var cds []candidate
	_ = rt.srv.WaitFor(context.Background(), func(st *fakeslack.State) bool {
		cds = replicaCandidates(st)
		return true
	})
	for _, cd := range cds {
		key := cd.msg.Channel + " " + cd.ref.Value()
		if rt.done[key] {
			continue
		}
		m := replicaChannelRE.FindStringSubmatch(cd.msg.Channel)
		if m == nil {
			continue
		}
		i, _ := strconv.Atoi(m[1])
		step := fmt.Sprintf("%s %d", cd.msg.Channel, cd.ref.Step)
		action := bot.ActionApprove
		switch {
		case !slices.Contains(cd.actions, bot.ActionApprove):
			action = bot.ActionRedo
		case cd.ref.Step == 1 && cd.ref.Attempt == 1+rt.redone[step]:
			action = replicaPlan(i)
		}
		if rt.press(cd, action) {
			rt.done[key] = true
			n++
			if action == bot.ActionRedo && !slices.Contains(cd.actions, bot.ActionApprove) {
				rt.redone[step]++
				redos++
			}
		}
	}
	return n, redos
}

// logPresses logs what became of the envelopes of the presses in a
// channel, and what its people were told that only they see.
func (rt *replicaTest) logPresses(channel string) {
	t := rt.t
	envs := map[string]fakeslack.Envelope{}
	for _, e := range rt.srv.Envelopes() {
		envs[e.ID] = e
	}
	for _, id := range rt.sent[channel] {
		e := envs[id]
		var to []string
		for _, d := range e.Deliveries {
			to = append(to, fmt.Sprintf("conn %d at %s", d.Conn, d.Sent.Format("15:04:05.000")))
		}
		status := "?"
		if d, err := rt.c.DescribeWorkflowExecution(context.Background(), temporalbackend.EnvelopeIDPrefix+id, ""); err == nil {
			status = d.GetWorkflowExecutionInfo().GetStatus().String()
		} else {
			status = err.Error()
		}
		t.Logf("  press %s %s: queued %s, sent to %v, acked %v, lost %v; its inbox workflow: %s", id, e.Type,
			e.Queued.Format("15:04:05.000"), to, e.Acked, e.Lost, status)
	}
	for _, e := range rt.srv.Ephemerals(replicaStarter) {
		if e.Channel == channel {
			t.Logf("  told %s via %s at %s: %.200q", e.User, e.Via, e.Time.Format("15:04:05.000"), e.Text)
		}
	}
}

// logUndecided logs each checkpoint Slack shows that the driver did not
// see through, with what its last press ran into.
func (rt *replicaTest) logUndecided() {
	var cds []candidate
	_ = rt.srv.WaitFor(context.Background(), func(st *fakeslack.State) bool {
		cds = replicaCandidates(st)
		return true
	})
	for _, cd := range cds {
		key := cd.msg.Channel + " " + cd.ref.Value()
		if !rt.done[key] {
			t := rt.t
			t.Logf("undecided: %s (message %s): last press: %q", key, cd.msg.TS, rt.tried[key])
		}
	}
	for key, why := range rt.tried {
		if !rt.done[key] {
			rt.t.Logf("press on %s never seen through: %s", key, why)
		}
	}
}

// replicaCandidates lists the bot's messages that offer a decision.
func replicaCandidates(st *fakeslack.State) []candidate {
	var out []candidate
	for _, m := range st.Messages("") {
		if !m.FromBot {
			continue
		}
		// A checkpoint has Approve; an interrupted step only Redo and
		// Abort.
		var ref bot.StepRef
		var actions []string
		for _, b := range m.Buttons() {
			if b.ActionID != bot.ActionApprove && b.ActionID != bot.ActionRedo {
				continue
			}
			r, err := bot.ParseStepRef(b.Value)
			if err != nil {
				continue
			}
			ref, actions = r, append(actions, b.ActionID)
		}
		if len(actions) > 0 {
			out = append(out, candidate{msg: m, ref: ref, actions: actions})
		}
	}
	return out
}

// With GONOGO_LONG set, 200 runs, and a third replica started after the
// first kill takes the place of the second, which is SIGKILLed at two
// thirds.
func TestTemporalTwoServeReplicasOneKilledUnderLoad(t *testing.T) {
	runs, long := 50, os.Getenv("GONOGO_LONG") != ""
	if long {
		runs = 200
	}
	rt := newReplicaTest(t)
	rt.spawn("worker")
	a, b := rt.spawn("serve"), rt.spawn("serve")
	if err := rt.srv.WaitFor(hangguard.Context(t), func(st *fakeslack.State) bool { return st.Connections() == 2 }); err != nil {
		t.Fatalf("the two replicas did not both connect: %v", err)
	}

	// Every run is started, each in a channel of its own (posts to one
	// channel are paced to one a second).
	for i := range runs {
		// Both replicas are up: an ack must come, however late.
		env := rt.srv.SendSlashCommand(slack.SlashCommand{UserID: replicaStarter, ChannelID: fmt.Sprintf("C0REPL%03d", i), Text: replicaChain})
		if rt.waitAck(env, hangguard.Limit(t)) {
			rt.started[i] = true
		}
	}
	// Then each waiting step is decided as its plan says; replica a is
	// SIGKILLed once a third of the decisions are in.
	expected := 0
	for i := range runs {
		switch replicaPlan(i) {
		case bot.ActionAbort:
			expected++
		case bot.ActionRedo:
			expected += 3
		default:
			expected += 2
		}
	}
	// The decisions go on until the test's own deadline, less the time the
	// threads are given to settle: a loaded machine only makes them slower,
	// and a decision really lost shows in checkRuns all the same.
	deadline := hangguard.Deadline(t).Add(-settleReserve(t))
	decided := 0
	for decided < expected && time.Now().Before(deadline) {
		n, redos := rt.decideWaiting()
		decided, expected = decided+n, expected+redos
		if !rt.killed && decided >= expected/3 {
			_ = a.cmd.Process.Signal(syscall.SIGKILL)
			<-a.exited
			rt.killed = true
			t.Logf("replica a SIGKILLed after %d decisions", decided)
			a = nil
			if long {
				a = rt.spawn("serve")
			}
		}
		if long && b != nil && decided >= 2*expected/3 {
			_ = b.cmd.Process.Signal(syscall.SIGKILL)
			<-b.exited
			b = nil
			t.Logf("replica b SIGKILLed after %d decisions", decided)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, p := range []*serveProc{a, b} {
		if p == nil {
			continue
		}
		select {
		case <-p.exited:
			t.Fatalf("a replica exited: %v", p.err)
		default:
		}
	}
	if decided < expected {
		// A click whose envelopes were not all seen acknowledged in time
		// (a modal opened late on a loaded machine) may still have been
		// carried out: checkRuns says whether every run ended as planned.
		t.Logf("%d of %d decisions seen through within the deadline", decided, expected)
		rt.logUndecided()
	}
	if len(rt.started) != runs {
		t.Errorf("%d of %d commands acknowledged with both replicas up", len(rt.started), runs)
	}
	rt.checkRuns(runs)
	lost := 0
	for _, e := range rt.srv.Unacked() {
		if e.Lost {
			lost++
		}
	}
	t.Logf("%d runs, %d clicks, %d envelopes acknowledged, %d never acknowledged (sent to a killed replica); %d envelopes of a killed replica carried out by another, %d messages found in Slack rather than posted again",
		runs, rt.clicks, len(rt.acked), lost, rt.logCount("whose replica did not finish it in time"), rt.logCount("is not posted again"))
}

// settleReserve is how much of the test's time is kept for the runs'
// threads to show their end once every decision was made: a decision a
// killed replica acknowledged is carried out 30 s after it arrived, and a
// sync cut off is retried after its heartbeat timeout (20 s) with backoff.
// It is a third of what is left, and at least 3 minutes when that much is
// left; the settling itself waits until the test's deadline, so it only
// guards against a hang.
func settleReserve(t *testing.T) time.Duration {
	left := hangguard.Limit(t)
	return min(left, max(3*time.Minute, left/3))
}

// checkRuns waits for every run to end and its thread to settle, then
// checks the runs, their journals and what Slack shows.
func (rt *replicaTest) checkRuns(runs int) {
	t := rt.t
	c := &serveCampaign{t: t, srv: rt.srv}
	var shown map[engine.RunID]*slackThread
	byChannel := map[int]engine.RunID{}
	deadline := hangguard.Deadline(t)
	for {
		shown = c.slackShows()
		settled := len(shown) >= len(rt.started)
		clear(byChannel)
		for id := range shown {
			r, err := rt.b.Load(t.Context(), id)
			if err != nil || !r.Finished() {
				settled = false
				continue
			}
			notes, err := rt.b.Notes(t.Context(), id)
			if err != nil || notes["final"] == "" || notes["audit"] != "1" {
				settled = false
			}
		}
		if settled || time.Now().After(deadline) {
			// What Slack shows now: the notes read above may be newer
			// than what was shown at the top of this round.
			shown = c.slackShows()
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	for _, env := range rt.acked {
		if !rt.srv.Acked(env) {
			t.Errorf("envelope %s counted as acknowledged is not", env)
		}
	}
	for id, th := range shown {
		r, err := rt.b.Load(t.Context(), id)
		if err != nil {
			t.Errorf("run %s shown in Slack: %v", id, err)
			continue
		}
		m := replicaChannelRE.FindStringSubmatch(r.Origin.Channel)
		if m == nil {
			t.Errorf("run %s in channel %s", id, r.Origin.Channel)
			continue
		}
		i, _ := strconv.Atoi(m[1])
		if other, dup := byChannel[i]; dup {
			t.Errorf("channel %s has two runs, %s and %s: its command was carried out twice", r.Origin.Channel, other, id)
		}
		byChannel[i] = id
		rt.checkRun(i, r, th)
	}
	for i := range runs {
		if _, ok := byChannel[i]; rt.started[i] && !ok {
			t.Errorf("the acknowledged command of channel C0REPL%03d started no run Slack shows", i)
		}
	}
	if d := rt.srv.Duplicates(); len(d) > 0 {
		for _, m := range d {
			t.Errorf("posted twice: %s %s %q", m.Channel, m.TS, tail(m.Text, 80))
		}
	}
}

// checkRun checks run r of channel i against its plan and its thread.
func (rt *replicaTest) checkRun(i int, r *engine.Run, th *slackThread) {
	t := rt.t
	want := engine.RunCompleted
	if replicaPlan(i) == bot.ActionAbort {
		want = engine.RunAborted
	}
	if r.State != want {
		t.Errorf("run %s (plan %s): %s, want %s", r.ID, replicaPlan(i), r.State, want)
		rt.describe(string(r.ID))
	}
	journal, err := rt.b.Journal(t.Context(), r.ID)
	if err != nil {
		t.Errorf("run %s: journal: %v", r.ID, err)
		return
	}
	got := map[ack]int{}
	for _, ev := range journal {
		if ev.Type == engine.EvDecision && !engine.AutomaticActor(ev.Actor) {
			got[ack{ev.Step, ev.Attempt, ev.Decision}]++
		}
	}
	exp := map[ack]int{}
	switch replicaPlan(i) {
	case bot.ActionAbort:
		exp[ack{1, 1, engine.DecideAbort}] = 1
	case bot.ActionRedo:
		exp[ack{1, 1, engine.DecideRedo}] = 1
		exp[ack{1, 2, engine.DecideApprove}] = 1
		exp[ack{2, 1, engine.DecideApprove}] = 1
	case bot.ActionSkip:
		exp[ack{1, 1, engine.DecideSkip}] = 1
		exp[ack{2, 1, engine.DecideApprove}] = 1
	default:
		exp[ack{1, 1, engine.DecideApprove}] = 1
		exp[ack{2, 1, engine.DecideApprove}] = 1
	}
	exp = withRedosOfInterrupted(exp, journal)
	for k, n := range got {
		if exp[k] != n {
			t.Errorf("run %s (plan %s): decision %+v in the journal %d times, want %d", r.ID, replicaPlan(i), k, n, exp[k])
		}
	}
	for k, n := range exp {
		if got[k] == 0 {
			t.Errorf("run %s (plan %s): decision %+v missing (want %d)", r.ID, replicaPlan(i), k, n)
		}
	}
	if th.headers != 1 {
		t.Errorf("run %s: %d headers, want 1", r.ID, th.headers)
	}
	attempts := 0 // those with an artifact: an interrupted one has none
	for _, s := range r.Steps {
		for _, a := range s.Attempts {
			if a.Artifact {
				attempts++
			}
		}
		if len(s.Attempts) > 0 && th.steps[s.N] == 0 {
			t.Errorf("run %s: step %d ran and has no message in its thread", r.ID, s.N)
		}
	}
	for name, n := range th.fileCount {
		if n != 1 {
			t.Errorf("run %s: file %s attached %d times", r.ID, name, n)
		}
	}
	// Each artifact an attempt made, and the audit trail.
	if len(th.fileCount) != attempts+1 {
		t.Errorf("run %s: %d files attached (%v), want %d (each attempt's artifact and the audit trail)", r.ID, len(th.fileCount), th.fileCount, attempts+1)
		for _, c := range rt.srv.Calls("files.completeUploadExternal") {
			if c.Params.Get("channel_id") == r.Origin.Channel {
				t.Logf("  upload: thread %q files %s error %q", c.Params.Get("thread_ts"), c.Params.Get("files"), c.Error)
			}
		}
		notes, _ := rt.b.Notes(t.Context(), r.ID)
		t.Logf("  notes: %v", notes)
		for _, ev := range journal {
			t.Logf("  event %d %s at %s: step %d attempt %d %s %s %q", ev.Seq, ev.Type, ev.Time.Format("15:04:05.000"),
				ev.Step, ev.Attempt, ev.Decision, ev.Actor, ev.Reason)
		}
		// What the channel shows: a run that stopped at a checkpoint
		// nobody clicked says here whether its buttons were ever shown.
		for _, m := range rt.srv.Messages(r.Origin.Channel) {
			var buttons []string
			for _, b := range m.Buttons() {
				buttons = append(buttons, b.ActionID)
			}
			t.Logf("  message %s (thread %q): %d updates, last %s, buttons %v: %.160q", m.TS, m.ThreadTS, m.Updates,
				m.Updated.Format("15:04:05.000"), buttons, m.Rendered)
		}
		rt.logPresses(r.Origin.Channel)
	}
	if want == engine.RunCompleted && th.complete != 1 {
		t.Errorf("run %s: %d \"Run complete\" messages, want 1", r.ID, th.complete)
	}
}

// withRedosOfInterrupted is exp, the decisions a run's plan makes, with
// the person's redo of each attempt the journal shows interrupted: the
// plan's decisions on that step from that attempt on move one attempt
// later.
func withRedosOfInterrupted(exp map[ack]int, journal []engine.Event) map[ack]int {
	for _, ev := range journal {
		if ev.Type != engine.EvStepInterrupted {
			continue
		}
		next := map[ack]int{}
		for k, n := range exp {
			if k.step == ev.Step && k.attempt >= ev.Attempt {
				k.attempt++
			}
			next[k] = n
		}
		next[ack{ev.Step, ev.Attempt, engine.DecideRedo}] = 1
		exp = next
	}
	return exp
}
