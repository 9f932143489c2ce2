package bot

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
)

// The header shows a run's steps as Slack's plan block: one task card per
// step, titled with its number, skill and effort, whose status follows
// the step (pending, in_progress, complete, error) and whose details say
// the result and what became of it, then the plan's manual and deferred
// blocks, as such. It is part of the header, so it changes with the
// header's updates and spends from the same chat.update budget.
//
// Slack calls a plan's tasks task card blocks, and a message takes 50
// blocks: each task is counted as one (blockCount), and the plan shows at
// most planTaskMax tasks. A longer run shows a window of its steps around
// the first one not settled, the steps before and after it summed up in
// one task each, and the plan's title says how many steps there are and
// that the end of the run lists them all.
const (
	planTaskMax     = 30
	planLeftoverMax = 3 // manual, or deferred, blocks listed as tasks before the rest are summed up
	maxTaskTitle    = 150
	maxTaskDetails  = 1000
)

// stepPlan is the header's plan block for r.
func stepPlan(r *engine.Run) *slack.PlanBlock {
	nodes := tree(r)
	left := leftoverTasks(r.Plan)
	room := planTaskMax - len(left)
	title := fmt.Sprintf("Steps: %d of %d done", r.StepsDone(), len(r.Steps))
	tasks := make([]*slack.TaskCardBlock, 0, min(len(nodes), room)+len(left))
	if len(nodes) <= room {
		for _, nd := range nodes {
			tasks = append(tasks, stepTask(r, nd))
		}
	} else {
		lo, hi := window(nodes, room-2)
		if lo > 0 {
			tasks = append(tasks, spanTask("steps-before", nodes[:lo]))
		}
		for _, nd := range nodes[lo:hi] {
			tasks = append(tasks, stepTask(r, nd))
		}
		if hi < len(nodes) {
			tasks = append(tasks, spanTask("steps-after", nodes[hi:]))
		}
		title += fmt.Sprintf(" (%s shown; the end of the run lists every step)", nodeSpan(nodes[lo:hi]))
	}
	tasks = append(tasks, left...)
	return slack.NewPlanBlock(plain(title, maxHeaderText)).WithTasks(tasks...)
}

// window is the span of nodes, size long, around the first step that is
// not settled (a few settled ones before it), or the last size steps when
// all are settled.
func window(nodes []node, size int) (lo, hi int) {
	focus := len(nodes) - 1
	for i, nd := range nodes {
		if !nd.s.Settled() {
			focus = i
			break
		}
	}
	lo = max(0, focus-5)
	hi = min(len(nodes), lo+size)
	return max(0, hi-size), hi
}

// stepTask is one step as a task of the plan.
func stepTask(r *engine.Run, nd node) *slack.TaskCardBlock {
	s := nd.s
	title := fmt.Sprintf("%d. %s", s.N, s.Skill)
	if e := strings.TrimSpace(s.Effort); e != "" {
		title += " (" + e + ")"
	}
	title = taskTitle(title)
	if nd.depth > 0 {
		// Em spaces: Slack keeps them where it would fold plain ones.
		title = cutPlain(strings.Repeat("\u2003", min(nd.depth, 5))+"↳ "+title, maxTaskTitle)
	}
	return slack.NewTaskCardBlock(fmt.Sprintf("step-%d", s.N), title).
		WithStatus(taskStatus(s)).WithDetails(richLine(stepState(r, s)))
}

// taskStatus is a step's state as a task card shows it: a step at its
// checkpoint is still in progress (it waits for people) unless it failed.
func taskStatus(s *engine.Step) slack.TaskCardStatus {
	switch s.Status {
	case engine.StepPending, engine.StepQueued:
		return slack.TaskCardStatusPending
	case engine.StepRunning:
		return slack.TaskCardStatusInProgress
	case engine.StepWaiting:
		if l := s.Latest(); l != nil && l.Result == engine.ResultFailed {
			return slack.TaskCardStatusError
		}
		return slack.TaskCardStatusInProgress
	case engine.StepDone, engine.StepSkipped:
		return slack.TaskCardStatusComplete
	}
	return slack.TaskCardStatusError // interrupted, aborted
}

// spanTask sums up steps the plan does not list one by one.
func spanTask(id string, nodes []node) *slack.TaskCardBlock {
	status := slack.TaskCardStatusComplete
	for _, nd := range nodes {
		switch st := taskStatus(nd.s); {
		case st == slack.TaskCardStatusError:
			status = st
		case st == slack.TaskCardStatusInProgress && status != slack.TaskCardStatusError:
			status = st
		case st == slack.TaskCardStatusPending && status == slack.TaskCardStatusComplete:
			status = st
		}
	}
	span := nodeSpan(nodes)
	return slack.NewTaskCardBlock(id, taskTitle(strings.ToUpper(span[:1])+span[1:])).
		WithStatus(status).WithDetails(richLine(countStatuses(nodeSteps(nodes))))
}

// leftoverTasks are the plan's manual blocks (shown, never run) and its
// deferred blocks (past the first runnable ones), as tasks without a
// status: none of them runs.
func leftoverTasks(p engine.Plan) []*slack.TaskCardBlock {
	var out []*slack.TaskCardBlock
	kinds := []struct {
		id, word, why string
		blocks        []engine.Block
	}{
		{"manual", "Manual", "SKIPPED-MANUAL: shown, never run", p.Manual},
		{"deferred", "Deferred", fmt.Sprintf("deferred: past the first %d runnable blocks", engine.MaxPlanSteps), p.Deferred},
	}
	for _, k := range kinds {
		for i, b := range k.blocks[:min(len(k.blocks), planLeftoverMax)] {
			why := k.why
			if b.Reason != "" && k.id == "manual" {
				why += ": " + b.Reason
			}
			out = append(out, slack.NewTaskCardBlock(fmt.Sprintf("%s-%d", k.id, i+1), taskTitle(leftoverTitle(k.word, b))).
				WithDetails(richText(why)))
		}
		if n := len(k.blocks) - planLeftoverMax; n > 0 {
			out = append(out, slack.NewTaskCardBlock(k.id+"-more", fmt.Sprintf("%s: %d more", k.word, n)).
				WithDetails(richText(k.why)))
		}
	}
	return out
}

// leftoverTitle names a manual or deferred block (word says which) by its
// skill and effort.
func leftoverTitle(word string, b engine.Block) string {
	name := b.Skill
	if strings.TrimSpace(name) == "" {
		name = "-"
	}
	title := word + ": " + name
	if e := strings.TrimSpace(b.Effort); e != "" {
		title += " (" + e + ")"
	}
	return title
}

var mentionRE = regexp.MustCompile(`<@([UW][A-Z0-9]{2,30})>`)

// unescaper undoes escape: rich text shows its text as it is.
var unescaper = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">")

// richLine turns a line rendered for mrkdwn (stepState's) into rich text:
// its mentions become user elements, the rest text, defanged like any
// text Slack may parse.
func richLine(line string) *slack.RichTextBlock {
	var els []slack.RichTextSectionElement
	rest := line
	for _, m := range mentionRE.FindAllStringSubmatchIndex(line, -1) {
		if pre := line[len(line)-len(rest) : m[0]]; pre != "" {
			els = append(els, slack.NewRichTextSectionTextElement(defang(unescaper.Replace(pre)), nil))
		}
		els = append(els, slack.NewRichTextSectionUserElement(line[m[2]:m[3]], nil))
		rest = line[m[1]:]
	}
	if rest != "" || len(els) == 0 {
		els = append(els, slack.NewRichTextSectionTextElement(cutPlain(defang(unescaper.Replace(rest)), maxTaskDetails), nil))
	}
	return slack.NewRichTextBlock("", slack.NewRichTextSection(els...))
}

// richText is plain text as rich text.
func richText(text string) *slack.RichTextBlock {
	return slack.NewRichTextBlock("", slack.NewRichTextSection(
		slack.NewRichTextSectionTextElement(cutPlain(defang(oneLine(clean(text), 4*maxTaskDetails)), maxTaskDetails), nil)))
}

// taskTitle is a task's title: one line of plain text, defanged (user
// text: a skill's effort, a manual block's name) and cut to fit.
func taskTitle(title string) string {
	return cutPlain(defang(clean(oneLine(title, 4*maxTaskTitle))), maxTaskTitle)
}

// blockCount is how many blocks Slack may count for blocks: a plan's
// tasks are task card blocks.
func blockCount(blocks []slack.Block) int {
	n := 0
	for _, b := range blocks {
		n++
		if p, ok := b.(*slack.PlanBlock); ok {
			n += len(p.Tasks)
		}
	}
	return n
}
