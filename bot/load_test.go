package bot_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/fakeslack"
	"github.com/gonogo/gonogo/internal/hangguard"
	"github.com/gonogo/gonogo/storage"
)

// Load and faults: many runs at once, started from several channels by
// several people, decided by simulated users clicking as the messages
// appear, while Slack answers 429s and drops the Socket Mode connection.
// Every run must end as its decisions dictate, every envelope must be
// acknowledged, no post may be missing, every decision must be applied
// exactly once, and the logs must hold neither token nor artifact text.
// As Slack does, the test sends again an envelope left unacknowledged for
// three seconds: a dropped connection loses the envelopes still in flight.
//
// Sizes: 60 runs by default (20 with -short); GONOGO_LONG=1 runs 1,000;
// GONOGO_LOAD_RUNS=n runs n. The users' choices and the runner's results
// come from a seed printed by the test; GONOGO_LOAD_SEED=s replays them
// (timing, and so the interleaving of faults, still varies).

const (
	ldStranger = "U0LDSTRANGER"
	ldApprover = "U0LDAPPROVER"
	ldMarker   = "LOADRUN-%04d"
)

var (
	ldStarters = []string{"U0LDALICE", "U0LDBOB", "U0LDCAROL", "U0LDDAVE", "U0LDERIN"}
	ldChannels = []string{"C0LDONE", "C0LDTWO", "C0LDTHREE", "C0LDFOUR"}
	ldMarkerRE = regexp.MustCompile(`LOADRUN-(\d{4})`)
	// ldRateLimited are the calls the 429 storms hit.
	ldRateLimited = []string{"chat.postMessage", "chat.update", "chat.postEphemeral",
		"files.getUploadURLExternal", "files.completeUploadExternal"}
)

// ldSize is how many runs the test starts.
func ldSize(t *testing.T) (runs int) {
	runs = 60
	switch {
	case os.Getenv("GONOGO_LOAD_RUNS") != "":
		n, err := strconv.Atoi(os.Getenv("GONOGO_LOAD_RUNS"))
		if err != nil || n < 1 || n > 9999 {
			t.Fatalf("GONOGO_LOAD_RUNS=%q: want a number of runs from 1 to 9999", os.Getenv("GONOGO_LOAD_RUNS"))
		}
		runs = n
	case os.Getenv("GONOGO_LONG") == "1":
		runs = 1000
	case testing.Short():
		runs = 20
	}
	return runs
}

func ldSeed(t *testing.T) int64 {
	if s := os.Getenv("GONOGO_LOAD_SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("GONOGO_LOAD_SEED=%q is not a number", s)
		}
		return v
	}
	return time.Now().UnixNano()
}

// ---- the runner ----

// ldResultOf is the scripted result of an attempt: some first and second
// attempts fail, some first attempts come back empty, third attempts
// always produce (the users redo at most twice).
func ldResultOf(seed int64, n, step, attempt int) engine.Result {
	if attempt >= 3 {
		return engine.ResultProduced
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%d/%d/%d", seed, n, step, attempt)
	switch x := h.Sum64() % 100; {
	case x < 12:
		return engine.ResultFailed
	case x < 20 && attempt == 1:
		return engine.ResultEmpty
	}
	return engine.ResultProduced
}

func ldBody(n, step, attempt int, skill string) string {
	return fmt.Sprintf("# %s\n\nARTIFACT-SECRET-%04d-s%d-a%d: the finished artifact of step %d.\n", skill, n, step, attempt, step)
}

func ldEditBody(n, step, attempt int, actor string) string {
	return fmt.Sprintf("# Edited by %s\n\nEDITED-SECRET-%04d-s%d-a%d: the team's own version.\n", actor, n, step, attempt)
}

type ldAttemptKey struct{ n, step, attempt int }

// ldRunner answers at once with the scripted result of each attempt, and
// counts the attempts it was handed.
type ldRunner struct {
	seed int64
	mu   sync.Mutex
	jobs map[ldAttemptKey]int
	lost []string // jobs whose prompt named no load run
}

func (r *ldRunner) Run(_ context.Context, job engine.Job, progress func(engine.Progress)) engine.Outcome {
	m := ldMarkerRE.FindStringSubmatch(job.Prompt)
	if m == nil {
		r.mu.Lock()
		r.lost = append(r.lost, fmt.Sprintf("%s step %d attempt %d", job.Run, job.Step, job.Attempt))
		r.mu.Unlock()
		return engine.Outcome{Err: errors.New("the prompt names no load run")}
	}
	n, _ := strconv.Atoi(m[1])
	r.mu.Lock()
	r.jobs[ldAttemptKey{n, job.Step, job.Attempt}]++
	r.mu.Unlock()
	progress(engine.Progress{Turns: 1, ToolCalls: 1, LastTool: "Read"})
	switch ldResultOf(r.seed, n, job.Step, job.Attempt) {
	case engine.ResultFailed:
		return engine.Outcome{Err: fmt.Errorf("scripted failure of step %d attempt %d", job.Step, job.Attempt)}
	case engine.ResultEmpty:
		return engine.Outcome{Artifact: []byte("\n")}
	}
	return engine.Outcome{Artifact: []byte(ldBody(n, job.Step, job.Attempt, job.Skill)), CostUSD: 0.01}
}

// ---- the bot under test ----

// ldStart is the harness's bot with the load runner, a configured
// approver, a logger the test reads, and an inbox that keeps every envelope
// (fsynced) until it is carried out. Its chat.update
// budget is Slack's tier sped up sixty times (50 updates a second): the
// budget still turns updates away under the load, at a pace the test can
// wait for.
func ldStart(t testing.TB, srv *fakeslack.Server, dir string, runner engine.Runner, log *slog.Logger, inbox *storage.Inbox) *harness {
	t.Helper()
	return start(t, srv, dir, nil, withRunner(runner), withLog(log), withMaxParallel(8), withApprovers(ldApprover),
		withInbox(inbox),
		withConfig(func(c *bot.Config) {
			c.UpdateWindow, c.MessageUpdateInterval = time.Second, time.Second/60
		}))
}

// ldLog is a log sink safe for concurrent writers.
type ldLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *ldLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *ldLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// ---- what Slack shows, as the users see it ----

// ldSnap is one look at the fake Slack: the bot's root messages by the run
// they name, the replies of each thread, and the modals.
type ldSnap struct {
	gen     int
	headers map[string][]fakeslack.Message // marker -> root messages naming it
	threads map[string][]fakeslack.Message // channel + " " + thread ts -> replies, in posting order
	views   []fakeslack.View
	// late counts, by channel + " " + thread ts + " " + user, the notices
	// that a form a click asked for did not open in time (its trigger ran
	// out on a loaded machine): the person is asked to press again.
	late map[string]int
}

// ldFormLate is how gonogo says a click's form did not open in time.
const ldFormLate = "form in time (a form must open within 3 seconds of the click)"

func ldLook(srv *fakeslack.Server, gen int) *ldSnap {
	s := &ldSnap{gen: gen, headers: map[string][]fakeslack.Message{}, threads: map[string][]fakeslack.Message{}, late: map[string]int{}}
	for _, m := range srv.Messages("") {
		if !m.FromBot {
			continue
		}
		if m.ThreadTS == "" || m.ThreadTS == m.TS {
			if mk := ldMarkerRE.FindString(m.Rendered); mk != "" {
				s.headers[mk] = append(s.headers[mk], m)
			}
			continue
		}
		k := m.Channel + " " + m.ThreadTS
		s.threads[k] = append(s.threads[k], m)
	}
	s.views = srv.Views()
	for _, e := range srv.Ephemerals("") {
		if e.Via != "ack" && strings.Contains(e.Text, ldFormLate) {
			s.late[e.Channel+" "+e.ThreadTS+" "+e.User]++
		}
	}
	return s
}

// ldBoard hands the latest look to the users.
type ldBoard struct {
	mu   sync.Mutex
	snap *ldSnap
	next chan struct{}
}

func (b *ldBoard) publish(s *ldSnap) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.snap = s
	close(b.next)
	b.next = make(chan struct{})
}

// after waits for a look newer than gen.
func (b *ldBoard) after(ctx context.Context, gen int) (*ldSnap, bool) {
	for {
		b.mu.Lock()
		s, ch := b.snap, b.next
		b.mu.Unlock()
		if s != nil && s.gen > gen {
			return s, true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, false
		}
	}
}

// ---- acting as users ----

// ldSlack sends what people do, and remembers every envelope, so the test
// can act as Slack does for one that is not acknowledged: send it again.
type ldSlack struct {
	srv *fakeslack.Server

	mu   sync.Mutex
	last int64 // action time of the latest click, in microseconds
	sent map[string]time.Time
	envs []string
	// Counters for the report.
	retried, doubled int
}

func (s *ldSlack) record(env string) {
	s.sent[env] = time.Now()
	s.envs = append(s.envs, env)
}

// distinct makes every click's action time later than the last one's:
// the bot keys a decision by user and action time, and one person cannot
// click twice in the same microsecond.
func (s *ldSlack) distinct() {
	for time.Now().UnixMicro() <= s.last {
		time.Sleep(time.Microsecond)
	}
}

func (s *ldSlack) slash(user, ch, text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	env := s.srv.SendSlashCommand(slack.SlashCommand{Command: "/gonogo", UserID: user, ChannelID: ch, TeamID: fakeslack.TeamID, Text: text})
	s.record(env)
	return env
}

func (s *ldSlack) click(user, ch, ts, action string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.distinct()
	env, err := s.srv.Click(user, ch, ts, action)
	s.last = time.Now().UnixMicro()
	if err != nil {
		return "", err
	}
	s.record(env)
	return env, nil
}

// clickStale presses a button as it was on m, whatever the message shows
// now: the second click of a double click, from a client not yet updated.
func (s *ldSlack) clickStale(user string, m fakeslack.Message, b fakeslack.Button) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.distinct()
	now := time.Now()
	ts := fmt.Sprintf("%d.%06d", now.Unix(), now.Nanosecond()/1000)
	cb := slack.InteractionCallback{
		Type:      slack.InteractionTypeBlockActions,
		User:      slack.User{ID: user, TeamID: fakeslack.TeamID},
		Team:      slack.Team{ID: fakeslack.TeamID},
		Channel:   slack.Channel{GroupConversation: slack.GroupConversation{Conversation: slack.Conversation{ID: m.Channel}}},
		Container: slack.Container{Type: "message", MessageTs: m.TS, ChannelID: m.Channel, ThreadTs: m.ThreadTS},
		ActionTs:  ts,
		ActionCallback: slack.ActionCallbacks{BlockActions: []*slack.BlockAction{{
			ActionID: b.ActionID, BlockID: b.BlockID, Value: b.Value, Type: "button", ActionTs: ts,
		}}},
	}
	env, err := s.srv.SendInteraction(cb)
	s.last = time.Now().UnixMicro()
	if err != nil {
		return "", err
	}
	s.record(env)
	return env, nil
}

func (s *ldSlack) submit(user, view string, values map[string]string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	env, err := s.srv.SubmitView(user, view, values)
	if err != nil {
		return "", err
	}
	s.record(env)
	return env, nil
}

// redeliver sends an envelope again at once, as Slack sometimes does.
func (s *ldSlack) redeliver(env string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv.Redeliver(env) == nil {
		s.doubled++
	}
}

// retryUnacked sends again every envelope left unacknowledged for longer
// than after, as Slack does (one written to a connection that then died
// is otherwise lost).
func (s *ldSlack) retryUnacked(after time.Duration) {
	s.mu.Lock()
	envs := slices.Clone(s.envs)
	s.mu.Unlock()
	var unacked []string
	_ = s.srv.WaitFor(context.Background(), func(st *fakeslack.State) bool {
		for _, e := range envs {
			if !st.Acked(e) {
				unacked = append(unacked, e)
			}
		}
		return true
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range unacked {
		if time.Since(s.sent[e]) < after {
			continue
		}
		if s.srv.Redeliver(e) == nil {
			s.sent[e] = time.Now()
			s.retried++
		}
	}
}

// unacked lists the envelopes not acknowledged (yet).
func (s *ldSlack) unacked() []string {
	s.mu.Lock()
	envs := slices.Clone(s.envs)
	s.mu.Unlock()
	var out []string
	_ = s.srv.WaitFor(context.Background(), func(st *fakeslack.State) bool {
		for _, e := range envs {
			if !st.Acked(e) {
				out = append(out, e)
			}
		}
		return true
	})
	return out
}

// ---- one run, as its users see and decide it ----

type ldPhase int

const (
	ldWaitHeader ldPhase = iota
	ldWaitCheckpoint
	ldWaitModal
	ldWaitEnd
	ldDone
)

func (p ldPhase) String() string {
	return [...]string{"waiting for the header", "waiting for a checkpoint", "waiting for a modal", "waiting for the end", "done"}[p]
}

// ldDecision is a decision the bot must apply exactly once.
type ldDecision struct {
	step, attempt int
	kind          engine.DecisionKind
	actor         string
}

func (d ldDecision) String() string {
	return fmt.Sprintf("step %d attempt %d: %s by %s", d.step, d.attempt, d.kind, d.actor)
}

// ldModal is a modal a user opened and waits to submit: by a click of
// action on message ts.
type ldModal struct {
	callback, meta, actor string
	kind                  engine.DecisionKind
	values                map[string]string
	ts, action            string
}

type ldRun struct {
	n                        int
	marker, channel, starter string
	skills                   []string
	seed                     int64
	rng                      *rand.Rand

	// What the users found.
	thread string
	id     engine.RunID
	halts  []string // the FAILED halt notices, by ts
	final  string

	// Where the run is.
	phase         ldPhase
	step, attempt int
	modal         ldModal
	since         time.Time
	wake          time.Time // a user acts on what they see no sooner than this

	// The model: what the bot and the engine must end with.
	want     []ldDecision
	aborted  bool
	attempts []int               // per step, attempts started
	status   []engine.StepStatus // per step, at the end
	edits    map[[2]int]string   // step, attempt -> the edit's body
	stranger int                 // clicks by a stranger, each refused
	refusals map[string]int      // second clicks of a double click, by user, each refused
	late     map[string]int      // notices that a form did not open in time, by user, each pressed again
	did      []string            // what the users did, for failure reports
}

func newLdRun(seed int64, n int) *ldRun {
	rng := rand.New(rand.NewSource(seed + int64(n)*7919))
	skills := slices.Clone(harnessSkills)
	rng.Shuffle(len(skills), func(i, j int) { skills[i], skills[j] = skills[j], skills[i] })
	skills = skills[:2+rng.Intn(2)]
	r := &ldRun{
		n: n, marker: fmt.Sprintf(ldMarker, n), seed: seed, rng: rng,
		channel: ldChannels[n%len(ldChannels)], starter: ldStarters[(n/len(ldChannels))%len(ldStarters)],
		skills: skills, step: 1, attempt: 1, since: time.Now(),
		attempts: make([]int, len(skills)), status: make([]engine.StepStatus, len(skills)),
		edits: map[[2]int]string{}, refusals: map[string]int{}, late: map[string]int{},
	}
	r.attempts[0] = 1
	for i := range r.status {
		r.status[i] = engine.StepPending
	}
	return r
}

func (r *ldRun) command() string {
	return "chain " + strings.Join(r.skills, " -> ") + " -- " + r.marker
}

func (r *ldRun) note(format string, args ...any) {
	r.did = append(r.did, fmt.Sprintf("%s "+format, append([]any{time.Now().Format("15:04:05.000")}, args...)...))
}

func (r *ldRun) ref(step, attempt int) string {
	return bot.StepRef{Run: r.id, Step: step, Attempt: attempt}.Value()
}

func ldIsStep(m fakeslack.Message) bool { return strings.HasPrefix(m.Text, "*Step ") }

// decisionButton finds, on m, a decision button of the attempt.
func (r *ldRun) decisionButton(m fakeslack.Message, step, attempt int) bool {
	for _, b := range m.Buttons() {
		if b.ActionID != bot.ActionApprove && b.ActionID != bot.ActionRedo {
			continue
		}
		ref, err := bot.ParseStepRef(b.Value)
		if err != nil || ref.Step != step || ref.Attempt != attempt || (r.id != "" && ref.Run != r.id) {
			continue
		}
		if r.id == "" {
			r.id = ref.Run
		}
		return true
	}
	return false
}

// advance acts on what the snapshot shows; it does at most one thing that
// changes Slack, since what follows can only be seen in a later look.
func (r *ldRun) advance(s *ldSnap, sl *ldSlack) error {
	if r.phase == ldWaitHeader {
		hs := s.headers[r.marker]
		if len(hs) == 0 {
			return nil
		}
		r.thread = hs[0].TS
		r.phase, r.since = ldWaitCheckpoint, time.Now()
		r.note("saw the header %s", r.thread)
	}
	msgs := s.threads[r.channel+" "+r.thread]
	switch r.phase {
	case ldWaitCheckpoint:
		return r.checkpoint(msgs, sl)
	case ldWaitModal:
		return r.submitModal(s, sl)
	case ldWaitEnd:
		want := "Run complete"
		if r.aborted {
			want = "Run halted: aborted"
		}
		for _, m := range msgs {
			if !ldIsStep(m) && len(m.Files) == 0 && !slices.Contains(r.halts, m.TS) && strings.Contains(m.Text, want) {
				r.final, r.phase = m.TS, ldDone
				r.note("saw the end %s", m.TS)
				return nil
			}
		}
	}
	return nil
}

func (r *ldRun) checkpoint(msgs []fakeslack.Message, sl *ldSlack) error {
	prefix := fmt.Sprintf("*Step %d of %d", r.step, len(r.skills))
	var stepMsg, halt fakeslack.Message
	for _, m := range msgs {
		if strings.HasPrefix(m.Text, prefix) && r.decisionButton(m, r.step, r.attempt) {
			stepMsg = m
		}
	}
	if stepMsg.TS == "" {
		return nil
	}
	res := ldResultOf(r.seed, r.n, r.step, r.attempt)
	if !r.thought() {
		return nil
	}
	if res == engine.ResultFailed {
		// A FAILED step is announced, with Redo and Abort, besides its
		// own message; the users wait for it so that the thread's shape
		// is known.
		for _, m := range msgs {
			if !ldIsStep(m) && strings.Contains(m.Text, "Run halted") && r.decisionButton(m, r.step, r.attempt) {
				halt = m
			}
		}
		if halt.TS == "" {
			return nil
		}
		if !slices.Contains(r.halts, halt.TS) {
			r.halts = append(r.halts, halt.TS)
		}
	}
	kind := r.choose(res)
	actor := r.starter
	if r.rng.Intn(100) < 20 {
		actor = ldApprover
	}
	target := stepMsg
	if halt.TS != "" && r.rng.Intn(2) == 0 {
		target = halt
	}
	if r.rng.Intn(100) < 12 {
		// Someone who may not decide clicks first; nothing may change.
		bs := target.Buttons()
		b := bs[r.rng.Intn(len(bs))]
		if _, err := sl.click(ldStranger, r.channel, target.TS, b.ActionID); err != nil {
			return fmt.Errorf("stranger's click: %w", err)
		}
		r.stranger++
		r.note("stranger clicked %s on %s", b.Text, target.TS)
	}
	action := map[engine.DecisionKind]string{engine.DecideApprove: bot.ActionApprove, engine.DecideSkip: bot.ActionSkip,
		engine.DecideAbort: bot.ActionAbort, engine.DecideEdit: bot.ActionEdit, engine.DecideRedo: bot.ActionRedo}[kind]
	env, err := sl.click(actor, r.channel, target.TS, action)
	if err != nil {
		return fmt.Errorf("%s's click on %s: %w", actor, kind, err)
	}
	r.note("%s clicked %s on step %d attempt %d (%s)", actor, kind, r.step, r.attempt, target.TS)
	switch kind {
	case engine.DecideEdit, engine.DecideRedo:
		r.modal = ldModal{callback: bot.ModalRedo, meta: r.ref(r.step, r.attempt), actor: actor, kind: kind,
			values: map[string]string{bot.InputFeedback: fmt.Sprintf("Tighten step %d.", r.step)}, ts: target.TS, action: action}
		if kind == engine.DecideEdit {
			body := ldEditBody(r.n, r.step, r.attempt, actor)
			r.modal.callback, r.modal.values = bot.ModalEdit, map[string]string{bot.InputArtifact: body}
			r.edits[[2]int{r.step, r.attempt}] = body
		}
		r.phase, r.since = ldWaitModal, time.Now()
		return nil
	}
	if r.rng.Intn(100) < 10 {
		// A double click: the second press comes from a client that has
		// not seen the first one's effect; it must be refused.
		i := slices.IndexFunc(target.Buttons(), func(b fakeslack.Button) bool { return b.ActionID == action })
		if _, err := sl.clickStale(actor, target, target.Buttons()[i]); err != nil {
			return fmt.Errorf("second click: %w", err)
		}
		r.refusals[actor]++
		r.note("%s clicked %s again", actor, kind)
	}
	if r.rng.Intn(100) < 6 {
		sl.redeliver(env)
		r.note("Slack delivered that click twice")
	}
	r.decided(kind, actor)
	return nil
}

// thought reports whether the user has looked long enough at what
// appeared to act on it: people take a moment, and so the runs overlap.
func (r *ldRun) thought() bool {
	if r.wake.IsZero() {
		r.wake = time.Now().Add(time.Duration(20+r.rng.Intn(300)) * time.Millisecond)
	}
	if time.Now().Before(r.wake) {
		return false
	}
	r.wake = time.Time{}
	return true
}

func (r *ldRun) submitModal(s *ldSnap, sl *ldSlack) error {
	// A form that did not open in time (its trigger ran out while the
	// machine was busy): the person presses the button again, as told.
	if n := s.late[r.channel+" "+r.thread+" "+r.modal.actor]; n > r.late[r.modal.actor] {
		r.late[r.modal.actor] = n
		if _, err := sl.click(r.modal.actor, r.channel, r.modal.ts, r.modal.action); err != nil {
			return fmt.Errorf("%s's click again on %s: %w", r.modal.actor, r.modal.kind, err)
		}
		r.note("%s was told the %s form did not open, and clicked again", r.modal.actor, r.modal.kind)
		return nil
	}
	for _, v := range s.views {
		if v.CallbackID != r.modal.callback || v.PrivateMetadata != r.modal.meta || v.User != r.modal.actor {
			continue
		}
		if !r.thought() {
			return nil
		}
		if _, err := sl.submit(r.modal.actor, v.ID, r.modal.values); err != nil {
			return fmt.Errorf("submit the %s modal: %w", r.modal.kind, err)
		}
		r.note("%s submitted the %s modal %s", r.modal.actor, r.modal.kind, v.ID)
		r.decided(r.modal.kind, r.modal.actor)
		return nil
	}
	return nil
}

// choose picks a decision the step allows: mostly approve.
func (r *ldRun) choose(res engine.Result) engine.DecisionKind {
	x := r.rng.Intn(100)
	if res == engine.ResultFailed {
		if x < 75 {
			return engine.DecideRedo
		}
		return engine.DecideAbort
	}
	switch {
	case x < 64:
		return engine.DecideApprove
	case x < 74:
		return engine.DecideSkip
	case x < 84:
		return engine.DecideEdit
	case x < 93 && r.attempt < 3:
		return engine.DecideRedo
	case x < 93:
		return engine.DecideApprove
	}
	return engine.DecideAbort
}

// decided moves the model on by an accepted decision.
func (r *ldRun) decided(kind engine.DecisionKind, actor string) {
	r.want = append(r.want, ldDecision{r.step, r.attempt, kind, actor})
	r.since = time.Now()
	i := r.step - 1
	switch kind {
	case engine.DecideRedo:
		r.attempt++
		r.attempts[i]++
		r.phase = ldWaitCheckpoint
		return
	case engine.DecideAbort:
		r.aborted = true
		for j := range r.status {
			if r.status[j] != engine.StepDone && r.status[j] != engine.StepSkipped {
				r.status[j] = engine.StepAborted
			}
		}
		r.phase = ldWaitEnd
		return
	case engine.DecideSkip:
		r.status[i] = engine.StepSkipped
	default:
		r.status[i] = engine.StepDone
	}
	if r.step == len(r.skills) {
		r.phase = ldWaitEnd
		return
	}
	r.step, r.attempt = r.step+1, 1
	r.attempts[r.step-1] = 1
	r.phase = ldWaitCheckpoint
}

// files are the names and bodies the run's thread must hold: every
// attempt's artifact once, and every edit once more.
func (r *ldRun) files() map[string]string {
	out := map[string]string{}
	for i, skill := range r.skills {
		for a := 1; a <= r.attempts[i]; a++ {
			name := fmt.Sprintf("%02d-%s.md", i+1, skill)
			if a > 1 {
				name = fmt.Sprintf("%02d-%s.attempt-%d.md", i+1, skill, a)
			}
			if ldResultOf(r.seed, r.n, i+1, a) == engine.ResultProduced {
				out[name] = ldBody(r.n, i+1, a, skill)
			}
			if body, ok := r.edits[[2]int{i + 1, a}]; ok {
				out[strings.TrimSuffix(name, ".md")+".edited.md"] = body
			}
		}
	}
	return out
}

func (r *ldRun) failedAttempts() int {
	n := 0
	for i := range r.skills {
		for a := 1; a <= r.attempts[i]; a++ {
			if ldResultOf(r.seed, r.n, i+1, a) == engine.ResultFailed {
				n++
			}
		}
	}
	return n
}

// ---- the test ----

type ldStats struct {
	storms map[string]int
	disc   int
	drops  int
}

func TestLoadManyRuns(t *testing.T) {
	n := ldSize(t)
	seed := ldSeed(t)
	// The runs are paced by Slack's tiers and by the machine: the only
	// limit is the one that catches a hang (the test binary's deadline),
	// and the test ends as soon as every run has.
	deadline := hangguard.Deadline(t)
	t.Logf("%d runs, seed %d (GONOGO_LOAD_SEED=%d replays the script)", n, seed, seed)
	began := time.Now()

	srv := newSlack(t) // which checks, at the end, that nothing broke Slack's limits
	dir := t.TempDir()
	logs := &ldLog{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	runner := &ldRunner{seed: seed, jobs: map[ldAttemptKey]int{}}
	inbox, err := storage.OpenInbox(t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer inbox.Close()
	rig := ldStart(t, srv, dir, runner, log, inbox)

	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	sl := &ldSlack{srv: srv, sent: map[string]time.Time{}}
	runs := make([]*ldRun, n)
	for i := range runs {
		runs[i] = newLdRun(seed, i)
	}

	// The users: each worker starts its runs and decides them as their
	// messages appear.
	board := &ldBoard{next: make(chan struct{})}
	usersDone := make(chan struct{})
	var users sync.WaitGroup
	var errMu sync.Mutex
	var userErrs []string
	workers := min(8, n)
	for w := range workers {
		users.Add(1)
		go func() {
			defer users.Done()
			var mine []*ldRun
			for i := w; i < n; i += workers {
				mine = append(mine, runs[i])
				sl.slash(runs[i].starter, runs[i].channel, runs[i].command())
			}
			for gen := 0; ; {
				s, ok := board.after(ctx, gen)
				if !ok {
					return
				}
				gen = s.gen
				left := 0
				for _, r := range mine {
					if r.phase == ldDone {
						continue
					}
					if err := r.advance(s, sl); err != nil {
						errMu.Lock()
						userErrs = append(userErrs, fmt.Sprintf("%s: %v", r.marker, err))
						errMu.Unlock()
						r.phase = ldDone
					}
					if r.phase != ldDone {
						left++
					}
				}
				if left == 0 {
					return
				}
			}
		}()
	}
	go func() { users.Wait(); close(usersDone) }()

	// What the users see: one look at Slack at a time, shared by all.
	look := time.Duration(20+n/4) * time.Millisecond
	var bg sync.WaitGroup
	bgCtx, stopBg := context.WithCancel(ctx)
	bg.Add(1)
	go func() {
		defer bg.Done()
		for gen := 1; bgCtx.Err() == nil; gen++ {
			board.publish(ldLook(srv, gen))
			select {
			case <-bgCtx.Done():
			case <-usersDone:
				return
			case <-time.After(look):
			}
		}
	}()

	// Slack resends what was not acknowledged.
	bg.Add(1)
	go func() {
		defer bg.Done()
		for {
			select {
			case <-bgCtx.Done():
				return
			case <-time.After(500 * time.Millisecond):
				sl.retryUnacked(3 * time.Second)
			}
		}
	}()

	// Chaos: 429 storms on every posting method and dropped connections,
	// spread over the first part of the test.
	stats := ldStats{storms: map[string]int{}}
	var chaos sync.WaitGroup
	chaos.Add(1)
	go func() {
		defer chaos.Done()
		rng := rand.New(rand.NewSource(seed))
		var faults []string
		for range 5 + n/100 {
			faults = append(faults, "429")
		}
		for range 2 + n/250 {
			faults = append(faults, "disconnect", "drop")
		}
		rng.Shuffle(len(faults), func(i, j int) { faults[i], faults[j] = faults[j], faults[i] })
		storm := 0
		for len(faults) > 0 {
			select {
			case <-ctx.Done():
				return
			case <-usersDone:
				return
			case <-time.After(time.Duration(50+rng.Intn(250)) * time.Millisecond):
			}
			switch faults[0] {
			case "429":
				// Every method at least once, then at random; a storm
				// replaces what is left of the last one on its method, so
				// a method gets a new one only once that one is spent.
				method := ldRateLimited[storm%len(ldRateLimited)]
				if storm >= len(ldRateLimited) {
					method = ldRateLimited[rng.Intn(len(ldRateLimited))]
				}
				if srv.RateLimited(method) < stats.storms[method] {
					continue
				}
				storm++
				times := 1 + rng.Intn(3)
				srv.RateLimit(method, times, time.Second)
				stats.storms[method] += times
			case "disconnect":
				if err := srv.Disconnect(); err != nil {
					continue // not connected right now: try again later
				}
				stats.disc++
			case "drop":
				if err := srv.DropConnection(); err != nil {
					continue
				}
				stats.drops++
			}
			faults = faults[1:]
		}
	}()

	<-usersDone // the users stop at the deadline too
	chaos.Wait()
	decided := time.Since(began)

	var stalled []*ldRun
	for _, r := range runs {
		if r.phase != ldDone {
			stalled = append(stalled, r)
		}
	}
	for _, e := range userErrs {
		t.Errorf("a user could not act: %s", e)
	}
	if len(stalled) > 0 {
		t.Errorf("%d of %d runs did not reach their end before the test's deadline (%s)", len(stalled), n, deadline.Format(time.TimeOnly))
		final := ldLook(srv, 0)
		for _, r := range stalled[:min(len(stalled), 5)] {
			t.Errorf("stalled %s\n%s", ldDescribe(r), ldDumpThread(final, r))
		}
	}

	// Every envelope acknowledged (resending the ones lost with a
	// connection), and every refusal shown.
	for ctx.Err() == nil && len(sl.unacked()) > 0 {
		time.Sleep(50 * time.Millisecond)
	}
	stopBg()
	bg.Wait()
	if left := sl.unacked(); len(left) > 0 {
		t.Errorf("%d envelopes were never acknowledged: %v", len(left), left[:min(len(left), 10)])
	}
	wantRefused := map[string]int{}
	strangers := 0
	for _, r := range runs {
		strangers += r.stranger
		for u, k := range r.refusals {
			wantRefused[u] += k
		}
		for u, k := range r.late {
			wantRefused[u] += k
		}
	}
	// A stranger's Edit or Redo is refused in the modal the click opens;
	// every other refusal is an ephemeral message, as is each notice that
	// a form did not open in time.
	refusals := func(st *fakeslack.State, user string) int {
		k := 0
		for _, e := range afterAcks(st.Ephemerals(user)) {
			if user == ldStranger && strings.Contains(e.Text, "Only <@") ||
				user != ldStranger && (strings.Contains(e.Text, "has moved on") || strings.Contains(e.Text, "Already done") || strings.Contains(e.Text, ldFormLate)) {
				k++
			}
		}
		for _, v := range st.Views() {
			if user == ldStranger && v.User == user && strings.Contains(v.Rendered, "Only <@") {
				k++
			}
		}
		return k
	}
	_ = srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool {
		if refusals(st, ldStranger) < strangers {
			return false
		}
		for u, k := range wantRefused {
			if refusals(st, u) < k {
				return false
			}
		}
		return true
	})
	// Files wait for room in Slack's upload tier (100 a minute), so a run's
	// thread holds them all only some time after the run ended: wait for
	// each finished run's files and audit trail, as a person would, until
	// the test's deadline: the wait ends as soon as they are all there.
	_ = srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool {
		names := map[string]map[string]bool{} // thread -> file names in it
		for _, m := range st.Messages("") {
			for _, f := range m.Files {
				k := m.Channel + " " + m.ThreadTS
				if names[k] == nil {
					names[k] = map[string]bool{}
				}
				names[k][f.Name] = true
			}
		}
		for _, r := range runs {
			if r.phase != ldDone {
				continue
			}
			in := names[r.channel+" "+r.thread]
			if !in["audit-"+string(r.id)+".md"] {
				return false
			}
			for name := range r.files() {
				if !in[name] {
					return false
				}
			}
		}
		return true
	})
	// Header updates wait for the chat.update budget: quiet means no call
	// for longer than a token takes to come back.
	settle(srv, 2*time.Second, 30*time.Second)
	for _, u := range append(slices.Clone(ldStarters), ldApprover, ldStranger) {
		want := wantRefused[u]
		if u == ldStranger {
			want = strangers
		}
		var got []string
		for _, e := range afterAcks(srv.Ephemerals(u)) {
			got = append(got, e.Text)
		}
		for _, v := range srv.Views() {
			if u == ldStranger && v.User == u {
				got = append(got, v.Rendered)
			}
		}
		if len(got) != want {
			t.Errorf("%s was shown %d ephemeral messages, want %d refusals: %q", u, len(got), want, got)
		}
	}

	// The threads, the store and the runner agree with the model.
	final := ldLook(srv, 0)
	acks := ldAckLatencies(srv, sl)
	rig.stop()
	// Every envelope acknowledged was carried out and marked done.
	if left, err := inbox.Pending(context.Background()); err != nil || len(left) > 0 {
		t.Errorf("the inbox still holds %d envelopes (%v)", len(left), err)
	}
	db, err := storage.Open(dir, storage.Options{NoSync: true})
	if err != nil {
		t.Fatalf("reopen the store: %v", err)
	}
	defer db.Close()
	stored := ldStored(t, db)
	if len(stored) != n {
		t.Errorf("the store holds %d load runs, want %d", len(stored), n)
	}
	var bad []string
	runner.mu.Lock()
	jobs := runner.jobs
	lost := runner.lost
	runner.mu.Unlock()
	if len(lost) > 0 {
		t.Errorf("the runner was handed jobs of no load run: %v", lost)
	}
	for _, r := range runs {
		if r.phase != ldDone {
			continue // reported above
		}
		problems := ldCheckRun(t, r, final, stored[r.marker], db, dir, jobs)
		if len(problems) > 0 {
			bad = append(bad, fmt.Sprintf("%s\n  problems:\n    %s\n%s", ldDescribe(r), strings.Join(problems, "\n    "), ldDumpThread(final, r)))
		}
	}
	if len(bad) > 0 {
		t.Errorf("%d of %d runs do not end as their decisions dictate; the first ones:", len(bad), n)
		for _, b := range bad[:min(len(bad), 5)] {
			t.Error(b)
		}
	}

	// The logs hold neither token nor artifact text.
	text := logs.String()
	for what, secret := range map[string]string{"the bot token": srv.BotToken(), "the app token": srv.AppToken(),
		"artifact text": "ARTIFACT-SECRET", "edited artifact text": "EDITED-SECRET"} {
		if i := strings.Index(text, secret); i >= 0 {
			lo, hi := max(0, i-200), min(len(text), i+200)
			t.Errorf("the log holds %s: …%s…", what, text[lo:hi])
		}
	}

	// The report.
	var kinds = map[engine.DecisionKind]int{}
	doubles, failed, late := 0, 0, 0
	for _, r := range runs {
		for _, k := range r.late {
			late += k
		}
		for _, d := range r.want {
			kinds[d.kind]++
		}
		for _, k := range r.refusals {
			doubles += k
		}
		failed += r.failedAttempts()
	}
	var storms []string
	for _, m := range ldRateLimited {
		storms = append(storms, fmt.Sprintf("%s %d/%d", m, srv.RateLimited(m), stats.storms[m]))
	}
	t.Logf("%d runs decided in %v (all checks %v); decisions %v; %d FAILED attempts; %d stranger clicks, %d double clicks, %d clicks delivered twice, %d envelopes resent unacknowledged, %d forms that did not open in time pressed again",
		n, decided.Round(time.Millisecond), time.Since(began).Round(time.Millisecond), kinds, failed, strangers, doubles, sl.doubled, sl.retried, late)
	t.Logf("faults: 429s answered/injected: %s; %d disconnects, %d dropped connections, %d connections in all",
		strings.Join(storms, ", "), stats.disc, stats.drops, srv.Connections())
	t.Logf("acks: %s; %d Web API calls; %d log bytes; %d violations", acks, len(srv.Calls("")), len(text), len(srv.Violations()))
}

// Uploads to several channels at once, when Slack answers one of them 429:
// none of the others may call the method again before the Retry-After
// ends.
func TestLoadConcurrentUploadsWaitOutRetryAfter(t *testing.T) {
	srv := newSlack(t)
	start(t, srv, t.TempDir(), &scriptedRunner{})
	srv.RateLimit("files.completeUploadExternal", 1, time.Second)
	srv.RateLimit("files.getUploadURLExternal", 1, time.Second)
	var chans []string
	for i := range 12 {
		ch := fmt.Sprintf("C0UPLOAD%02d", i)
		chans = append(chans, ch)
		srv.SendSlashCommand(slack.SlashCommand{Command: "/gonogo", UserID: starter, ChannelID: ch, TeamID: fakeslack.TeamID,
			Text: "chain deliver-prd -> deliver-user-stories"})
	}
	err := srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool {
		for _, ch := range chans {
			files := 0
			for _, m := range st.Messages(ch) {
				files += len(m.Files)
			}
			if files == 0 {
				return false
			}
		}
		return true
	})
	if err != nil {
		t.Fatalf("not every run's artifact was attached: %v", err)
	}
	for _, v := range srv.Violations() {
		if strings.HasPrefix(v.Method, "files.") && strings.Contains(v.Detail, "before the Retry-After") {
			t.Errorf("%s was called again inside the Retry-After of a 429: %s", v.Method, v.Detail)
		}
	}
}

// A channel that Slack rate-limits must not hold up the threads of the
// other channels: Slack's posting limit is per channel.
func TestLoadRateLimitedChannelDoesNotStallOthers(t *testing.T) {
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), &scriptedRunner{})
	const busy, quiet = "C0BUSY", "C0QUIET"
	srv.RateLimit("chat.postMessage", 1, 3*time.Second)
	for range 6 {
		srv.SendSlashCommand(slack.SlashCommand{Command: "/gonogo", UserID: starter, ChannelID: busy, TeamID: fakeslack.TeamID,
			Text: "chain deliver-prd"})
	}
	if err := srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool { return st.RateLimited("chat.postMessage") == 1 }); err != nil {
		t.Fatal(err)
	}
	// Every busy run is started, so its thread is due before the quiet one's.
	for h.runCount() < 6 {
		time.Sleep(time.Millisecond)
	}
	srv.SendSlashCommand(slack.SlashCommand{Command: "/gonogo", UserID: starter, ChannelID: quiet, TeamID: fakeslack.TeamID,
		Text: "chain deliver-prd"})
	first, err := srv.WaitMessage(ctxT(t), quiet, func(m fakeslack.Message) bool { return m.FromBot })
	if err != nil {
		t.Fatal(err)
	}
	// The busy channel posts once per 3 s window: the quiet channel's first
	// post comes before the busy channel's second, not behind its Retry-After.
	busyPosts := 0
	for _, m := range srv.Messages(busy) {
		if m.FromBot && m.Posted.Before(first.Posted) {
			busyPosts++
		}
	}
	if busyPosts > 1 {
		t.Errorf("the quiet channel's run posted after %d of the busy channel's posts, behind its Retry-After", busyPosts)
	}
}

// A FAILED step's halt notice, once the step is redone and the run
// completes, must not become a second end of the run: people and scripts
// read "Run complete" as the end of the thread.
func TestLoadHaltNoticeIsNotASecondEnd(t *testing.T) {
	srv := newSlack(t)
	runner := &scriptedRunner{}
	runner.script("deliver-prd", engine.Outcome{Err: errors.New("the agent crashed")})
	start(t, srv, t.TempDir(), runner)

	slash(t, srv, starter, "chain deliver-prd")
	halt := waitMsg(t, srv, "announcing the FAILED step", func(m fakeslack.Message) bool {
		return m.FromBot && !ldIsStep(m) && strings.Contains(m.Text, "Run halted") && len(m.Buttons()) > 0
	})
	runner.script("deliver-prd", engine.Outcome{Artifact: []byte("# PRD\n\nThe second attempt worked.\n")})
	click(t, srv, starter, halt, "Redo")
	env, err := srv.SubmitView(starter, waitView(t, srv, 0).ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	ack(t, srv, env)
	step := waitStep(t, srv, 1, "attempt 2", "Approve")
	click(t, srv, starter, step, "Approve")
	waitText(t, srv, "Run complete")
	// The handled notice gives up its buttons; once it has, and the bot is
	// quiet, a second end of the run would show.
	waitMsg(t, srv, "the handled halt notice, without buttons", func(m fakeslack.Message) bool {
		return m.TS == halt.TS && len(m.Buttons()) == 0
	})
	settle(srv, 100*time.Millisecond, 2*time.Second)

	if n := countText(srv, "Run complete"); n != 1 {
		t.Errorf("%d messages say Run complete, want 1:\n%s", n, dump(srv))
	}
	if m, _ := srv.Message(channel, halt.TS); len(m.Buttons()) > 0 || strings.Contains(m.Text, "Run complete") {
		t.Errorf("the handled halt notice reads %.120q with buttons %v", m.Text, labels(m))
	}
}

// ldStored reads every run back from the store, by the load run it is.
func ldStored(t *testing.T, db *storage.DB) map[string]*engine.Run {
	t.Helper()
	ctx := context.Background()
	list, err := db.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*engine.Run{}
	for _, s := range list {
		r, err := db.Load(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		mk := ldMarkerRE.FindString(r.Plan.Context)
		if _, dup := out[mk]; dup || mk == "" {
			t.Errorf("run %s (context %q) is a second run of %q", r.ID, r.Plan.Context, mk)
			continue
		}
		out[mk] = r
	}
	return out
}

// ldCheckRun compares one run's thread, store and runner jobs with what
// its decisions dictate, and returns what differs.
func ldCheckRun(t *testing.T, r *ldRun, s *ldSnap, got *engine.Run, db *storage.DB, dir string, jobs map[ldAttemptKey]int) []string {
	t.Helper()
	var p []string
	add := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }
	ctx := context.Background()

	// The store.
	if got == nil {
		return []string{"the store has no such run"}
	}
	wantState := engine.RunCompleted
	if r.aborted {
		wantState = engine.RunAborted
	}
	if got.State != wantState {
		add("the run is %s, want %s", got.State, wantState)
	}
	if got.ID != r.id {
		add("the store's run is %s, the buttons named %s", got.ID, r.id)
	}
	if got.StartedBy != r.starter || got.Origin.Channel != r.channel {
		add("started by %s in %s, want %s in %s", got.StartedBy, got.Origin.Channel, r.starter, r.channel)
	}
	for i := range r.skills {
		if i >= len(got.Steps) {
			add("the run has %d steps, want %d", len(got.Steps), len(r.skills))
			break
		}
		st := &got.Steps[i]
		if st.Skill != r.skills[i] {
			add("step %d runs %s, want %s", i+1, st.Skill, r.skills[i])
		}
		if st.Status != r.status[i] {
			add("step %d is %s, want %s", i+1, st.Status, r.status[i])
		}
		if len(st.Attempts) != r.attempts[i] {
			add("step %d has %d attempts, want %d", i+1, len(st.Attempts), r.attempts[i])
		}
		for _, a := range st.Attempts {
			if want := ldResultOf(r.seed, r.n, i+1, a.N); a.Result != want {
				add("step %d attempt %d is %s, want %s", i+1, a.N, a.Result, want)
			}
			if k := jobs[ldAttemptKey{r.n, i + 1, a.N}]; k != 1 {
				add("step %d attempt %d was run %d times, want once", i+1, a.N, k)
			}
			edit, edited := r.edits[[2]int{i + 1, a.N}]
			if a.Edited != edited {
				add("step %d attempt %d edited = %t, want %t", i+1, a.N, a.Edited, edited)
			}
			if !a.Artifact {
				continue
			}
			versions, err := db.ArtifactVersions(ctx, got.ID, i+1, a.N)
			if err != nil || len(versions) == 0 {
				add("step %d attempt %d: no stored artifact: %v", i+1, a.N, err)
				continue
			}
			if ldResultOf(r.seed, r.n, i+1, a.N) == engine.ResultProduced && string(versions[0]) != ldBody(r.n, i+1, a.N, st.Skill) {
				add("step %d attempt %d: the agent's artifact is stored as %q", i+1, a.N, versions[0])
			}
			if edited && string(versions[len(versions)-1]) != edit {
				add("step %d attempt %d: the edit is stored as %q", i+1, a.N, versions[len(versions)-1])
			}
			if a.File != "" {
				disk, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(a.File)))
				if err != nil || !bytes.Equal(disk, versions[len(versions)-1]) {
					add("step %d attempt %d: %s on disk holds %q (%v), the store %q", i+1, a.N, a.File, disk, err, versions[len(versions)-1])
				}
			}
		}
	}
	for i := range r.skills {
		if k := jobs[ldAttemptKey{r.n, i + 1, r.attempts[i] + 1}]; k > 0 {
			add("step %d attempt %d was run, but no one asked for it", i+1, r.attempts[i]+1)
		}
	}

	// The journal: contiguous, rebuilding the run, and every decision the
	// users made exactly once, in order, nothing else.
	journal, err := db.Journal(ctx, got.ID)
	if err != nil {
		add("read the journal: %v", err)
	}
	var ds []ldDecision
	keys := map[string]bool{}
	for i, ev := range journal {
		if ev.Seq != uint64(i+1) {
			add("journal event %d has seq %d", i+1, ev.Seq)
			break
		}
		if ev.Type == engine.EvDecision {
			ds = append(ds, ldDecision{ev.Step, ev.Attempt, ev.Decision, ev.Actor})
			if ev.Key == "" || keys[ev.Key] {
				add("decision %d has key %q, empty or repeated", len(ds), ev.Key)
			}
			keys[ev.Key] = true
		}
	}
	if !slices.Equal(ds, r.want) {
		add("the journal's decisions are\n      %v\n    the users' accepted decisions are\n      %v", ds, r.want)
	}
	if rebuilt, err := engine.Rebuild(journal); err != nil || rebuilt.State != got.State || rebuilt.Seq != got.Seq {
		add("the journal does not rebuild the run: %v", err)
	}

	// The thread: the header, one message per started step, one file per
	// produced attempt and edit, a halt notice per FAILED attempt, the end
	// and the audit trail.
	hs := s.headers[r.marker]
	if len(hs) != 1 {
		add("%d headers, want 1", len(hs))
	} else {
		done := 0
		for _, st := range r.status {
			if st == engine.StepDone || st == engine.StepSkipped {
				done++
			}
		}
		if w := fmt.Sprintf("%d of %d done", done, len(r.skills)); !strings.Contains(hs[0].Rendered, w) {
			add("the header does not show %q: %.300q", w, hs[0].Rendered)
		}
	}
	msgs := s.threads[r.channel+" "+r.thread]
	var notices []fakeslack.Message
	files := map[string][]string{}
	for i := range r.skills {
		prefix := fmt.Sprintf("*Step %d of %d", i+1, len(r.skills))
		k := 0
		for _, m := range msgs {
			if strings.HasPrefix(m.Text, prefix) {
				k++
				if len(m.Buttons()) > 0 {
					add("step %d's message still shows buttons: %v", i+1, labels(m))
				}
			}
		}
		if want := min(r.attempts[i], 1); k != want {
			add("%d messages for step %d, want %d", k, i+1, want)
		}
	}
	for _, m := range msgs {
		for _, f := range m.Files {
			files[f.Name] = append(files[f.Name], string(f.Content))
		}
		if !ldIsStep(m) && len(m.Files) == 0 {
			notices = append(notices, m)
		}
	}
	want := r.files()
	for name, body := range want {
		switch got := files[name]; {
		case len(got) == 0:
			add("file %s was not attached", name)
		case len(got) > 1:
			add("file %s was attached %d times", name, len(got))
		case got[0] != body:
			add("file %s holds %q, want %q", name, got[0], body)
		}
	}
	// The end brings the run's audit trail, once.
	audit := "audit-" + string(r.id) + ".md"
	switch got := files[audit]; {
	case len(got) != 1:
		add("the audit trail %s was attached %d times, want once", audit, len(got))
	case !strings.HasPrefix(got[0], "# Audit trail of run "+string(r.id)+"\n"):
		add("the audit trail %s begins %.80q", audit, got[0])
	}
	for name := range files {
		if _, ok := want[name]; !ok && name != audit {
			add("file %s should not be there", name)
		}
	}
	if k := r.failedAttempts(); len(notices) != k+1 {
		add("%d messages besides the steps and files, want %d halt notices and the end", len(notices), k)
	} else {
		for i, m := range notices[:k] {
			if i >= len(r.halts) || m.TS != r.halts[i] {
				add("notice %d (%s) is not the halt notice the users saw (%v)", i+1, m.TS, r.halts)
			}
		}
		end := notices[k]
		wantEnd := "Run complete"
		if r.aborted {
			wantEnd = "Run halted: aborted"
		}
		if end.TS != r.final || !strings.Contains(end.Text, wantEnd) {
			add("the thread ends with %.120q, want %q", end.Text, wantEnd)
		}
	}
	for _, m := range notices {
		if len(m.Buttons()) > 0 {
			add("%s still shows buttons: %v", m.TS, labels(m))
		}
	}
	return p
}

func ldDescribe(r *ldRun) string {
	return fmt.Sprintf("%s (run %s, %s by %s: %s) %s at step %d attempt %d since %s\n  users did:\n    %s",
		r.marker, r.id, r.channel, r.starter, strings.Join(r.skills, " -> "), r.phase, r.step, r.attempt,
		r.since.Format("15:04:05.000"), strings.Join(r.did, "\n    "))
}

func ldDumpThread(s *ldSnap, r *ldRun) string {
	var b strings.Builder
	b.WriteString("  thread:\n")
	for _, h := range s.headers[r.marker] {
		fmt.Fprintf(&b, "    [%s header] %.160q\n", h.TS, h.Text)
	}
	for _, m := range s.threads[r.channel+" "+r.thread] {
		var names []string
		for _, f := range m.Files {
			names = append(names, f.Name)
		}
		fmt.Fprintf(&b, "    [%s] %.160q buttons=%v files=%v updates=%d\n", m.TS, m.Text, labels(m), names, m.Updates)
	}
	return b.String()
}

// ldAckLatencies sums up how fast the bot acknowledged the envelopes.
func ldAckLatencies(srv *fakeslack.Server, sl *ldSlack) string {
	sl.mu.Lock()
	envs := slices.Clone(sl.envs)
	sl.mu.Unlock()
	var ls []time.Duration
	_ = srv.WaitFor(context.Background(), func(st *fakeslack.State) bool {
		for _, e := range envs {
			if a, ok := st.Ack(e); ok {
				ls = append(ls, a.Latency)
			}
		}
		return true
	})
	if len(ls) == 0 {
		return "none"
	}
	sort.Slice(ls, func(i, j int) bool { return ls[i] < ls[j] })
	at := func(p int) time.Duration { return ls[min(len(ls)-1, len(ls)*p/100)] }
	return fmt.Sprintf("%d envelopes, latency p50 %v, p99 %v, max %v", len(ls), at(50), at(99), ls[len(ls)-1])
}
