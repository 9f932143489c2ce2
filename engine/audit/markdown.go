package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// JSON is the trail as indented JSON, ending in a newline.
func (t Trail) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Markdown is the trail as a document that reads on its own: the run's
// facts, a table of its steps, each step's attempts with their decisions,
// feedback and edits (as diffs) and, for a best-of step's candidates,
// their runners and the pick, what was never run, and the journal. It
// is text for people, who may cat it to a terminal: the agent's words in
// it (reasons, diffs of its artifacts) pass engine.Printable, so a control
// sequence is shown, never obeyed. The JSON keeps them as they are.
func (t Trail) Markdown() []byte {
	var b bytes.Buffer
	r := t.Run
	fmt.Fprintf(&b, "# Audit trail of run %s\n\n", r.ID)
	fmt.Fprintf(&b, "| | |\n|---|---|\n")
	row(&b, "Input", r.Input+": "+code(r.Source))
	row(&b, "State", r.State)
	row(&b, "Mode", r.Mode)
	row(&b, "Started by", orDash(r.StartedBy))
	if r.Channel != "" {
		row(&b, "Slack", "channel "+r.Channel+threadPart(r.Thread))
	}
	row(&b, "Started", stamp(r.Created))
	if r.Finished != nil {
		row(&b, "Finished", stamp(*r.Finished))
	} else {
		row(&b, "Last change", stamp(r.Updated))
	}
	row(&b, "Cost", money(r.CostUSD)+budgetPart(r.BudgetUSD))
	if r.Quorum > 1 {
		row(&b, "Quorum", fmt.Sprintf("%d approvals a checkpoint", r.Quorum))
	}
	switch {
	case r.Mode == "dry-run":
		row(&b, "Runner", "none: a dry run calls no agent")
	case r.Runner != "":
		row(&b, "Runner", r.Runner+agentPart(r.Agent))
	}
	row(&b, "Written", stamp(t.Generated))
	for _, w := range r.Warnings {
		fmt.Fprintf(&b, "\n> Warning: %s\n", oneLine(w))
	}

	b.WriteString("\n## Steps\n\n| Step | Skill | Result | Decision | Who | Attempts | Cost | Time |\n|---|---|---|---|---|---|---|---|\n")
	for _, s := range t.Steps {
		res, dec, who := "—", "—", "—"
		if s.Result != nil {
			res = *s.Result
		}
		if s.Decision != nil {
			dec, who = *s.Decision, orDash(s.decidedBy)
			if s.picked > 0 {
				dec += fmt.Sprintf(" (candidate %d)", s.picked)
			}
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %d | %s | %s |\n", s.N, cell(s.Skill), res, dec, cell(who),
			len(s.Attempts), money(s.CostUSD), duration(stepSeconds(s)))
	}
	lost := interruptions(t.Journal)
	for _, s := range t.Steps {
		writeStep(&b, r.ID, s, lost)
	}
	if len(t.NotRun) > 0 {
		b.WriteString("\n## Not run\n\n")
		for _, n := range t.NotRun {
			fmt.Fprintf(&b, "- %s: %s%s%s\n", n.Kind, oneLine(n.Effort), skillPart(n.Skill), reasonPart(n.Reason))
		}
	}
	b.WriteString("\n## Journal\n\n| # | Time (UTC) | Event | Step | Who | Detail |\n|---|---|---|---|---|---|\n")
	for _, e := range t.Journal {
		step := ""
		if e.Step > 0 {
			step = fmt.Sprintf("%d.%d", e.Step, e.Attempt)
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s |\n", e.Seq, stamp(e.Time), e.Type, step, cell(e.Actor), cell(eventDetail(e)))
	}
	return []byte(engine.Printable(b.String()))
}

// interruptions are the step-interrupted events of a journal, by the
// attempt they ended.
func interruptions(journal []Event) map[[2]int]Event {
	out := map[[2]int]Event{}
	for _, e := range journal {
		if e.Type == string(engine.EvStepInterrupted) {
			out[[2]int{e.Step, e.Attempt}] = e
		}
	}
	return out
}

func writeStep(b *bytes.Buffer, id string, s Step, lost map[[2]int]Event) {
	fmt.Fprintf(b, "\n## Step %d: %s", s.N, s.Skill)
	if s.Effort != "" {
		fmt.Fprintf(b, " (%s)", oneLine(s.Effort))
	}
	b.WriteString("\n\n")
	if s.Parent > 0 {
		fmt.Fprintf(b, "Added by step %d.\n\n", s.Parent)
	}
	if len(s.Attempts) == 0 {
		fmt.Fprintf(b, "Never ran (%s).\n", s.Status)
		return
	}
	for i, a := range s.Attempts {
		if i > 0 {
			b.WriteString("\n")
		}
		writeAttempt(b, id, s, a, lost)
	}
}

// writeAttempt writes one attempt of s: how it ran, its artifact, the
// decisions on it and the diff of each edit.
func writeAttempt(b *bytes.Buffer, id string, s Step, a Attempt, lost map[[2]int]Event) {
	fmt.Fprintf(b, "### Attempt %d: %s\n\n", a.N, orDash(a.Result))
	if a.Candidate > 0 {
		b.WriteString(candidateLine(a) + "\n")
	}
	if a.Skill != s.Skill {
		fmt.Fprintf(b, "- Ran the fallback skill %s\n", code(a.Skill))
	}
	if a.Feedback != "" {
		fmt.Fprintf(b, "- Redo feedback: %s\n", quoteLine(a.Feedback))
	}
	if a.Started != nil {
		fmt.Fprintf(b, "- Ran %s from %s, cost %s%s\n", duration(a.DurationSeconds), stamp(*a.Started), money(a.CostUSD), usagePart(a.Usage))
	}
	if a.Reason != "" {
		fmt.Fprintf(b, "- Reason: %s\n", oneLine(a.Reason))
	}
	if e, ok := lost[[2]int{s.N, a.N}]; ok {
		b.WriteString(lostLine(e) + "\n")
	}
	if a.Artifact != nil {
		writeArtifact(b, id, s.N, a.N, *a.Artifact)
	}
	for _, d := range a.Decisions {
		writeDecision(b, d)
	}
	for _, e := range a.Edits {
		writeEdit(b, e)
	}
}

// candidateLine says which candidate of a best-of round attempt a is, on
// which runner, and whether it was picked.
func candidateLine(a Attempt) string {
	line := fmt.Sprintf("- Candidate %d of a best-of round, on runner %s", a.Candidate, code(a.Runner))
	if a.Picked {
		line += "; picked: its artifact is the step's"
	}
	return line
}

// writeDecision writes one decision on an attempt: a pick names its
// candidate, and its words are the picker's note.
func writeDecision(b *bytes.Buffer, d Decision) {
	fmt.Fprintf(b, "- **%s**", d.Kind)
	if d.Candidate > 0 {
		fmt.Fprintf(b, " of candidate %d", d.Candidate)
	}
	fmt.Fprintf(b, " by %s at %s", oneLine(d.Actor), stamp(d.Time))
	if d.Feedback != "" {
		what := "feedback"
		if d.Kind == string(engine.DecidePick) {
			what = "note"
		}
		fmt.Fprintf(b, " with %s %s", what, quoteLine(d.Feedback))
	}
	b.WriteString("\n")
}

// writeArtifact writes the artifact line of attempt a of step n, with the
// command that shows it when its file is gone from disk.
func writeArtifact(b *bytes.Buffer, id string, n, a int, art Artifact) {
	fmt.Fprintf(b, "- Artifact: %d bytes, sha256 `%s`", art.Size, art.SHA256)
	switch {
	case art.FileGone:
		fmt.Fprintf(b, "; its file %s is gone from disk, the store keeps it: %s", code(art.File),
			code(fmt.Sprintf("gonogo show %s --artifact %d --attempt %d", id, n, a)))
	case art.File != "":
		fmt.Fprintf(b, ", on disk as %s", code(art.File))
	}
	b.WriteString("\n")
}

// writeEdit writes a person's edit as a diff against the agent's artifact,
// fenced with more backticks than the diff holds in a row.
func writeEdit(b *bytes.Buffer, e Edit) {
	fmt.Fprintf(b, "\nEdit by %s at %s (%d bytes, sha256 `%s`), against the agent's artifact:\n\n", oneLine(e.Actor), stamp(e.Time), e.Size, orDash(e.SHA256))
	fence := strings.Repeat("`", max(3, longestRun(e.Diff, '`')+1))
	fmt.Fprintf(b, "%sdiff\n%s", fence, e.Diff)
	if !strings.HasSuffix(e.Diff, "\n") {
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "%s\n", fence)
}

func stepSeconds(s Step) float64 {
	var n float64
	for _, a := range s.Attempts {
		n += a.DurationSeconds
	}
	return n
}

// lostLine says when an interrupted attempt was lost: at its last sign of
// life, which can be long before the next gonogo found it.
func lostLine(e Event) string {
	if e.Lost == nil {
		return "- Interrupted: found lost at " + stamp(e.Time)
	}
	return "- Interrupted: lost after its last sign of life at " + stamp(*e.Lost) +
		"; the next gonogo found it at " + stamp(e.Time)
}

func eventDetail(e Event) string {
	var parts []string
	for _, p := range []string{e.Kind, candidatePart(e), e.Result, e.Reason} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	changes := make([]string, 0, len(e.Changes))
	for _, c := range e.Changes {
		changes = append(changes, engine.SetupChange(c).String())
	}
	if len(changes) > 0 {
		parts = append(parts, strings.Join(changes, "; "))
	}
	detail := strings.Join(parts, ": ")
	if e.Lost != nil {
		detail += "; last sign of life " + stamp(*e.Lost)
	}
	return detail
}

// candidatePart names the best-of candidate an event is about: the one a
// start began, on its runner, or the one a pick took; "" for none.
func candidatePart(e Event) string {
	switch {
	case e.Candidate == 0:
		return ""
	case e.Runner != "":
		return fmt.Sprintf("candidate %d on %s", e.Candidate, e.Runner)
	}
	return fmt.Sprintf("candidate %d", e.Candidate)
}

func row(b *bytes.Buffer, k, v string) { fmt.Fprintf(b, "| %s | %s |\n", k, cell(v)) }

// cell makes text safe inside one table cell: one line, no column breaks.
func cell(s string) string {
	return strings.ReplaceAll(oneLine(s), "|", `\|`)
}

// oneLine folds text to one line, so a reason or a name cannot start a
// heading or a list of its own.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func quoteLine(s string) string { return "“" + oneLine(s) + "”" }

// code sets text as inline code, with a fence longer than any run of
// backticks inside it.
func code(s string) string {
	s = oneLine(s)
	if s == "" {
		return "—"
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

func money(usd float64) string { return fmt.Sprintf("$%.4f", usd) }

func duration(sec float64) string {
	return (time.Duration(sec * float64(time.Second))).Round(time.Second).String()
}

func threadPart(ts string) string {
	if ts == "" {
		return ""
	}
	return ", thread " + ts
}

func budgetPart(usd float64) string {
	if usd <= 0 {
		return ""
	}
	return " of a " + money(usd) + " budget"
}

func agentPart(cmd string) string {
	if cmd == "" {
		return ""
	}
	return " (" + cmd + ")"
}

func skillPart(skill string) string {
	if skill == "" {
		return ""
	}
	return " (" + code(skill) + ")"
}

func reasonPart(reason string) string {
	if reason == "" {
		return ""
	}
	return ": " + oneLine(reason)
}

func usagePart(u Usage) string {
	if u.InputTokens == 0 && u.OutputTokens == 0 {
		return ""
	}
	return fmt.Sprintf(", %d tokens in, %d out, %d turns", u.InputTokens, u.OutputTokens, u.Turns)
}
