package bot_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/fakeslack"
	"github.com/gonogo/gonogo/internal/hangguard"
	"github.com/gonogo/gonogo/internal/intake"
	"github.com/gonogo/gonogo/parse"
	"github.com/gonogo/gonogo/storage"
)

// The end-to-end tests run the bot's real slack-go clients (Web API and
// Socket Mode) against fakeslack, on a real bbolt store in t.TempDir() and
// a real engine.Service, with a scripted in-process runner.

const (
	channel = "C0RUNS"
	starter = "U0START"
)

// harnessSkills are the skills the harness installs.
var harnessSkills = []string{"deliver-prd", "deliver-user-stories", "measure-experiment-design"}

// scriptedRunner answers each skill with a Markdown artifact, or with what
// a test scripts for it; it can hold a skill's attempts until the test
// releases them.
type scriptedRunner struct {
	mu      sync.Mutex
	outcome map[string]engine.Outcome
	hold    map[string]chan struct{}
	ran     []engine.Job
}

func (s *scriptedRunner) Run(ctx context.Context, job engine.Job, progress func(engine.Progress)) engine.Outcome {
	s.mu.Lock()
	s.ran = append(s.ran, job)
	out, ok := s.outcome[job.Skill]
	if o, own := s.outcome[job.Runner+"/"+job.Skill]; own {
		out, ok = o, true // a best-of candidate's own script
	}
	hold := s.hold[job.Skill]
	s.mu.Unlock()
	progress(engine.Progress{Turns: 1, ToolCalls: 2, LastTool: "Read"})
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return engine.Outcome{Err: fmt.Errorf("cancelled: %w", context.Cause(ctx))}
		}
	}
	if ok {
		return out
	}
	return engine.Outcome{Artifact: []byte(fmt.Sprintf("# %s\n\nA finished artifact for step %d, attempt %d.\n", job.Skill, job.Step, job.Attempt)), CostUSD: 0.01}
}

// waitRan waits until the skill's agent was asked to run: its step is
// running in the store by then.
func (s *scriptedRunner) waitRan(t *testing.T, skill string) {
	t.Helper()
	deadline := hangguard.Deadline(t)
	for {
		s.mu.Lock()
		ran := slices.ContainsFunc(s.ran, func(j engine.Job) bool { return j.Skill == skill })
		s.mu.Unlock()
		if ran {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent of %s never ran", skill)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// holdSkill makes the skill's attempts wait until release is called.
func (s *scriptedRunner) holdSkill(skill string) (release func()) {
	ch := make(chan struct{})
	s.mu.Lock()
	if s.hold == nil {
		s.hold = map[string]chan struct{}{}
	}
	s.hold[skill] = ch
	s.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

// script makes the skill's attempts answer out.
func (s *scriptedRunner) script(skill string, out engine.Outcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.outcome == nil {
		s.outcome = map[string]engine.Outcome{}
	}
	s.outcome[skill] = out
}

// jobs returns the jobs run so far.
func (s *scriptedRunner) jobs() []engine.Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ran)
}

// newSlack starts a fake Slack for one test. When the test ends (after
// every harness on it stopped: cleanups run last-in first-out) it checks
// that nothing the bot sent broke Block Kit's limits or Slack's
// Retry-After, then closes.
func newSlack(t testing.TB, opts ...fakeslack.Option) *fakeslack.Server {
	t.Helper()
	srv := fakeslack.New(opts...)
	t.Cleanup(func() {
		if v := srv.Violations(); len(v) > 0 {
			for _, x := range v {
				t.Errorf("fake Slack violation: %s %s: %s", x.Method, x.Path, x.Detail)
			}
		}
		srv.Close()
	})
	return srv
}

// harness is a bot on a real store and engine, talking to a fake Slack.
type harness struct {
	t      testing.TB
	srv    *fakeslack.Server
	db     *storage.DB
	svc    *engine.Service
	bot    *bot.Bot
	runner *scriptedRunner
	cancel context.CancelFunc
	done   chan struct{}
	dir    string
	once   sync.Once
}

// setup is what options change before the bot starts.
type setup struct {
	cfg         *bot.Config
	wrap        func(bot.Engine) bot.Engine // the engine as the bot sees it
	runner      engine.Runner               // nil: the scripted runner given to start
	maxParallel int
	workflows   engine.WorkflowSource // the workflows a route step may continue with
}

type option func(*setup)

// withConfig changes the bot's configuration.
func withConfig(f func(c *bot.Config)) option { return func(s *setup) { f(s.cfg) } }

func withApprovers(ids ...string) option {
	return withConfig(func(c *bot.Config) { c.Approvers = ids })
}

func withQuorum(n int, excludeStarter bool) option {
	return withConfig(func(c *bot.Config) { c.Quorum, c.ExcludeStarter = n, excludeStarter })
}

// withRunner runs steps on r instead of the scripted runner.
func withRunner(r engine.Runner) option { return func(s *setup) { s.runner = r } }

// withLog sends the bot's and the engine's logs to log.
// withQuietStart posts a step's message only once it has run for d, or
// as it ends.
func withQuietStart(d time.Duration) option {
	return withConfig(func(c *bot.Config) { c.QuietStart = d })
}

func withLog(log *slog.Logger) option { return func(s *setup) { s.cfg.Log = log } }

// withMaxParallel sets how many steps execute at once.
func withMaxParallel(n int) option { return func(s *setup) { s.maxParallel = n } }

// withWorkflows serves the workflow files in dir: /gonogo run, route
// steps and "Save as workflow".
func withWorkflows(dir string) option {
	return func(s *setup) { s.cfg.WorkflowsDir, s.workflows = dir, intake.Dir(dir) }
}

// withEngine puts wrap between the bot and the engine.
func withEngine(wrap func(bot.Engine) bot.Engine) option { return func(s *setup) { s.wrap = wrap } }

// start opens the store in dir (recovering it), starts the engine and the
// bot, and waits until the bot is connected. The harness stops when the
// test ends, or earlier with stop.
func start(t testing.TB, srv *fakeslack.Server, dir string, r *scriptedRunner, opts ...option) *harness {
	t.Helper()
	db, err := storage.Open(dir, storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	var skills []engine.Skill
	for _, n := range harnessSkills {
		skills = append(skills, engine.Skill{Name: n, Instructions: "Write the " + n + " artifact."})
	}
	h := &harness{t: t, srv: srv, db: db, runner: r, dir: dir, done: make(chan struct{})}
	cfg := bot.Config{
		AppToken: srv.AppToken(), BotToken: srv.BotToken(), APIURL: srv.APIURL(),
		Catalog: parse.NewCatalog(skills), Policy: engine.DefaultPolicy(),
		PostInterval: time.Millisecond, ProgressInterval: 50 * time.Millisecond,
		// Each step's message is posted as the step starts, as the tests
		// of running steps expect; withQuietStart tests the quiet start.
		QuietStart: -1,
	}
	su := setup{cfg: &cfg, wrap: func(e bot.Engine) bot.Engine { return e }, runner: r, maxParallel: 4}
	for _, o := range opts {
		o(&su)
	}
	n := &lateNotifier{}
	h.svc = engine.NewService(engine.ServiceConfig{Store: db, Catalog: parse.NewCatalog(skills), Runner: su.runner,
		Notifier: n, MaxParallel: su.maxParallel, Log: cfg.Log, Workflows: su.workflows, Members: n.member})
	h.bot, err = bot.New(cfg, su.wrap(h.svc))
	if err != nil {
		t.Fatal(err)
	}
	n.set(h.bot)
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	before := srv.Connections()
	svcDone := make(chan struct{})
	go func() { defer close(svcDone); _ = h.svc.Run(ctx) }()
	go func() {
		defer close(h.done)
		defer func() { <-svcDone }()
		if err := h.bot.Run(ctx); err != nil && ctx.Err() == nil {
			t.Errorf("bot.Run: %v", err)
		}
	}()
	t.Cleanup(h.stop)
	// Wait for this bot's own connection, not an earlier bot's.
	if err := srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool { return st.Connections() > before && st.Connected() }); err != nil {
		t.Fatalf("the bot did not connect: %v", err)
	}
	return h
}

// stop stops the bot and the engine (steps still running stay running in
// the store) and closes the store, as a process that is shut down.
func (h *harness) stop() {
	h.once.Do(func() {
		h.cancel()
		<-h.done // the bot's Run, then the engine's, have returned
		if err := h.db.Close(); err != nil {
			h.t.Errorf("close the store: %v", err)
		}
	})
}

type lateNotifier struct {
	mu sync.Mutex
	b  *bot.Bot
}

func (l *lateNotifier) set(b *bot.Bot) { l.mu.Lock(); l.b = b; l.mu.Unlock() }
func (l *lateNotifier) Notify(n engine.Notice) {
	l.mu.Lock()
	b := l.b
	l.mu.Unlock()
	if b != nil {
		b.Notify(n)
	}
}

// member asks the bot who a person is, as gonogo serve does.
func (l *lateNotifier) member(ctx context.Context, user string, groups []string) (engine.Member, error) {
	l.mu.Lock()
	b := l.b
	l.mu.Unlock()
	if b == nil {
		return engine.Member{}, errors.New("the bot is not started yet")
	}
	return b.Member(ctx, user, groups)
}

// ctxT is the context of the harness's waits, which only guard against a
// hang.
func ctxT(t testing.TB) context.Context {
	return hangguard.Context(t)
}

// seedStore fills dir's store with total one-step Slack runs in the
// harness channel, which approvers may decide: waiting of them wait for a
// decision, the others are completed and noted as fully posted (as a bot
// that showed them did), so that the bot only brings the waiting ones'
// threads up to date.
func seedStore(b testing.TB, dir string, total, waiting int, approvers ...string) {
	b.Helper()
	ctx := context.Background()
	db, err := storage.Open(dir, storage.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var skills []engine.Skill
	for _, n := range harnessSkills {
		skills = append(skills, engine.Skill{Name: n, Instructions: "Write the " + n + " artifact."})
	}
	cat := parse.NewCatalog(skills)
	svc := engine.NewService(engine.ServiceConfig{Store: db, Catalog: cat, Runner: &scriptedRunner{}, MaxParallel: 16})
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- svc.Run(runCtx) }()
	defer func() { stop(); <-ran }()
	chain, err := parse.Chain("deliver-prd -- seeded")
	if err != nil {
		b.Fatal(err)
	}
	plan, err := engine.PreflightChain(chain, cat, engine.DefaultPolicy())
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]engine.RunID, 0, total)
	for i := range total {
		opt := engine.StartOptions{StartedBy: starter, Origin: engine.Origin{Channel: channel}, Key: fmt.Sprintf("seed-%d", i),
			Oversight: engine.Oversight{Approvers: approvers}}
		if i < waiting {
			// A quorum no one reaches: every click on these is an approval
			// the engine records, and they keep waiting.
			opt.Quorum = total
		}
		r, err := svc.Start(ctx, plan, opt)
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	for i, id := range ids {
		r := waitState(b, svc, id, engine.RunWaiting)
		if i < waiting {
			continue
		}
		if _, err := svc.Decide(ctx, id, engine.Decision{Kind: engine.DecideApprove, Actor: starter, Step: 1, Attempt: r.Steps[0].Latest().N}, nil); err != nil {
			b.Fatal(err)
		}
		waitState(b, svc, id, engine.RunCompleted)
		// The bot's notes of a thread it has fully posted.
		ts := fmt.Sprintf("1700000000.%06d", i)
		if err := db.SetNotes(ctx, id, map[string]string{"thread": ts, "header": ts, "final": ts}); err != nil {
			b.Fatal(err)
		}
	}
}

func waitState(b testing.TB, svc *engine.Service, id engine.RunID, want engine.RunState) *engine.Run {
	deadline := hangguard.Deadline(b)
	for {
		r, err := svc.Load(context.Background(), id)
		if err == nil && r.State == want {
			return r
		}
		if time.Now().After(deadline) {
			b.Fatalf("seeded run %s never reached %s", id, want)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// ---- acting as users ----

// slash sends "/gonogo text" as user in the harness channel and waits for
// its ack.
func slash(t *testing.T, srv *fakeslack.Server, user, text string) string {
	t.Helper()
	env := srv.SendSlashCommand(slack.SlashCommand{Command: "/gonogo", UserID: user, ChannelID: channel, TeamID: fakeslack.TeamID, Text: text})
	ack(t, srv, env)
	return env
}

func ack(t *testing.T, srv *fakeslack.Server, env string) fakeslack.Ack {
	t.Helper()
	a, err := srv.WaitAck(ctxT(t), env)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// click presses a button on m as user and waits for the ack.
func click(t *testing.T, srv *fakeslack.Server, user string, m fakeslack.Message, button string) string {
	t.Helper()
	env, err := srv.Click(user, m.Channel, m.TS, button)
	if err != nil {
		t.Fatal(err)
	}
	ack(t, srv, env)
	return env
}

// clickStale presses a button as it was on an earlier copy of a message
// (the message has been updated since, and may no longer show it), as a
// person does whose Slack client has not refreshed yet.
func clickStale(t *testing.T, srv *fakeslack.Server, user string, old fakeslack.Message, label string) string {
	t.Helper()
	return clickFrom(t, srv, user, fakeslack.TeamID, old, label)
}

// clickFrom presses a button on m as user of team, another organization's
// when it is not the workspace's.
func clickFrom(t *testing.T, srv *fakeslack.Server, user, team string, old fakeslack.Message, label string) string {
	t.Helper()
	i := slices.IndexFunc(old.Buttons(), func(b fakeslack.Button) bool { return b.Text == label })
	if i < 0 {
		t.Fatalf("the message had no %q button: %v", label, old.Buttons())
	}
	return clickButton(t, srv, user, team, old, old.Buttons()[i])
}

// clickButton presses button b of message old as user of team.
func clickButton(t *testing.T, srv *fakeslack.Server, user, team string, old fakeslack.Message, b fakeslack.Button) string {
	t.Helper()
	now := time.Now()
	cb := slack.InteractionCallback{
		Type:      slack.InteractionTypeBlockActions,
		User:      slack.User{ID: user, TeamID: team},
		Team:      slack.Team{ID: fakeslack.TeamID},
		Channel:   slack.Channel{GroupConversation: slack.GroupConversation{Conversation: slack.Conversation{ID: old.Channel}}},
		Container: slack.Container{Type: "message", MessageTs: old.TS, ChannelID: old.Channel, ThreadTs: old.ThreadTS},
		ActionTs:  fmt.Sprintf("%d.%06d", now.Unix(), now.Nanosecond()/1000),
		ActionCallback: slack.ActionCallbacks{BlockActions: []*slack.BlockAction{{
			ActionID: b.ActionID, BlockID: b.BlockID, Value: b.Value, Type: "button",
			ActionTs: fmt.Sprintf("%d.%06d", now.Unix(), now.Nanosecond()/1000),
		}}},
	}
	env, err := srv.SendInteraction(cb)
	if err != nil {
		t.Fatal(err)
	}
	ack(t, srv, env)
	return env
}

// ---- waiting for what the bot shows ----

// waitMsg waits for a message in the channel that match accepts.
func waitMsg(t *testing.T, srv *fakeslack.Server, what string, match func(m fakeslack.Message) bool) fakeslack.Message {
	t.Helper()
	m, err := srv.WaitMessage(ctxT(t), channel, match)
	if err != nil {
		t.Fatalf("no message %s: %v\nmessages:\n%s", what, err, dump(srv))
	}
	return m
}

// waitText waits for a message in the channel whose text contains all of want.
func waitText(t *testing.T, srv *fakeslack.Server, want ...string) fakeslack.Message {
	t.Helper()
	return waitMsg(t, srv, fmt.Sprintf("with %q", want), func(m fakeslack.Message) bool { return containsAll(m.Rendered, want...) })
}

// waitStep waits for step n's message (any run) showing all of want.
func waitStep(t *testing.T, srv *fakeslack.Server, n int, want ...string) fakeslack.Message {
	t.Helper()
	prefix := fmt.Sprintf("*Step %d of ", n)
	return waitMsg(t, srv, fmt.Sprintf("of step %d with %q", n, want), func(m fakeslack.Message) bool {
		return strings.HasPrefix(m.Text, prefix) && containsAll(m.Rendered, want...)
	})
}

// waitEphemeral waits for an ephemeral message to user containing all of
// want, and returns it.
func waitEphemeral(t *testing.T, srv *fakeslack.Server, user string, want ...string) fakeslack.Ephemeral {
	t.Helper()
	var got fakeslack.Ephemeral
	err := srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool {
		for _, e := range st.Ephemerals(user) {
			if containsAll(e.Rendered, want...) {
				got = e
				return true
			}
		}
		return false
	})
	if err != nil {
		var seen []string
		for _, e := range srv.Ephemerals(user) {
			seen = append(seen, e.Rendered)
		}
		t.Fatalf("no ephemeral to %s with %q: %v; got %q", user, want, err, seen)
	}
	return got
}

// afterAcks leaves out of es the answers slash commands' acknowledgements
// carried (what starts, shown at once): what the bot told people later.
func afterAcks(es []fakeslack.Ephemeral) []fakeslack.Ephemeral {
	var out []fakeslack.Ephemeral
	for _, e := range es {
		if e.Via != "ack" {
			out = append(out, e)
		}
	}
	return out
}

// waitEphemeralN waits until user was shown n ephemeral messages, and
// returns the nth.
func waitEphemeralN(t *testing.T, srv *fakeslack.Server, user string, n int) fakeslack.Ephemeral {
	t.Helper()
	var got fakeslack.Ephemeral
	err := srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool {
		es := st.Ephemerals(user)
		if len(es) < n {
			return false
		}
		got = es[n-1]
		return true
	})
	if err != nil {
		t.Fatalf("%s was not shown %d ephemeral messages (got %d): %v", user, n, len(srv.Ephemerals(user)), err)
	}
	return got
}

// waitView waits for the modal number i (0-based, in opening order) to be
// filled: a click opens a loading modal first, which views.update then
// replaces.
func waitView(t *testing.T, srv *fakeslack.Server, i int) fakeslack.View {
	t.Helper()
	var v fakeslack.View
	err := srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool {
		vs := st.Views()
		if len(vs) <= i {
			return false
		}
		v = vs[i]
		return v.CallbackID != bot.ModalLoading
	})
	if err != nil {
		t.Fatalf("modal %d was not opened: %v", i, err)
	}
	return v
}

// waitNoticeModal waits for a modal opened for user that, once filled,
// says all of want and offers nothing to submit (a refusal, or why
// nothing can be done), and returns it.
func waitNoticeModal(t *testing.T, srv *fakeslack.Server, user string, want ...string) fakeslack.View {
	t.Helper()
	var got fakeslack.View
	err := srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool {
		for _, v := range st.Views() {
			if v.User == user && v.CallbackID != bot.ModalLoading && containsAll(v.Rendered, want...) {
				got = v
				return true
			}
		}
		return false
	})
	if err != nil {
		var seen []string
		for _, v := range srv.Views() {
			seen = append(seen, v.User+": "+v.Rendered)
		}
		t.Fatalf("no modal for %s saying %q: %v; modals: %q", user, want, err, seen)
	}
	if strings.Contains(string(got.JSON), `"submit"`) || got.CallbackID != "" {
		t.Errorf("the notice modal %q offers a submission: %s", got.Rendered, got.JSON)
	}
	return got
}

// onlyRun returns the one run in the store.
func (h *harness) onlyRun() *engine.Run {
	h.t.Helper()
	list, err := h.svc.List(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	if len(list) != 1 {
		h.t.Fatalf("the store holds %d runs, want 1: %+v", len(list), list)
	}
	r, err := h.svc.Load(context.Background(), list[0].ID)
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

// runCount is how many runs the store holds.
func (h *harness) runCount() int {
	h.t.Helper()
	list, err := h.svc.List(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	return len(list)
}

// decisions returns the decision events of the run's journal.
func (h *harness) decisions(id engine.RunID) []engine.Event {
	h.t.Helper()
	j, err := h.db.Journal(context.Background(), id)
	if err != nil {
		h.t.Fatal(err)
	}
	var out []engine.Event
	for _, ev := range j {
		if ev.Type == engine.EvDecision {
			out = append(out, ev)
		}
	}
	return out
}

// botMessages returns the bot's messages in the channel whose text starts
// with prefix.
func botMessages(srv *fakeslack.Server, prefix string) []fakeslack.Message {
	var out []fakeslack.Message
	for _, m := range srv.Messages(channel) {
		if m.FromBot && strings.HasPrefix(m.Text, prefix) {
			out = append(out, m)
		}
	}
	return out
}

// eventually waits until cond holds, checking every 10 ms. Its bound is a
// hang guard, not a claim on speed: a loaded machine may take long, and
// only a bot that never gets there fails.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := hangguard.Deadline(t)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never happened: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// settle waits for the bot to go quiet: no Web API call for quiet, or
// gives up after limit. It is for asserting that something did NOT
// happen (a repeated post), which no event can signal.
func settle(srv *fakeslack.Server, quiet, limit time.Duration) {
	end := time.Now().Add(limit)
	last, lastChange := len(srv.Calls("")), time.Now()
	for time.Now().Before(end) {
		time.Sleep(quiet / 5)
		if n := len(srv.Calls("")); n != last {
			last, lastChange = n, time.Now()
			continue
		}
		if time.Since(lastChange) >= quiet {
			return
		}
	}
}

func containsAll(s string, want ...string) bool {
	for _, w := range want {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}

func dump(srv *fakeslack.Server) string {
	var b strings.Builder
	for _, m := range srv.Messages("") {
		fmt.Fprintf(&b, "  [%s %s thread=%s] %.200q\n", m.Channel, m.TS, m.ThreadTS, m.Rendered)
	}
	return b.String()
}
