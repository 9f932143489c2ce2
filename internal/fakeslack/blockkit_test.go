package fakeslack

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func plain(s string) map[string]any  { return map[string]any{"type": "plain_text", "text": s} }
func mrkdwn(s string) map[string]any { return map[string]any{"type": "mrkdwn", "text": s} }
func button(label, value string) map[string]any {
	return map[string]any{"type": "button", "action_id": "a", "text": plain(label), "value": value}
}
func section(text string) map[string]any {
	return map[string]any{"type": "section", "text": mrkdwn(text)}
}
func repeat(n int, v func(i int) any) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = v(i)
	}
	return out
}
func x(n int) string             { return strings.Repeat("x", n) }
func md(s string) map[string]any { return map[string]any{"type": "markdown", "text": s} }
func cell(s string) map[string]any {
	return map[string]any{"type": "raw_text", "text": s}
}
func table(rows, cells int) map[string]any {
	return map[string]any{"type": "table", "rows": repeat(rows, func(int) any {
		return repeat(cells, func(int) any { return cell("c") })
	})}
}

// paths returns the violations' paths, to compare with a table's want.
func paths(vs []Violation) []string {
	out := []string{}
	for _, v := range vs {
		out = append(out, v.Path)
	}
	return out
}

// roundTrip makes v look as it does after json.Unmarshal (numbers as float64).
func roundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCheckMessage(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		blocks []any
		want   []string
	}{
		{"empty message", "", nil, []string{}},
		{"50 blocks", "", repeat(50, func(int) any { return section("s") }), []string{}},
		{"51 blocks", "", repeat(51, func(int) any { return section("s") }), []string{"blocks"}},
		{"text at 40000", x(40000), nil, []string{}},
		{"text over 40000", x(40001), nil, []string{"text"}},
		{"section text at 3000", "", []any{section(x(3000))}, []string{}},
		{"section text over 3000", "", []any{section(x(3001))}, []string{"blocks[0].text.text"}},
		{"section text counts characters, not bytes", "", []any{section(strings.Repeat("é", 3000))}, []string{}},
		{"empty section text", "", []any{section("")}, []string{"blocks[0].text.text"}},
		{"section without text or fields", "", []any{map[string]any{"type": "section"}}, []string{"blocks[0]"}},
		{"10 fields of 2000", "", []any{map[string]any{"type": "section",
			"fields": repeat(10, func(int) any { return mrkdwn(x(2000)) })}}, []string{}},
		{"11 fields", "", []any{map[string]any{"type": "section",
			"fields": repeat(11, func(int) any { return mrkdwn("f") })}}, []string{"blocks[0].fields"}},
		{"field over 2000", "", []any{map[string]any{"type": "section",
			"fields": []any{mrkdwn(x(2001))}}}, []string{"blocks[0].fields[0].text"}},
		{"header at 150", "", []any{map[string]any{"type": "header", "text": plain(x(150))}}, []string{}},
		{"header over 150", "", []any{map[string]any{"type": "header", "text": plain(x(151))}}, []string{"blocks[0].text.text"}},
		{"header in mrkdwn", "", []any{map[string]any{"type": "header", "text": mrkdwn("h")}}, []string{"blocks[0].text.type"}},
		{"context with 10 elements", "", []any{map[string]any{"type": "context",
			"elements": repeat(10, func(int) any { return mrkdwn("c") })}}, []string{}},
		{"context with 11 elements", "", []any{map[string]any{"type": "context",
			"elements": repeat(11, func(int) any { return mrkdwn("c") })}}, []string{"blocks[0].elements"}},
		{"actions with 25 elements", "", []any{map[string]any{"type": "actions",
			"elements": repeat(25, func(i int) any { b := button("b", ""); b["action_id"] = fmt.Sprint(i); return b })}}, []string{}},
		{"actions with 26 elements", "", []any{map[string]any{"type": "actions",
			"elements": repeat(26, func(i int) any { b := button("b", ""); b["action_id"] = fmt.Sprint(i); return b })}}, []string{"blocks[0].elements"}},
		{"repeated action_id", "", []any{map[string]any{"type": "actions",
			"elements": []any{button("A", ""), button("B", "")}}}, []string{"blocks[0].elements[1].action_id"}},
		{"button label at 75, value at 2000", "", []any{map[string]any{"type": "actions",
			"elements": []any{button(x(75), x(2000))}}}, []string{}},
		{"button label over 75", "", []any{map[string]any{"type": "actions",
			"elements": []any{button(x(76), "")}}}, []string{"blocks[0].elements[0].text.text"}},
		{"button value over 2000", "", []any{map[string]any{"type": "actions",
			"elements": []any{button("b", x(2001))}}}, []string{"blocks[0].elements[0].value"}},
		{"empty button label", "", []any{map[string]any{"type": "actions",
			"elements": []any{button("", "")}}}, []string{"blocks[0].elements[0].text.text"}},
		{"action_id over 255", "", []any{map[string]any{"type": "section", "text": mrkdwn("s"),
			"accessory": map[string]any{"type": "button", "text": plain("b"), "action_id": x(256)}}},
			[]string{"blocks[0].accessory.action_id"}},
		{"block_id at 255", "", []any{map[string]any{"type": "divider", "block_id": x(255)}}, []string{}},
		{"block_id over 255", "", []any{map[string]any{"type": "divider", "block_id": x(256)}}, []string{"blocks[0].block_id"}},
		{"repeated block_id", "", []any{
			map[string]any{"type": "divider", "block_id": "d"},
			map[string]any{"type": "divider", "block_id": "d"},
		}, []string{"blocks[1].block_id"}},
		{"confirm dialog over limits", "", []any{map[string]any{"type": "actions", "elements": []any{
			map[string]any{"type": "button", "action_id": "abort", "text": plain("Abort"), "confirm": map[string]any{
				"title": plain(x(101)), "text": mrkdwn(x(301)), "confirm": plain(x(31)), "deny": plain(x(31))}}}}},
			[]string{"blocks[0].elements[0].confirm.title.text", "blocks[0].elements[0].confirm.text.text",
				"blocks[0].elements[0].confirm.confirm.text", "blocks[0].elements[0].confirm.deny.text"}},
		{"select option over limits", "", []any{map[string]any{"type": "actions", "elements": []any{
			map[string]any{"type": "static_select", "action_id": "s", "options": []any{
				map[string]any{"text": plain(x(76)), "value": x(151)}}}}}},
			[]string{"blocks[0].elements[0].options[0].text.text", "blocks[0].elements[0].options[0].value"}},
		{"overflow with 6 options", "", []any{map[string]any{"type": "actions", "elements": []any{
			map[string]any{"type": "overflow", "action_id": "o", "options": repeat(6, func(i int) any {
				return map[string]any{"text": plain("o"), "value": fmt.Sprint(i)}
			})}}}}, []string{"blocks[0].elements[0].options"}},
		{"image alt text over 2000", "", []any{map[string]any{"type": "image", "image_url": "https://x", "alt_text": x(2001)}},
			[]string{"blocks[0].alt_text"}},
		{"block without type", "", []any{map[string]any{}}, []string{"blocks[0].type"}},
		{"block that is not an object", "", []any{"section"}, []string{"blocks[0]"}},
		{"markdown at 12000", "", []any{md(x(12000))}, []string{}},
		{"markdown blocks over 12000 together", "", []any{md(x(6000)), md(x(6001))}, []string{"blocks[1].text"}},
		{"empty markdown", "", []any{md("")}, []string{"blocks[0].text"}},
		{"table of 100 rows of 20 cells", "", []any{table(100, 20)}, []string{}},
		{"table of 101 rows", "", []any{table(101, 1)}, []string{"blocks[0].rows"}},
		{"table row of 21 cells", "", []any{table(1, 21)}, []string{"blocks[0].rows[0]"}},
		{"table without rows", "", []any{map[string]any{"type": "table"}}, []string{"blocks[0].rows"}},
		{"two tables", "", []any{table(1, 1), table(1, 1)}, []string{"blocks[1]"}},
		{"table cells of every kind", "", []any{map[string]any{"type": "table", "rows": []any{[]any{
			map[string]any{"type": "raw_text", "text": ""},
			map[string]any{"type": "rich_text", "elements": []any{map[string]any{"type": "rich_text_section", "elements": []any{}}}},
			map[string]any{"type": "raw_text"},
			map[string]any{"type": "rich_text"},
			map[string]any{"type": "mrkdwn", "text": "x"},
		}}}}, []string{"blocks[0].rows[0][2].text", "blocks[0].rows[0][3].elements", "blocks[0].rows[0][4].type"}},
		{"table column settings", "", []any{map[string]any{"type": "table", "rows": []any{[]any{cell("a")}},
			"column_settings": append([]any{map[string]any{"align": "middle"}}, repeat(20, func(int) any { return map[string]any{"align": "right"} })...)}},
			[]string{"blocks[0].column_settings", "blocks[0].column_settings[0].align"}},
		{"block types the checker does not look into pass", "", []any{map[string]any{"type": "rich_text", "elements": []any{}}}, []string{}},
		{"a block type Block Kit does not have", "", []any{map[string]any{"type": "sparkle"}}, []string{"blocks[0].type"}},
		{"an element type Block Kit does not have", "", []any{map[string]any{"type": "actions",
			"elements": []any{map[string]any{"type": "sparkle", "action_id": "s"}}}}, []string{"blocks[0].elements[0].type"}},
		{"section text counts UTF-16 code units", "", []any{section(strings.Repeat("😀", 1501))}, []string{"blocks[0].text.text"}},
		{"actions without elements", "", []any{map[string]any{"type": "actions", "elements": []any{}}}, []string{"blocks[0].elements"}},
		{"context without elements", "", []any{map[string]any{"type": "context", "elements": []any{}}}, []string{"blocks[0].elements"}},
		{"empty context text", "", []any{map[string]any{"type": "context", "elements": []any{mrkdwn("")}}},
			[]string{"blocks[0].elements[0].text"}},
		{"mrkdwn that sets emoji", "", []any{map[string]any{"type": "section",
			"text": map[string]any{"type": "mrkdwn", "text": "s", "emoji": true}}}, []string{"blocks[0].text.emoji"}},
		{"button style", "", []any{map[string]any{"type": "actions", "elements": []any{
			map[string]any{"type": "button", "action_id": "b", "text": plain("b"), "style": "loud"}}}},
			[]string{"blocks[0].elements[0].style"}},
		{"radio buttons: no options, repeated values, an initial option not among them", "", []any{
			map[string]any{"type": "actions", "elements": []any{map[string]any{"type": "radio_buttons", "action_id": "r", "options": []any{}}}},
			map[string]any{"type": "actions", "elements": []any{map[string]any{"type": "radio_buttons", "action_id": "r",
				"options":        []any{map[string]any{"text": plain("a"), "value": "v"}, map[string]any{"text": plain("b"), "value": "v"}},
				"initial_option": map[string]any{"text": plain("c"), "value": "w"}}}},
			map[string]any{"type": "actions", "elements": []any{map[string]any{"type": "radio_buttons", "action_id": "r",
				"options": []any{map[string]any{"text": plain("a"), "value": ""}}}}},
		}, []string{"blocks[0].elements[0].options", "blocks[1].elements[0].options[1].value",
			"blocks[1].elements[0].initial_option", "blocks[2].elements[0].options[0].value"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			blocks, _ := roundTrip(t, tc.blocks).([]any)
			got := paths(checkMessage("chat.postMessage", tc.text, blocks))
			if !slices.Equal(got, tc.want) {
				t.Errorf("violations at %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCheckView(t *testing.T) {
	input := func(el map[string]any) map[string]any {
		return map[string]any{"type": "input", "block_id": "in", "label": plain("Artifact"), "element": el}
	}
	textInput := func(maxLength int, initial string) map[string]any {
		return map[string]any{"type": "plain_text_input", "action_id": "artifact", "multiline": true,
			"max_length": maxLength, "initial_value": initial}
	}
	modal := func(change func(v map[string]any)) map[string]any {
		v := map[string]any{"type": "modal", "title": plain("Edit step 1"), "submit": plain("Save"),
			"close": plain("Cancel"), "blocks": []any{input(textInput(3000, "text"))}}
		change(v)
		return v
	}
	tests := []struct {
		name string
		view map[string]any
		want []string
	}{
		{"fine", modal(func(map[string]any) {}), []string{}},
		{"title at 24", modal(func(v map[string]any) { v["title"] = plain(x(24)) }), []string{}},
		{"title over 24", modal(func(v map[string]any) { v["title"] = plain(x(25)) }), []string{"view.title.text"}},
		{"no title", modal(func(v map[string]any) { delete(v, "title") }), []string{"view.title"}},
		{"submit over 24", modal(func(v map[string]any) { v["submit"] = plain(x(25)) }), []string{"view.submit.text"}},
		{"close over 24", modal(func(v map[string]any) { v["close"] = plain(x(25)) }), []string{"view.close.text"}},
		{"input without submit", modal(func(v map[string]any) { delete(v, "submit") }), []string{"view.blocks[0]"}},
		{"private_metadata at 3000", modal(func(v map[string]any) { v["private_metadata"] = x(3000) }), []string{}},
		{"private_metadata over 3000", modal(func(v map[string]any) { v["private_metadata"] = x(3001) }), []string{"view.private_metadata"}},
		{"callback_id over 255", modal(func(v map[string]any) { v["callback_id"] = x(256) }), []string{"view.callback_id"}},
		{"100 blocks", modal(func(v map[string]any) {
			v["blocks"] = repeat(100, func(int) any { return section("s") })
		}), []string{}},
		{"markdown and table blocks are for messages", modal(func(v map[string]any) {
			v["blocks"] = []any{md("**m**"), table(1, 1)}
		}), []string{"view.blocks[0].type", "view.blocks[1].type"}},
		{"101 blocks", modal(func(v map[string]any) {
			v["blocks"] = repeat(101, func(int) any { return section("s") })
		}), []string{"view.blocks"}},
		{"max_length over 3000", modal(func(v map[string]any) { v["blocks"] = []any{input(textInput(3001, ""))} }),
			[]string{"view.blocks[0].element.max_length"}},
		{"max_length 0", modal(func(v map[string]any) { v["blocks"] = []any{input(textInput(0, ""))} }),
			[]string{"view.blocks[0].element.max_length"}},
		{"initial_value at 3000", modal(func(v map[string]any) { v["blocks"] = []any{input(textInput(3000, x(3000)))} }),
			[]string{}},
		{"initial_value over 3000", modal(func(v map[string]any) { v["blocks"] = []any{input(textInput(3000, x(3001)))} }),
			[]string{"view.blocks[0].element.initial_value"}},
		{"label over 2000", modal(func(v map[string]any) {
			in := input(textInput(10, ""))
			in["label"] = plain(x(2001))
			v["blocks"] = []any{in}
		}), []string{"view.blocks[0].label.text"}},
		{"initial_value over max_length", modal(func(v map[string]any) { v["blocks"] = []any{input(textInput(10, x(11)))} }),
			[]string{"view.blocks[0].element.initial_value"}},
		{"min_length over max_length", modal(func(v map[string]any) {
			el := textInput(10, "")
			el["min_length"] = 11
			v["blocks"] = []any{input(el)}
		}), []string{"view.blocks[0].element.min_length"}},
		{"not a modal", modal(func(v map[string]any) { v["type"] = "home" }), []string{"view.type"}},
		{"no blocks", modal(func(v map[string]any) { delete(v, "blocks") }), []string{"view.blocks"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			view, _ := roundTrip(t, tc.view).(map[string]any)
			got := paths(checkView("views.open", view))
			if !slices.Equal(got, tc.want) {
				t.Errorf("violations at %q, want %q", got, tc.want)
			}
		})
	}
}

func TestViolationString(t *testing.T) {
	vs := checkMessage("chat.update", "", []any{section(x(3001))})
	if len(vs) != 1 {
		t.Fatalf("violations = %v", vs)
	}
	want := "chat.update blocks[0].text.text: 3001 characters, limit 3000"
	if got := vs[0].String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if vs[0].Limit != 3000 || vs[0].Got != 3001 {
		t.Errorf("Limit, Got = %d, %d", vs[0].Limit, vs[0].Got)
	}
}

func TestRenderKeepsDocumentOrder(t *testing.T) {
	blocks := `[{"type":"header","text":{"type":"plain_text","text":"Step 2 of 3: deliver-prd"}},
		{"type":"section","text":{"type":"mrkdwn","text":"*PRODUCED*"},"fields":[{"type":"mrkdwn","text":"a"},{"type":"mrkdwn","text":"b"}],
		 "accessory":{"type":"button","text":{"type":"plain_text","text":"Open"},"action_id":"text"}},
		{"type":"rich_text","elements":[{"type":"rich_text_section","elements":[{"type":"text","text":"rich"}]}]},
		{"type":"actions","elements":[{"type":"button","text":{"type":"plain_text","text":"Approve"},"value":"text"}]}]`
	got := render("fallback", json.RawMessage(blocks))
	want := "fallback\nStep 2 of 3: deliver-prd\n*PRODUCED*\na\nb\nOpen\nrich\nApprove"
	if got != want {
		t.Errorf("render = %q, want %q", got, want)
	}
	if got := render("only text", nil); got != "only text" {
		t.Errorf("render without blocks = %q", got)
	}
}

func TestButtons(t *testing.T) {
	blocks := `[{"type":"section","block_id":"s","text":{"type":"mrkdwn","text":"x"},
		"accessory":{"type":"button","action_id":"cancel","text":{"type":"plain_text","text":"Cancel"},"value":"r1"}},
		{"type":"actions","block_id":"d","elements":[
			{"type":"button","action_id":"approve","text":{"type":"plain_text","text":"Approve"},"value":"r1:1","style":"primary"},
			{"type":"static_select","action_id":"pick"},
			{"type":"button","action_id":"abort","text":{"type":"plain_text","text":"Abort"},"style":"danger",
			 "confirm":{"title":{"type":"plain_text","text":"Sure?"}}}]}]`
	got := Message{Blocks: json.RawMessage(blocks)}.Buttons()
	want := []Button{
		{BlockID: "s", ActionID: "cancel", Text: "Cancel", Value: "r1"},
		{BlockID: "d", ActionID: "approve", Text: "Approve", Value: "r1:1", Style: "primary"},
		{BlockID: "d", ActionID: "abort", Text: "Abort", Style: "danger", Confirm: true},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Buttons() = %+v, want %+v", got, want)
	}
}

// FuzzCheck feeds arbitrary JSON to the checks and the rendering: a payload
// from a buggy bot must give violations, never a panic in the fake.
func FuzzCheck(f *testing.F) {
	f.Add(`[{"type":"section","text":{"type":"mrkdwn","text":"hi"}}]`)
	f.Add(`[{"type":"actions","elements":[{"type":"button","text":"not an object","confirm":[]}]}]`)
	f.Add(`{"type":"modal","title":7,"blocks":[{"type":"input","element":{"type":"plain_text_input","max_length":"x"}}]}`)
	f.Add(`[{"type":"section","fields":{"a":1},"accessory":null},{"type":"context","elements":[null,{"type":"image"}]}]`)
	f.Add(`[[[]]]`)
	f.Fuzz(func(t *testing.T, doc string) {
		var v any
		if json.Unmarshal([]byte(doc), &v) != nil {
			return
		}
		switch d := v.(type) {
		case []any:
			checkMessage("chat.postMessage", "", d)
		case map[string]any:
			checkView("views.open", d)
		}
		_ = render("", json.RawMessage(doc))
		_ = buttonsIn(json.RawMessage(doc))
	})
}
