package bot

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/internal/fakeslack"
)

// checkBlocks and checkModal report the Block Kit limits a message's blocks
// or a modal break, as the fake Slack finds them: the one validator, so
// what the tests accept is what the e2e tests' Slack accepts.
func checkBlocks(blocks []slack.Block) error { return violations(fakeslack.CheckBlocks(blocks)) }

func checkModal(m slack.ModalViewRequest) error { return violations(fakeslack.CheckModal(m)) }

func violations(vs []fakeslack.Violation) error {
	var errs []error
	for _, v := range vs {
		errs = append(errs, errors.New(v.String()))
	}
	return errors.Join(errs...)
}

// TestFit checks the last guard on a message's block count: the tail
// (buttons, decisions) stays, the body says what it lost.
func TestFit(t *testing.T) {
	var body []slack.Block
	for i := 0; i < 60; i++ {
		body = append(body, section(fmt.Sprintf("line %d", i)))
	}
	tail := []slack.Block{decisionButtons(newRunWaiting(t), &newRunWaiting(t).Steps[0])}
	got := fit(body, tail, maxMessageBlocks)
	if len(got) != maxMessageBlocks || got[len(got)-1] != tail[0] {
		t.Fatalf("fit: %d blocks, last %T", len(got), got[len(got)-1])
	}
	if txt := got[len(got)-2].(*slack.ContextBlock).ContextElements.Elements[0].(*slack.TextBlockObject).Text; txt != "… 12 more blocks not shown." {
		t.Errorf("fit note %q", txt)
	}
	if err := checkBlocks(got); err != nil {
		t.Error(err)
	}
	if got := fit(body[:3], tail, maxMessageBlocks); len(got) != 4 {
		t.Errorf("fit changed a message within the limit: %d blocks", len(got))
	}
}

// TestCheckBlocksCatches feeds the Block Kit validator one broken limit
// at a time.
func TestCheckBlocksCatches(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	sec := func(text string) slack.Block { return slack.NewSectionBlock(mrkdwnText(text), nil, nil) }
	btn := func(id, val, label string) *slack.ButtonBlockElement {
		return slack.NewButtonBlockElement(id, val, plainText(label))
	}
	many := func(n int, b func(i int) slack.Block) []slack.Block {
		out := make([]slack.Block, n)
		for i := range out {
			out[i] = b(i)
		}
		return out
	}
	ctxEls := make([]slack.MixedElement, 11)
	for i := range ctxEls {
		ctxEls[i] = mrkdwnText("x")
	}
	btns := make([]slack.BlockElement, 26)
	for i := range btns {
		btns[i] = btn(fmt.Sprintf("a%d", i), "v", "b")
	}
	yes := true
	emojiText := strings.Repeat("😀", 1501) // 1,501 runes, 3,002 UTF-16 units
	for _, c := range []struct {
		name   string
		blocks []slack.Block
		want   string
	}{
		{"51 blocks", many(51, func(int) slack.Block { return slack.NewDividerBlock() }), "51 blocks"},
		{"section text", []slack.Block{sec(long(3001))}, "3001 characters, limit 3000"},
		{"section text in UTF-16", []slack.Block{sec(emojiText)}, "3002 characters"},
		{"empty section", []slack.Block{slack.NewSectionBlock(nil, nil, nil)}, "needs text or fields"},
		{"empty text", []slack.Block{slack.NewSectionBlock(&slack.TextBlockObject{Type: "mrkdwn"}, nil, nil)}, "empty text"},
		{"header text", []slack.Block{slack.NewHeaderBlock(plainText(long(151)))}, "151 characters, limit 150"},
		{"mrkdwn header", []slack.Block{slack.NewHeaderBlock(mrkdwnText("x"))}, "must be plain_text"},
		{"button label", []slack.Block{slack.NewActionBlock("", btn("a", "v", long(76)))}, "76 characters, limit 75"},
		{"button value", []slack.Block{slack.NewActionBlock("", btn("a", long(2001), "b"))}, ".value: 2001 characters"},
		{"action id", []slack.Block{slack.NewActionBlock("", btn(long(256), "v", "b"))}, ".action_id: 256 characters"},
		{"same action id", []slack.Block{slack.NewActionBlock("", btn("a", "v", "b"), btn("a", "w", "c"))}, "repeated in the block"},
		{"block id", []slack.Block{slack.NewActionBlock(long(256), btn("a", "v", "b"))}, ".block_id: 256 characters"},
		{"same block id", []slack.Block{slack.NewActionBlock("x", btn("a", "v", "b")), slack.NewActionBlock("x", btn("a", "v", "b"))}, "already used"},
		{"26 buttons", []slack.Block{slack.NewActionBlock("", btns...)}, "26 elements"},
		{"11 context elements", []slack.Block{slack.NewContextBlock("", ctxEls...)}, "11 elements"},
		{"11 fields", []slack.Block{slack.NewSectionBlock(nil, []*slack.TextBlockObject{
			mrkdwnText("1"), mrkdwnText("2"), mrkdwnText("3"), mrkdwnText("4"), mrkdwnText("5"), mrkdwnText("6"),
			mrkdwnText("7"), mrkdwnText("8"), mrkdwnText("9"), mrkdwnText("10"), mrkdwnText("11")}, nil)}, "11 fields"},
		{"field text", []slack.Block{slack.NewSectionBlock(nil, []*slack.TextBlockObject{mrkdwnText(long(2001))}, nil)}, "2001 characters, limit 2000"},
		{"confirm text", []slack.Block{slack.NewActionBlock("", btn("a", "v", "b").WithConfirm(
			slack.NewConfirmationBlockObject(plainText("t"), plainText(long(301)), plainText("y"), plainText("n"))))}, "301 characters, limit 300"},
		{"no buttons", []slack.Block{slack.NewActionBlock("")}, "no elements"},
		{"empty context", []slack.Block{slack.NewContextBlock("")}, "no elements"},
		{"button style", []slack.Block{slack.NewActionBlock("", btn("a", "v", "b").WithStyle("loud"))}, `style "loud"`},
		{"mrkdwn with emoji", []slack.Block{slack.NewSectionBlock(&slack.TextBlockObject{Type: "mrkdwn", Text: "x", Emoji: &yes}, nil, nil)}, "cannot set emoji"},
		{"unknown block", []slack.Block{unknownBlock{Type: "sparkle"}}, "not a Block Kit block"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkBlocks(c.blocks)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("CheckBlocks: %v, want a violation saying %q", err, c.want)
			}
		})
	}
	okModal := func() slack.ModalViewRequest { return RedoModal(StepRef{Run: goldenRunID, Step: 1, Attempt: 1}, "x") }
	for _, c := range []struct {
		name string
		edit func(m *slack.ModalViewRequest)
		want string
	}{
		{"title", func(m *slack.ModalViewRequest) { m.Title = plainText(long(25)) }, "title"},
		{"submit", func(m *slack.ModalViewRequest) { m.Submit = plainText(long(25)) }, "submit"},
		{"no submit with an input", func(m *slack.ModalViewRequest) { m.Submit = nil }, "needs a submit"},
		{"metadata", func(m *slack.ModalViewRequest) { m.PrivateMetadata = long(3001) }, "private_metadata: 3001 characters"},
		{"callback id", func(m *slack.ModalViewRequest) { m.CallbackID = long(256) }, "callback_id: 256 characters"},
		{"101 blocks", func(m *slack.ModalViewRequest) {
			m.Blocks.BlockSet = many(101, func(int) slack.Block { return slack.NewDividerBlock() })
		}, "101 blocks"},
		{"initial value", func(m *slack.ModalViewRequest) {
			m.Blocks.BlockSet[1].(*slack.InputBlock).Element.(*slack.PlainTextInputBlockElement).InitialValue = long(3001)
		}, "initial_value: 3001 characters"},
		{"max length", func(m *slack.ModalViewRequest) {
			m.Blocks.BlockSet[1].(*slack.InputBlock).Element.(*slack.PlainTextInputBlockElement).MaxLength = 3001
		}, "max_length 3001"},
		{"label", func(m *slack.ModalViewRequest) {
			m.Blocks.BlockSet[1].(*slack.InputBlock).Label = plainText(long(2001))
		}, "label"},
		{"radio option", func(m *slack.ModalViewRequest) {
			m.Blocks.BlockSet[1] = slack.NewInputBlock("r", plainText("l"), nil,
				slack.NewRadioButtonsBlockElement("a", slack.NewOptionBlockObject("v", plainText(long(76)), nil)))
		}, "options[0]"},
		{"radio initial option", func(m *slack.ModalViewRequest) {
			radio := slack.NewRadioButtonsBlockElement("a", slack.NewOptionBlockObject("v", plainText("x"), nil))
			radio.InitialOption = slack.NewOptionBlockObject("w", plainText("x"), nil)
			m.Blocks.BlockSet[1] = slack.NewInputBlock("r", plainText("l"), nil, radio)
		}, "initial_option"},
	} {
		t.Run("modal "+c.name, func(t *testing.T) {
			m := okModal()
			if err := checkModal(m); err != nil {
				t.Fatalf("the unbroken modal: %v", err)
			}
			c.edit(&m)
			err := checkModal(m)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("CheckModal: %v, want a violation saying %q", err, c.want)
			}
		})
	}
}

// unknownBlock is a block of a type Block Kit does not have.
type unknownBlock struct {
	Type slack.MessageBlockType `json:"type"`
}

func (b unknownBlock) BlockType() slack.MessageBlockType { return b.Type }
func (unknownBlock) ID() string                          { return "" }
