package terminal

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// stepBlock prints a finished attempt: result, summary, where the artifact
// is, and a preview.
func (d *driver) stepBlock(ctx context.Context, r *engine.Run, s *engine.Step, ev engine.Event) {
	key := fmt.Sprintf("%d/%d", ev.Step, ev.Attempt)
	if d.shown[key] {
		return
	}
	d.shown[key] = true
	d.blockHead(r, s, ev, key)
	fmt.Fprintf(d.out, "  Result:   %s\n", ResultLine(s, ev))
	if ev.Summary != "" {
		fmt.Fprintf(d.out, "  Summary:  %s\n", ev.Summary)
	}
	if ev.Artifact {
		d.artifactLines(ctx, r, ev)
	}
	if next := NextWords(s, ev); next != "" {
		fmt.Fprintf(d.out, "  %s\n", next)
	}
}

// blockHead names the step, unless its start line just above does, and
// the candidate a best-of attempt is.
func (d *driver) blockHead(r *engine.Run, s *engine.Step, ev engine.Event, key string) {
	if d.started != key {
		fmt.Fprintf(d.out, "%s\n", StepTitle(r, s))
	}
	d.started = ""
	if a := AttemptOf(s, ev.Attempt); a != nil && a.Candidate > 0 {
		fmt.Fprintf(d.out, "  Candidate %d of %d, on %s\n", a.Candidate, len(s.Rules.BestOf), a.Runner)
	}
}

// artifactLines say where a finished attempt's artifact is (its file, or
// the store), and preview it.
func (d *driver) artifactLines(ctx context.Context, r *engine.Run, ev engine.Event) {
	if ev.File != "" {
		fmt.Fprintf(d.out, "  Artifact: %s\n", filepath.Join(d.data, filepath.FromSlash(ev.File)))
	} else {
		fmt.Fprintf(d.out, "  Artifact: stored with the run (gonogo show %s --artifact %d --attempt %d%s)\n", r.ID, ev.Step, ev.Attempt, DataFlag(d.data))
	}
	if body, err := d.svc.Artifact(ctx, r.ID, ev.Step, ev.Attempt); err == nil {
		PrintPreview(d.out, body, 12)
	}
}

// ResultLine is an attempt's result, its reason, and what it cost:
// "FAILED - the agent exited with code 1  (12s)".
func ResultLine(s *engine.Step, ev engine.Event) string {
	res := engine.ResultText(ev.Result, ev.Reason)
	a := AttemptOf(s, ev.Attempt)
	if a != nil && a.Skill != "" && a.Skill != s.Skill {
		res += " (ran the fallback `" + a.Skill + "`)"
	}
	if facts := attemptFacts(ev, a); len(facts) > 0 {
		res += "  (" + strings.Join(facts, ", ") + ")"
	}
	return res
}

// attemptFacts is what an attempt cost, in money, turns and time, as far
// as they are known.
func attemptFacts(ev engine.Event, a *engine.Attempt) []string {
	var facts []string
	if ev.CostUSD > 0 {
		facts = append(facts, fmt.Sprintf("$%.2f", ev.CostUSD))
	}
	if ev.Usage.Turns > 0 {
		facts = append(facts, Plural(ev.Usage.Turns, "turn"))
	}
	if a != nil && !a.Started.IsZero() {
		facts = append(facts, a.Finished.Sub(a.Started).Round(time.Second).String())
	}
	return facts
}

// NextWords says what follows a finished attempt without a person: the run
// advanced, falls back to another skill, goes on without an optional step,
// or retries.
func NextWords(s *engine.Step, ev engine.Event) string {
	switch {
	case ev.Status == engine.StepDone:
		return "Advanced."
	case ev.Status == engine.StepQueued && ev.Skill != "":
		return fmt.Sprintf("Falling back to `%s`.", ev.Skill)
	case ev.Status == engine.StepSkipped:
		return "Optional step: the run goes on without it."
	case s != nil && ev.Status == engine.StepWaiting:
		return waitingWords(s, ev)
	}
	return ""
}

// waitingWords says why a finished attempt's step waits without a person:
// gonogo retries it at a set time, or a pause holds it.
func waitingWords(s *engine.Step, ev engine.Event) string {
	if due, n, of, ok := engine.RetryDue(s); ok && s.Latest() != nil && s.Latest().N == ev.Attempt {
		return fmt.Sprintf("Retrying at %s (retry %d of %d).", due.Local().Format("15:04:05"), n, of)
	}
	if ev.Held {
		return "The run is paused: the step waits here whatever the run's mode."
	}
	return ""
}

// Plural is n and the word for n of them: "1 turn", "4 turns".
func Plural(n int, word string) string { return fmt.Sprintf("%d %s", n, Noun(n, word)) }

func Noun(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func AttemptOf(s *engine.Step, n int) *engine.Attempt {
	if s == nil {
		return nil
	}
	for i := range s.Attempts {
		if s.Attempts[i].N == n {
			return &s.Attempts[i]
		}
	}
	return nil
}

func PrintPreview(w io.Writer, body []byte, max int) {
	lines := strings.Split(strings.TrimSpace(string(body)), "\n")
	more := 0
	if len(lines) > max {
		more = len(lines) - max
		lines = lines[:max]
	}
	fmt.Fprintln(w, "  ┌──")
	for _, l := range lines {
		fmt.Fprintf(w, "  │ %s\n", Clip(strings.TrimRight(l, " \t"), 110))
	}
	if more > 0 {
		fmt.Fprintf(w, "  │ … %d more %s\n", more, Noun(more, "line"))
	}
	fmt.Fprintln(w, "  └──")
}

func PrintSteps(w io.Writer, r *engine.Run, data string) {
	fmt.Fprintf(w, "  %-3s %-32s %-14s %-9s %s\n", "#", "step", "result", "decision", "artifact")
	for i := range r.Steps {
		s := &r.Steps[i]
		fmt.Fprintf(w, "  %-3d %-32s %-14s %-9s %s\n", s.N, Clip(s.Skill, 32), tableResult(s), tableDecision(s), tableArtifact(r, s, data))
	}
}

// tableResult is a step's result column in the steps table.
func tableResult(s *engine.Step) string {
	// An aborted step that ran keeps its attempt's result (the decision
	// column says abort); one that never ran says aborted.
	if s.Status == engine.StepPending || s.Status == engine.StepInterrupted ||
		(s.Status == engine.StepAborted && s.Latest() == nil) {
		return string(s.Status)
	}
	if l := s.Latest(); l != nil {
		return string(l.Result)
	}
	return "-"
}

// tableDecision is a step's decision column in the steps table.
func tableDecision(s *engine.Step) string {
	if d := engine.StepDecision(s); d != nil {
		return string(d.Kind)
	}
	return "-"
}

// tableArtifact is a step's artifact column in the steps table: the file,
// or how to print it from the store when it has no file or the file is
// gone.
func tableArtifact(r *engine.Run, s *engine.Step, data string) string {
	l := s.Latest()
	if l == nil || s.Status == engine.StepSkipped {
		return "-"
	}
	if l.File != "" {
		art := filepath.Join(data, filepath.FromSlash(l.File))
		if ArtifactGone(data, l.File) {
			art = fmt.Sprintf("%s is gone; in the store: gonogo show %s --artifact %d%s", art, r.ID, s.N, DataFlag(data))
		}
		return art
	}
	if l.Artifact {
		return fmt.Sprintf("in the store: gonogo show %s --artifact %d%s", r.ID, s.N, DataFlag(data))
	}
	return "-"
}

func PrintLeftovers(w io.Writer, p engine.Plan) {
	for _, b := range p.Manual {
		fmt.Fprintf(w, "  manual   %s%s: %s\n", OrDash(b.Skill), EffortSuffix(b.Effort, b.PTokens), b.Reason)
	}
	for _, b := range p.Deferred {
		fmt.Fprintf(w, "  deferred %s%s\n", b.Skill, EffortSuffix(b.Effort, b.PTokens))
	}
}
