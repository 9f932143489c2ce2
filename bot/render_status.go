package bot

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// Slack's limits on a thread's loading status (assistant.threads.setStatus):
// the status and each loading message are at most 50 characters (the
// method's schema; a longer one is refused with invalid_arguments), and a
// status has at most 10 loading messages.
const (
	maxStatusText      = 50
	maxLoadingMessages = 10
)

// statusSep joins the parts of a status line.
const statusSep = " · "

// ThreadStatus is the loading status a run's thread shows while steps run
// (assistant.threads.setStatus): Slack shows "gonogo <status>" at the foot
// of the thread and rotates through loading until gonogo replies in the
// thread or clears it. It carries the live progress of every running step
// (progress holds each one's latest news, by step number): turns, time
// running, tool calls, cost and the agent's own status line. A thread
// shows one status, so the steps of a workflow that run at once share it,
// each with its loading message. status is "" when no step runs. Every
// line is built by statusText, within Slack's limit.
func ThreadStatus(r *engine.Run, progress map[int]engine.Progress, now time.Time) (status string, loading []string) {
	running := runningSteps(r)
	switch len(running) {
	case 0:
		return "", nil
	case 1:
		return oneStepStatus(r, running[0], progress[running[0].N], now)
	}
	return manyStepsStatus(r, running, progress, now)
}

// manyStepsStatus is the thread status while several steps run: their
// numbers, and a loading message for each (up to maxLoadingMessages, the
// last of which counts the rest).
func manyStepsStatus(r *engine.Run, running []*engine.Step, progress map[int]engine.Progress, now time.Time) (status string, loading []string) {
	ns := make([]string, 0, len(running))
	for i, s := range running {
		ns = append(ns, strconv.Itoa(s.N))
		if i == maxLoadingMessages-1 && len(running) > maxLoadingMessages {
			loading = append(loading, statusText(fmt.Sprintf("and %d more steps", len(running)-i)))
			continue
		}
		if i < maxLoadingMessages {
			loading = append(loading, statusText(stepLabel(r, s), progressFacts(s, progress[s.N], now)...))
		}
	}
	return statusText(fmt.Sprintf("is running %d steps at once: %s", len(running), ns[0]), ns[1:]...), loading
}

// oneStepStatus is the thread status while one step runs: the step and its
// progress, and loading messages with its facts, the agent's status line
// and its last tool.
func oneStepStatus(r *engine.Run, s *engine.Step, p engine.Progress, now time.Time) (status string, loading []string) {
	facts := progressFacts(s, p, now)
	status = statusText("is running "+stepLabel(r, s), append(facts, p.Status)...)
	loading = append(loading, statusText(stepLabel(r, s), facts...))
	if !statusFits(stepLabel(r, s), facts...) {
		// The facts again on their own, as the step's name leaves
		// them no room beside it.
		loading = append(loading, statusText(facts[0], facts[1:]...))
	}
	if strings.TrimSpace(p.Status) != "" {
		loading = append(loading, statusText(p.Status))
	}
	if p.LastTool != "" {
		loading = append(loading, statusText("last tool: "+p.LastTool))
	}
	return status, loading
}

// shortStatus is the least a run's thread status says: which step runs,
// or how many, in words of gonogo's own (no skill name, no agent's words).
// It is what gonogo sets, without loading messages, when Slack refuses
// the full status; "" when no step runs.
func shortStatus(r *engine.Run) string {
	running := runningSteps(r)
	switch len(running) {
	case 0:
		return ""
	case 1:
		t := engine.Title(r, running[0])
		return statusText(fmt.Sprintf("is running step %d/%d", t.N, t.Of))
	}
	return statusText(fmt.Sprintf("is running %d steps", len(running)))
}

// runningSteps are the steps of a run whose attempt runs.
func runningSteps(r *engine.Run) []*engine.Step {
	if r.Finished() {
		return nil
	}
	var running []*engine.Step
	for i := range r.Steps {
		s := &r.Steps[i]
		if l := s.Latest(); s.Status == engine.StepRunning && l != nil && l.Result == "" {
			running = append(running, s)
		}
	}
	return running
}

// stepLabel names a step in few characters: "step 2/3: deliver-prd".
func stepLabel(r *engine.Run, s *engine.Step) string {
	t := engine.Title(r, s)
	return fmt.Sprintf("step %d/%d: %s", t.N, t.Of, t.Skill)
}

// statusText makes a thread's loading status, or one of its loading
// messages, of lead and as many of facts as fit, in their order, joined
// by " · ", within Slack's limit (maxStatusText). Each part is made safe
// first, as it may hold an agent's words: one line, no comma (slack-go
// joins the loading messages with commas, so Slack would split one
// there), defanged. A fact that does not fit whole is left out rather than
// cut, so that what shows is true as it reads; a lead that does not fit
// alone is cut, on a character, with an ellipsis. Lengths count as
// textLen does (a character beyond the Basic Multilingual Plane twice),
// the strictest way Slack may count them.
func statusText(lead string, facts ...string) string {
	s := cutPlain(statusPart(lead), maxStatusText)
	for _, f := range facts {
		f = statusPart(f)
		if f != "" && textLen(s)+textLen(statusSep)+textLen(f) <= maxStatusText {
			s += statusSep + f
		}
	}
	return s
}

// statusFits reports whether statusText keeps lead and every fact whole.
func statusFits(lead string, facts ...string) bool {
	n := textLen(statusPart(lead))
	for _, f := range facts {
		if f = statusPart(f); f != "" {
			n += textLen(statusSep) + textLen(f)
		}
	}
	return n <= maxStatusText
}

// statusPart is text made fit for a status line, not yet cut.
func statusPart(s string) string {
	return defang(strings.ReplaceAll(oneLine(clean(s), 4*maxStatusText), ",", ";"))
}

// progressFacts are a running step's turns, time running, tool calls and
// cost so far, as far as its agent has told them (an agent that tells
// nothing has its time running alone), the most telling first.
func progressFacts(s *engine.Step, p engine.Progress, now time.Time) []string {
	told := p.Turns > 0 || p.ToolCalls > 0
	var facts []string
	if told {
		facts = append(facts, count(p.Turns, "turn"))
	}
	facts = append(facts, duration(runningFor(s, p, now)))
	if told {
		facts = append(facts, count(p.ToolCalls, "tool call"))
	}
	if p.CostUSD > 0 {
		facts = append(facts, money(p.CostUSD))
	}
	return facts
}

// runningFor is how long a step's attempt has run: as its agent told it,
// else since the attempt started.
func runningFor(s *engine.Step, p engine.Progress, now time.Time) time.Duration {
	if l := s.Latest(); p.Elapsed <= 0 && l != nil && !l.Started.IsZero() {
		return now.Sub(l.Started)
	}
	return p.Elapsed
}

// count is plural without a thousands separator, which would split a
// loading message in two.
func count(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
