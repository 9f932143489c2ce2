package bot_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/fakeslack"
)

func withRunners(names ...string) option {
	return withConfig(func(c *bot.Config) { c.Runners = names })
}

// pickButtons are the "Pick this" buttons of a message, in order.
func pickButtons(m fakeslack.Message) []fakeslack.Button {
	var out []fakeslack.Button
	for _, b := range m.Buttons() {
		if b.Text == "Pick this" {
			out = append(out, b)
		}
	}
	return out
}

// A best-of chain from the slash command: each candidate shows with its
// runner, preview and a "Pick this" button; the pick is the step's
// artifact, handed on by --thread, and the journal says who picked.
func TestBestOfPickThisInTheThread(t *testing.T) {
	srv := newSlack(t)
	r := &scriptedRunner{}
	r.script("claude/deliver-prd", engine.Outcome{Artifact: []byte("# Claude's PRD\n\nThe first draft.\n"), CostUSD: 0.25})
	r.script("codex/deliver-prd", engine.Outcome{Artifact: []byte("# Codex's PRD\n\nThe second draft.\n"), CostUSD: 0.5})
	h := start(t, srv, t.TempDir(), r, withRunners("claude", "codex"))

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories --thread --best-of claude,codex")
	step1 := waitStep(t, srv, 1, "best of 2", "Candidate 1 of 2", "Candidate 2 of 2", "Claude's PRD", "Codex's PRD",
		"Pick this", "Edit", "Skip", "Redo", "Abort")
	if strings.Contains(step1.Rendered, "Approve") {
		t.Errorf("a best-of checkpoint offers Approve: %q", step1.Rendered)
	}
	picks := pickButtons(step1)
	if len(picks) != 2 {
		t.Fatalf("%d Pick this buttons, want one per candidate: %v", len(picks), step1.Buttons())
	}
	clickButton(t, srv, starter, fakeslack.TeamID, step1, picks[1])

	waitStep(t, srv, 2, "deliver-user-stories", "best of 2")
	after := waitMsg(t, srv, "step 1 picked", func(m fakeslack.Message) bool {
		return m.TS == step1.TS && strings.Contains(m.Rendered, "Picked candidate 2") && len(pickButtons(m)) == 0
	})
	if !containsAll(after.Rendered, starter, "🏆 picked") {
		t.Errorf("step 1 does not say who picked which: %q", after.Rendered)
	}
	run := h.onlyRun()
	st := run.Step(1)
	if l := st.Latest(); st.Status != engine.StepDone || l.Runner != "codex" || !l.Picked {
		t.Fatalf("step 1 is %s standing on %+v, want done on codex's candidate", st.Status, l)
	}
	if run.CostUSD < 0.75 {
		t.Errorf("run cost $%.2f, want both candidates' $0.75 counted", run.CostUSD)
	}
	ds := h.decisions(run.ID)
	if len(ds) != 1 || ds[0].Decision != engine.DecidePick || ds[0].Actor != starter || ds[0].Candidate != 2 {
		t.Errorf("journal decisions = %+v, want one pick of candidate 2 by %s", ds, starter)
	}
	// Step 2's message shows once its first candidate starts; the
	// second may start a moment later.
	var threaded []string
	eventually(t, "both of step 2's candidates started", func() bool {
		threaded = threaded[:0]
		for _, j := range r.jobs() {
			if j.Step == 2 {
				threaded = append(threaded, j.Prompt)
			}
		}
		return len(threaded) >= 2
	})
	if len(threaded) != 2 || !slices.ContainsFunc(threaded, func(p string) bool { return strings.Contains(p, "Codex's PRD") }) ||
		slices.ContainsFunc(threaded, func(p string) bool { return strings.Contains(p, "Claude's PRD") }) {
		t.Errorf("step 2's candidates were not handed the pick alone")
	}
}

// A FAILED candidate has no "Pick this"; an unknown runner is refused
// before anything starts.
func TestBestOfFailedCandidateAndUnknownRunner(t *testing.T) {
	srv := newSlack(t)
	r := &scriptedRunner{}
	r.script("codex/deliver-prd", engine.Outcome{AgentError: "the codex agent broke"})
	h := start(t, srv, t.TempDir(), r, withRunners("claude", "codex"))

	slash(t, srv, starter, "chain deliver-prd --best-of cursor,codex")
	waitEphemeral(t, srv, starter, `unknown runner "cursor" (valid: claude, codex)`)
	if n := h.runCount(); n != 0 {
		t.Fatalf("%d runs started for an unknown runner", n)
	}

	slash(t, srv, starter, "chain deliver-prd --best-of=claude,codex")
	step1 := waitStep(t, srv, 1, "Candidate 2 of 2", "FAILED", "the codex agent broke", "Pick this")
	if picks := pickButtons(step1); len(picks) != 1 {
		t.Fatalf("%d Pick this buttons, want one: the FAILED candidate has none", len(picks))
	}
	click(t, srv, starter, step1, "Pick this")
	waitText(t, srv, "Run complete")
	if l := h.onlyRun().Step(1).Latest(); l.Runner != "claude" || !l.Picked {
		t.Errorf("step 1 stands on %+v, want claude's candidate", l)
	}
}

// noBestOf is an engine whose backend does not carry out best-of steps
// (engine.ErrBestOfUnsupported).
type noBestOf struct{ bot.Engine }

func (e noBestOf) Start(ctx context.Context, p engine.Plan, opt engine.StartOptions) (*engine.Run, error) {
	if engine.PlanBestOf(p) {
		return nil, fmt.Errorf("%w: gonogo on this backend runs one agent per step", engine.ErrBestOfUnsupported)
	}
	return e.Engine.Start(ctx, p, opt)
}

// A backend that does not carry out best-of steps says so to the person,
// and starts nothing.
func TestBestOfRefusedByTheBackend(t *testing.T) {
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), &scriptedRunner{}, withRunners("claude", "codex"),
		withEngine(func(e bot.Engine) bot.Engine { return noBestOf{e} }))
	slash(t, srv, starter, "chain deliver-prd --best-of claude,codex")
	waitEphemeral(t, srv, starter, "Nothing was started: best-of steps (--best-of, best_of:) are not carried out here: gonogo on this backend runs one agent per step.")
	if n := h.runCount(); n != 0 {
		t.Fatalf("%d runs started", n)
	}
}
