package fakeslack

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Slack's documented limits (docs.slack.dev, Block Kit reference: blocks,
// block elements, composition objects, modal views; chat.postMessage).
// Lengths count characters the strictest way Slack might: in UTF-16 code
// units, so an emoji outside the Basic Multilingual Plane counts twice. A
// text that passes here fits however Slack counts.
const (
	maxMessageBlocks   = 50
	maxViewBlocks      = 100
	maxMessageText     = 40000
	maxSectionText     = 3000
	maxSectionFields   = 10
	maxFieldText       = 2000
	maxHeaderText      = 150
	maxContextElements = 10
	maxActionsElements = 25
	maxTextObject      = 3000
	maxButtonText      = 75
	maxButtonValue     = 2000
	maxURL             = 3000
	maxID              = 255 // action_id, block_id, callback_id, external_id
	maxViewTitle       = 24  // title, submit, close
	maxPrivateMetadata = 3000
	maxInputLength     = 3000 // plain_text_input max_length, min_length, initial_value
	maxPlaceholder     = 150
	maxLabel           = 2000 // input label and hint
	maxAltText         = 2000
	maxImageTitle      = 2000
	maxMarkdownBlock   = 12000 // every markdown block of a payload together
	maxTableRows       = 100
	maxTableCells      = 20 // cells of a row, and column_settings
	maxSelectOptions   = 100
	maxOverflowOptions = 5
	maxChoiceOptions   = 10 // radio_buttons, checkboxes
	maxOptionText      = 75
	maxOptionValue     = 150
	maxConfirmTitle    = 100
	maxConfirmText     = 300
	maxConfirmButton   = 30
)

// checker collects the limit violations of one payload.
type checker struct {
	method   string
	out      []Violation
	blockIDs map[string]string // block_id -> path of its first use
	// view is set while a modal's blocks are checked: markdown and table
	// blocks are for messages only.
	view     bool
	markdown int    // characters of the payload's markdown blocks so far
	table    string // path of the payload's first table block
}

func newChecker(method string) *checker {
	return &checker{method: method, blockIDs: map[string]string{}}
}

func (c *checker) add(path string, limit, got int, format string, args ...any) {
	c.out = append(c.out, Violation{Method: c.method, Path: path, Detail: fmt.Sprintf(format, args...), Limit: limit, Got: got})
}

func (c *checker) maxLen(path, s string, limit int) {
	if n := textLen(s); n > limit {
		c.add(path, limit, n, "%d characters, limit %d", n, limit)
	}
}

func (c *checker) maxItems(path string, n, limit int, what string) {
	if n > limit {
		c.add(path, limit, n, "%d %s, limit %d", n, what, limit)
	}
}

// items checks a list that must hold 1 to limit items.
func (c *checker) items(path string, n, limit int, what string) {
	if n == 0 {
		c.add(path, 1, 0, "no %s, at least 1", what)
	}
	c.maxItems(path, n, limit, what)
}

// textLen counts s in UTF-16 code units.
func textLen(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// CheckBlocks returns the limits blocks break as a message's blocks, as
// chat.postMessage would find them. blocks is anything that encodes to a
// JSON array of blocks (slack-go's []slack.Block, say).
func CheckBlocks(blocks any) []Violation {
	var list []any
	if err := decodeAs(blocks, &list); err != nil {
		return []Violation{{Method: "chat.postMessage", Path: "blocks", Detail: err.Error()}}
	}
	return checkMessage("chat.postMessage", "", list)
}

// CheckModal returns the limits a modal view breaks, as views.open would
// find them. view is anything that encodes to a JSON view object
// (slack-go's slack.ModalViewRequest, say).
func CheckModal(view any) []Violation {
	var m map[string]any
	if err := decodeAs(view, &m); err != nil {
		return []Violation{{Method: "views.open", Path: "view", Detail: err.Error()}}
	}
	return checkView("views.open", m)
}

func decodeAs(v, out any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("not the JSON wanted: %w", err)
	}
	return nil
}

// checkMessage checks a message's text and blocks.
func checkMessage(method, text string, blocks []any) []Violation {
	c := newChecker(method)
	c.maxLen("text", text, maxMessageText)
	c.blocks("blocks", blocks, maxMessageBlocks)
	return c.out
}

// checkView checks a modal view object.
func checkView(method string, view map[string]any) []Violation {
	c := newChecker(method)
	if t := str(view["type"]); t != "modal" {
		c.add("view.type", 0, 0, "type %q, want \"modal\"", t)
	}
	if view["title"] == nil {
		c.add("view.title", 0, 0, "a modal needs a title")
	} else {
		c.text("view.title", view["title"], maxViewTitle, true, true)
	}
	if v, ok := view["submit"]; ok && v != nil {
		c.text("view.submit", v, maxViewTitle, true, true)
	}
	if v, ok := view["close"]; ok && v != nil {
		c.text("view.close", v, maxViewTitle, true, true)
	}
	c.maxLen("view.private_metadata", str(view["private_metadata"]), maxPrivateMetadata)
	c.maxLen("view.callback_id", str(view["callback_id"]), maxID)
	c.maxLen("view.external_id", str(view["external_id"]), maxID)
	blocks, ok := view["blocks"].([]any)
	if !ok {
		c.add("view.blocks", 0, 0, "a view needs a blocks array")
	}
	c.view = true
	c.blocks("view.blocks", blocks, maxViewBlocks)
	if view["submit"] == nil {
		for i, b := range blocks {
			if m, ok := b.(map[string]any); ok && str(m["type"]) == "input" {
				c.add(fmt.Sprintf("view.blocks[%d]", i), 0, 0, "a modal with an input block needs a submit button")
				break
			}
		}
	}
	return c.out
}

func (c *checker) blocks(path string, blocks []any, limit int) {
	n := len(blocks)
	for _, b := range blocks {
		if m, ok := b.(map[string]any); ok && str(m["type"]) == "plan" {
			tasks, _ := m["tasks"].([]any)
			n += len(tasks) // a plan's tasks are task card blocks
		}
	}
	c.maxItems(path, n, limit, "blocks")
	for i, b := range blocks {
		c.block(fmt.Sprintf("%s[%d]", path, i), b)
	}
}

// blockTypes are the block types Slack knows; it refuses any other.
var blockTypes = []string{"actions", "alert", "context", "divider", "file", "header", "image", "input", "markdown",
	"plan", "rich_text", "section", "table", "task_card", "video"}

func (c *checker) block(path string, v any) {
	b, ok := v.(map[string]any)
	if !ok {
		c.add(path, 0, 0, "a block must be an object")
		return
	}
	c.blockID(path, b)
	switch t := str(b["type"]); t {
	case "section":
		c.section(path, b)
	case "header":
		c.text(path+".text", b["text"], maxHeaderText, true, true)
	case "context":
		c.context(path, b)
	case "actions":
		c.actions(path, b)
	case "input":
		c.input(path, b)
	case "image":
		c.maxLen(path+".image_url", str(b["image_url"]), maxURL)
		c.maxLen(path+".alt_text", str(b["alt_text"]), maxAltText)
		if t := b["title"]; t != nil {
			c.text(path+".title", t, maxImageTitle, false, true)
		}
	case "markdown":
		c.markdownBlock(path, b)
	case "table":
		c.tableBlock(path, b)
	case "plan":
		c.planBlock(path, b)
	case "task_card":
		c.taskCard(path, b)
	case "alert":
		c.alertBlock(path, b)
	case "":
		c.add(path+".type", 0, 0, "a block needs a type")
	default:
		if !slices.Contains(blockTypes, t) {
			c.add(path+".type", 0, 0, "block type %q is not a Block Kit block", t)
		}
	}
}

// markdownBlock checks a markdown block: messages only, with text, and
// at most 12,000 characters in all the payload's markdown blocks together.
func (c *checker) markdownBlock(path string, b map[string]any) {
	if c.view {
		c.add(path+".type", 0, 0, "a markdown block is for messages, not views")
	}
	text := str(b["text"])
	if text == "" {
		c.add(path+".text", 0, 0, "a markdown block needs text")
	}
	c.markdown += textLen(text)
	if c.markdown > maxMarkdownBlock {
		c.add(path+".text", maxMarkdownBlock, c.markdown, "%d characters in the payload's markdown blocks, limit %d", c.markdown, maxMarkdownBlock)
	}
}

// tableBlock checks a table block: messages only, one a message, 1 to 100
// rows of 1 to 20 cells, each cell raw_text with text or rich_text with
// elements, and at most 20 column settings.
func (c *checker) tableBlock(path string, b map[string]any) {
	if c.view {
		c.add(path+".type", 0, 0, "a table block is for messages, not views")
	}
	if c.table != "" {
		c.add(path, 1, 2, "only_one_table_allowed: a message takes one table (the first is %s)", c.table)
	} else {
		c.table = path
	}
	rows, _ := b["rows"].([]any)
	c.items(path+".rows", len(rows), maxTableRows, "rows")
	for i, r := range rows {
		cells, ok := r.([]any)
		rp := fmt.Sprintf("%s.rows[%d]", path, i)
		if !ok {
			c.add(rp, 0, 0, "a table row is an array of cells")
			continue
		}
		c.items(rp, len(cells), maxTableCells, "cells")
		for j, cell := range cells {
			c.tableCell(fmt.Sprintf("%s[%d]", rp, j), cell)
		}
	}
	if cs, ok := b["column_settings"].([]any); ok {
		c.maxItems(path+".column_settings", len(cs), maxTableCells, "column settings")
		for i, v := range cs {
			m, _ := v.(map[string]any)
			if a := str(m["align"]); a != "" && a != "left" && a != "center" && a != "right" {
				c.add(fmt.Sprintf("%s.column_settings[%d].align", path, i), 0, 0, "align %q: left, center or right", a)
			}
		}
	}
}

func (c *checker) tableCell(path string, v any) {
	cell, _ := v.(map[string]any)
	switch t := str(cell["type"]); t {
	case "raw_text":
		if _, ok := cell["text"].(string); !ok {
			c.add(path+".text", 0, 0, "a raw_text cell needs text")
		}
	case "rich_text":
		if els, _ := cell["elements"].([]any); len(els) == 0 {
			c.add(path+".elements", 0, 0, "a rich_text cell needs elements")
		}
	default:
		c.add(path+".type", 0, 0, "cell type %q: raw_text or rich_text", t)
	}
}

// blockID checks a block's block_id: within its limit, and used once in
// the payload.
func (c *checker) blockID(path string, b map[string]any) {
	id, ok := b["block_id"].(string)
	if !ok {
		return
	}
	c.maxLen(path+".block_id", id, maxID)
	if first, dup := c.blockIDs[id]; dup {
		c.add(path+".block_id", 0, 0, "block_id %q already used at %s", id, first)
	} else {
		c.blockIDs[id] = path
	}
}

func (c *checker) section(path string, b map[string]any) {
	text, fields := b["text"], b["fields"]
	if text == nil && fields == nil {
		c.add(path, 0, 0, "a section needs text or fields")
	}
	if text != nil {
		c.text(path+".text", text, maxSectionText, true, false)
	}
	if fields != nil {
		list, _ := fields.([]any)
		c.maxItems(path+".fields", len(list), maxSectionFields, "fields")
		for i, f := range list {
			c.text(fmt.Sprintf("%s.fields[%d]", path, i), f, maxFieldText, true, false)
		}
	}
	if acc := b["accessory"]; acc != nil {
		c.element(path+".accessory", acc)
	}
}

func (c *checker) context(path string, b map[string]any) {
	els, _ := b["elements"].([]any)
	c.items(path+".elements", len(els), maxContextElements, "elements")
	for i, el := range els {
		p := fmt.Sprintf("%s.elements[%d]", path, i)
		if m, ok := el.(map[string]any); ok && str(m["type"]) == "image" {
			c.element(p, el)
			continue
		}
		c.text(p, el, maxTextObject, true, false)
	}
}

func (c *checker) actions(path string, b map[string]any) {
	els, _ := b["elements"].([]any)
	c.items(path+".elements", len(els), maxActionsElements, "elements")
	seen := map[string]bool{}
	for i, el := range els {
		p := fmt.Sprintf("%s.elements[%d]", path, i)
		c.element(p, el)
		if m, ok := el.(map[string]any); ok {
			if id := str(m["action_id"]); id != "" {
				if seen[id] {
					c.add(p+".action_id", 0, 0, "action_id %q repeated in the block", id)
				}
				seen[id] = true
			}
		}
	}
}

func (c *checker) input(path string, b map[string]any) {
	if b["label"] == nil {
		c.add(path+".label", 0, 0, "an input block needs a label")
	} else {
		c.text(path+".label", b["label"], maxLabel, true, true)
	}
	if h := b["hint"]; h != nil {
		c.text(path+".hint", h, maxLabel, false, true)
	}
	if el := b["element"]; el == nil {
		c.add(path+".element", 0, 0, "an input block needs an element")
	} else {
		c.element(path+".element", el)
	}
}

// text checks a text object: its kind, its length and, when required, that
// it is not empty (Slack refuses empty text with invalid_blocks).
func (c *checker) text(path string, v any, limit int, required, plainOnly bool) {
	m, ok := v.(map[string]any)
	if !ok {
		c.add(path, 0, 0, "a text object must be an object")
		return
	}
	switch t := str(m["type"]); {
	case t == "plain_text":
	case t == "mrkdwn" && !plainOnly:
		if m["emoji"] != nil {
			c.add(path+".emoji", 0, 0, "a mrkdwn text cannot set emoji")
		}
	case t == "mrkdwn":
		c.add(path+".type", 0, 0, "must be plain_text, not mrkdwn")
	default:
		c.add(path+".type", 0, 0, "text object type %q, want plain_text or mrkdwn", t)
	}
	s := str(m["text"])
	if required && s == "" {
		c.add(path+".text", 1, 0, "empty text")
	}
	c.maxLen(path+".text", s, limit)
}

// elementTypes are the block element types Slack knows; it refuses any
// other.
var elementTypes = []string{"button", "channels_select", "checkboxes", "conversations_select", "datepicker",
	"datetimepicker", "email_text_input", "external_select", "file_input", "image", "multi_channels_select",
	"multi_conversations_select", "multi_external_select", "multi_static_select", "multi_users_select",
	"number_input", "overflow", "plain_text_input", "radio_buttons", "rich_text_input", "static_select",
	"timepicker", "url_text_input", "users_select", "workflow_button"}

func (c *checker) element(path string, v any) {
	e, ok := v.(map[string]any)
	if !ok {
		c.add(path, 0, 0, "an element must be an object")
		return
	}
	c.maxLen(path+".action_id", str(e["action_id"]), maxID)
	if p := e["placeholder"]; p != nil {
		c.text(path+".placeholder", p, maxPlaceholder, false, true)
	}
	if cf := e["confirm"]; cf != nil {
		c.confirm(path+".confirm", cf)
	}
	switch t := str(e["type"]); t {
	case "button":
		c.button(path, e)
	case "plain_text_input":
		c.plainTextInput(path, e)
	case "static_select", "multi_static_select":
		opts, _ := e["options"].([]any)
		c.maxItems(path+".options", len(opts), maxSelectOptions, "options")
		c.options(path+".options", opts)
		groups, _ := e["option_groups"].([]any)
		c.maxItems(path+".option_groups", len(groups), maxSelectOptions, "option groups")
	case "overflow":
		opts, _ := e["options"].([]any)
		c.maxItems(path+".options", len(opts), maxOverflowOptions, "options")
		c.options(path+".options", opts)
	case "radio_buttons", "checkboxes":
		c.choices(path, e)
	case "image":
		c.maxLen(path+".image_url", str(e["image_url"]), maxURL)
		c.maxLen(path+".alt_text", str(e["alt_text"]), maxAltText)
	default:
		if !slices.Contains(elementTypes, t) {
			c.add(path+".type", 0, 0, "element type %q is not a Block Kit element", t)
		}
	}
}

func (c *checker) button(path string, e map[string]any) {
	c.text(path+".text", e["text"], maxButtonText, true, true)
	c.maxLen(path+".value", str(e["value"]), maxButtonValue)
	c.maxLen(path+".url", str(e["url"]), maxURL)
	c.maxLen(path+".accessibility_label", str(e["accessibility_label"]), maxButtonText)
	switch st := str(e["style"]); st {
	case "", "primary", "danger":
	default:
		c.add(path+".style", 0, 0, "style %q, want primary or danger", st)
	}
}

func (c *checker) plainTextInput(path string, e map[string]any) {
	limit := maxInputLength
	maxLen, hasMax := e["max_length"].(float64)
	if hasMax && (maxLen < 1 || maxLen > maxInputLength) {
		c.add(path+".max_length", maxInputLength, int(maxLen), "max_length %v, must be 1 to %d", maxLen, maxInputLength)
	} else if hasMax {
		limit = int(maxLen)
	}
	minLen, hasMin := e["min_length"].(float64)
	if hasMin && (minLen < 0 || minLen > maxInputLength) {
		c.add(path+".min_length", maxInputLength, int(minLen), "min_length %v, must be 0 to %d", minLen, maxInputLength)
	}
	if hasMin && hasMax && minLen > maxLen {
		c.add(path+".min_length", int(maxLen), int(minLen), "min_length %v, over max_length %v", minLen, maxLen)
	}
	c.maxLen(path+".initial_value", str(e["initial_value"]), limit)
}

// choices checks radio buttons and checkboxes: 1 to 10 options of
// distinct values, and initial options among them.
func (c *checker) choices(path string, e map[string]any) {
	opts, _ := e["options"].([]any)
	c.items(path+".options", len(opts), maxChoiceOptions, "options")
	c.options(path+".options", opts)
	values := map[string]bool{}
	for i, o := range opts {
		m, _ := o.(map[string]any)
		v := str(m["value"])
		if values[v] {
			c.add(fmt.Sprintf("%s.options[%d].value", path, i), 0, 0, "value %q used twice", v)
		}
		values[v] = true
	}
	initial, _ := e["initial_options"].([]any)
	if o, ok := e["initial_option"]; ok && o != nil {
		initial = append(initial, o)
	}
	for _, o := range initial {
		m, _ := o.(map[string]any)
		if v := str(m["value"]); !values[v] {
			c.add(path+".initial_option", 0, 0, "initial option %q is not one of the options", v)
		}
	}
}

func (c *checker) options(path string, opts []any) {
	for i, o := range opts {
		p := fmt.Sprintf("%s[%d]", path, i)
		m, ok := o.(map[string]any)
		if !ok {
			c.add(p, 0, 0, "an option must be an object")
			continue
		}
		c.text(p+".text", m["text"], maxOptionText, true, false)
		if str(m["value"]) == "" {
			c.add(p+".value", 1, 0, "empty value")
		}
		c.maxLen(p+".value", str(m["value"]), maxOptionValue)
		if d := m["description"]; d != nil {
			c.text(p+".description", d, maxOptionText, false, false)
		}
		c.maxLen(p+".url", str(m["url"]), maxURL)
	}
}

func (c *checker) confirm(path string, v any) {
	m, ok := v.(map[string]any)
	if !ok {
		c.add(path, 0, 0, "a confirm dialog must be an object")
		return
	}
	c.text(path+".title", m["title"], maxConfirmTitle, true, true)
	c.text(path+".text", m["text"], maxConfirmText, true, false)
	c.text(path+".confirm", m["confirm"], maxConfirmButton, true, true)
	c.text(path+".deny", m["deny"], maxConfirmButton, true, true)
}
