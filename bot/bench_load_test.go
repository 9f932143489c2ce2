package bot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/fakeslack"
)

// ---- many runs at once in one workspace, under Slack's tiers ----

// loadScenario is many runs started at once in one workspace whose fake
// Slack enforces Slack's rate limits (fakeslack.WithTiers): each run is a
// chain of stepsPerRun checkpointed steps, started by its own slash
// command, perChannel runs to a channel; the agent works step seconds on
// each step, reporting progress as it goes, and the run's starter clicks
// Approve as soon as a checkpoint's buttons show. The bot runs with its
// default intervals and budgets, as deployed.
type loadScenario struct {
	runs       int
	perChannel int
	step       time.Duration
}

// loadResult is what a load scenario measured.
type loadResult struct {
	srv   *fakeslack.Server
	calls []fakeslack.Call
	// checkpointLags are, for every attempt, the time from its result
	// being ready (the agent's answer) to the first message showing its
	// buttons in Slack; shownIn counts the messages that ever showed them.
	checkpointLags []time.Duration
	shownIn        map[string]int
	// headerLags are, for every approval, the time from the click to the
	// next update of its run's header: how far behind the header (and the
	// plan in it) fell.
	headerLags []time.Duration
	// catchUp is the time from the last run's end to the last header
	// showing its run's end; finalHeaders counts the headers that show
	// exactly the header of their run as stored.
	catchUp      time.Duration
	finalHeaders int
	// filesCatchUp is the time from the last run's end to the last
	// artifact or audit trail reaching its thread: the uploads the
	// files.* tiers put off are made late.
	filesCatchUp time.Duration
	mismatched   []string
	clicks       int
	elapsed      time.Duration
	// overtakes are the checkpoints posted as new messages past their
	// step's running message, which the chat.update budget could not
	// update in time; removalLags, for each running message removed, the
	// time from the checkpoint that overtook it to its removal; staleLeft
	// counts the running messages still in Slack when every run ended and
	// every header caught up, and staleCatchUp is the time from the last
	// run's end to the last removal.
	overtakes    int
	removalLags  []time.Duration
	staleLeft    int
	staleCatchUp time.Duration
}

func loadChannel(i int) string { return fmt.Sprintf("C0LOAD%04d", i) }

// runLoadScenario runs sc and waits for every run to end and every
// header to show its run's end, for at most limit.
func runLoadScenario(tb testing.TB, sc loadScenario, limit time.Duration) loadResult {
	srv := newSlack(tb, fakeslack.WithTiers())
	finished := &finishLog{at: map[string]time.Time{}}
	r := progressRunner{step: sc.step, every: 200 * time.Millisecond, finished: finished}
	s := startServeOn(tb, srv, tb.TempDir(), serveSetup{runner: r, parallel: sc.runs, configure: func(*bot.Config) {}})
	wait, stop := context.WithTimeout(context.Background(), limit)
	defer stop()
	begin := time.Now()
	clicker := newLoadClicker()
	go clicker.run(wait, tb, srv)
	for i := range sc.runs {
		env := srv.SendSlashCommand(slack.SlashCommand{Command: "/gonogo", UserID: starter, ChannelID: loadChannel(i / sc.perChannel),
			TeamID: fakeslack.TeamID, Text: fmt.Sprintf("chain deliver-prd -> deliver-user-stories -> measure-experiment-design -- load run %d", i)})
		if _, err := srv.WaitAck(wait, env); err != nil {
			tb.Fatal(err)
		}
	}
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
		tb.Fatalf("not every run completed within %v: %v", limit, err)
	}
	runs := ldStoredAll(tb, s)
	want := map[string]json.RawMessage{} // run id -> its final header
	for _, run := range runs {
		blocks, err := json.Marshal(bot.Header(run, bot.View{Now: run.Updated}))
		if err != nil {
			tb.Fatal(err)
		}
		want[string(run.ID)] = blocks
	}
	// The headers put off by the chat.update budget catch up.
	res := loadResult{srv: srv}
	err = srv.WaitFor(wait, func(st *fakeslack.State) bool {
		res.mismatched = headersNotShowing(st.Messages(""), want)
		return len(res.mismatched) == 0
	})
	if err != nil {
		tb.Errorf("%d of %d headers never came to show their run's end (%v): %s", len(res.mismatched), len(want), err,
			strings.Join(res.mismatched[:min(5, len(res.mismatched))], "; "))
	}
	res.finalHeaders = len(want) - len(res.mismatched)
	files := sc.runs * (stepsPerRun + 1) // the artifacts and the audit trail
	err = srv.WaitFor(wait, func(st *fakeslack.State) bool { return len(st.Files("", "")) >= files })
	if err != nil {
		tb.Errorf("%d of %d files reached their threads: %v", len(srv.Files("", "")), files, err)
	}
	filesDone := time.Now()
	// The running messages checkpoints overtook are removed as
	// chat.delete's tier allows.
	err = srv.WaitFor(wait, func(st *fakeslack.State) bool {
		res.staleLeft = len(staleRunning(st.Messages("")))
		return res.staleLeft == 0
	})
	if err != nil {
		tb.Errorf("%d running messages overtaken by their checkpoint were never removed: %v", res.staleLeft, err)
	}
	settle(srv, 2*time.Second, 2*time.Minute) // the last statuses
	stop()
	res.clicks = clicker.wait()
	res.elapsed = time.Since(begin)
	res.calls = srv.Calls("")
	finished.mu.Lock()
	res.checkpointLags, res.shownIn = checkpointShowings(res.calls, finished.at)
	finished.mu.Unlock()
	var lastEnd time.Time
	res.headerLags, lastEnd, res.catchUp = headerLags(srv.Messages(""), res.calls, clicker.times())
	res.filesCatchUp = max(0, filesDone.Sub(lastEnd))
	var lastRemoval time.Time
	res.overtakes, res.removalLags, lastRemoval = overtakes(res.calls)
	if !lastRemoval.IsZero() {
		res.staleCatchUp = max(0, lastRemoval.Sub(lastEnd))
	}
	return res
}

// staleRunning are the step messages that still show Cancel: once every
// run has ended, running messages a checkpoint overtook and that were
// not removed yet.
func staleRunning(msgs []fakeslack.Message) []fakeslack.Message {
	var out []fakeslack.Message
	for _, m := range msgs {
		if m.FromBot && strings.HasPrefix(m.Text, "*Step ") &&
			slices.ContainsFunc(m.Buttons(), func(x fakeslack.Button) bool { return x.Text == "Cancel" }) {
			out = append(out, m)
		}
	}
	return out
}

// overtakes counts the checkpoints posted as a new message while their
// step already had one (a second post under the same run's note), and
// measures, for each message removed (chat.delete), the time from the
// post that overtook it to its removal; last is the last removal.
func overtakes(calls []fakeslack.Call) (n int, lags []time.Duration, last time.Time) {
	latest := map[string]string{}      // channel + metadata -> the ts of its latest post
	overtook := map[string]time.Time{} // channel + " " + ts of the running message -> when a checkpoint overtook it
	for _, c := range calls {
		switch {
		case c.Method == "chat.postMessage" && c.Status == 200 && c.Error == "" && c.Params.Get("metadata") != "":
			key := c.Params.Get("channel") + " " + c.Params.Get("metadata")
			if prev, ok := latest[key]; ok && strings.Contains(c.Params.Get("blocks"), bot.ActionApprove) {
				n++
				overtook[c.Params.Get("channel")+" "+prev] = c.Time
			}
			latest[key] = c.TS
		case c.Method == "chat.delete" && c.Status == 200 && c.Error == "":
			if at, ok := overtook[c.Params.Get("channel")+" "+c.Params.Get("ts")]; ok {
				lags = append(lags, c.Time.Sub(at))
			}
			last = c.Time
		}
	}
	return n, lags, last
}

// ldStoredAll loads every run of a serve's store.
func ldStoredAll(tb testing.TB, s *liveServe) []*engine.Run {
	tb.Helper()
	ctx := context.Background()
	list, err := s.db.List(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	var out []*engine.Run
	for _, sum := range list {
		r, err := s.db.Load(ctx, sum.ID)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// headersNotShowing are the runs whose header (the top-level message
// naming the run) does not show exactly want's blocks.
func headersNotShowing(msgs []fakeslack.Message, want map[string]json.RawMessage) []string {
	seen := map[string]bool{}
	var bad []string
	for _, m := range msgs {
		if !m.FromBot || m.ThreadTS != "" {
			continue
		}
		id := runOfHeader(m)
		w, ok := want[id]
		if !ok {
			continue
		}
		seen[id] = true
		if !sameJSON(m.Blocks, w) {
			bad = append(bad, fmt.Sprintf("run %s: header %s shows %.200s", id, m.TS, m.Rendered))
		}
	}
	for id := range want {
		if !seen[id] {
			bad = append(bad, "run "+id+": no header")
		}
	}
	slices.Sort(bad)
	return bad
}

// runOfHeader is the run a header names in its last context line.
func runOfHeader(m fakeslack.Message) string {
	const mark = "Run `"
	i := strings.LastIndex(m.Rendered, mark)
	if i < 0 {
		return ""
	}
	rest := m.Rendered[i+len(mark):]
	if j := strings.IndexByte(rest, '`'); j >= 0 {
		return rest[:j]
	}
	return ""
}

func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// checkpointShowings finds, for every attempt the agent finished, the
// first call Slack took that showed its buttons, and how many messages
// ever showed them.
func checkpointShowings(calls []fakeslack.Call, finished map[string]time.Time) ([]time.Duration, map[string]int) {
	first := map[string]time.Time{}
	msgs := map[string]map[string]bool{}
	posted := 0
	for _, c := range calls {
		if (c.Method != "chat.postMessage" && c.Method != "chat.update") || c.Status != 200 || c.Error != "" {
			continue
		}
		blocks := c.Params.Get("blocks")
		if !strings.Contains(blocks, bot.ActionApprove) {
			continue
		}
		msg := c.Params.Get("channel") + " " + c.Params.Get("ts")
		if c.Method == "chat.postMessage" {
			posted++
			msg = fmt.Sprintf("%s post %d", c.Params.Get("channel"), posted)
		}
		for _, m := range buttonValueRE.FindAllStringSubmatch(blocks, -1) {
			if _, ok := first[m[1]]; !ok {
				first[m[1]] = c.Time
			}
			if msgs[m[1]] == nil {
				msgs[m[1]] = map[string]bool{}
			}
			msgs[m[1]][msg] = true
		}
	}
	var lags []time.Duration
	shown := map[string]int{}
	for ref, at := range finished {
		if t, ok := first[ref]; ok {
			lags = append(lags, t.Sub(at))
		}
		shown[ref] = len(msgs[ref])
	}
	return lags, shown
}

// headerLags are, for every click, the time until the next update of the
// clicked run's header; lastEnd is when the last run's end was posted, and
// catchUp the time from then to the last update of a header.
func headerLags(msgs []fakeslack.Message, calls []fakeslack.Call, clicks []loadClick) (lags []time.Duration, lastEnd time.Time, catchUp time.Duration) {
	updates := map[string][]time.Time{} // channel + " " + ts -> its updates
	for _, c := range calls {
		if c.Method == "chat.update" && c.Status == 200 && c.Error == "" {
			k := c.Params.Get("channel") + " " + c.Params.Get("ts")
			updates[k] = append(updates[k], c.Time)
		}
	}
	for _, c := range clicks {
		ups := updates[c.header]
		if i, _ := slices.BinarySearchFunc(ups, c.at, func(u, at time.Time) int { return u.Compare(at) }); i < len(ups) {
			lags = append(lags, ups[i].Sub(c.at))
		}
	}
	var lastHeader time.Time
	for _, m := range msgs {
		switch {
		case m.FromBot && strings.Contains(m.Rendered, "Run complete") && m.Posted.After(lastEnd):
			lastEnd = m.Posted
		case m.FromBot && m.ThreadTS == "" && m.Updated.After(lastHeader):
			lastHeader = m.Updated
		}
	}
	return lags, lastEnd, max(0, lastHeader.Sub(lastEnd))
}

// loadClicker clicks Approve, as the run's starter, on every step message
// whose buttons show, once per message, and notes when it clicked.
type loadClicker struct {
	mu      sync.Mutex
	clicked map[string]bool
	log     []loadClick
	done    chan int
}

type loadClick struct {
	header string // the clicked run's header: channel + " " + ts
	at     time.Time
}

func newLoadClicker() *loadClicker {
	return &loadClicker{clicked: map[string]bool{}, done: make(chan int, 1)}
}

func (c *loadClicker) run(ctx context.Context, tb testing.TB, srv *fakeslack.Server) {
	var wg sync.WaitGroup
	defer func() { wg.Wait(); c.done <- len(c.clicked) }()
	for ctx.Err() == nil {
		for _, m := range srv.Messages("") {
			key := m.Channel + " " + m.TS
			if !m.FromBot || c.clicked[key] || !strings.HasPrefix(m.Text, "*Step ") ||
				!slices.ContainsFunc(m.Buttons(), func(x fakeslack.Button) bool { return x.Text == "Approve" }) {
				continue
			}
			c.clicked[key] = true
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.mu.Lock()
				c.log = append(c.log, loadClick{header: m.Channel + " " + m.ThreadTS, at: time.Now()})
				c.mu.Unlock()
				env, err := srv.Click(starter, m.Channel, m.TS, "Approve")
				if err != nil {
					tb.Error(err)
					return
				}
				if _, err := srv.WaitAck(ctx, env); err != nil && ctx.Err() == nil {
					tb.Error(err)
				}
			}()
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// wait waits for the clicker to stop and returns how many step messages
// it clicked.
func (c *loadClicker) wait() int { return <-c.done }

func (c *loadClicker) times() []loadClick {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.log)
}

// loadSize is the benchmark's scenario with steps of step: 200 runs with
// GONOGO_LOAD=1, else a smaller one.
func loadSize(step time.Duration) (loadScenario, time.Duration) {
	if os.Getenv("GONOGO_LOAD") == "1" {
		return loadScenario{runs: 200, perChannel: 2, step: step}, 40 * time.Minute
	}
	return loadScenario{runs: 24, perChannel: 2, step: step}, 10 * time.Minute
}

// BenchmarkTwoHundredRunsOneWorkspace measures gonogo under load in one
// workspace whose fake Slack enforces Slack's published rate limits
// (fakeslack.WithTiers: each method's tier across the workspace, one post
// a second in a channel): 200 runs at once with GONOGO_LOAD=1 (24
// otherwise), two to a channel, each a chain of three checkpointed steps,
// approved by their starter as soon as the buttons show (see
// loadScenario). Its sub-benchmarks run steps of 2 s, shorter than the
// bot's quiet start (bot.DefaultQuietStart, 3 s: a step's result is its
// first message), and of 5 s, longer (a step has a running message, and
// its checkpoint is an update of it or, when the chat.update budget cannot
// carry it soon, a new message). It reports:
//
//   - checkpoint-p50-ms, checkpoint-p99-ms, checkpoint-max-ms: from a
//     step's result being ready to its buttons showing in Slack;
//   - rate-limited: calls Slack answered 429 (gonogo keeps under the
//     tiers by construction: it must be 0);
//   - header-lag-p50-ms, header-lag-max-ms: from an approval to the next
//     update of the run's header (its plan shows the step done): how far
//     behind the headers fall while checkpoints go first;
//   - catch-up-s: from the last run's end to the last header showing its
//     run's end; final-headers-ok: the headers that end showing exactly
//     their run as stored (the number of runs, when all do);
//   - checkpoints-posted-new: checkpoints posted as a new message past
//     their running message; removal-p50-s, removal-max-s: from such a
//     post to the removal of the running message (chat.delete's tier);
//     stale-catch-up-s: from the last run's end to the last removal;
//   - webapi-calls/step, update/min/app-peak.
//
// It is skipped under -short unless GONOGO_LOAD=1. Each loop iteration
// is one analysis of the recorded calls.
func BenchmarkTwoHundredRunsOneWorkspace(b *testing.B) {
	if testing.Short() && os.Getenv("GONOGO_LOAD") != "1" {
		b.Skip("a load scenario of minutes: run it without -short, or with GONOGO_LOAD=1")
	}
	for _, step := range []time.Duration{2 * time.Second, 5 * time.Second} {
		b.Run(fmt.Sprintf("step=%v", step), func(b *testing.B) { benchLoad(b, step) })
	}
}

func benchLoad(b *testing.B, step time.Duration) {
	sc, limit := loadSize(step)
	res := runLoadScenario(b, sc, limit)
	var st callStats
	for b.Loop() {
		st = analyseCalls(res.calls, time.Minute, time.Second)
	}
	b.StopTimer()
	lags := res.checkpointLags
	b.ReportMetric(float64(sc.runs), "runs")
	b.ReportMetric(ms(percentile(lags, 50)), "checkpoint-p50-ms")
	b.ReportMetric(ms(percentile(lags, 99)), "checkpoint-p99-ms")
	b.ReportMetric(ms(percentile(lags, 100)), "checkpoint-max-ms")
	b.ReportMetric(float64(res.srv.RateLimited("")), "rate-limited")
	if len(res.headerLags) > 0 {
		b.ReportMetric(ms(percentile(res.headerLags, 50)), "header-lag-p50-ms")
		b.ReportMetric(ms(percentile(res.headerLags, 100)), "header-lag-max-ms")
	}
	b.ReportMetric(res.catchUp.Seconds(), "catch-up-s")
	b.ReportMetric(float64(res.finalHeaders), "final-headers-ok")
	b.ReportMetric(res.filesCatchUp.Seconds(), "files-catch-up-s")
	b.ReportMetric(float64(res.overtakes), "checkpoints-posted-new")
	if len(res.removalLags) > 0 {
		b.ReportMetric(percentile(res.removalLags, 50).Seconds(), "removal-p50-s")
		b.ReportMetric(percentile(res.removalLags, 100).Seconds(), "removal-max-s")
		b.ReportMetric(res.staleCatchUp.Seconds(), "stale-catch-up-s")
	}
	b.ReportMetric(float64(st.count["webapi"])/float64(sc.runs*stepsPerRun), "webapi-calls/step")
	b.ReportMetric(float64(st.peakAppWide), "update/min/app-peak")
	b.ReportMetric(res.elapsed.Seconds(), "scenario-s")
	b.ReportMetric(0, "ns/op")
	b.Logf("%d runs: checkpoints shown %v after their step's result at p50, %v at p99, %v at most; headers updated %v after an approval at p50, %v at most, and all final %v after the last run ended, every file in its thread %v after; %d calls answered 429",
		sc.runs, percentile(lags, 50), percentile(lags, 99), percentile(lags, 100), percentile(res.headerLags, 50), percentile(res.headerLags, 100),
		res.catchUp.Round(time.Second), res.filesCatchUp.Round(time.Second), res.srv.RateLimited(""))
	b.Logf("%d checkpoints posted as a new message past their running message; running messages removed %v after at p50, %v at most, the last %v after the last run ended",
		res.overtakes, percentile(res.removalLags, 50).Round(time.Second), percentile(res.removalLags, 100).Round(time.Second), res.staleCatchUp.Round(time.Second))
	if n := res.srv.RateLimited(""); n > 0 {
		b.Errorf("Slack answered %d calls 429: %s", n, rateLimitedMethods(res.calls))
	}
}

// rateLimitedMethods counts the 429s by method.
func rateLimitedMethods(calls []fakeslack.Call) string {
	n := map[string]int{}
	for _, c := range calls {
		if c.Status == 429 {
			n[c.Method]++
		}
	}
	return fmt.Sprint(n)
}

// TestManyRunsStayInsideSlacksTiers runs a small load scenario on a fake
// Slack that enforces Slack's rate limits and checks what counts, not
// how fast: no call is answered 429, every checkpoint's buttons show in
// exactly one message, and every header ends showing its run as stored
// (the updates the budget put off catch up). BenchmarkTwoHundredRunsOneWorkspace
// measures the same at 200 runs.
func TestManyRunsStayInsideSlacksTiers(t *testing.T) {
	t.Parallel() // most of it is the header's 10 s between two refreshes
	sc := loadScenario{runs: 6, perChannel: 2, step: 300 * time.Millisecond}
	res := runLoadScenario(t, sc, 3*time.Minute)
	if n := res.srv.RateLimited(""); n > 0 {
		t.Errorf("Slack answered %d calls 429: %s", n, rateLimitedMethods(res.calls))
	}
	if want := sc.runs * stepsPerRun; len(res.shownIn) != want || res.clicks != want {
		t.Errorf("%d attempts ran and %d step messages were approved, want %d of each", len(res.shownIn), res.clicks, want)
	}
	for ref, n := range res.shownIn {
		if n != 1 {
			t.Errorf("the buttons of %s showed in %d messages, want 1", ref, n)
		}
	}
	if res.finalHeaders != sc.runs {
		t.Errorf("%d of %d headers show their run's end", res.finalHeaders, sc.runs)
	}
}
