package bot

import (
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
)

// bestOfPart ends a best-of step's heading: the runners its candidates
// run on.
func bestOfPart(s *engine.Step) string {
	names := make([]string, len(s.Rules.BestOf))
	for i, n := range s.Rules.BestOf {
		names[i] = "`" + mdLine(n, 40) + "`"
	}
	return fmt.Sprintf(" · best of %d: %s", len(names), strings.Join(names, ", "))
}

// candidateBlocks show each candidate of a best-of step's latest round
// side by side: its runner, that it runs (with its Cancel) or how it
// ended with its preview and file, and, while people pick, "Pick this"
// on each candidate that may be picked (engine.Pickable). Edit, Skip,
// Redo and Abort follow as at any checkpoint.
func candidateBlocks(r *engine.Run, s *engine.Step, v View, now time.Time) []slack.Block {
	cands := engine.Candidates(s)
	picking := engine.Picking(s) && !r.Finished()
	var out []slack.Block
	for _, a := range cands {
		head := fmt.Sprintf("*Candidate %d of %d* · `%s`", a.Candidate, len(cands), mdLine(a.Runner, 40))
		if a.Picked {
			head += " · 🏆 picked"
		}
		out = append(out, section(head))
		ref := StepRef{Run: r.ID, Step: s.N, Attempt: a.N}
		out = append(out, candidateOutcome(r, s, a, ref, v, now)...)
		if picking && engine.Pickable(a) {
			b := slack.NewButtonBlockElement(ActionPick, fitValue(ref.Value()), plainText("Pick this"))
			b.Style = slack.StylePrimary
			out = append(out, slack.NewActionBlock("", b))
		}
	}
	return out
}

// candidateOutcome is where a candidate is: running (with its Cancel),
// stopped by an abort, or its result with its preview and file.
func candidateOutcome(r *engine.Run, s *engine.Step, a *engine.Attempt, ref StepRef, v View, now time.Time) []slack.Block {
	switch {
	case a.Result == "" && s.Status == engine.StepRunning:
		return []slack.Block{section(runningLine(a, now)), slack.NewActionBlock("", cancelButton(ref))}
	case a.Result == "":
		return []slack.Block{section("🛑 Stopped: the run was aborted while this candidate was running.")}
	}
	cv := v
	cv.Preview, cv.ArtifactName, cv.ArtifactLink = v.Candidates[a.N], artifactFile(s, *a), ""
	return resultBlocks(r, s, a, cv)
}
