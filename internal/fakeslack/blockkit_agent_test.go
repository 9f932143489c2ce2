package fakeslack

import (
	"slices"
	"testing"
)

func task(id, title string) map[string]any {
	return map[string]any{"task_id": id, "title": title, "status": "pending"}
}

func planOf(tasks ...any) map[string]any {
	return map[string]any{"type": "plan", "title": "Steps", "tasks": tasks}
}

func richDetails(s string) map[string]any {
	return map[string]any{"type": "rich_text", "elements": []any{
		map[string]any{"type": "rich_text_section", "elements": []any{map[string]any{"type": "text", "text": s}}}}}
}

func TestCheckAgentBlocks(t *testing.T) {
	withStatus := func(st any) map[string]any { tk := task("t", "T"); tk["status"] = st; return tk }
	withDetails := func(d any) map[string]any { tk := task("t", "T"); tk["details"] = d; return tk }
	tests := []struct {
		name   string
		blocks []any
		want   []string
	}{
		{"a plan of task cards", []any{planOf(task("1", "one"), withDetails(richDetails("PRODUCED")))}, []string{}},
		{"a plan with a plain_text title object", []any{map[string]any{"type": "plan", "title": plain("Steps")}}, []string{}},
		{"a plan without a title", []any{map[string]any{"type": "plan"}}, []string{"blocks[0].title"}},
		{"a plan with an empty title", []any{map[string]any{"type": "plan", "title": ""}}, []string{"blocks[0].title"}},
		{"a task without task_id or title", []any{planOf(map[string]any{"status": "complete"})},
			[]string{"blocks[0].tasks[0].task_id", "blocks[0].tasks[0].title"}},
		{"every documented status", []any{planOf(withStatus("pending"), withStatus("in_progress"), withStatus("complete"),
			withStatus("error"))}, []string{}},
		{"an unknown status", []any{planOf(withStatus("done"))}, []string{"blocks[0].tasks[0].status"}},
		{"details not rich_text", []any{planOf(withDetails(mrkdwn("x")))}, []string{"blocks[0].tasks[0].details"}},
		{"details without elements", []any{planOf(withDetails(map[string]any{"type": "rich_text"}))},
			[]string{"blocks[0].tasks[0].details.elements"}},
		{"a task of another type", []any{planOf(map[string]any{"type": "section", "task_id": "t", "title": "T"})},
			[]string{"blocks[0].tasks[0].type"}},
		{"a plan's tasks count as blocks: 49 tasks", []any{planOf(repeat(49, func(int) any { return task("t", "T") })...)},
			[]string{}},
		{"a plan's tasks count as blocks: 50 tasks", []any{planOf(repeat(50, func(int) any { return task("t", "T") })...)},
			[]string{"blocks"}},
		{"a task card alone", []any{map[string]any{"type": "task_card", "task_id": "t", "title": "T"}}, []string{}},
		{"an alert in a message", []any{map[string]any{"type": "alert", "text": mrkdwn("halted"), "level": "error"}},
			[]string{"blocks[0].type"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := paths(CheckBlocks(roundTrip(t, tt.blocks)))
			if !slices.Equal(got, tt.want) {
				t.Errorf("violations at %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAlertIsForModals(t *testing.T) {
	view := map[string]any{"type": "modal", "title": plain("Step 2"), "blocks": []any{
		map[string]any{"type": "alert", "text": plain("The step failed."), "level": "error"}}}
	if vs := CheckModal(roundTrip(t, view)); len(vs) != 0 {
		t.Errorf("an alert in a modal: %v, want none", vs)
	}
	view["blocks"] = []any{map[string]any{"type": "alert", "text": plain("x"), "level": "loud"}}
	if got := paths(CheckModal(roundTrip(t, view))); !slices.Equal(got, []string{"view.blocks[0].level"}) {
		t.Errorf("an alert of an unknown level: violations at %v, want its level", got)
	}
}
