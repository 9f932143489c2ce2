package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/fakeslack"
	"github.com/gonogo/gonogo/internal/hangguard"
	"github.com/gonogo/gonogo/storage"
)

// The crash campaign of gonogo serve: the real binary (the test binary
// standing in for it, see TestMain) is SIGKILLed again and again while it
// serves a fake Slack that lives in the test process across the kills, so
// every message, modal and unanswered envelope survives them as it would
// in Slack.
//
// What an acknowledgement proves: serve keeps every envelope in its inbox
// (fsynced, in the data directory) before it acks it, and marks it done once carried
// out, so an envelope acked and cut short by a SIGKILL is carried out by
// the next serve (Slack never redelivers an acked envelope). The campaign
// asserts it after every kill: each acknowledged command started its run,
// and each acknowledged decision is in the journal exactly once or was
// refused because its step had moved on, unless it is still in the inbox,
// waiting for the next serve; at the end none is left there. Every
// decision Slack shows (who approved, a redo, a newer attempt) is in the
// journal exactly once, and no decision is there twice.

const (
	crashStarter  = "U0CRASH01"
	crashApprover = "U0CRASH02"
	// syncWorkers is how many threads the bot brings up to date at once;
	// each may have one post in flight when the process is killed, which
	// the next process cannot know Slack accepted and posts again.
	syncWorkers = 4
)

var crashChains = []string{
	"chain deliver-prd -> measure-experiment-design",
	"chain define-problem-statement -> deliver-prd -> measure-experiment-design -- saved searches",
}

// TestServeCrashCampaign starts gonogo serve, starts runs and approves or
// redoes steps through Slack, and SIGKILLs serve 20-800 ms after its last
// action, over and over. After every kill the store must open, every
// journal must be contiguous and rebuild its snapshot, no step may still
// be running, no decision may be applied twice, every decision Slack shows
// must be in the journal, every announced interruption must be in it too,
// every attempt must come from a start or a redo, and the files on disk
// must be exactly those the store names, with its content. A last serve
// then decides everything left and stops on a signal: every run completes,
// every thread says "Run complete", every step still interrupted was
// announced, every attempt's artifact is attached with the store's
// content, every envelope was acked, no more was posted twice than the
// kills had in flight, and the agent never ran an attempt twice nor one
// the store had not recorded first. GONOGO_LONG=1 kills 200 times (give
// go test -timeout 30m).
func TestServeCrashCampaign(t *testing.T) {
	kills, maxRuns := 6, 3
	if os.Getenv("GONOGO_LONG") != "" {
		// Enough runs that most lives have steps to decide and to cut short.
		kills, maxRuns = 200, 100
	}
	c := newServeCampaign(t, maxRuns, randomPause)
	// The last serve decides every step left one click at a time, each
	// waiting for Slack to show it: within Slack's tier for chat.update
	// (50 a minute) a hundred runs would take half an hour. The budget
	// itself is the bot's tests' business.
	c.env = append(c.env, "GONOGO_SLACK_UPDATES_PER_MINUTE=600")
	for c.life = 1; c.life <= kills; c.life++ {
		p := c.start()
		// One to four clicks, and now and then a new run among them (its
		// first step is then likely running at the kill); always one when
		// nothing waits for a decision.
		clicks, command := 1+c.rng.IntN(4), -1
		switch {
		case c.runsStarted == 0:
			command = 0
		case c.life == 2 && c.runsStarted < c.maxRuns:
			command = clicks // the kill below then likely cuts its first step short
		case c.runsStarted < c.maxRuns && (c.rng.IntN(2) == 0 || !c.anyWaiting()):
			command = c.rng.IntN(clicks + 1)
		}
		var mark int64 // the agent log's size before the last action
		for i := 0; i <= clicks; i++ {
			if i == command {
				mark = c.agentLogSize()
				c.startRun(p)
			}
			if i < clicks {
				mark = c.agentLogSize()
				c.decideOne(p)
				time.Sleep(time.Duration(c.rng.IntN(250)) * time.Millisecond)
			}
		}
		// Mostly any moment; in the second life and one in three after
		// it, just after the last action made the agent start an attempt
		// (Slack shows that later: posts to a channel are paced).
		if (c.life == 2 || c.rng.IntN(3) == 0) && c.waitAgentStart(p, mark, time.Second) {
			time.Sleep(time.Duration(20+c.rng.IntN(100)) * time.Millisecond)
		} else {
			time.Sleep(time.Duration(20+c.rng.IntN(781)) * time.Millisecond)
		}
		p.kill(t, c)
		c.verify(false)
	}
	c.finish()
}

// TestServeAckedDecisionSurvivesKill kills serve the moment Slack has the
// ack of an Approve click, over and over: every acknowledged decision is
// in the store, exactly once, after the restart (or refused, when another
// click on the same step came first), and none waits in the inbox once the
// last serve has run.
func TestServeAckedDecisionSurvivesKill(t *testing.T) {
	const kills = 20
	c := newServeCampaign(t, kills, "0")
	for c.life = 1; c.life <= kills; c.life++ {
		p := c.start()
		var env string
		var cand candidate
		for tries := 0; env == ""; tries++ {
			ok := false
			if cand, ok = c.waitCandidate(p, 300*time.Millisecond, bot.ActionApprove); !ok {
				c.startRun(p)
				if cand, ok = c.waitCandidate(p, 10*time.Second, bot.ActionApprove); !ok {
					t.Fatalf("no step waiting for approval:\n%s", c.logTail())
				}
			}
			var err error
			// The message may have changed since it was read: the click
			// the last kill left in the inbox is being applied.
			if env, err = c.srv.Click(crashStarter, cand.msg.Channel, cand.msg.TS, bot.ActionApprove); err != nil && tries == 10 {
				t.Fatal(err)
			}
		}
		c.sent = append(c.sent, &sentEnvelope{id: env, what: "approve", ref: cand.ref, life: c.life})
		if !c.waitAck(p, env) {
			t.Fatalf("the click was not acked:\n%s", c.logTail())
		}
		p.kill(t, c)
		c.verify(false)
	}
	// A last serve carries out the click the last kill left in the inbox.
	p := c.start()
	for deadline := hangguard.Deadline(t); !c.settled(p); {
		if time.Now().After(deadline) {
			t.Fatalf("the last serve did not settle:\n%s", c.logTail())
		}
	}
	c.stop(p)
	c.verify(false)
	c.checkEveryAckApplied()
	if c.applied == 0 {
		t.Errorf("none of %d acknowledged clicks was applied", kills)
	}
	t.Logf("%d kills right after an ack: %d acknowledged envelopes (clicks and commands) applied, %d refused as stale, %d found in the inbox after a kill",
		kills, c.applied, c.refused, c.keptAtKill)
}

// stop stops serve with a signal, as an operator does, and waits for it.
func (c *serveCampaign) stop(p *serveProc) {
	t := c.t
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(hangguard.Limit(t)):
		t.Fatalf("gonogo serve did not stop on SIGTERM:\n%s", c.logTail())
	}
	c.proc = nil
	if p.err != nil {
		t.Errorf("gonogo serve ended with %v after SIGTERM:\n%s", p.err, c.logTail())
	}
}

// checkEveryAckApplied checks, once the last serve has stopped, that every
// envelope acknowledged was carried out: each command started its run,
// each decision was applied or refused as stale, none was lost and none
// is left in the inbox.
func (c *serveCampaign) checkEveryAckApplied() {
	t := c.t
	t.Helper()
	for _, s := range c.sent {
		if !c.srv.Acked(s.id) || s.what == "redo-click" {
			continue
		}
		switch s.fate {
		case "applied", "refused":
		case "":
			t.Errorf("%s %s (life %d) was acknowledged and is still in the inbox after the last serve", s.what, s.id, s.life)
		default:
			t.Errorf("%s %s (life %d) was acknowledged and %s", s.what, s.id, s.life, s.fate)
		}
	}
}

// TestServeInterruptedAnnouncementNamesItsAttempt kills serve while step 1
// runs, redoes the step from the announcement the restart posts, and
// checks that the announcement, now moved on, still names the attempt that
// was interrupted.
func TestServeInterruptedAnnouncementNamesItsAttempt(t *testing.T) {
	c := newServeCampaign(t, 1, "3")
	c.life = 1
	p := c.start()
	c.startRun(p)
	if !c.waitRunning(p, hangguard.Limit(t)) {
		t.Fatalf("step 1 never showed running:\n%s", c.logTail())
	}
	p.kill(t, c)

	c.life = 2
	p = c.start()
	var notice candidate
	ctx, cancel := p.context(hangguard.Limit(t))
	defer cancel()
	err := c.srv.WaitFor(ctx, func(st *fakeslack.State) bool {
		for _, cd := range candidates(st) {
			if announceRE.MatchString(cd.msg.Text) && slices.Contains(cd.actions, bot.ActionRedo) {
				notice = cd
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("the interrupted step was not announced: %v\n%s", err, c.srvDump())
	}
	if !strings.Contains(notice.msg.Rendered, "Attempt 1 started") {
		t.Fatalf("the announcement does not name attempt 1: %q", notice.msg.Rendered)
	}
	if !c.press(p, notice, bot.ActionRedo, crashStarter) {
		t.Fatalf("the redo was not acked:\n%s", c.logTail())
	}
	// Once attempt 2 runs and the thread has caught up, the announcement
	// has moved on.
	var moved fakeslack.Message
	err = c.srv.WaitFor(ctx, func(st *fakeslack.State) bool {
		second := slices.ContainsFunc(st.Messages(""), func(m fakeslack.Message) bool {
			return showsRunning(m) && strings.Contains(m.Text, " · attempt 2")
		})
		m, ok := st.Message(notice.msg.Channel, notice.msg.TS)
		moved = m
		return second && ok && len(m.Buttons()) == 0
	})
	if err != nil {
		t.Fatalf("attempt 2 did not start, or the announcement kept its buttons: %v\n%s\n%s", err, c.srvDump(), c.logTail())
	}
	// Give the thread two seconds to catch up with attempt 2.
	soon, cancelSoon := p.context(2 * time.Second)
	defer cancelSoon()
	_ = c.srv.WaitFor(soon, func(st *fakeslack.State) bool {
		moved, _ = st.Message(notice.msg.Channel, notice.msg.TS)
		return !strings.Contains(moved.Rendered, "Attempt 1 started")
	})
	if !strings.Contains(moved.Rendered, "Attempt 1 started") || strings.Contains(moved.Rendered, "Attempt 2") {
		t.Errorf("once moved on, the announcement of attempt 1 reads:\n%s", moved.Rendered)
	}
}

// sentEnvelope is one envelope the campaign sent to serve.
type sentEnvelope struct {
	id   string
	what string // "command", "approve", "redo-click" (opens the modal) or "redo" (the modal's submission)
	ref  bot.StepRef
	key  string // the idempotency key serve records: of the run for a command, of the decision for a redo
	life int
	fate string // once acked and checked: "applied", "refused" or "lost"
	// counted is set once the envelope was found in the inbox after a kill.
	counted bool
}

// candidate is a bot message with decision buttons.
type candidate struct {
	msg     fakeslack.Message
	ref     bot.StepRef
	actions []string // bot.ActionApprove, bot.ActionRedo
}

// stepAttempt names one attempt of one run's step.
type stepAttempt struct {
	run           engine.RunID
	step, attempt int
}

// serveCampaign is the state of a crash campaign: the fake Slack, the data
// directory, the serve process of the current life, what was sent to it,
// and what the checks after each kill found.
type serveCampaign struct {
	t                        *testing.T
	srv                      *fakeslack.Server
	rng                      *rand.Rand
	self, data, agentLog     string
	serveLog                 string
	logFile                  *os.File
	env                      []string
	proc                     *serveProc
	life                     int
	sent                     []*sentEnvelope
	submitted                map[string]bool // redo modals already submitted
	clicked                  map[string]int  // message ts + button value -> life it was clicked in
	runsStarted, maxRuns     int
	kills                    int
	applied, refused         int
	keptAtKill               int // acked envelopes a kill left in the inbox, carried out by the next serve
	lost                     []string
	interrupted              map[stepAttempt]bool // ever found interrupted after a kill
	temps                    int                  // temporary files a kill left in the data dir
	lastInterrupted          []stepAttempt
	dupes, redelivered       int
	decisionsShown, runsSeen int
}

// randomPause is how long the agent works in the campaign: 0 to 0.4 s.
const randomPause = "0.$(( $(od -An -N1 -tu1 /dev/urandom) % 5 ))"

// newServeCampaign prepares a fake Slack, a data directory and an agent
// that logs each attempt it starts, then sleeps for pause (a sleep(1)
// argument in shell syntax) before it answers.
func newServeCampaign(t *testing.T, maxRuns int, pause string) *serveCampaign {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	srv := fakeslack.New()
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	c := &serveCampaign{
		t: t, srv: srv, rng: rand.New(rand.NewPCG(6, seed)), self: self,
		data: filepath.Join(dir, "data"), agentLog: filepath.Join(dir, "agent.log"), serveLog: filepath.Join(dir, "serve.log"),
		submitted: map[string]bool{}, clicked: map[string]int{}, maxRuns: maxRuns, interrupted: map[stepAttempt]bool{},
	}
	agent := writeAgent(t, `cat >/dev/null
echo "start $GONOGO_RUN_ID $GONOGO_STEP $GONOGO_ATTEMPT" >> `+c.agentLog+`
sleep `+pause+`
printf '# %s, attempt %s\n\nA paragraph of real work for run %s.\n' "$GONOGO_SKILL" "$GONOGO_ATTEMPT" "$GONOGO_RUN_ID"`)
	c.logFile, err = os.OpenFile(c.serveLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.logFile.Close() })
	// The developer's own Slack or gonogo settings must not leak in.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GONOGO_") && !strings.HasPrefix(kv, "SLACK_") {
			c.env = append(c.env, kv)
		}
	}
	c.env = append(c.env, "GONOGO_TEST_AS_MAIN=1",
		"SLACK_API_URL="+srv.APIURL(), "SLACK_APP_TOKEN="+srv.AppToken(), "SLACK_BOT_TOKEN="+srv.BotToken(),
		"GONOGO_DATA_DIR="+c.data, "GONOGO_SKILLS_DIR="+filepath.Join(exampleDir(t), "skills"),
		"GONOGO_RUNNER=command", "GONOGO_RUNNER_CMD="+agent, "GONOGO_LOG_LEVEL=debug",
		"GONOGO_APPROVERS="+crashApprover)
	t.Cleanup(func() {
		if c.proc != nil {
			_ = c.proc.cmd.Process.Kill()
			<-c.proc.exited
		}
	})
	return c
}

// serveProc is one gonogo serve process.
type serveProc struct {
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // set before exited is closed
}

// context ends after d, or at once when the process has exited.
func (p *serveProc) context(d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	go func() {
		select {
		case <-p.exited:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

func (p *serveProc) kill(t *testing.T, c *serveCampaign) {
	t.Helper()
	select {
	case <-p.exited:
		t.Fatalf("life %d: gonogo serve exited by itself (%v):\n%s", c.life, p.err, c.logTail())
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-p.exited:
	case <-time.After(hangguard.Limit(t)):
		t.Fatal("gonogo serve did not end on SIGKILL")
	}
	c.proc = nil
	c.kills++
}

// start runs gonogo serve, waits until it is connected to Slack, and
// redelivers what no earlier process acknowledged, as Slack does.
func (c *serveCampaign) start() *serveProc {
	t := c.t
	t.Helper()
	before := c.srv.Connections()
	cmd := exec.Command(c.self, "serve")
	cmd.Env = c.env
	cmd.Stdout, cmd.Stderr = c.logFile, c.logFile
	fmt.Fprintf(c.logFile, "=== life %d\n", c.life)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serveProc{cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	c.proc = p
	ctx, cancel := p.context(hangguard.Limit(t))
	defer cancel()
	err := c.srv.WaitFor(ctx, func(st *fakeslack.State) bool { return st.Connections() > before && st.Connected() })
	if err != nil {
		t.Fatalf("life %d: gonogo serve did not connect to Slack: %v\n%s", c.life, err, c.logTail())
	}
	var acked []string
	for _, s := range c.sent {
		if !c.srv.Acked(s.id) {
			if err := c.srv.Redeliver(s.id); err != nil {
				t.Fatal(err)
			}
		} else {
			acked = append(acked, s.id)
		}
	}
	// Slack also redelivers an envelope whose ack came late: it must
	// change nothing the first delivery did not.
	if len(acked) > 0 && c.rng.IntN(2) == 0 {
		if err := c.srv.Redeliver(acked[c.rng.IntN(len(acked))]); err != nil {
			t.Fatal(err)
		}
		c.redelivered++
	}
	return p
}

// waitAck waits for env's ack while serve lives; only a hang ends the wait
// sooner.
func (c *serveCampaign) waitAck(p *serveProc, env string) bool {
	ctx, cancel := p.context(hangguard.Limit(c.t))
	defer cancel()
	_, err := c.srv.WaitAck(ctx, env)
	return err == nil
}

func (c *serveCampaign) startRun(p *serveProc) {
	text := crashChains[c.rng.IntN(len(crashChains))]
	// Each run has a channel of its own: posts to one channel are paced to
	// about one a second, which would make the runs wait on each other.
	channel := fmt.Sprintf("C0CRASH%03d", c.runsStarted)
	env := c.srv.SendSlashCommand(slack.SlashCommand{UserID: crashStarter, ChannelID: channel, Text: text})
	c.runsStarted++
	c.sent = append(c.sent, &sentEnvelope{id: env, what: "command", key: "slack-command:" + env, life: c.life})
	c.waitAck(p, env)
}

// candidates lists the bot's messages that offer Approve or Redo.
func candidates(st *fakeslack.State) []candidate {
	var out []candidate
	for _, m := range st.Messages("") {
		if !m.FromBot {
			continue
		}
		var cd candidate
		for _, b := range m.Buttons() {
			if b.ActionID != bot.ActionApprove && b.ActionID != bot.ActionRedo {
				continue
			}
			ref, err := bot.ParseStepRef(b.Value)
			if err != nil {
				continue
			}
			cd.msg, cd.ref = m, ref
			cd.actions = append(cd.actions, b.ActionID)
		}
		if len(cd.actions) > 0 {
			out = append(out, cd)
		}
	}
	return out
}

func (c *serveCampaign) agentLogSize() int64 {
	fi, err := os.Stat(c.agentLog)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// waitAgentStart waits for the agent log to grow past mark: the agent
// started an attempt.
func (c *serveCampaign) waitAgentStart(p *serveProc, mark int64, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for c.agentLogSize() <= mark {
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-p.exited:
			return false
		case <-time.After(5 * time.Millisecond):
		}
	}
	return true
}

// waitRunning waits for a step message that shows a step running.
func (c *serveCampaign) waitRunning(p *serveProc, d time.Duration) bool {
	ctx, cancel := p.context(d)
	defer cancel()
	return c.srv.WaitFor(ctx, func(st *fakeslack.State) bool {
		return slices.ContainsFunc(st.Messages(""), showsRunning)
	}) == nil
}

// showsRunning reports whether m is a step message with a Cancel button.
func showsRunning(m fakeslack.Message) bool {
	return m.FromBot && stepTitleRE.MatchString(m.Text) &&
		slices.ContainsFunc(m.Buttons(), func(b fakeslack.Button) bool { return b.ActionID == bot.ActionCancel })
}

// anyWaiting reports whether some message offers a decision now.
func (c *serveCampaign) anyWaiting() bool {
	var n int
	_ = c.srv.WaitFor(context.Background(), func(st *fakeslack.State) bool {
		n = len(candidates(st))
		return true
	})
	return n > 0
}

// waitCandidate waits for a message offering one of actions that was not
// clicked yet in this life.
func (c *serveCampaign) waitCandidate(p *serveProc, d time.Duration, actions ...string) (candidate, bool) {
	ctx, cancel := p.context(d)
	defer cancel()
	var found []candidate
	_ = c.srv.WaitFor(ctx, func(st *fakeslack.State) bool {
		found = found[:0]
		for _, cd := range candidates(st) {
			if c.clicked[cd.msg.TS+" "+cd.ref.Value()] == c.life {
				continue
			}
			if slices.ContainsFunc(cd.actions, func(a string) bool { return slices.Contains(actions, a) }) {
				found = append(found, cd)
			}
		}
		return len(found) > 0
	})
	if len(found) == 0 {
		return candidate{}, false
	}
	return found[c.rng.IntN(len(found))], true
}

// decideOne clicks Approve (or, one time in five, Redo and then the redo
// modal's submit) on a step that waits, as the starter or the approver.
func (c *serveCampaign) decideOne(p *serveProc) {
	cd, ok := c.waitCandidate(p, 1500*time.Millisecond, bot.ActionApprove, bot.ActionRedo)
	if !ok {
		return
	}
	action := bot.ActionApprove
	if !slices.Contains(cd.actions, bot.ActionApprove) || slices.Contains(cd.actions, bot.ActionRedo) && c.rng.IntN(5) == 0 {
		action = bot.ActionRedo
	}
	user := crashStarter
	if c.rng.IntN(3) == 0 {
		user = crashApprover
	}
	c.press(p, cd, action, user)
}

// press clicks one button and, for Redo, submits the modal it opens. It
// reports whether every envelope was acked.
func (c *serveCampaign) press(p *serveProc, cd candidate, action, user string) bool {
	c.clicked[cd.msg.TS+" "+cd.ref.Value()] = c.life
	views := len(c.srv.Views())
	env, err := c.srv.Click(user, cd.msg.Channel, cd.msg.TS, action)
	if err != nil {
		return false // the message changed since it was read
	}
	what := "approve"
	if action == bot.ActionRedo {
		what = "redo-click"
	}
	c.sent = append(c.sent, &sentEnvelope{id: env, what: what, ref: cd.ref, life: c.life})
	if !c.waitAck(p, env) {
		return false
	}
	if action != bot.ActionRedo {
		return true
	}
	var modal fakeslack.View
	ctx, cancel := p.context(3 * time.Second)
	defer cancel()
	err = c.srv.WaitFor(ctx, func(st *fakeslack.State) bool {
		vs := st.Views()
		for i := len(vs) - 1; i >= views; i-- {
			ref, err := bot.ParseStepRef(vs[i].PrivateMetadata)
			if vs[i].CallbackID == bot.ModalRedo && err == nil && ref == cd.ref && !c.submitted[vs[i].ID] {
				modal = vs[i]
				return true
			}
		}
		return false
	})
	if err != nil {
		return false // serve died, or the click was refused as stale
	}
	var values map[string]string
	if c.rng.IntN(2) == 0 {
		values = map[string]string{bot.InputFeedback: "tighten the scope"}
	}
	c.submitted[modal.ID] = true
	env, err = c.srv.SubmitView(modal.User, modal.ID, values)
	if err != nil {
		c.t.Fatal(err)
	}
	c.sent = append(c.sent, &sentEnvelope{id: env, what: "redo", ref: cd.ref, life: c.life,
		key: "slack-view:" + modal.ID + ":" + modal.Hash})
	return c.waitAck(p, env)
}

// slackThread is what Slack shows of one run.
type slackThread struct {
	threads   []string // "channel ts" of each header; one posted twice (one post in flight at a kill) opens a second thread
	headers   int
	steps     map[int]int    // messages per step
	decided   map[ack]bool   // decisions the messages show
	announced map[[2]int]int // interrupted announcements per step and attempt
	complete  int            // "Run complete" messages
	files     map[string]fakeslack.File
	fileCount map[string]int
}

var (
	headerRunRE  = regexp.MustCompile("Run `([a-z0-9-]+)`")
	stepTitleRE  = regexp.MustCompile(`^\*Step (\d+) of \d+: `)
	attemptRE    = regexp.MustCompile(` · attempt (\d+)`)
	announceRE   = regexp.MustCompile(`^⚠️ \*Step (\d+) of \d+: .*was \*interrupted\*`)
	announcedRE  = regexp.MustCompile(`Attempt (\d+)`)
	earlierRedos = regexp.MustCompile(`(\d+) (?:[A-Z-]+|unfinished) \(redo requested by`)
)

// slackShows reads what Slack shows of every run.
func (c *serveCampaign) slackShows() map[engine.RunID]*slackThread {
	msgs := c.srv.Messages("")
	out := map[engine.RunID]*slackThread{}
	byThread := map[string]*slackThread{}
	for _, m := range msgs {
		if !m.FromBot || m.ThreadTS != "" {
			continue
		}
		mm := headerRunRE.FindStringSubmatch(m.Rendered)
		if mm == nil {
			c.t.Errorf("a message at the top of the channel is not a run's header: %q", m.Text)
			continue
		}
		id := engine.RunID(mm[1])
		th := out[id]
		if th == nil {
			th = &slackThread{steps: map[int]int{}, decided: map[ack]bool{}, announced: map[[2]int]int{},
				files: map[string]fakeslack.File{}, fileCount: map[string]int{}}
			out[id] = th
		}
		th.headers++
		th.threads = append(th.threads, m.Channel+" "+m.TS)
		byThread[m.Channel+" "+m.TS] = th
	}
	for _, m := range msgs {
		if !m.FromBot || m.ThreadTS == "" {
			continue
		}
		th := byThread[m.Channel+" "+m.ThreadTS]
		if th == nil {
			c.t.Errorf("the bot posted in a thread that has no run header: %q", m.Text)
			continue
		}
		title, _, _ := strings.Cut(m.Text, " — ")
		if mm := stepTitleRE.FindStringSubmatch(title); mm != nil {
			n, _ := strconv.Atoi(mm[1])
			a := 1
			if am := attemptRE.FindStringSubmatch(title); am != nil {
				a, _ = strconv.Atoi(am[1])
			}
			th.steps[n]++
			if strings.Contains(m.Rendered, "✅ Approved by ") {
				th.decided[ack{n, a, engine.DecideApprove}] = true
			}
			if strings.Contains(m.Rendered, "🔁 Redo requested by ") {
				th.decided[ack{n, a, engine.DecideRedo}] = true
			}
			if a > 1 {
				th.decided[ack{n, a - 1, engine.DecideRedo}] = true
			}
			for _, em := range earlierRedos.FindAllStringSubmatch(m.Rendered, -1) {
				k, _ := strconv.Atoi(em[1])
				th.decided[ack{n, k, engine.DecideRedo}] = true
			}
		}
		if strings.Contains(m.Rendered, "Run complete") {
			th.complete++
		}
	}
	// An announcement is kept current once posted, so the attempt it was
	// posted for is read from what was posted.
	for _, call := range c.srv.Calls("chat.postMessage") {
		mm := announceRE.FindStringSubmatch(call.Params.Get("text"))
		th := byThread[call.Params.Get("channel")+" "+call.Params.Get("thread_ts")]
		if call.Error != "" || mm == nil || th == nil {
			continue
		}
		n, _ := strconv.Atoi(mm[1])
		a := 0
		if am := announcedRE.FindStringSubmatch(call.Params.Get("blocks")); am != nil {
			a, _ = strconv.Atoi(am[1])
		}
		th.announced[[2]int{n, a}]++
	}
	for _, th := range out {
		for _, key := range th.threads {
			channel, ts, _ := strings.Cut(key, " ")
			for _, f := range c.srv.Files(channel, ts) {
				th.files[f.Name] = f
				th.fileCount[f.Name]++
			}
		}
	}
	return out
}

// duplicates counts what Slack shows more than once.
func duplicates(shown map[engine.RunID]*slackThread) int {
	n := 0
	for _, th := range shown {
		n += th.headers - 1 + max(th.complete-1, 0)
		for _, k := range th.steps {
			n += k - 1
		}
		for _, k := range th.announced {
			n += k - 1
		}
		for _, k := range th.fileCount {
			n += k - 1
		}
	}
	return n
}

// verify opens the store as the next serve would and checks every run
// against its journal, the disk and what Slack shows.
func (c *serveCampaign) verify(final bool) {
	t := c.t
	t.Helper()
	ctx := context.Background()
	db, err := storage.Open(c.data, storage.Options{})
	if err != nil {
		t.Fatalf("life %d: the store does not open after the kill: %v", c.life, err)
	}
	list, err := db.List(ctx)
	if err != nil {
		db.Close()
		t.Fatalf("life %d: list runs: %v", c.life, err)
	}
	shown := c.slackShows()
	c.decisionsShown = 0
	runs := map[engine.RunID]*engine.Run{}
	journals := map[engine.RunID][]engine.Event{}
	c.lastInterrupted = nil
	for _, s := range list {
		r, err := db.Load(ctx, s.ID)
		if err != nil {
			db.Close()
			t.Fatalf("life %d: load %s: %v", c.life, s.ID, err)
		}
		journal, err := db.Journal(ctx, s.ID)
		if err != nil {
			db.Close()
			t.Fatalf("life %d: journal of %s: %v", c.life, s.ID, err)
		}
		runs[s.ID], journals[s.ID] = r, journal
		c.checkRun(r, journal, shown[s.ID])
		if final {
			c.checkFinalThread(ctx, db, r, shown[s.ID])
		}
	}
	// Each run comes from one slash command, however often it was delivered.
	commands := map[string]bool{}
	for _, s := range c.sent {
		if s.what == "command" {
			commands[s.key] = true
		}
	}
	started := map[string]engine.RunID{}
	for id, j := range journals {
		key := j[0].Key
		if !commands[key] {
			t.Errorf("life %d: run %s was started by %q, which is no command sent", c.life, id, key)
		} else if other, dup := started[key]; dup {
			t.Errorf("life %d: runs %s and %s were both started by %s", c.life, other, id, key)
		}
		started[key] = id
	}
	for id := range shown {
		if runs[id] == nil {
			t.Errorf("life %d: Slack shows run %s, which the store does not have", c.life, id)
		}
	}
	c.classify(ctx, db, runs, journals)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if len(c.lost) > 0 {
		t.Errorf("life %d: acknowledged and never applied: %s", c.life, strings.Join(c.lost, "; "))
	}
	c.dupes, c.runsSeen = duplicates(shown), len(shown)
	for _, s := range list {
		th := shown[s.ID]
		decided := map[ack]bool{}
		if th != nil {
			decided = th.decided
		}
		verifyStore(t, c.data, s.ID, decided, final)
	}
	if t.Failed() {
		t.FailNow()
	}
}

// checkRun checks one run's store against its journal, the disk and Slack.
func (c *serveCampaign) checkRun(r *engine.Run, journal []engine.Event, th *slackThread) {
	t := c.t
	t.Helper()
	redos := map[int]int{}
	interrupts := map[[2]int]bool{}
	for _, ev := range journal {
		switch ev.Type {
		case engine.EvDecision:
			if ev.Decision == engine.DecideRedo {
				redos[ev.Step]++
			}
		case engine.EvStepInterrupted:
			interrupts[[2]int{ev.Step, ev.Attempt}] = true
		}
	}
	referenced := map[string]bool{}
	for i := range r.Steps {
		s := &r.Steps[i]
		// Every attempt comes from the run's start or a redo: a step that
		// was approved (or whose attempt was cut short) is never run again
		// on its own.
		want := redos[s.N] + 1
		if s.Status == engine.StepPending || s.Status == engine.StepQueued {
			want = redos[s.N]
		}
		if len(s.Attempts) != want {
			t.Errorf("life %d: run %s step %d (%s) has %d attempts after %d redos", c.life, r.ID, s.N, s.Status, len(s.Attempts), redos[s.N])
		}
		for j, a := range s.Attempts {
			if a.N != j+1 {
				t.Errorf("life %d: run %s step %d: attempt %d is numbered %d", c.life, r.ID, s.N, j+1, a.N)
			}
			if a.File != "" {
				referenced[a.File] = true
			}
		}
		if s.Status == engine.StepInterrupted {
			k := stepAttempt{r.ID, s.N, s.Latest().N}
			c.interrupted[k] = true
			c.lastInterrupted = append(c.lastInterrupted, k)
		}
	}
	// The run's directory holds exactly the files the store names, apart
	// from the temporary file of a write the kill cut short.
	dir := filepath.Join(c.data, "runs", string(r.ID))
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range entries {
		rel := "runs/" + string(r.ID) + "/" + e.Name()
		switch {
		case strings.HasPrefix(e.Name(), "."):
			c.temps++
		case !referenced[rel]:
			t.Errorf("life %d: %s is on disk but no attempt of the run names it", c.life, rel)
		}
	}
	if th == nil {
		return
	}
	if th.complete > 0 && r.State != engine.RunCompleted {
		t.Errorf("life %d: Slack says run %s is complete, the store says %s", c.life, r.ID, r.State)
	}
	for k := range th.announced {
		if !interrupts[k] {
			t.Errorf("life %d: Slack announces step %d attempt %d of run %s as interrupted; the journal never says so", c.life, k[0], k[1], r.ID)
		}
	}
	for n := range th.steps {
		if s := r.Step(n); s == nil || len(s.Attempts) == 0 {
			t.Errorf("life %d: Slack shows step %d of run %s, which never started", c.life, n, r.ID)
		}
	}
	c.decisionsShown += len(th.decided)
}

// classify decides the fate of each envelope acked since the last check:
// applied, refused (the step had moved on) or lost. One still kept in the
// inbox has no fate yet: the next serve carries it out.
func (c *serveCampaign) classify(ctx context.Context, db *storage.DB, runs map[engine.RunID]*engine.Run, journals map[engine.RunID][]engine.Event) {
	kept := map[string]bool{}
	inbox, err := storage.OpenInbox(c.data, storage.Options{})
	if err != nil {
		c.t.Fatalf("life %d: the inbox does not open after the kill: %v", c.life, err)
	}
	items, err := inbox.Pending(ctx)
	if cerr := inbox.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		c.t.Fatalf("life %d: read the inbox: %v", c.life, err)
	}
	for _, it := range items {
		var env struct {
			ID string `json:"envelope_id"`
		}
		if err := json.Unmarshal(it.Payload, &env); err != nil || env.ID == "" {
			c.t.Fatalf("life %d: inbox item %d is not a Socket Mode envelope: %v", c.life, it.ID, err)
		}
		kept[env.ID] = true
	}
	for _, s := range c.sent {
		if s.fate != "" || !c.srv.Acked(s.id) || s.what == "redo-click" {
			continue
		}
		if kept[s.id] {
			if !s.counted {
				s.counted = true
				c.keptAtKill++
			}
			continue
		}
		switch s.what {
		case "command":
			seen, err := db.SeenKey(ctx, s.key)
			if err != nil {
				c.t.Fatal(err)
			}
			s.fate = "lost"
			if seen {
				s.fate = "applied"
			}
		default:
			kind := engine.DecisionKind(s.what)
			s.fate = "refused"
			decided := false
			for _, ev := range journals[s.ref.Run] {
				if ev.Type != engine.EvDecision || ev.Step != s.ref.Step || ev.Attempt != s.ref.Attempt {
					continue
				}
				decided = true
				if ev.Decision == kind && (s.key == "" || ev.Key == s.key) {
					s.fate = "applied"
				}
			}
			if r := runs[s.ref.Run]; s.fate == "refused" && !decided && r != nil {
				if st := r.Step(s.ref.Step); st != nil && st.Latest() != nil && st.Latest().N == s.ref.Attempt &&
					slices.Contains(engine.Allowed(st), kind) {
					s.fate = "lost"
				}
			}
		}
		switch s.fate {
		case "applied":
			c.applied++
		case "refused":
			c.refused++
		case "lost":
			c.lost = append(c.lost, fmt.Sprintf("%s %s (life %d, %s step %d attempt %d)", s.what, s.id, s.life, s.ref.Run, s.ref.Step, s.ref.Attempt))
		}
	}
}

// checkFinalThread checks a completed run's thread: it says so, and every
// artifact is attached with the store's content.
func (c *serveCampaign) checkFinalThread(ctx context.Context, db *storage.DB, r *engine.Run, th *slackThread) {
	t := c.t
	t.Helper()
	if th == nil {
		t.Errorf("run %s has no thread in Slack", r.ID)
		return
	}
	if th.complete == 0 {
		t.Errorf("run %s: its thread does not say Run complete", r.ID)
	}
	for i := range r.Steps {
		s := &r.Steps[i]
		if th.steps[s.N] == 0 {
			t.Errorf("run %s: step %d has no message", r.ID, s.N)
		}
		for _, a := range s.Attempts {
			if !a.Artifact {
				continue
			}
			name := fmt.Sprintf("%02d-%s.md", s.N, s.Skill)
			if a.N > 1 {
				name = fmt.Sprintf("%02d-%s.attempt-%d.md", s.N, s.Skill, a.N)
			}
			f, ok := th.files[name]
			body, err := db.Artifact(ctx, r.ID, s.N, a.N)
			switch {
			case err != nil:
				t.Errorf("run %s step %d attempt %d: %v", r.ID, s.N, a.N, err)
			case !ok:
				t.Errorf("run %s: %s is not attached to its thread", r.ID, name)
			case string(f.Content) != string(body):
				t.Errorf("run %s: %s in Slack differs from the store", r.ID, name)
			}
		}
	}
}

// finish starts serve a last time, decides everything left (Redo for an
// interrupted step, Approve otherwise), stops it with a signal, and checks
// that every run completed and its thread shows it.
func (c *serveCampaign) finish() {
	t := c.t
	t.Helper()
	interrupted := c.lastInterrupted
	p := c.start()
	deadline := time.Now().Add(time.Minute + time.Duration(c.runsStarted)*time.Second)
	clicked := map[string]bool{}
	for {
		if time.Now().After(deadline) {
			t.Fatalf("the runs did not all complete:\n%s\nserve log:\n%s", c.srvDump(), c.logTail())
		}
		var cds []candidate
		_ = c.srv.WaitFor(context.Background(), func(st *fakeslack.State) bool {
			for _, cd := range candidates(st) {
				// An interrupted step is redone from its announcement, so
				// that the announcement must have come first.
				k := stepAttempt{cd.ref.Run, cd.ref.Step, cd.ref.Attempt}
				if !clicked[cd.msg.TS+" "+cd.ref.Value()] && (!slices.Contains(interrupted, k) || announceRE.MatchString(cd.msg.Text)) {
					cds = append(cds, cd)
				}
			}
			return true
		})
		if len(cds) == 0 {
			if c.settled(p) && c.allComplete() {
				break
			}
			time.Sleep(50 * time.Millisecond)
			continue
		}
		cd := cds[0]
		clicked[cd.msg.TS+" "+cd.ref.Value()] = true
		action := bot.ActionApprove
		if !slices.Contains(cd.actions, action) {
			action = bot.ActionRedo
		}
		if !c.press(p, cd, action, crashStarter) {
			// A decision the last kill left in the inbox may have moved
			// the step on first: then the message gives up its buttons.
			ctx, cancel := p.context(hangguard.Limit(t))
			err := c.srv.WaitFor(ctx, func(st *fakeslack.State) bool {
				m, ok := st.Message(cd.msg.Channel, cd.msg.TS)
				return !ok || !slices.ContainsFunc(m.Buttons(), func(b fakeslack.Button) bool {
					return b.ActionID == action && b.Value == cd.ref.Value()
				})
			})
			cancel()
			if err != nil {
				t.Fatalf("%s on %s was not carried out, and the message still offers it:\n%s", action, cd.ref.Value(), c.logTail())
			}
			continue
		}
		// Wait for the click to show before looking for the next one.
		ctx, cancel := p.context(5 * time.Second)
		_ = c.srv.WaitFor(ctx, func(st *fakeslack.State) bool {
			m, ok := st.Message(cd.msg.Channel, cd.msg.TS)
			return !ok || m.Updates > cd.msg.Updates
		})
		cancel()
	}

	// A signal stops serve cleanly.
	c.stop(p)
	c.verify(true)
	c.checkEveryAckApplied()

	shown := c.slackShows()
	// Were the messages' wording to change, the checks above would pass
	// on nothing read. (A step interrupted in an earlier life may have
	// been redone from its own message before its announcement was
	// posted; the steps the last serve found interrupted are announced.)
	var announcements, decisions int
	for _, th := range shown {
		announcements += len(th.announced)
		decisions += len(th.decided)
	}
	if len(interrupted) > 0 && announcements == 0 || c.applied > 0 && decisions == 0 {
		t.Errorf("read %d announcements and %d decisions in Slack after %d interruptions and %d decisions: the wording changed?",
			announcements, decisions, len(c.interrupted), c.applied)
	}
	for _, k := range interrupted {
		if th := shown[k.run]; th == nil || th.announced[[2]int{k.step, k.attempt}] == 0 {
			t.Errorf("step %d attempt %d of run %s was interrupted and never announced", k.step, k.attempt, k.run)
		}
	}
	if c.dupes > syncWorkers*c.kills {
		t.Errorf("%d messages or files posted twice over %d kills; at most %d posts are in flight at a kill", c.dupes, c.kills, syncWorkers)
	}
	for _, s := range c.sent {
		if !c.srv.Acked(s.id) {
			t.Errorf("envelope %s (%s) was never acknowledged", s.id, s.what)
		}
	}
	if v := c.srv.Violations(); len(v) > 0 {
		t.Errorf("Block Kit limits broken: %v", v)
	}
	verifyAgentLog(t, c.agentLog)
	c.checkAgentStarts()
	logText, err := os.ReadFile(c.serveLog)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"DATA RACE", "panic:", c.srv.BotToken(), c.srv.AppToken()} {
		if strings.Contains(string(logText), bad) {
			t.Errorf("serve's log contains %q", bad)
		}
	}
	t.Logf("%d kills, %d runs, %d decisions shown in Slack; acked envelopes: %d applied, %d refused as stale, %d found in the inbox after a kill, %d redelivered; "+
		"%d steps found interrupted; %d posts repeated; %d temporary files left; %d chat.update calls, %d put off by the budget",
		c.kills, c.runsSeen, c.decisionsShown, c.applied, c.refused, c.keptAtKill, c.redelivered, len(c.interrupted), c.dupes, c.temps,
		len(c.srv.Calls("chat.update")), strings.Count(string(logText), "waits for the chat.update budget"))
}

// settled reports whether every envelope is acked and Slack has had no
// call from serve for a while, so a run just started has shown up.
func (c *serveCampaign) settled(p *serveProc) bool {
	for _, s := range c.sent {
		if !c.srv.Acked(s.id) {
			return false
		}
	}
	n := len(c.srv.Calls(""))
	time.Sleep(300 * time.Millisecond)
	return len(c.srv.Calls("")) == n
}

func (c *serveCampaign) allComplete() bool {
	for _, th := range c.slackShows() {
		if th.complete == 0 {
			return false
		}
	}
	return true
}

// checkAgentStarts checks that the agent started only attempts the store
// had recorded first.
func (c *serveCampaign) checkAgentStarts() {
	t := c.t
	t.Helper()
	raw, err := os.ReadFile(c.agentLog)
	if err != nil {
		t.Fatal(err)
	}
	db, err := storage.Open(c.data, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 {
			t.Errorf("agent log line %q", line)
			continue
		}
		step, _ := strconv.Atoi(f[2])
		attempt, _ := strconv.Atoi(f[3])
		r, err := db.Load(context.Background(), engine.RunID(f[1]))
		if err != nil {
			t.Errorf("the agent ran for run %s, which the store does not have: %v", f[1], err)
			continue
		}
		if s := r.Step(step); s == nil || attempt < 1 || attempt > len(s.Attempts) {
			t.Errorf("the agent ran step %d attempt %d of run %s, which the store never started", step, attempt, f[1])
		}
	}
}

func (c *serveCampaign) logTail() string {
	raw, _ := os.ReadFile(c.serveLog)
	if len(raw) > 6000 {
		raw = raw[len(raw)-6000:]
	}
	return string(raw)
}

func (c *serveCampaign) srvDump() string {
	var b strings.Builder
	for _, m := range c.srv.Messages("") {
		if len(m.Buttons()) > 0 || strings.Contains(m.Rendered, "Run complete") || m.ThreadTS == "" {
			fmt.Fprintf(&b, "  %s ts=%s thread=%s buttons=%d: %.160s\n", m.Channel, m.TS, m.ThreadTS, len(m.Buttons()), strings.ReplaceAll(m.Text, "\n", " | "))
		}
	}
	return b.String()
}
