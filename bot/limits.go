package bot

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/slack-go/slack"
)

// ErrLimit is wrapped by every error CheckBlocks and CheckModal return.
var ErrLimit = errors.New("breaks a Block Kit limit")

// CheckBlocks reports the first way blocks would be refused by Slack as a
// message: more than 50 blocks, a text, label, value or id over its length
// limit, an empty text, too many fields, context elements or buttons, a
// duplicate block_id or action_id, or a block or element type gonogo does not
// check. It works on the JSON Slack would receive, so it sees exactly what is
// sent.
func CheckBlocks(blocks []slack.Block) error {
	return checkBlockList(blocks, maxMessageBlocks, "message")
}

// CheckModal is CheckBlocks for a modal view: up to 100 blocks, input
// blocks allowed, and the view's own title, buttons, callback id and
// private_metadata within their limits.
func CheckModal(m slack.ModalViewRequest) error {
	if m.Type != slack.VTModal {
		return fmt.Errorf("modal: type is %q, not %q: %w", m.Type, slack.VTModal, ErrLimit)
	}
	for _, t := range []struct {
		name string
		obj  *slack.TextBlockObject
		need bool
	}{{"title", m.Title, true}, {"submit", m.Submit, false}, {"close", m.Close, false}} {
		if t.obj == nil {
			if t.need {
				return fmt.Errorf("modal: no %s: %w", t.name, ErrLimit)
			}
			continue
		}
		if err := checkTextObject(toMap(t.obj), maxModalTitle, true); err != nil {
			return fmt.Errorf("modal %s: %w", t.name, err)
		}
	}
	if n := textLen(m.PrivateMetadata); n > maxMetadata {
		return fmt.Errorf("modal: private_metadata is %d characters, over the limit of %d: %w", n, maxMetadata, ErrLimit)
	}
	if n := textLen(m.CallbackID); n > maxID {
		return fmt.Errorf("modal: callback_id is %d characters, over the limit of %d: %w", n, maxID, ErrLimit)
	}
	if n := textLen(m.ExternalID); n > maxID {
		return fmt.Errorf("modal: external_id is %d characters, over the limit of %d: %w", n, maxID, ErrLimit)
	}
	if err := checkBlockList(m.Blocks.BlockSet, maxModalBlocks, "modal"); err != nil {
		return err
	}
	if m.Submit == nil {
		for i, b := range m.Blocks.BlockSet {
			if b.BlockType() == slack.MBTInput {
				return fmt.Errorf("modal block %d (input): a modal with an input needs a submit button: %w", i, ErrLimit)
			}
		}
	}
	return nil
}

func checkBlockList(blocks []slack.Block, max int, surface string) error {
	if len(blocks) == 0 {
		if surface == "modal" {
			return fmt.Errorf("%s: no blocks: %w", surface, ErrLimit)
		}
		return nil // a message of text alone
	}
	if len(blocks) > max {
		return fmt.Errorf("%s: %d blocks, over the limit of %d: %w", surface, len(blocks), max, ErrLimit)
	}
	raw, err := json.Marshal(blocks)
	if err != nil {
		return fmt.Errorf("%s: encoding the blocks: %w", surface, err)
	}
	var list []map[string]any
	if err := json.Unmarshal(raw, &list); err != nil {
		return fmt.Errorf("%s: decoding the blocks: %w", surface, err)
	}
	ids := map[string]bool{}
	for i, b := range list {
		typ, _ := b["type"].(string)
		id, _ := b["block_id"].(string)
		where := fmt.Sprintf("%s block %d (%s)", surface, i, typ)
		if id != "" {
			where = fmt.Sprintf("%s block %d (%s, block_id %q)", surface, i, typ, clipValue(id))
			if ids[id] {
				return fmt.Errorf("%s: block_id used twice: %w", where, ErrLimit)
			}
			ids[id] = true
		}
		if err := checkLen("block_id", id, maxID); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if err := checkBlock(typ, b, surface == "modal"); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	}
	return nil
}

func checkBlock(typ string, b map[string]any, modal bool) error {
	switch typ {
	case "divider":
		return nil
	case "header":
		return checkTextField(b, "text", maxHeaderText, true, true)
	case "section":
		_, hasText := b["text"]
		fields, _ := b["fields"].([]any)
		if !hasText && len(fields) == 0 {
			return fmt.Errorf("a section needs a text or fields: %w", ErrLimit)
		}
		if hasText {
			if err := checkTextField(b, "text", maxSectionText, false, true); err != nil {
				return err
			}
		}
		if len(fields) > maxFields {
			return fmt.Errorf("%d fields, over the limit of %d: %w", len(fields), maxFields, ErrLimit)
		}
		for j, f := range fields {
			if err := checkTextObject(f, maxFieldText, false); err != nil {
				return fmt.Errorf("field %d: %w", j, err)
			}
		}
		if acc, ok := b["accessory"]; ok {
			if err := checkElement(acc, modal); err != nil {
				return fmt.Errorf("accessory: %w", err)
			}
		}
		return nil
	case "context":
		els, _ := b["elements"].([]any)
		if len(els) == 0 || len(els) > maxContextElements {
			return fmt.Errorf("%d elements, the limit is 1 to %d: %w", len(els), maxContextElements, ErrLimit)
		}
		for j, e := range els {
			if err := checkTextObject(e, maxContextText, false); err != nil {
				return fmt.Errorf("element %d: %w", j, err)
			}
		}
		return nil
	case "actions":
		els, _ := b["elements"].([]any)
		if len(els) == 0 || len(els) > maxActionElements {
			return fmt.Errorf("%d elements, the limit is 1 to %d: %w", len(els), maxActionElements, ErrLimit)
		}
		seen := map[string]bool{}
		for j, e := range els {
			if err := checkElement(e, modal); err != nil {
				return fmt.Errorf("element %d: %w", j, err)
			}
			if id, _ := e.(map[string]any)["action_id"].(string); id != "" {
				if seen[id] {
					return fmt.Errorf("element %d: action_id %q used twice in the block: %w", j, clipValue(id), ErrLimit)
				}
				seen[id] = true
			}
		}
		return nil
	case "input":
		if !modal {
			return fmt.Errorf("an input block belongs in a modal: %w", ErrLimit)
		}
		if err := checkTextField(b, "label", maxLabel, true, true); err != nil {
			return err
		}
		if err := checkTextField(b, "hint", maxLabel, true, false); err != nil {
			return err
		}
		el, ok := b["element"]
		if !ok {
			return fmt.Errorf("an input block needs an element: %w", ErrLimit)
		}
		return checkElement(el, modal)
	}
	return fmt.Errorf("block type %q is not one gonogo checks: %w", typ, ErrLimit)
}

func checkElement(v any, modal bool) error {
	e, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("not an element: %w", ErrLimit)
	}
	typ, _ := e["type"].(string)
	if err := checkString(e, "action_id", maxID); err != nil {
		return fmt.Errorf("%s: %w", typ, err)
	}
	switch typ {
	case "button":
		if err := checkTextField(e, "text", maxButtonText, true, true); err != nil {
			return fmt.Errorf("button: %w", err)
		}
		if err := checkString(e, "value", maxButtonValue); err != nil {
			return fmt.Errorf("button: %w", err)
		}
		if err := checkString(e, "url", maxURL); err != nil {
			return fmt.Errorf("button: %w", err)
		}
		switch st, _ := e["style"].(string); st {
		case "", "primary", "danger":
		default:
			return fmt.Errorf("button: style %q: %w", st, ErrLimit)
		}
		if c, ok := e["confirm"].(map[string]any); ok {
			if err := checkConfirm(c); err != nil {
				return fmt.Errorf("button confirm: %w", err)
			}
		}
		return nil
	case "plain_text_input":
		if !modal {
			return fmt.Errorf("a plain_text_input belongs in a modal: %w", ErrLimit)
		}
		if err := checkTextField(e, "placeholder", maxPlaceholder, true, false); err != nil {
			return fmt.Errorf("plain_text_input: %w", err)
		}
		maxLen := intField(e, "max_length")
		minLen := intField(e, "min_length")
		if maxLen < 0 || maxLen > maxModalInputText || minLen < 0 || minLen > maxModalInputText || (maxLen > 0 && minLen > maxLen) {
			return fmt.Errorf("plain_text_input: min_length %d, max_length %d: the limit is 0 to %d: %w", minLen, maxLen, maxModalInputText, ErrLimit)
		}
		limit := maxModalInputText
		if maxLen > 0 {
			limit = maxLen
		}
		if err := checkString(e, "initial_value", limit); err != nil {
			return fmt.Errorf("plain_text_input: %w", err)
		}
		return nil
	case "radio_buttons":
		opts, _ := e["options"].([]any)
		if len(opts) == 0 || len(opts) > maxOptions {
			return fmt.Errorf("radio_buttons: %d options, the limit is 1 to %d: %w", len(opts), maxOptions, ErrLimit)
		}
		values := map[string]bool{}
		for j, o := range opts {
			om, _ := o.(map[string]any)
			if err := checkOption(om); err != nil {
				return fmt.Errorf("radio_buttons option %d: %w", j, err)
			}
			v, _ := om["value"].(string)
			if values[v] {
				return fmt.Errorf("radio_buttons option %d: value %q used twice: %w", j, clipValue(v), ErrLimit)
			}
			values[v] = true
		}
		if init, ok := e["initial_option"].(map[string]any); ok {
			if v, _ := init["value"].(string); !values[v] {
				return fmt.Errorf("radio_buttons: initial_option %q is not one of the options: %w", clipValue(v), ErrLimit)
			}
		}
		return nil
	}
	return fmt.Errorf("element type %q is not one gonogo checks: %w", typ, ErrLimit)
}

func checkOption(o map[string]any) error {
	if o == nil {
		return fmt.Errorf("not an option: %w", ErrLimit)
	}
	if err := checkTextField(o, "text", maxOptionText, false, true); err != nil {
		return err
	}
	if err := checkTextField(o, "description", maxOptionText, false, false); err != nil {
		return err
	}
	v, _ := o["value"].(string)
	if v == "" {
		return fmt.Errorf("empty value: %w", ErrLimit)
	}
	return checkLen("value", v, maxOptionValue)
}

func checkConfirm(c map[string]any) error {
	if err := checkTextField(c, "title", maxConfirmTitle, true, true); err != nil {
		return err
	}
	if err := checkTextField(c, "text", maxConfirmText, false, true); err != nil {
		return err
	}
	if err := checkTextField(c, "confirm", maxConfirmButton, true, true); err != nil {
		return err
	}
	return checkTextField(c, "deny", maxConfirmButton, true, false)
}

// checkTextField checks the text object under key of m.
func checkTextField(m map[string]any, key string, max int, plainOnly, required bool) error {
	v, ok := m[key]
	if !ok || v == nil {
		if required {
			return fmt.Errorf("no %s: %w", key, ErrLimit)
		}
		return nil
	}
	if err := checkTextObject(v, max, plainOnly); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

func checkTextObject(v any, max int, plainOnly bool) error {
	o, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("not a text object: %w", ErrLimit)
	}
	typ, _ := o["type"].(string)
	switch {
	case typ != "plain_text" && typ != "mrkdwn":
		return fmt.Errorf("text type %q: %w", typ, ErrLimit)
	case plainOnly && typ != "plain_text":
		return fmt.Errorf("text must be plain_text, not %s: %w", typ, ErrLimit)
	case typ == "mrkdwn" && o["emoji"] != nil:
		return fmt.Errorf("a mrkdwn text cannot set emoji: %w", ErrLimit)
	}
	s, _ := o["text"].(string)
	if s == "" {
		return fmt.Errorf("empty text: %w", ErrLimit)
	}
	return checkLen("text", s, max)
}

func checkString(m map[string]any, key string, max int) error {
	s, _ := m[key].(string)
	return checkLen(key, s, max)
}

func checkLen(what, s string, max int) error {
	if n := textLen(s); n > max {
		return fmt.Errorf("%s is %d characters, over the limit of %d: %w", what, n, max, ErrLimit)
	}
	return nil
}

func intField(m map[string]any, key string) int {
	f, _ := m[key].(float64)
	return int(f)
}

func toMap(v any) map[string]any {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m
}
