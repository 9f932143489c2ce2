package bot_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/fakeslack"
	"github.com/gonogo/gonogo/parse"
	"github.com/gonogo/gonogo/storage"
)

// ---- memory per run ----

// BenchmarkServeMemoryPerRun measures the heap `gonogo serve` holds per
// run: a store, an engine.Service and a bot connected to the fake Slack,
// in one process. The target is under 20 KB per waiting run.
//
//   - waiting: 2,000 checkpointed runs of three steps, each waiting at its
//     first checkpoint, its thread fully posted (header, step message with
//     its buttons, the artifact attached);
//   - finished: 1,000 one-step runs approved to completion, their threads
//     finished. A long-running serve accumulates these; ideally they cost
//     only their line in the store's listing cache.
//
// The fake Slack shares the heap, so what it holds is taken out: the heap
// is read with gonogo running, then again once gonogo has stopped and
// nothing references it, with the fake Slack still holding every message.
// The floor, measured in the same run, is the same process holding no run
// (gonogo's heap just after it connected). bytes/run is (gonogo's heap with
// the runs - floor) / runs; what bbolt keeps in its memory map is not heap
// and is not counted. Each loop iteration is one reading of the heap
// (after a full collection); the smallest reading counts.
func BenchmarkServeMemoryPerRun(b *testing.B) {
	b.Run("waiting", func(b *testing.B) { benchmarkServeMemory(b, 2000, false) })
	b.Run("finished", func(b *testing.B) { benchmarkServeMemory(b, 1000, true) })
}

func benchmarkServeMemory(b *testing.B, n int, finish bool) {
	ctx := context.Background()
	srv := newSlack(b)
	slackAlone := liveHeapBytes()

	// Posts are not paced, nor updates held by the chat.update budget:
	// pacing changes when threads are posted, not what gonogo keeps.
	s := startServe(b, srv, b.TempDir(), instantAgent{}, 16, func(c *bot.Config) {
		c.PostInterval, c.UpdateWindow, c.MessageUpdateInterval = time.Nanosecond, time.Millisecond, time.Nanosecond
	})
	settle(srv, 100*time.Millisecond, 5*time.Second)
	floor := liveHeapBytes() - slackAlone

	expr := "deliver-prd -> deliver-user-stories -> measure-experiment-design -- memory"
	if finish {
		expr = "deliver-prd -- memory"
	}
	plan := chainPlan(b, expr)
	ids := make([]engine.RunID, 0, n)
	for i := range n {
		r, err := startRetrying(ctx, s.svc, plan, engine.StartOptions{StartedBy: starter, Origin: engine.Origin{Channel: channel}, Key: fmt.Sprintf("mem-%d", i)})
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	// Every thread is posted up to the checkpoint: the artifact attached.
	waitNotes(b, s, ids, "file/1/1")
	if finish {
		for _, id := range ids {
			if _, err := s.svc.Decide(ctx, id, engine.Decision{Kind: engine.DecideApprove, Actor: starter, Step: 1, Attempt: 1}, nil); err != nil {
				b.Fatal(err)
			}
		}
		waitNotes(b, s, ids, "final")
	} else {
		for _, id := range ids[:10] {
			if r, err := s.svc.Load(ctx, id); err != nil || r.State != engine.RunWaiting {
				b.Fatalf("run %s is not waiting at its checkpoint: %v %v", id, r, err)
			}
		}
	}
	settle(srv, 200*time.Millisecond, 10*time.Second)
	ids = nil

	withRuns := liveHeapBytes()
	for b.Loop() {
		// One collection a reading: the readings before this one already
		// emptied what outlives one collection.
		runtime.GC()
		withRuns = min(withRuns, heapAlloc())
	}
	b.StopTimer()
	s.stop(b)
	slackWithRuns := liveHeapBytes()
	held := float64(withRuns) - float64(slackWithRuns)
	if held <= float64(floor) {
		// What gonogo held was not let go when it stopped: something still
		// references it, and the fake Slack's share cannot be told apart.
		b.Fatalf("gonogo's heap with %d runs (%.0f bytes) is not above its floor (%d bytes)", n, held, floor)
	}
	perRun := (held - float64(floor)) / float64(n)
	b.ReportMetric(perRun, "bytes/run")
	b.ReportMetric(perRun/(20<<10), "bytes/run/20KB")
	b.ReportMetric(float64(floor), "floor-bytes")
	b.ReportMetric(float64(slackWithRuns-slackAlone)/float64(n), "fakeslack-bytes/run")
	b.ReportMetric(0, "ns/op") // an op is one reading of the heap
}

// instantAgent answers every step at once with a short artifact. Unlike
// scriptedRunner it keeps no record of the jobs, whose prompts would be
// counted as gonogo's memory.
type instantAgent struct{}

func (instantAgent) Run(_ context.Context, job engine.Job, _ func(engine.Progress)) engine.Outcome {
	return engine.Outcome{Artifact: []byte(fmt.Sprintf("# %s\n\nThe artifact of step %d, attempt %d.\n", job.Skill, job.Step, job.Attempt)), CostUSD: 0.01}
}

// liveHeapBytes returns the bytes of live heap objects. Two collections:
// the second frees what the first only made unreachable (sync.Pool
// victims, finalized objects).
func liveHeapBytes() uint64 {
	runtime.GC()
	runtime.GC()
	return heapAlloc()
}

// heapAlloc returns the bytes of heap objects not yet freed.
func heapAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// waitNotes waits until the bot has noted key for every run.
func waitNotes(b *testing.B, s *liveServe, ids []engine.RunID, key string) {
	b.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(60 * time.Second)
	next := 0
	for next < len(ids) {
		notes, err := s.svc.Notes(ctx, ids[next])
		if err != nil {
			b.Fatal(err)
		}
		if notes[key] != "" {
			next++
			continue
		}
		if time.Now().After(deadline) {
			b.Fatalf("the bot noted %q for %d of %d runs in a minute", key, next, len(ids))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// startRetrying starts a run, trying again when the new run's id was
// already taken: ids are the second plus 24 random bits, so among the
// thousands of runs started in the same second here two can draw the same
// id, and the store refuses the second as stale.
func startRetrying(ctx context.Context, svc *engine.Service, p engine.Plan, opt engine.StartOptions) (*engine.Run, error) {
	for try := 0; ; try++ {
		r, err := svc.Start(ctx, p, opt)
		if err == nil || !errors.Is(err, engine.ErrStale) || try == 3 {
			return r, err
		}
	}
}

func chainPlan(b *testing.B, expr string) engine.Plan {
	b.Helper()
	chain, err := parse.Chain(expr)
	if err != nil {
		b.Fatal(err)
	}
	plan, err := engine.PreflightChain(chain, harnessCatalog(), engine.DefaultPolicy())
	if err != nil {
		b.Fatal(err)
	}
	return plan
}

func harnessCatalog() engine.Catalog {
	var skills []engine.Skill
	for _, n := range harnessSkills {
		skills = append(skills, engine.Skill{Name: n, Instructions: "Write the " + n + " artifact."})
	}
	return parse.NewCatalog(skills)
}

// liveServe is `gonogo serve` in process: a store, an engine.Service on
// the given runner and a bot on the fake Slack. Unlike the harness, it
// takes any runner, and once stopped it lets go of all three, so that
// what they held can be collected.
type liveServe struct {
	db     *storage.DB
	svc    *engine.Service
	bot    *bot.Bot
	cancel context.CancelFunc
	done   chan struct{}
}

func startServe(b *testing.B, srv *fakeslack.Server, dir string, r engine.Runner, parallel int, configure func(c *bot.Config)) *liveServe {
	return startServeOn(b, srv, dir, serveSetup{runner: r, parallel: parallel, configure: configure})
}

// serveSetup is how startServeOn builds gonogo serve.
type serveSetup struct {
	runner   engine.Runner
	parallel int
	// fsync makes the store fsync its commits, as gonogo serve does;
	// inbox keeps the bot's envelopes in an inbox in the same data
	// directory, as gonogo serve does.
	fsync, inbox bool
	configure    func(c *bot.Config)
}

func startServeOn(b testing.TB, srv *fakeslack.Server, dir string, set serveSetup) *liveServe {
	b.Helper()
	db, err := storage.Open(dir, storage.Options{NoSync: !set.fsync})
	if err != nil {
		b.Fatal(err)
	}
	n := &lateNotifier{}
	svc := engine.NewService(engine.ServiceConfig{Store: db, Catalog: harnessCatalog(), Runner: set.runner, Notifier: n, MaxParallel: set.parallel,
		Members: n.member})
	cfg := bot.Config{
		AppToken: srv.AppToken(), BotToken: srv.BotToken(), APIURL: srv.APIURL(),
		Catalog: harnessCatalog(), Policy: engine.DefaultPolicy(),
	}
	if set.inbox {
		in, err := storage.OpenInbox(dir, storage.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { in.Close() })
		cfg.Inbox = in
	}
	set.configure(&cfg)
	bt, err := bot.New(cfg, svc)
	if err != nil {
		b.Fatal(err)
	}
	n.set(bt)
	ctx, cancel := context.WithCancel(context.Background())
	s := &liveServe{db: db, svc: svc, bot: bt, cancel: cancel, done: make(chan struct{})}
	// Counted before the bot starts: one that connects at once must not
	// be counted as there before it.
	before := srv.Connections()
	svcDone := make(chan struct{})
	go func() { defer close(svcDone); _ = svc.Run(ctx) }()
	go func() {
		defer close(s.done)
		defer func() { <-svcDone }()
		if err := bt.Run(ctx); err != nil && ctx.Err() == nil {
			b.Errorf("bot.Run: %v", err)
		}
	}()
	b.Cleanup(func() { s.stop(b) })
	if err := srv.WaitFor(ctxT(b), func(st *fakeslack.State) bool { return st.Connections() > before && st.Connected() }); err != nil {
		b.Fatalf("the bot did not connect: %v", err)
	}
	return s
}

// stop stops the bot and the engine, closes the store and drops them.
func (s *liveServe) stop(b testing.TB) {
	if s.db == nil {
		return
	}
	s.cancel()
	<-s.done // the bot's Run, then the engine's, have returned
	if err := s.db.Close(); err != nil {
		b.Errorf("close the store: %v", err)
	}
	s.db, s.svc, s.bot = nil, nil, nil
}

// ---- Slack Web API calls per step ----

// BenchmarkSlackCallsPerStep drives runs of three checkpointed steps
// through the fake Slack, as people use gonogo: each run is started with a
// slash command in its own channel, and its starter clicks Approve as soon
// as a checkpoint shows. The agent runs each step for a while and reports
// live progress as it goes, which the thread's loading status shows
// (assistant.threads.setStatus). Every Web API call the bot makes is
// counted and divided by the number of steps (a run's header, final
// message and audit trail are shared among its steps); the process's own
// calls (auth.test, apps.connections.open) are left out. The upload of a
// file is three calls (files.getUploadURLExternal, the bytes to the
// upload URL, files.completeUploadExternal): upload-calls/step counts the
// artifacts', audit-calls/step the audit trail's. The bytes go to
// files.slack.com, which is no Web API method and spends none of its rate
// tiers. Nor does a post to a click's response_url (hooks.slack.com), which
// shows the decision in the clicked message (response-url/step).
// webapi-calls/step, what issue #11's target of at most 5 counts, leaves
// both out; calls/step counts every request.
//
// Rates are measured on chat.update, app-wide (Slack's published limit for
// chat.update is Tier 3, about 50 a minute for the whole app in a
// workspace, so that is the figure that counts) and per message, and on
// chat.postMessage per channel (about one a second). All steps run at once
// (GONOGO_MAX_PARALLEL is the number of runs), the worst case for the
// app-wide rate. max-checkpoint-lag-ms is the longest a checkpoint's
// buttons took to show after its step ended: what the chat.update budget
// costs when the runs ask for more updates than the tier allows.
//
//   - defaults: the bot's default intervals (a thread's status refreshed
//     with live progress at most every 15 s, posts to a channel paced a
//     second apart, chat.update budget of 50 a minute, a step's message
//     posted after a quiet start of 3 s); steps of 1 s with a progress
//     report every 200 ms, so each step's message is posted once, at its
//     checkpoint. Every rate is per real minute. The budget
//     spreads the updates, so this takes a minute or two.
//   - long-steps: one-minute steps with a progress report every second,
//     run 50 times faster than real: every interval and duration is
//     divided by 50 (progress interval 300 ms, post pacing 20 ms, budget
//     window 1.2 s, quiet start 60 ms, steps 1.2 s, progress every 20 ms) and rates are
//     counted in windows of 1.2 s, a minute in the scaled time. This is
//     the steady state of a long step, which the defaults case is too
//     short to reach.
//
// TestUpdatesStayInsideSlacksTier asserts the tier on the defaults
// scenario run twenty times faster.
//
// Each loop iteration is one analysis of the recorded calls.
func BenchmarkSlackCallsPerStep(b *testing.B) {
	b.Run("defaults", func(b *testing.B) {
		benchmarkSlackCalls(b, callsScenario{runs: 8, scale: 1, step: time.Second, every: 200 * time.Millisecond})
	})
	b.Run("long-steps", func(b *testing.B) {
		benchmarkSlackCalls(b, callsScenario{runs: 8, scale: 50, step: time.Minute, every: time.Second})
	})
}

// callsScenario is a run of the calls benchmark, in real time: the bot's
// intervals and the agent's timings are divided by scale.
type callsScenario struct {
	runs  int
	scale int
	step  time.Duration // how long an agent works on a step
	every time.Duration // between two progress reports
}

func (c callsScenario) scaled(d time.Duration) time.Duration { return d / time.Duration(c.scale) }

const stepsPerRun = 3

func benchmarkSlackCalls(b *testing.B, sc callsScenario) {
	calls, elapsed, lag := runCallsScenario(b, sc)
	var st callStats
	for b.Loop() {
		st = analyseCalls(calls, sc.scaled(time.Minute), sc.scaled(time.Second))
	}
	b.StopTimer()
	steps := float64(sc.runs * stepsPerRun)
	for _, m := range []struct{ unit, method string }{
		{"postMessage/step", "chat.postMessage"},
		{"update/step", "chat.update"},
		{"postEphemeral/step", "chat.postEphemeral"},
		{"upload-calls/step", "upload"},
		{"status/step", "assistant.threads.setStatus"},
		{"session/step", "agents.sessions.setStatus"},
		{"audit-calls/step", "audit"},
		{"other-calls/step", "other"},
		{"upload-url/step", "upload_url"},
		{"response-url/step", "response_url"},
		{"webapi-calls/step", "webapi"},
		{"calls/step", "all"},
	} {
		b.ReportMetric(float64(st.count[m.method])/steps, m.unit)
	}
	b.ReportMetric(float64(st.peakPerMessage), "peak-updates/min/msg")
	// In real time also when time is scaled: the closest updates follow
	// one another as fast as the run changes, at no interval of the bot's.
	b.ReportMetric(float64(st.minGap)/float64(time.Millisecond), "min-update-gap-ms")
	b.ReportMetric(float64(st.peakAppWide), "peak-updates/min/app")
	b.ReportMetric(float64(st.peakAppWide)/tier3, "peak-updates/min/app/tier3")
	b.ReportMetric(float64(st.peakPostsPerChannel), "peak-posts/s/channel")
	b.ReportMetric(float64(lag)/float64(time.Millisecond)*float64(sc.scale), "max-checkpoint-lag-ms")
	b.ReportMetric(elapsed.Seconds()*float64(sc.scale), "scenario-s")
	b.ReportMetric(0, "ns/op") // an op is one analysis of the calls
}

// tier3 is Slack's published rate for chat.update: about 50 a minute for
// the whole app in a workspace.
const tier3 = 50

// TestUpdatesStayInsideSlacksTier runs the many-one-second-steps scenario
// (8 runs of three checkpointed steps at once, progress every 200 ms, each
// checkpoint approved the moment it shows), twenty times faster than real
// time: every interval of the bot's, its chat.update budget window among
// them, and every duration of the agent's is divided by 20, and rates are
// counted in windows of 3 s, a minute in the scenario's time. The bot's
// chat.update calls must stay within Slack's Tier 3 (50 a minute) in every
// window, and once the runs are over every step message must show its
// final state: updates put off are coalesced, never lost.
func TestUpdatesStayInsideSlacksTier(t *testing.T) {
	sc := callsScenario{runs: 8, scale: 20, step: time.Second, every: 200 * time.Millisecond}
	srv, calls, _, lag := runCallsScenarioOn(t, sc) // which waits for every step message to show its approval
	st := analyseCalls(calls, sc.scaled(time.Minute), sc.scaled(time.Second))
	t.Logf("chat.update: %d calls, peak %d a minute app-wide (tier: %d), %d a minute on one message; checkpoints lagged their step's end by %v at most (scenario time)",
		st.count["chat.update"], st.peakAppWide, tier3, st.peakPerMessage, lag*time.Duration(sc.scale))
	if st.peakAppWide > tier3 {
		t.Errorf("%d chat.update calls within one minute (scenario time); Slack's tier allows %d", st.peakAppWide, tier3)
	}
	if st.count["chat.update"] == 0 {
		t.Fatal("no chat.update call was recorded: the scenario measured nothing")
	}
	steps := 0
	for _, m := range srv.Messages("") {
		if m.FromBot && strings.HasPrefix(m.Text, "*Step ") {
			steps++
		}
	}
	if steps != sc.runs*stepsPerRun {
		t.Errorf("%d step messages, want %d: the scenario did not run as written", steps, sc.runs*stepsPerRun)
	}
}

// runCallsScenario runs a calls scenario and returns every Web API call
// the bot made and how long the scenario took.
func runCallsScenario(b *testing.B, sc callsScenario) ([]fakeslack.Call, time.Duration, time.Duration) {
	_, calls, elapsed, lag := runCallsScenarioOn(b, sc)
	return calls, elapsed, lag
}

func runCallsScenarioOn(tb testing.TB, sc callsScenario) (*fakeslack.Server, []fakeslack.Call, time.Duration, time.Duration) {
	srv := newSlack(tb)
	finished := &finishLog{at: map[string]time.Time{}}
	r := progressRunner{step: sc.scaled(sc.step), every: sc.scaled(sc.every), finished: finished}
	startServeOn(tb, srv, tb.TempDir(), serveSetup{runner: r, parallel: sc.runs, configure: func(c *bot.Config) {
		c.PostInterval = sc.scaled(bot.DefaultPostInterval)
		c.ProgressInterval = sc.scaled(bot.DefaultProgressInterval)
		c.QuietStart = sc.scaled(bot.DefaultQuietStart)
		c.UpdateWindow = sc.scaled(bot.DefaultUpdateWindow)
		c.MessageUpdateInterval = sc.scaled(bot.DefaultMessageUpdateInterval)
		// The messages offer Open (web pages served): a button, which
		// costs no call until someone presses it.
		c.SignIn = func(context.Context, string, string, engine.RunID) (string, error) {
			return "https://gonogo.example.com/signin?token=t", nil
		}
	}})
	settle(srv, 100*time.Millisecond, 5*time.Second)
	begin := time.Now()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clicks := make(chan int, 1)
	go func() { clicks <- approveCheckpoints(ctx, tb, srv) }()
	for i := range sc.runs {
		env := srv.SendSlashCommand(slack.SlashCommand{Command: "/gonogo", UserID: starter, ChannelID: callsChannel(i),
			TeamID: fakeslack.TeamID, Text: "chain deliver-prd -> deliver-user-stories -> measure-experiment-design -- calls benchmark"})
		if _, err := srv.WaitAck(ctxT(tb), env); err != nil {
			tb.Fatal(err)
		}
	}
	// The defaults scenario takes over a minute (the budget spreads its
	// updates); leave room for a slow machine.
	wait, stopWaiting := context.WithTimeout(context.Background(), 5*time.Minute)
	defer stopWaiting()
	err := srv.WaitFor(wait, func(st *fakeslack.State) bool {
		done := 0
		for _, m := range st.Messages("") {
			if m.FromBot && strings.Contains(m.Rendered, "Run complete") {
				done++
			}
		}
		return done == sc.runs
	})
	if err != nil {
		tb.Fatalf("not every run completed: %v", err)
	}
	// Updates put off by the budget land later: every step message comes
	// to show its approval, and its decision buttons give way (Open stays).
	err = srv.WaitFor(wait, func(st *fakeslack.State) bool {
		for _, m := range st.Messages("") {
			decisions := slices.ContainsFunc(m.Buttons(), func(x fakeslack.Button) bool { return x.ActionID != bot.ActionOpen })
			if m.FromBot && strings.HasPrefix(m.Text, "*Step ") && (decisions || !strings.Contains(m.Rendered, "Approved by")) {
				return false
			}
		}
		return true
	})
	if err != nil {
		tb.Fatalf("the step messages never all showed their approval: %v", err)
	}
	settle(srv, sc.scaled(3*bot.DefaultMessageUpdateInterval)+300*time.Millisecond, sc.scaled(bot.DefaultUpdateWindow)+10*time.Second)
	cancel()
	if n := <-clicks; n != sc.runs*stepsPerRun {
		tb.Fatalf("%d checkpoints approved, want %d", n, sc.runs*stepsPerRun)
	}
	elapsed := time.Since(begin)
	calls := srv.Calls("")
	finished.mu.Lock()
	defer finished.mu.Unlock()
	return srv, calls, elapsed, checkpointLag(calls, finished.at)
}

var buttonValueRE = regexp.MustCompile(`"value":"(v1\|[^"|]+\|\d+\|\d+)"`)

// checkpointLag is the longest time between an attempt's end and the
// first post or update that shows its Approve button.
func checkpointLag(calls []fakeslack.Call, finished map[string]time.Time) time.Duration {
	var lag time.Duration
	shown := map[string]bool{}
	for _, c := range calls {
		if c.Method != "chat.postMessage" && c.Method != "chat.update" {
			continue
		}
		blocks := c.Params.Get("blocks")
		if !strings.Contains(blocks, bot.ActionApprove) {
			continue
		}
		for _, m := range buttonValueRE.FindAllStringSubmatch(blocks, -1) {
			at, ok := finished[m[1]]
			if !ok || shown[m[1]] {
				continue
			}
			shown[m[1]] = true
			lag = max(lag, c.Time.Sub(at))
		}
	}
	return lag
}

func callsChannel(i int) string { return fmt.Sprintf("C0CALLS%02d", i) }

// progressRunner works on each step for a while, reporting progress at
// a steady pace, then answers with a Markdown artifact; it notes when each
// attempt ended in finished, when given.
type progressRunner struct {
	step, every time.Duration
	finished    *finishLog
}

// finishLog is when each attempt ended, by its buttons' value.
type finishLog struct {
	mu sync.Mutex
	at map[string]time.Time
}

func (f *finishLog) note(job engine.Job) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.at[bot.StepRef{Run: job.Run, Step: job.Step, Attempt: job.Attempt}.Value()] = time.Now()
}

func (p progressRunner) Run(ctx context.Context, job engine.Job, progress func(engine.Progress)) engine.Outcome {
	began := time.Now()
	tick := time.NewTicker(p.every)
	defer tick.Stop()
	for turn := 1; time.Since(began) < p.step; turn++ {
		select {
		case <-ctx.Done():
			return engine.Outcome{Err: fmt.Errorf("cancelled: %w", context.Cause(ctx))}
		case <-tick.C:
		}
		progress(engine.Progress{Turns: turn, ToolCalls: 2 * turn, LastTool: "Read", CostUSD: 0.002 * float64(turn), Elapsed: time.Since(began)})
	}
	p.finished.note(job)
	return engine.Outcome{Artifact: []byte(fmt.Sprintf("# %s\n\nThe artifact of step %d, attempt %d.\n", job.Skill, job.Step, job.Attempt)), CostUSD: 0.05}
}

// approveCheckpoints clicks Approve, as the run's starter, on every step
// message that shows it, once per message, until ctx ends; it returns the
// number of clicks.
func approveCheckpoints(ctx context.Context, b testing.TB, srv *fakeslack.Server) int {
	clicked := map[string]bool{}
	for ctx.Err() == nil {
		for _, m := range srv.Messages("") {
			key := m.Channel + " " + m.TS
			if !m.FromBot || clicked[key] || !strings.HasPrefix(m.Text, "*Step ") ||
				!slices.ContainsFunc(m.Buttons(), func(x fakeslack.Button) bool { return x.Text == "Approve" }) {
				continue
			}
			clicked[key] = true
			env, err := srv.Click(starter, m.Channel, m.TS, "Approve")
			if err != nil {
				b.Error(err)
				continue
			}
			if _, err := srv.WaitAck(ctx, env); err != nil && ctx.Err() == nil {
				b.Error(err)
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Millisecond):
		}
	}
	return len(clicked)
}

// callStats is what analyseCalls finds in a record of calls.
type callStats struct {
	// count is by method; "upload" sums the three calls of the artifacts'
	// uploads, "audit" of the audit trails', "upload_url" the posts of
	// files' bytes to their upload URLs (files.slack.com, no Web API
	// method), "webapi" every Web API call and "all" every call.
	count               map[string]int
	peakPerMessage      int           // most chat.update calls on one message within one window
	minGap              time.Duration // least time between two chat.update calls on one message
	peakAppWide         int           // most chat.update calls within one window
	peakPostsPerChannel int           // most chat.postMessage calls to one channel within one second window
}

// analyseCalls counts calls by method and finds the peak rates: window is
// a minute and second a second, both in the scenario's time.
func analyseCalls(calls []fakeslack.Call, window, second time.Duration) callStats {
	st := callStats{count: map[string]int{}, minGap: time.Duration(math.MaxInt64)}
	updates := map[string][]time.Time{}
	posts := map[string][]time.Time{}
	var allUpdates []time.Time
	audit := auditFiles(calls)
	for _, c := range calls {
		switch c.Method {
		case "auth.test", "apps.connections.open":
			continue // once per process, not per step
		case "chat.postMessage":
			posts[c.Params.Get("channel")] = append(posts[c.Params.Get("channel")], c.Time)
			st.count[c.Method]++
		case "chat.update":
			key := c.Params.Get("channel") + " " + c.Params.Get("ts")
			updates[key] = append(updates[key], c.Time)
			allUpdates = append(allUpdates, c.Time)
			st.count[c.Method]++
		case "chat.postEphemeral", "assistant.threads.setStatus", "agents.sessions.setStatus", "response_url":
			st.count[c.Method]++
		case "files.getUploadURLExternal", "upload_url", "files.completeUploadExternal":
			if c.Method == "upload_url" {
				st.count["upload_url"]++
			}
			if audit[c.Params.Get("file_id")] || strings.HasPrefix(c.Params.Get("filename"), "audit-") ||
				strings.Contains(c.Params.Get("files"), `"title":"audit-`) {
				st.count["audit"]++
			} else {
				st.count["upload"]++
			}
		default:
			st.count["other"]++
		}
		st.count["all"]++
	}
	st.count["webapi"] = st.count["all"] - st.count["upload_url"] - st.count["response_url"]
	for _, ts := range updates {
		st.peakPerMessage = max(st.peakPerMessage, peakInWindow(ts, window))
		for i := 1; i < len(ts); i++ {
			st.minGap = min(st.minGap, ts[i].Sub(ts[i-1]))
		}
	}
	if st.minGap == time.Duration(math.MaxInt64) {
		st.minGap = 0
	}
	st.peakAppWide = peakInWindow(allUpdates, window)
	for _, ts := range posts {
		st.peakPostsPerChannel = max(st.peakPostsPerChannel, peakInWindow(ts, second))
	}
	return st
}

// auditFiles are the ids of the audit trails uploaded, as their shares
// name them: the upload of the bytes names only the file's id.
func auditFiles(calls []fakeslack.Call) map[string]bool {
	ids := map[string]bool{}
	for _, c := range calls {
		if c.Method != "files.completeUploadExternal" {
			continue
		}
		var files []struct{ ID, Title string }
		if json.Unmarshal([]byte(c.Params.Get("files")), &files) != nil {
			continue
		}
		for _, f := range files {
			if strings.HasPrefix(f.Title, "audit-") {
				ids[f.ID] = true
			}
		}
	}
	return ids
}

// peakInWindow is the most times within any window-long span.
func peakInWindow(ts []time.Time, window time.Duration) int {
	ts = slices.Clone(ts)
	slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	peak, lo := 0, 0
	for hi := range ts {
		for ts[hi].Sub(ts[lo]) >= window {
			lo++
		}
		peak = max(peak, hi-lo+1)
	}
	return peak
}

// ---- from a click to the message that shows it ----

// BenchmarkApproveToUpdatedMessage measures how long a person waits, after
// clicking Approve, for the step's message to show their approval: from
// the click's envelope leaving the fake Slack to the change that shows
// "Approved by" arriving there (through the click's response_url, or a
// chat.update). It runs gonogo serve as deployed (store
// and inbox fsynced, default intervals and chat.update budget) with 8 busy
// runs, each in its own channel, whose steps run throughout with their
// agent reporting progress every 200 ms (shown as their threads' loading
// status), while a person decides a chain of deliverySteps steps in
// another channel, reading each checkpoint for readFor before approving it
// (about as fast as the chat.update budget lets a team decide: each
// decision costs its own update, the next step's checkpoint and the
// header's). The target is a p99 under 1.5 s.
//
// Each loop iteration is one analysis of the recorded latencies.
func BenchmarkApproveToUpdatedMessage(b *testing.B) {
	const (
		busy          = 8
		deliverySteps = 30
		readFor       = 1500 * time.Millisecond
	)
	srv := newSlack(b)
	r := skillRunner{
		"measure-experiment-design": progressRunner{step: time.Hour, every: 200 * time.Millisecond},
		"deliver-prd":               instantAgent{},
	}
	startServeOn(b, srv, b.TempDir(), serveSetup{runner: r, parallel: busy + 2, fsync: true, inbox: true, configure: func(*bot.Config) {}})
	settle(srv, 100*time.Millisecond, 5*time.Second)
	for i := range busy {
		env := srv.SendSlashCommand(slack.SlashCommand{Command: "/gonogo", UserID: starter, ChannelID: fmt.Sprintf("C0BUSY%02d", i),
			TeamID: fakeslack.TeamID, Text: "chain measure-experiment-design -- busy"})
		if _, err := srv.WaitAck(ctxT(b), env); err != nil {
			b.Fatal(err)
		}
	}
	err := srv.WaitFor(ctxT(b), func(st *fakeslack.State) bool {
		n := 0
		for _, m := range st.Messages("") {
			if m.FromBot && strings.HasPrefix(m.Text, "*Step 1 of 1") && strings.Contains(m.Rendered, "Running") {
				n++
			}
		}
		return n == busy
	})
	if err != nil {
		b.Fatalf("the busy runs' steps did not start: %v", err)
	}

	const decide = "C0DECIDE"
	chain := strings.TrimSuffix(strings.Repeat("deliver-prd -> ", deliverySteps), " -> ") + " -- decisions"
	env := srv.SendSlashCommand(slack.SlashCommand{Command: "/gonogo", UserID: starter, ChannelID: decide, TeamID: fakeslack.TeamID, Text: "chain " + chain})
	if _, err := srv.WaitAck(ctxT(b), env); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, deliverySteps)
	for n := 1; n <= deliverySteps; n++ {
		prefix := fmt.Sprintf("*Step %d of %d", n, deliverySteps)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		m, err := srv.WaitMessage(ctx, decide, func(m fakeslack.Message) bool {
			return strings.HasPrefix(m.Text, prefix) && slices.ContainsFunc(m.Buttons(), func(x fakeslack.Button) bool { return x.Text == "Approve" })
		})
		cancel()
		if err != nil {
			b.Fatalf("step %d's checkpoint never showed: %v", n, err)
		}
		time.Sleep(readFor)
		clicked := time.Now()
		if _, err := srv.Click(starter, decide, m.TS, "Approve"); err != nil {
			b.Fatal(err)
		}
		shown, err := updateShowing(srv, decide, m.TS, "Approved by", clicked)
		if err != nil {
			b.Fatalf("step %d's approval never showed: %v", n, err)
		}
		lat = append(lat, shown.Sub(clicked))
	}
	var p50, p99, worst time.Duration
	for b.Loop() {
		p50, p99, worst = percentile(lat, 50), percentile(lat, 99), percentile(lat, 100)
	}
	b.StopTimer()
	b.ReportMetric(ms(p50), "approve-to-update-p50-ms")
	b.ReportMetric(ms(p99), "approve-to-update-p99-ms")
	b.ReportMetric(ms(worst), "approve-to-update-max-ms")
	b.ReportMetric(ms(p99)/1500, "p99/1.5s")
	b.ReportMetric(float64(len(srv.Calls("chat.update"))), "chat.update-calls")
	b.ReportMetric(float64(len(srv.Calls("response_url"))), "response_url-calls")
	b.ReportMetric(float64(len(srv.Calls("assistant.threads.setStatus"))), "setStatus-calls")
	b.ReportMetric(0, "ns/op") // an op is one analysis of the latencies
}

// updateShowing waits for the first change of the message ts made after
// since (a chat.update, or a replace_original through the click's
// response_url) whose blocks hold want, and returns when the fake Slack
// received it.
func updateShowing(srv *fakeslack.Server, channel, ts, want string, since time.Time) (time.Time, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var at time.Time
	err := srv.WaitFor(ctx, func(st *fakeslack.State) bool {
		for _, c := range st.Calls("chat.update") {
			if c.Time.After(since) && c.Params.Get("channel") == channel && c.Params.Get("ts") == ts &&
				strings.Contains(c.Params.Get("blocks"), want) && c.Error == "" {
				at = c.Time
				return true
			}
		}
		for _, c := range st.Calls("response_url") {
			if c.Time.After(since) && c.Params.Get("channel") == channel && c.Params.Get("ts") == ts &&
				strings.Contains(string(c.JSON), want) && c.Status == http.StatusOK {
				at = c.Time
				return true
			}
		}
		return false
	})
	return at, err
}

// skillRunner runs each skill's steps on a runner of its own.
type skillRunner map[string]engine.Runner

func (s skillRunner) Run(ctx context.Context, job engine.Job, progress func(engine.Progress)) engine.Outcome {
	if r, ok := s[job.Skill]; ok {
		return r.Run(ctx, job, progress)
	}
	return engine.Outcome{Err: fmt.Errorf("no runner for %s", job.Skill)}
}
