package fakeslack

import (
	"fmt"
	"unicode/utf8"
)

// Slack's documented limits (docs.slack.dev, Block Kit reference: blocks,
// block elements, composition objects, modal views; chat.postMessage).
// Lengths count characters (Unicode code points), as Slack's docs state them.
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
	maxMarkdownBlock   = 12000
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
}

func newChecker(method string) *checker {
	return &checker{method: method, blockIDs: map[string]string{}}
}

func (c *checker) add(path string, limit, got int, format string, args ...any) {
	c.out = append(c.out, Violation{Method: c.method, Path: path, Detail: fmt.Sprintf(format, args...), Limit: limit, Got: got})
}

func (c *checker) maxLen(path, s string, limit int) {
	if n := utf8.RuneCountInString(s); n > limit {
		c.add(path, limit, n, "%d characters, limit %d", n, limit)
	}
}

func (c *checker) maxItems(path string, n, limit int, what string) {
	if n > limit {
		c.add(path, limit, n, "%d %s, limit %d", n, what, limit)
	}
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
	c.maxItems(path, len(blocks), limit, "blocks")
	for i, b := range blocks {
		c.block(fmt.Sprintf("%s[%d]", path, i), b)
	}
}

func (c *checker) block(path string, v any) {
	b, ok := v.(map[string]any)
	if !ok {
		c.add(path, 0, 0, "a block must be an object")
		return
	}
	if id, ok := b["block_id"].(string); ok {
		c.maxLen(path+".block_id", id, maxID)
		if first, dup := c.blockIDs[id]; dup {
			c.add(path+".block_id", 0, 0, "block_id %q already used at %s", id, first)
		} else {
			c.blockIDs[id] = path
		}
	}
	switch t := str(b["type"]); t {
	case "section":
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
	case "header":
		c.text(path+".text", b["text"], maxHeaderText, true, true)
	case "context":
		els, _ := b["elements"].([]any)
		c.maxItems(path+".elements", len(els), maxContextElements, "elements")
		for i, el := range els {
			p := fmt.Sprintf("%s.elements[%d]", path, i)
			if m, ok := el.(map[string]any); ok && str(m["type"]) == "image" {
				c.element(p, el)
				continue
			}
			c.text(p, el, maxTextObject, false, false)
		}
	case "actions":
		els, _ := b["elements"].([]any)
		c.maxItems(path+".elements", len(els), maxActionsElements, "elements")
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
	case "input":
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
	case "image":
		c.maxLen(path+".image_url", str(b["image_url"]), maxURL)
		c.maxLen(path+".alt_text", str(b["alt_text"]), maxAltText)
		if t := b["title"]; t != nil {
			c.text(path+".title", t, maxImageTitle, false, true)
		}
	case "markdown":
		c.maxLen(path+".text", str(b["text"]), maxMarkdownBlock)
	case "":
		c.add(path+".type", 0, 0, "a block needs a type")
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
	switch str(e["type"]) {
	case "button":
		c.text(path+".text", e["text"], maxButtonText, true, true)
		c.maxLen(path+".value", str(e["value"]), maxButtonValue)
		c.maxLen(path+".url", str(e["url"]), maxURL)
		c.maxLen(path+".accessibility_label", str(e["accessibility_label"]), maxButtonText)
	case "plain_text_input":
		if n, ok := e["max_length"].(float64); ok && (n < 1 || n > maxInputLength) {
			c.add(path+".max_length", maxInputLength, int(n), "max_length %v, must be 1 to %d", n, maxInputLength)
		}
		if n, ok := e["min_length"].(float64); ok && (n < 0 || n > maxInputLength) {
			c.add(path+".min_length", maxInputLength, int(n), "min_length %v, must be 0 to %d", n, maxInputLength)
		}
		c.maxLen(path+".initial_value", str(e["initial_value"]), maxInputLength)
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
		opts, _ := e["options"].([]any)
		c.maxItems(path+".options", len(opts), maxChoiceOptions, "options")
		c.options(path+".options", opts)
	case "image":
		c.maxLen(path+".image_url", str(e["image_url"]), maxURL)
		c.maxLen(path+".alt_text", str(e["alt_text"]), maxAltText)
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
