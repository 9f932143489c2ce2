package bot

import (
	"fmt"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
)

// A 200-step run with long efforts and many manual and deferred blocks
// keeps its header within Slack's limits, a plan's tasks counted as
// blocks, and says what it shows of the steps.
func TestHeaderPlanFitsLongRuns(t *testing.T) {
	names := make([]string, 200)
	for i := range names {
		names[i] = fmt.Sprintf("skill-%03d", i+1)
	}
	s := newRun(t, goldenRunID, chainInput(names...), engine.StartOptions{})
	for i := range s.r.Steps {
		s.r.Steps[i].Effort = strings.Repeat("effort <!channel> ", 40)
	}
	for i := range 20 {
		s.r.Plan.Manual = append(s.r.Plan.Manual, engine.Block{Effort: fmt.Sprintf("manual %d", i), Reason: "no skill"})
		s.r.Plan.Deferred = append(s.r.Plan.Deferred, engine.Block{Skill: "deliver-prd", Effort: fmt.Sprintf("later %d", i)})
	}
	for n := 1; n <= 120; n++ {
		s.produce(n, "ok")
		s.decide(n, engine.DecideApprove, alice, "")
	}
	s.start(121)
	blocks := Header(s.r, s.view())
	if err := checkBlocks(blocks); err != nil {
		t.Fatal(err)
	}
	if n := blockCount(blocks); n > maxMessageBlocks {
		t.Fatalf("the header counts %d blocks, over Slack's %d", n, maxMessageBlocks)
	}
	var plan *slack.PlanBlock
	for _, b := range blocks {
		if p, ok := b.(*slack.PlanBlock); ok {
			plan = p
		}
	}
	if plan == nil {
		t.Fatal("the header has no plan block")
	}
	if len(plan.Tasks) > planTaskMax {
		t.Errorf("%d tasks, over %d", len(plan.Tasks), planTaskMax)
	}
	if !strings.Contains(plan.Title, "Steps: 120 of 200 done (steps ") || !strings.Contains(plan.Title, "the end of the run lists every step") {
		t.Errorf("the plan's title %q does not say what it shows", plan.Title)
	}
	ids := map[string]bool{}
	var running, manual, deferred int
	for _, tk := range plan.Tasks {
		if ids[tk.TaskID] {
			t.Errorf("task id %q twice", tk.TaskID)
		}
		ids[tk.TaskID] = true
		switch {
		case tk.TaskID == "step-121":
			running++
			if tk.Status != slack.TaskCardStatusInProgress {
				t.Errorf("the running step's task is %s, want in_progress", tk.Status)
			}
		case strings.HasPrefix(tk.TaskID, "manual-"):
			manual++
		case strings.HasPrefix(tk.TaskID, "deferred-"):
			deferred++
		}
	}
	if running != 1 || !ids["steps-before"] || !ids["steps-after"] {
		t.Errorf("want the running step among a window, the rest summed up before and after it; got %v", ids)
	}
	if manual != planLeftoverMax+1 || deferred != planLeftoverMax+1 || !ids["manual-more"] || !ids["deferred-more"] {
		t.Errorf("want %d manual and deferred blocks each, then how many more; got %v", planLeftoverMax, ids)
	}
}
