package bot

import (
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// rdChecklist is the header's list of steps, each step followed by the
// steps its output added (indented under it). Past checklistMax steps it
// counts them all, then shows a window around the first step that is not
// settled, with the steps before and after it summed up.
func rdChecklist(r *engine.Run) []string {
	nodes := rdTree(r)
	if len(nodes) <= rdChecklistMax {
		lines := make([]string, 0, len(nodes))
		for _, nd := range nodes {
			lines = append(lines, rdTreeLine(r, nd, false))
		}
		return lines
	}
	focus := len(nodes) - 1
	for i, nd := range nodes {
		if !nd.s.Settled() {
			focus = i
			break
		}
	}
	window := rdChecklistMax - 5
	lo := max(0, focus-5)
	hi := min(len(nodes), lo+window)
	lo = max(0, hi-window)
	lines := []string{fmt.Sprintf("%d steps: %s", len(nodes), rdCountStatuses(rdNodeSteps(nodes)))}
	if lo > 0 {
		lines = append(lines, "… "+rdNodeSpan(nodes[:lo])+": "+rdCountStatuses(rdNodeSteps(nodes[:lo])))
	}
	for _, nd := range nodes[lo:hi] {
		lines = append(lines, rdTreeLine(r, nd, false))
	}
	if hi < len(nodes) {
		lines = append(lines, "… "+rdNodeSpan(nodes[hi:])+": "+rdCountStatuses(rdNodeSteps(nodes[hi:])))
	}
	return lines
}

// rdNode is a step in the order the thread lists a run's steps: each step
// followed by the steps its output added (a route step's workflow, a
// decompose step's tasks), one level deeper.
type rdNode struct {
	s     *engine.Step
	depth int
}

// rdTree lists r's steps in that order. For plans and chains it is the
// steps' own order.
func rdTree(r *engine.Run) []rdNode {
	kids := map[int][]int{}
	var roots []int
	for i := range r.Steps {
		s := &r.Steps[i]
		if s.Parent > 0 && s.Parent < s.N {
			kids[s.Parent] = append(kids[s.Parent], s.N)
		} else {
			roots = append(roots, s.N)
		}
	}
	out := make([]rdNode, 0, len(r.Steps))
	// A parent comes before the steps it added (Parent < N), so the walk
	// ends; the engine bounds the nesting.
	var walk func(n, depth int)
	walk = func(n, depth int) {
		out = append(out, rdNode{s: r.Step(n), depth: depth})
		for _, k := range kids[n] {
			walk(k, depth+1)
		}
	}
	for _, n := range roots {
		walk(n, 0)
	}
	return out
}

func rdNodeSteps(nodes []rdNode) []engine.Step {
	out := make([]engine.Step, len(nodes))
	for i, nd := range nodes {
		out[i] = *nd.s
	}
	return out
}

// rdNodeSpan names a run of listed steps: "steps 1 to 37" when their
// numbers follow one another, "12 steps" otherwise.
func rdNodeSpan(nodes []rdNode) string {
	for i := 1; i < len(nodes); i++ {
		if nodes[i].s.N != nodes[i-1].s.N+1 {
			return rdPlural(len(nodes), "step")
		}
	}
	if len(nodes) == 1 {
		return fmt.Sprintf("step %d", nodes[0].s.N)
	}
	return fmt.Sprintf("steps %d to %d", nodes[0].s.N, nodes[len(nodes)-1].s.N)
}

// rdTreeLine is rdStepLine indented under the step that added it.
func rdTreeLine(r *engine.Run, nd rdNode, withFile bool) string {
	if nd.depth == 0 {
		return rdStepLine(r, nd.s, withFile)
	}
	// Em spaces: Slack keeps them where it would fold plain ones.
	return strings.Repeat("\u2003", min(nd.depth, 5)) + "↳ " + rdStepLine(r, nd.s, withFile)
}

var rdStatusOrder = []engine.StepStatus{engine.StepDone, engine.StepSkipped, engine.StepWaiting, engine.StepInterrupted,
	engine.StepRunning, engine.StepQueued, engine.StepPending, engine.StepAborted}

func rdCountStatuses(steps []engine.Step) string {
	counts := map[engine.StepStatus]int{}
	for i := range steps {
		counts[steps[i].Status]++
	}
	var parts []string
	for _, st := range rdStatusOrder {
		if n := counts[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
			delete(counts, st)
		}
	}
	other := 0
	for _, n := range counts {
		other += n
	}
	if other > 0 {
		parts = append(parts, fmt.Sprintf("%d other", other))
	}
	return strings.Join(parts, ", ")
}

// rdStepLine is one step in the header's checklist or the end table.
func rdStepLine(r *engine.Run, s *engine.Step, withFile bool) string {
	line := fmt.Sprintf("%s %d. %s%s: %s", rdOrQ(rdStatusEmoji[s.Status]), s.N, rdMdLine(s.Skill, 80), rdEffortPart(s.Effort), rdStepState(r, s))
	if l := s.Latest(); withFile && l != nil && l.File != "" && s.Status != engine.StepSkipped {
		line += " · `" + rdMdLine(path.Base(l.File), 150) + "`"
	}
	return line
}

// rdStepState is what became of a step, in a few words.
func rdStepState(r *engine.Run, s *engine.Step) string {
	res := ""
	if l := s.Latest(); l != nil && l.Result != "" {
		res = rdMdLine(string(l.Result), 40)
	}
	with := func(words string) string {
		if res == "" {
			return words
		}
		return res + ", " + words
	}
	d := s.LastDecision()
	byWho := func(k engine.DecisionKind) string {
		if d != nil && d.Kind == k {
			return " by " + rdWho(d.Actor)
		}
		return ""
	}
	switch s.Status {
	case engine.StepPending:
		return "pending"
	case engine.StepQueued:
		if d != nil && d.Kind == engine.DecideRedo {
			return with("redo requested" + byWho(engine.DecideRedo) + ", queued")
		}
		return "queued"
	case engine.StepRunning:
		if n := len(s.Attempts); n > 1 {
			return fmt.Sprintf("running (attempt %d)", n)
		}
		return "running"
	case engine.StepWaiting:
		if due, n, of, ok := engine.RetryDue(s); ok {
			return with(fmt.Sprintf("retrying at %s (retry %d of %d)", rdClock(due, time.Time{}), n, of))
		}
		if rdGateOnError(s) {
			return with("waiting for a fix (edit, skip or redo) or abort")
		}
		if l := s.Latest(); l != nil && l.Result == engine.ResultFailed {
			return with("waiting for redo or abort")
		}
		if q := r.Quorum; q > 1 {
			return with(fmt.Sprintf("waiting for a decision (%d of %d approvals)", len(engine.Approvals(s)), q))
		}
		return with("waiting for a decision")
	case engine.StepDone:
		switch {
		case d != nil && d.Kind == engine.DecideEdit:
			return with("edited" + byWho(engine.DecideEdit))
		case d != nil && d.Kind == engine.DecideApprove:
			if votes := rdUniq(engine.Approvals(s)); len(votes) > 1 {
				return with("approved by " + rdPeople(votes))
			}
			return with("approved" + byWho(engine.DecideApprove))
		}
		return with("advanced automatically")
	case engine.StepSkipped:
		if rdOptionalFailed(s) {
			return rdOptionalFailedWords(s)
		}
		return with("skipped" + byWho(engine.DecideSkip))
	case engine.StepInterrupted:
		return "interrupted, waiting for redo or abort"
	case engine.StepAborted:
		return with("aborted" + byWho(engine.DecideAbort))
	}
	return with(rdMdLine(string(s.Status), 40))
}
