package terminal

import (
	"fmt"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// liveStep is what the terminal knows of a running step.
type liveStep struct {
	start    time.Time
	progress *engine.Progress
	said     time.Time // when its last progress line was printed
}

// draw repaints the live progress line of the running step, on a terminal.
func (d *driver) draw(r *engine.Run) {
	ls := d.running[d.progStep]
	s := r.Step(d.progStep)
	if ls == nil || s == nil || s.Status != engine.StepRunning {
		return
	}
	frames := []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
	d.spin = (d.spin + 1) % len(frames)
	line := fmt.Sprintf("%s %s  %s", frames[d.spin], StepTitle(r, s), time.Since(ls.start).Round(time.Second))
	if p := ls.progress; p != nil {
		line += drawnProgress(p)
	}
	fmt.Fprint(d.raw, "\r\033[K")
	fmt.Fprint(d.out, Clip(line, 140))
	d.drawn = true
}

// drawnProgress is what the live line shows of a step's progress.
func drawnProgress(p *engine.Progress) string {
	line := fmt.Sprintf("  turns %d  tools %d", p.Turns, p.ToolCalls)
	if p.LastTool != "" {
		line += " (" + p.LastTool + ")"
	}
	if p.CostUSD > 0 {
		line += fmt.Sprintf("  $%.2f", p.CostUSD)
	}
	if p.Status != "" {
		line += "  " + p.Status
	}
	return line
}

// report prints, when stdout is not a terminal, a line for each step that
// has run for another d.every since its last one: a log shows it is alive.
func (d *driver) report(r *engine.Run) {
	now := time.Now()
	for i := range r.Steps {
		s := &r.Steps[i]
		ls := d.running[s.N]
		if ls == nil || s.Status != engine.StepRunning || now.Sub(ls.said) < d.every {
			continue
		}
		ls.said = now
		line := fmt.Sprintf("  ... %s (step %d) running %s", s.Skill, s.N, reportedTook(now.Sub(ls.start)))
		if p := ls.progress; p != nil {
			line += reportedProgress(p)
		}
		fmt.Fprintln(d.out, line)
	}
}

// reportedTook rounds how long a step has run for a log line: tenths of a
// second while it is short, whole seconds after.
func reportedTook(took time.Duration) time.Duration {
	if took < 10*time.Second {
		return took.Round(100 * time.Millisecond)
	}
	return took.Round(time.Second)
}

// reportedProgress is what a log line says of a step's progress.
func reportedProgress(p *engine.Progress) string {
	line := fmt.Sprintf(", %s, %s", Plural(p.Turns, "turn"), Plural(p.ToolCalls, "tool call"))
	if p.CostUSD > 0 {
		line += fmt.Sprintf(", $%.2f", p.CostUSD)
	}
	if p.Status != "" {
		line += ": " + p.Status
	}
	return line
}

func (d *driver) clearLine() {
	if d.drawn {
		fmt.Fprint(d.raw, "\r\033[K")
		d.drawn = false
	}
}
