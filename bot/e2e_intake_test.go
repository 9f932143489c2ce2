package bot_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/fakeslack"
)

// How runs start, and how bad input is answered: plan files mentioned to
// the bot, and the slash command's subcommands.

// plan is a small action plan with two runnable blocks in Section 7 (the
// harness's skills) and one for a skill that is not installed. Backticks
// are written ~ in the source.
var plan = backticks(`# Prioritized Action Plan: Harbour Ferry Tickets

## Section 0. Executive summary

- **Situation classification:** Complicated (Cynefin).
- **Overall plan confidence:** High - the ticket logs are complete.

## Section 2. Situation classification (Cynefin)

**Domain:** Complicated.

## Section 7. Recommended pm-skill prompts (copy/paste ready)

#### To execute P1: spec season passes

**Skill:** ~deliver-prd~

**Prompt:**
> Write a PRD for season passes on the harbour ferry app.

#### To execute P2: test the pass price

**Skill:** ~measure-experiment-design~

**Prompt:**
> Design an experiment on two season-pass prices.

#### To execute P3: kick off

**Skill:** ~workflow-feature-kickoff~

**Prompt:**
> Kick off the season-pass work.
`)

// noRunnablePlan's only block names a skill that is not installed.
var noRunnablePlan = backticks(`# Plan

## Section 7. Recommended pm-skill prompts

#### To execute P1: kick off

**Skill:** ~workflow-feature-kickoff~

**Prompt:**
> Kick off the work.
`)

func backticks(s string) string { return strings.ReplaceAll(s, "~", "`") }

func TestPlanUploadRunsInTheMentionsThread(t *testing.T) {
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), &scriptedRunner{})

	file := srv.AddFile("ferry-plan.md", []byte(plan))
	ts, env, err := srv.SendMention(channel, "", starter, "please run this --dry-run", file)
	if err != nil {
		t.Fatal(err)
	}
	ack(t, srv, env)

	// A plan from a mention waits at its preview, in the thread, for Start.
	preview := waitMsg(t, srv, "the preview with Start", func(m fakeslack.Message) bool { return hasButton(m, "Start") })
	if preview.ThreadTS != ts {
		t.Errorf("the preview is in thread %q, want the mention's thread %q", preview.ThreadTS, ts)
	}
	click(t, srv, starter, preview, "Start")

	step1 := waitStep(t, srv, 1, "deliver-prd", "Approve")
	if step1.ThreadTS != ts {
		t.Errorf("step 1 is in thread %q, want the mention's thread %q", step1.ThreadTS, ts)
	}
	hdr := botMessages(srv, "")[0]
	if hdr.ThreadTS != ts {
		t.Errorf("the header is in thread %q, want the mention's thread %q", hdr.ThreadTS, ts)
	}
	r := h.onlyRun()
	if r.Input != engine.InputPlan || !r.DryRun || r.Origin.Thread != ts || r.StartedBy != starter {
		t.Errorf("run = input %s, dry run %v, thread %q, started by %s; want a dry-run plan in %q by %s",
			r.Input, r.DryRun, r.Origin.Thread, r.StartedBy, ts, starter)
	}
	if len(r.Steps) != 2 || r.Steps[0].Skill != "deliver-prd" || r.Steps[1].Skill != "measure-experiment-design" {
		t.Errorf("steps = %+v, want deliver-prd then measure-experiment-design", r.Steps)
	}
	if got := srv.Calls("url_private"); len(got) == 0 || got[0].Status != 200 {
		t.Errorf("the plan was not downloaded with the bot token: %+v", got)
	}
	if a := r.Steps[0].Latest(); a == nil || a.Result != engine.ResultNotExecuted {
		t.Errorf("a dry run's step 1 = %+v, want NOT-EXECUTED", a)
	}

	// A redelivered mention starts nothing more.
	if err := srv.Redeliver(env); err != nil {
		t.Fatal(err)
	}
	waitAcks(t, srv, env, 2)
	click(t, srv, starter, step1, "Approve")
	waitStep(t, srv, 2, "measure-experiment-design", "Approve")
	if n := h.runCount(); n != 1 {
		t.Errorf("%d runs after a redelivered mention, want 1", n)
	}
}

func TestBadPlanUploadsStartNothing(t *testing.T) {
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), &scriptedRunner{}, withConfig(func(c *bot.Config) { c.MaxPlanBytes = 4096 }))

	cases := []struct {
		name, file string
		body       []byte
		want       []string
	}{
		{"pdf", "plan.pdf", []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n"), []string{"plan.pdf", "PDF", "Markdown"}},
		{"binary disguised as markdown", "plan.md", []byte("# Plan\x00\x01\x02 binary"), []string{"plan.md", "not text"}},
		{"oversized", "big-plan.md", []byte(plan + strings.Repeat("More evidence.\n", 300)), []string{"big-plan.md", "up to 4.0 KiB"}},
		{"no runnable step", "kickoff.md", []byte(noRunnablePlan), []string{"no runnable step"}},
		{"no file", "", nil, []string{"no plan attached"}},
	}
	for i, c := range cases {
		user := "U0UPLOAD" + string(rune('A'+i))
		var files []string
		if c.file != "" {
			files = append(files, srv.AddFile(c.file, c.body))
		}
		_, env, err := srv.SendMention(channel, "", user, "run this", files...)
		if err != nil {
			t.Fatal(err)
		}
		ack(t, srv, env)
		e := waitEphemeral(t, srv, user, c.want...)
		if !strings.Contains(e.Rendered, "Nothing was run") {
			t.Errorf("%s: the answer does not say nothing was run: %q", c.name, e.Rendered)
		}
	}
	if n := h.runCount(); n != 0 {
		t.Errorf("bad uploads started %d runs", n)
	}
	if n := len(botMessages(srv, "")); n != 0 {
		t.Errorf("bad uploads posted %d messages in the channel", n)
	}
}

func TestHelpAndEmptyCommand(t *testing.T) {
	srv := newSlack(t)
	start(t, srv, t.TempDir(), &scriptedRunner{})

	for _, c := range []struct{ user, text string }{{"U0HELP", "help"}, {"U0EMPTY", ""}, {"U0QUESTION", "?"}} {
		slash(t, srv, c.user, c.text)
		e := waitEphemeral(t, srv, c.user, "/gonogo chain EXPR", "/gonogo run WORKFLOW", "/gonogo runs", "Mention gonogo")
		if e.Channel != channel {
			t.Errorf("%q: help shown in %q", c.text, e.Channel)
		}
	}
	slash(t, srv, "U0TYPO", "chian deliver-prd")
	waitEphemeral(t, srv, "U0TYPO", "unknown subcommand", `did you mean "chain"`, "Nothing was run")
}

func TestRunsListsTheChannelsRuns(t *testing.T) {
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), &scriptedRunner{})

	slash(t, srv, "U0LIST", "runs")
	waitEphemeral(t, srv, "U0LIST", "No runs in this channel")

	slash(t, srv, starter, "chain deliver-prd")
	step := waitStep(t, srv, 1, "deliver-prd", "Approve")
	r := h.onlyRun()
	slash(t, srv, "U0LIST", "runs")
	e := waitEphemeral(t, srv, "U0LIST", "Runs in this channel", string(r.ID), "waiting", "0 of 1 steps")
	link := "https://slack.com/archives/" + channel + "/p" + strings.ReplaceAll(step.ThreadTS, ".", "")
	if !strings.Contains(string(e.Blocks), link) {
		t.Errorf("the runs list does not link the run's thread %s: %s", link, e.Blocks)
	}
}

// notesCounter counts the bot's reads of a run's notes.
type notesCounter struct {
	bot.Engine
	reads atomic.Int64
}

func (n *notesCounter) Notes(ctx context.Context, id engine.RunID) (map[string]string, error) {
	n.reads.Add(1)
	return n.Engine.Notes(ctx, id)
}

func TestRunsReadsOnlyTheListedRuns(t *testing.T) {
	srv := newSlack(t)
	dir := t.TempDir()
	seedStore(t, dir, 100, 0)
	counter := &notesCounter{}
	start(t, srv, dir, &scriptedRunner{}, withEngine(func(e bot.Engine) bot.Engine { counter.Engine = e; return counter }))
	// The catch-up after the start reads every run's notes once, without a
	// call to Slack (each thread is noted as fully posted): wait until it
	// has, so that its reads are not counted as the list's.
	eventually(t, "the catch-up read the 100 runs' notes", func() bool { return counter.reads.Load() >= 100 })
	settle(srv, 50*time.Millisecond, 2*time.Second)

	before := counter.reads.Load()
	slash(t, srv, "U0LIST", "runs")
	e := waitEphemeral(t, srv, "U0LIST", "Runs in this channel* (100)", "60 older runs are not listed")
	if n := strings.Count(string(e.Blocks), "https://slack.com/archives/"+channel); n != 40 {
		t.Errorf("%d runs linked, want the 40 listed", n)
	}
	// Listing 40 of 100 runs reads the notes (where each thread is) of the
	// 40 it shows, not of every run in the store.
	if n := counter.reads.Load() - before; n > 40 {
		t.Errorf("/gonogo runs read the notes of %d runs to list 40", n)
	}
}

func TestUnknownSkillIsRefusedWithCloseNames(t *testing.T) {
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), &scriptedRunner{})

	slash(t, srv, starter, "chain deliver-prdd -> deliver-user-stories -- ferry tickets")
	e := waitEphemeral(t, srv, starter, "Refused", "deliver-prdd", "did you mean", "`deliver-prd`", "Nothing was run")
	if e.Channel != channel {
		t.Errorf("the refusal went to %q", e.Channel)
	}
	if n := h.runCount(); n != 0 {
		t.Errorf("an unknown skill started %d runs", n)
	}
	if n := len(botMessages(srv, "")); n != 0 {
		t.Errorf("an unknown skill posted %d messages in the channel", n)
	}
	if len(h.runner.jobs()) != 0 {
		t.Error("an unknown skill ran something")
	}
}

// waitAcks waits until the envelope was acked n times (redeliveries).
func waitAcks(t *testing.T, srv *fakeslack.Server, env string, n int) {
	t.Helper()
	err := srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool {
		a, ok := st.Ack(env)
		return ok && a.Count >= n
	})
	if err != nil {
		t.Fatalf("envelope %s was not acked %d times: %v", env, n, err)
	}
}

// A slash command's acknowledgement is a message Slack shows the person:
// text, blocks and response_type, nothing Slack's message types refuse
// (a metadata object without an event_type).
func TestCommandAckCarriesOnlyAMessage(t *testing.T) {
	srv := newSlack(t)
	start(t, srv, t.TempDir(), &scriptedRunner{})

	for _, text := range []string{"help", "chain deliver-prd -- season passes", "chian deliver-prd"} {
		a := ack(t, srv, srv.SendSlashCommand(slack.SlashCommand{Command: "/gonogo", UserID: "U0ACK", ChannelID: channel,
			TeamID: fakeslack.TeamID, Text: text}))
		if len(a.Payload) == 0 {
			t.Fatalf("%q: acknowledged bare, want the answer in the ack", text)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(a.Payload, &fields); err != nil {
			t.Fatalf("%q: ack payload %s: %v", text, a.Payload, err)
		}
		for k := range fields {
			if k != "text" && k != "blocks" && k != "response_type" {
				t.Errorf("%q: the ack carries %q (%s): want only text, blocks and response_type", text, k, fields[k])
			}
		}
		if string(fields["response_type"]) != `"ephemeral"` {
			t.Errorf("%q: response_type %s, want ephemeral", text, fields["response_type"])
		}
	}
}
