package bot

import (
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
)

// StartNotice is what a person sees at once after a command the intake
// accepted, before the run's thread exists: what starts (the chain or the
// workflow, its steps, its mode) and where it shows; with awaitStart
// (GONOGO_CONFIRM_START), that the thread opens with its preview and
// nothing runs before Start.
func StartNotice(p engine.Plan, awaitStart bool) []slack.Block {
	mode, _ := engine.ResolveMode(p)
	what := fmt.Sprintf("%s: %s, %s", inputLine(p.Input, p.Source), plural(len(p.Steps), "step"),
		mdLine(engine.RunModeName(mode, p.Flags.DryRun), 40))
	if awaitStart {
		return []slack.Block{section("🔎 Previewing " + what + "."),
			contextBlock("Its preview opens in a thread in this channel in a moment; nothing runs until an approver presses *Start*.")}
	}
	return []slack.Block{section("▶️ Starting " + what + "."), contextBlock("The run's thread opens in this channel in a moment.")}
}

// ReadingNotice is what a person sees at once after mentioning gonogo with
// files, before they are fetched: which are read, and where the answer
// comes.
func ReadingNotice(files []FileRef) []slack.Block {
	names := make([]string, 0, min(len(files), 5))
	for _, f := range files[:min(len(files), 5)] {
		name := f.Name
		if name == "" {
			name = f.ID
		}
		names = append(names, "`"+mdLine(name, 100)+"`")
	}
	what := strings.Join(names, ", ")
	if more := len(files) - len(names); more > 0 {
		what += fmt.Sprintf(" and %d more", more)
	}
	if len(files) == 0 {
		what = "your message"
	}
	return []slack.Block{section("📄 Reading " + what + "…"), contextBlock("gonogo answers in this thread in a moment.")}
}
