package fakeslack

import (
	"fmt"
	"slices"
)

// The blocks Slack made for agents (docs.slack.dev, Block Kit reference:
// plan block, task card block, alert block; blocks.json for the surfaces
// each is available in).
//
//   - plan: a title (plain text, required) and tasks, "a sequence of task
//     card blocks"; the fake counts each task as a block of the message,
//     which takes 50 (the strictest reading: Slack documents no other
//     bound on the tasks).
//   - task_card: task_id and title required; status one of pending,
//     in_progress, complete, error; details and output each a single
//     rich_text; sources URL objects with a url and a text.
//   - alert: a text object (plain_text or mrkdwn) and a level of default,
//     info, warning, error or success; available in modals only, so a
//     message with one is refused.
//
// Every block_id is at most 255 characters (checked for all blocks).

var taskStatuses = []string{"pending", "in_progress", "complete", "error"}

var alertLevels = []string{"default", "info", "warning", "error", "success"}

// planBlock checks a plan block.
func (c *checker) planBlock(path string, b map[string]any) {
	c.planTitle(path+".title", b["title"])
	raw, ok := b["tasks"]
	if !ok || raw == nil {
		return
	}
	tasks, ok := raw.([]any)
	if !ok {
		c.add(path+".tasks", 0, 0, "tasks must be an array of task cards")
		return
	}
	for i, t := range tasks {
		p := fmt.Sprintf("%s.tasks[%d]", path, i)
		m, ok := t.(map[string]any)
		if !ok {
			c.add(p, 0, 0, "a task must be a task card object")
			continue
		}
		if typ := str(m["type"]); typ != "" && typ != "task_card" {
			c.add(p+".type", 0, 0, "a plan's task has type %q, want task_card", typ)
		}
		c.taskCard(p, m)
	}
}

// planTitle checks a plan's title: plain text, given as a string (the
// page's example) or a plain_text object (its field table), not empty.
func (c *checker) planTitle(path string, v any) {
	switch t := v.(type) {
	case string:
		if t == "" {
			c.add(path, 1, 0, "empty title")
		}
	case map[string]any:
		c.text(path, t, maxTextObject, true, true)
	default:
		c.add(path, 0, 0, "a plan needs a title in plain text")
	}
}

// taskCard checks a task card, alone or in a plan.
func (c *checker) taskCard(path string, b map[string]any) {
	if str(b["task_id"]) == "" {
		c.add(path+".task_id", 0, 0, "a task card needs a task_id")
	}
	if str(b["title"]) == "" {
		c.add(path+".title", 0, 0, "a task card needs a title in plain text")
	}
	if st, ok := b["status"]; ok && !slices.Contains(taskStatuses, str(st)) {
		c.add(path+".status", 0, 0, "status %v: pending, in_progress, complete or error", st)
	}
	for _, k := range []string{"details", "output"} {
		if v, ok := b[k]; ok && v != nil {
			c.taskRichText(path+"."+k, v)
		}
	}
	if v, ok := b["sources"]; ok && v != nil {
		list, _ := v.([]any)
		for i, src := range list {
			m, _ := src.(map[string]any)
			p := fmt.Sprintf("%s.sources[%d]", path, i)
			if str(m["type"]) != "url" || str(m["url"]) == "" || str(m["text"]) == "" {
				c.add(p, 0, 0, "a source is {type: url, url, text}")
			}
			c.maxLen(p+".url", str(m["url"]), maxURL)
		}
	}
}

// taskRichText checks a task's details or output: a single rich_text with
// elements.
func (c *checker) taskRichText(path string, v any) {
	m, ok := v.(map[string]any)
	if !ok || str(m["type"]) != "rich_text" {
		c.add(path, 0, 0, "must be a single rich_text object")
		return
	}
	if els, _ := m["elements"].([]any); len(els) == 0 {
		c.add(path+".elements", 0, 0, "a rich_text needs elements")
	}
}

// alertBlock checks an alert block: modals only.
func (c *checker) alertBlock(path string, b map[string]any) {
	if !c.view {
		c.add(path+".type", 0, 0, "an alert block is available in modals only, not in messages")
	}
	c.text(path+".text", b["text"], maxTextObject, true, false)
	if l, ok := b["level"]; ok && !slices.Contains(alertLevels, str(l)) {
		c.add(path+".level", 0, 0, "level %v: default, info, warning, error or success", l)
	}
}
