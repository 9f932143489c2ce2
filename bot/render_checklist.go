package bot

import (
	"fmt"
	"strings"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// node is a step in the order the thread lists a run's steps: each step
// followed by the steps its output added (a route step's workflow, a
// decompose step's tasks), one level deeper.
type node struct {
	s     *engine.Step
	depth int
}

// tree lists r's steps in that order. For plans and chains it is the
// steps' own order.
func tree(r *engine.Run) []node {
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
	out := make([]node, 0, len(r.Steps))
	// A parent comes before the steps it added (Parent < N), so the walk
	// ends; the engine bounds the nesting.
	var walk func(n, depth int)
	walk = func(n, depth int) {
		out = append(out, node{s: r.Step(n), depth: depth})
		for _, k := range kids[n] {
			walk(k, depth+1)
		}
	}
	for _, n := range roots {
		walk(n, 0)
	}
	return out
}

func nodeSteps(nodes []node) []engine.Step {
	out := make([]engine.Step, len(nodes))
	for i, nd := range nodes {
		out[i] = *nd.s
	}
	return out
}

// nodeSpan names a run of listed steps: "steps 1 to 37" when their
// numbers follow one another, "12 steps" otherwise.
func nodeSpan(nodes []node) string {
	for i := 1; i < len(nodes); i++ {
		if nodes[i].s.N != nodes[i-1].s.N+1 {
			return plural(len(nodes), "step")
		}
	}
	if len(nodes) == 1 {
		return fmt.Sprintf("step %d", nodes[0].s.N)
	}
	return fmt.Sprintf("steps %d to %d", nodes[0].s.N, nodes[len(nodes)-1].s.N)
}

var statusOrder = []engine.StepStatus{engine.StepDone, engine.StepSkipped, engine.StepWaiting, engine.StepInterrupted,
	engine.StepRunning, engine.StepQueued, engine.StepPending, engine.StepAborted}

func countStatuses(steps []engine.Step) string {
	counts := map[engine.StepStatus]int{}
	for i := range steps {
		counts[steps[i].Status]++
	}
	var parts []string
	for _, st := range statusOrder {
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

// stepState is what became of a step, in a few words.
func stepState(r *engine.Run, s *engine.Step) string {
	if words, ok := plainStates[s.Status]; ok {
		return words
	}
	d := engine.StepDecision(s)
	switch s.Status {
	case engine.StepQueued:
		return queuedState(s, d)
	case engine.StepRunning:
		return runningState(s)
	case engine.StepWaiting:
		return withResult(s, waitingState(r, s))
	case engine.StepDone:
		return withResult(s, doneState(s, d))
	case engine.StepSkipped:
		return skippedState(s, d)
	case engine.StepAborted:
		return withResult(s, "aborted"+decidedBy(d, engine.DecideAbort))
	}
	return withResult(s, mdLine(string(s.Status), 40))
}

// plainStates are the states whose words say all there is to say.
var plainStates = map[engine.StepStatus]string{
	engine.StepPending:     "pending",
	engine.StepInterrupted: "interrupted, waiting for redo or abort",
}

// queuedState says whether a queued step waits for a redo someone asked
// for.
func queuedState(s *engine.Step, d *engine.Decision) string {
	if d != nil && d.Kind == engine.DecideRedo {
		return withResult(s, "redo requested"+decidedBy(d, engine.DecideRedo)+", queued")
	}
	return "queued"
}

// runningState counts the attempt a running step is at, past the first.
func runningState(s *engine.Step) string {
	if n := len(s.Attempts); n > 1 {
		return fmt.Sprintf("running (attempt %d)", n)
	}
	return "running"
}

// skippedState says who skipped a step, or that it was an optional step
// that failed.
func skippedState(s *engine.Step, d *engine.Decision) string {
	if engine.OptionalFailed(s) {
		return optionalFailedWords(s)
	}
	return withResult(s, "skipped"+decidedBy(d, engine.DecideSkip))
}

// withResult puts the result of the step's latest attempt, when it has
// one, before words.
func withResult(s *engine.Step, words string) string {
	l := s.Latest()
	if l == nil || l.Result == "" {
		return words
	}
	return mdLine(string(l.Result), 40) + ", " + words
}

// decidedBy is " by someone" when d, the step's last decision, is of kind
// k.
func decidedBy(d *engine.Decision, k engine.DecisionKind) string {
	if d != nil && d.Kind == k {
		return " by " + who(d.Actor)
	}
	return ""
}

// waitingState is what a waiting step waits for: a retry, a fix, a redo,
// or a decision and its approvals so far.
func waitingState(r *engine.Run, s *engine.Step) string {
	if due, n, of, ok := engine.RetryDue(s); ok {
		return fmt.Sprintf("retrying at %s (retry %d of %d)", clock(due, time.Time{}), n, of)
	}
	if engine.GateOnError(s) {
		return "waiting for a fix (edit, skip or redo) or abort"
	}
	if l := s.Latest(); l != nil && l.Result == engine.ResultFailed {
		return "waiting for redo or abort"
	}
	if q := r.Quorum; q > 1 {
		return fmt.Sprintf("waiting for a decision (%d of %d approvals)", len(engine.Approvals(s)), q)
	}
	return "waiting for a decision"
}

// doneState is how a done step got there: edited, approved (by whom), or
// advanced automatically.
func doneState(s *engine.Step, d *engine.Decision) string {
	switch {
	case d != nil && d.Kind == engine.DecideEdit:
		return "edited" + decidedBy(d, engine.DecideEdit)
	case d != nil && d.Kind == engine.DecideApprove:
		if votes := uniq(engine.Approvals(s)); len(votes) > 1 {
			return "approved by " + people(votes)
		}
		return "approved" + decidedBy(d, engine.DecideApprove)
	}
	return "advanced automatically"
}
