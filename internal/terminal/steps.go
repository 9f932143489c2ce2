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
	if d.started != key {
		fmt.Fprintf(d.out, "%s\n", StepTitle(r, s))
	}
	d.started = ""
	if a := AttemptOf(s, ev.Attempt); a != nil && a.Candidate > 0 {
		fmt.Fprintf(d.out, "  Candidate %d of %d, on %s\n", a.Candidate, len(s.Rules.BestOf), a.Runner)
	}
	fmt.Fprintf(d.out, "  Result:   %s\n", ResultLine(s, ev))
	if ev.Summary != "" {
		fmt.Fprintf(d.out, "  Summary:  %s\n", ev.Summary)
	}
	if ev.Artifact {
		if ev.File != "" {
			fmt.Fprintf(d.out, "  Artifact: %s\n", filepath.Join(d.data, filepath.FromSlash(ev.File)))
		} else {
			fmt.Fprintf(d.out, "  Artifact: stored with the run (gonogo show %s --artifact %d --attempt %d%s)\n", r.ID, ev.Step, ev.Attempt, DataFlag(d.data))
		}
		if body, err := d.svc.Artifact(ctx, r.ID, ev.Step, ev.Attempt); err == nil {
			PrintPreview(d.out, body, 12)
		}
	}
	if next := NextWords(s, ev); next != "" {
		fmt.Fprintf(d.out, "  %s\n", next)
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
	if len(facts) > 0 {
		res += "  (" + strings.Join(facts, ", ") + ")"
	}
	return res
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
		if due, n, of, ok := engine.RetryDue(s); ok && s.Latest() != nil && s.Latest().N == ev.Attempt {
			return fmt.Sprintf("Retrying at %s (retry %d of %d).", due.Local().Format("15:04:05"), n, of)
		}
		if ev.Held {
			return "The run is paused: the step waits here whatever the run's mode."
		}
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
		res, dec, art := "-", "-", "-"
		if l := s.Latest(); l != nil {
			res = string(l.Result)
			if l.File != "" {
				art = filepath.Join(data, filepath.FromSlash(l.File))
				if ArtifactGone(data, l.File) {
					art = fmt.Sprintf("%s is gone; in the store: gonogo show %s --artifact %d%s", art, r.ID, s.N, DataFlag(data))
				}
			} else if l.Artifact {
				art = fmt.Sprintf("in the store: gonogo show %s --artifact %d%s", r.ID, s.N, DataFlag(data))
			}
		}
		if s.Status == engine.StepSkipped {
			art = "-"
		}
		if d := engine.StepDecision(s); d != nil {
			dec = string(d.Kind)
		}
		// An aborted step that ran keeps its attempt's result (the decision
		// column says abort); one that never ran says aborted.
		if s.Status == engine.StepPending || s.Status == engine.StepInterrupted ||
			(s.Status == engine.StepAborted && s.Latest() == nil) {
			res = string(s.Status)
		}
		fmt.Fprintf(w, "  %-3d %-32s %-14s %-9s %s\n", s.N, Clip(s.Skill, 32), res, dec, art)
	}
}

func PrintLeftovers(w io.Writer, p engine.Plan) {
	for _, b := range p.Manual {
		fmt.Fprintf(w, "  manual   %s%s: %s\n", OrDash(b.Skill), EffortSuffix(b.Effort, b.PTokens), b.Reason)
	}
	for _, b := range p.Deferred {
		fmt.Fprintf(w, "  deferred %s%s\n", b.Skill, EffortSuffix(b.Effort, b.PTokens))
	}
}
