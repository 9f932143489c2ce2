package bot_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/bot/fakeslack"
	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/parse"
	"github.com/gonogo/gonogo/storage"
)

const channel = "C0RUNS"

// scriptedRunner answers each skill with a Markdown artifact, or with what
// a test scripts for it; it can hold a step until the test releases it.
type scriptedRunner struct {
	mu      sync.Mutex
	outcome map[string]engine.Outcome
	hold    map[string]chan struct{}
	prompts []string
}

func (s *scriptedRunner) Run(ctx context.Context, job engine.Job, progress func(engine.Progress)) engine.Outcome {
	s.mu.Lock()
	s.prompts = append(s.prompts, job.Prompt)
	out, ok := s.outcome[job.Skill]
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

// harness is a bot on a real store and engine, talking to a fake Slack.
type harness struct {
	t      *testing.T
	srv    *fakeslack.Server
	db     *storage.DB
	svc    *engine.Service
	bot    *bot.Bot
	runner *scriptedRunner
	cancel context.CancelFunc
	done   chan struct{}
	dir    string
}

type option func(*bot.Config)

func start(t *testing.T, srv *fakeslack.Server, dir string, r *scriptedRunner, opts ...option) *harness {
	t.Helper()
	db, err := storage.Open(dir, storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	var skills []engine.Skill
	for _, n := range []string{"deliver-prd", "deliver-user-stories", "measure-experiment-design"} {
		skills = append(skills, engine.Skill{Name: n, Instructions: "Write the " + n + " artifact."})
	}
	h := &harness{t: t, srv: srv, db: db, runner: r, dir: dir, done: make(chan struct{})}
	n := &lateNotifier{}
	h.svc = engine.NewService(engine.ServiceConfig{Store: db, Catalog: parse.NewCatalog(skills), Runner: r, Notifier: n, MaxParallel: 4})
	cfg := bot.Config{
		AppToken: srv.AppToken(), BotToken: srv.BotToken(), APIURL: srv.APIURL(),
		Catalog: parse.NewCatalog(skills), Policy: engine.DefaultPolicy(),
		PostInterval: time.Millisecond, ProgressInterval: 50 * time.Millisecond, TickInterval: 50 * time.Millisecond,
	}
	for _, o := range opts {
		o(&cfg)
	}
	h.bot, err = bot.New(cfg, h.svc)
	if err != nil {
		t.Fatal(err)
	}
	n.set(h.bot)
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() {
		defer close(h.done)
		go func() { _ = h.svc.Run(ctx) }()
		if err := h.bot.Run(ctx); err != nil && ctx.Err() == nil {
			t.Errorf("bot.Run: %v", err)
		}
	}()
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	if err := srv.WaitConnected(wctx); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) stop() {
	h.cancel()
	<-h.done
	h.svc.Close()
	_ = h.db.Close()
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

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// waitText waits for a message in the channel whose text contains all of want.
func waitText(t *testing.T, srv *fakeslack.Server, want ...string) fakeslack.Message {
	t.Helper()
	m, err := srv.WaitMessage(ctxT(t), channel, func(m fakeslack.Message) bool {
		for _, w := range want {
			if !strings.Contains(m.Rendered, w) {
				return false
			}
		}
		return true
	})
	if err != nil {
		t.Fatalf("no message with %q: %v", want, err)
	}
	return m
}

func TestChainCheckpointsEndToEnd(t *testing.T) {
	srv := fakeslack.New()
	defer srv.Close()
	h := start(t, srv, t.TempDir(), &scriptedRunner{})
	defer h.stop()

	env := srv.SendSlashCommand(slack.SlashCommand{Command: "/gonogo", UserID: "U0START", ChannelID: channel, TeamID: fakeslack.TeamID,
		Text: "chain deliver-prd -> deliver-user-stories -- mobile checkout"})
	if _, err := srv.WaitAck(ctxT(t), env); err != nil {
		t.Fatal(err)
	}
	step1 := waitText(t, srv, "Step 1 of 2", "deliver-prd", "Approve")
	if _, err := srv.Click("U0START", channel, step1.TS, "Approve"); err != nil {
		t.Fatal(err)
	}
	step2 := waitText(t, srv, "Step 2 of 2", "deliver-user-stories", "Approve")
	if _, err := srv.Click("U0START", channel, step2.TS, "Approve"); err != nil {
		t.Fatal(err)
	}
	waitText(t, srv, "Run complete")
	if err := srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool { return len(st.Files(channel, step1.ThreadTS)) == 2 }); err != nil {
		t.Fatalf("artifacts not attached: %v", err)
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Errorf("Block Kit limits broken: %v", v)
	}
}

func TestMain(m *testing.M) { os.Exit(m.Run()) }
