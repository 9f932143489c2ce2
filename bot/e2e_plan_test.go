package bot_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/internal/fakeslack"
)

// planTask is a task of the header's plan block as Slack received it.
type planTask struct {
	ID      string `json:"task_id"`
	Title   string `json:"title"`
	Status  string `json:"status"`
	Details struct {
		Elements []struct {
			Elements []struct {
				Type   string `json:"type"`
				Text   string `json:"text"`
				UserID string `json:"user_id"`
			} `json:"elements"`
		} `json:"elements"`
	} `json:"details"`
}

// details is a task's details as a person reads them, mentions as <@U…>.
func (p planTask) details() string {
	var b strings.Builder
	for _, s := range p.Details.Elements {
		for _, e := range s.Elements {
			if e.Type == "user" {
				b.WriteString("<@" + e.UserID + ">")
			} else {
				b.WriteString(e.Text)
			}
		}
	}
	return b.String()
}

// waitPlan waits until the thread's root message shows a plan whose tasks
// have the statuses want (task id -> status).
func waitPlan(t *testing.T, srv *fakeslack.Server, thread string, want map[string]string) map[string]planTask {
	t.Helper()
	var got map[string]planTask
	err := srv.WaitFor(ctxT(t), func(st *fakeslack.State) bool {
		m, ok := st.Message(channel, thread)
		if !ok {
			return false
		}
		var blocks []struct {
			Type  string     `json:"type"`
			Tasks []planTask `json:"tasks"`
		}
		if json.Unmarshal(m.Blocks, &blocks) != nil {
			return false
		}
		for _, b := range blocks {
			if b.Type != "plan" {
				continue
			}
			got = map[string]planTask{}
			for _, tk := range b.Tasks {
				got[tk.ID] = tk
			}
			for id, st := range want {
				if got[id].Status != st {
					return false
				}
			}
			return true
		}
		return false
	})
	if err != nil {
		t.Fatalf("the header's plan did not reach %v; last seen %+v:\n%s", want, got, dump(srv))
	}
	return got
}

// The header shows the run's steps as a plan: a task per step whose status
// follows the run, with the result and the decision as its details,
// edited in place.
func TestHeaderPlanFollowsTheRun(t *testing.T) {
	srv := newSlack(t)
	r := &scriptedRunner{}
	release := r.holdSkill("deliver-prd")
	start(t, srv, t.TempDir(), r, withConfig(func(c *bot.Config) { c.MessageUpdateInterval = time.Millisecond }))

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories -- mobile checkout")
	step1 := waitStep(t, srv, 1, "deliver-prd", "Cancel")
	thread := step1.ThreadTS
	tasks := waitPlan(t, srv, thread, map[string]string{"step-1": "in_progress", "step-2": "pending"})
	if got := tasks["step-1"].Title; got != "1. deliver-prd" {
		t.Errorf("step 1's task is titled %q, want its number and skill", got)
	}
	release()
	step1 = waitStep(t, srv, 1, "deliver-prd", "Approve")
	tasks = waitPlan(t, srv, thread, map[string]string{"step-1": "in_progress"})
	if d := tasks["step-1"].details(); !strings.Contains(d, "PRODUCED") || !strings.Contains(d, "waiting for a decision") {
		t.Errorf("step 1 at its checkpoint has details %q, want its result and that it waits", d)
	}
	click(t, srv, starter, step1, "Approve")
	tasks = waitPlan(t, srv, thread, map[string]string{"step-1": "complete"})
	if d := tasks["step-1"].details(); d != fmt.Sprintf("PRODUCED, approved by <@%s>", starter) {
		t.Errorf("approved step 1 has details %q, want its result and who approved it", d)
	}
	step2 := waitStep(t, srv, 2, "deliver-user-stories", "Approve")
	click(t, srv, starter, step2, "Approve")
	waitText(t, srv, "Run complete")
	waitPlan(t, srv, thread, map[string]string{"step-1": "complete", "step-2": "complete"})
	root, _ := srv.Message(channel, thread)
	if n := len(botMessages(srv, "")); root.Updates == 0 || n == 0 {
		t.Errorf("the header was never edited (%d updates): the plan must change in place", root.Updates)
	}
	for _, m := range srv.Messages(channel) {
		if m.TS != thread && strings.Contains(string(m.Blocks), `"type":"plan"`) {
			t.Errorf("a plan in message %s besides the header: the run's steps show in the header alone", m.TS)
		}
	}
}
