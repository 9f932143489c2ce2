package bot

import (
	"fmt"
	"strings"

	"github.com/slack-go/slack"
)

// Block Kit's limits that rendering cuts to. Slack refuses a whole message
// or modal that breaks any (invalid_blocks), so a run's thread would
// silently miss a step: every text gonogo renders is cut to fit. The fake
// Slack (fakeslack) checks them all.
const (
	maxMessageBlocks = 50
	maxSectionText   = 3000
	maxFieldText     = 2000
	maxFields        = 10
	maxHeaderText    = 150
	maxContextText   = 3000
	maxButtonValue   = 2000
	maxModalTitle    = 24 // title, submit and close of a modal
	maxConfirmTitle  = 100
	maxConfirmText   = 300
	maxConfirmButton = 30
	maxOptions       = 10 // radio buttons
	maxOptionText    = 75 // an option's text and description
)

func mrkdwnText(text string) *slack.TextBlockObject {
	if strings.TrimSpace(text) == "" {
		text = "-"
	}
	return &slack.TextBlockObject{Type: slack.MarkdownType, Text: text, Verbatim: true}
}

func plainText(text string) *slack.TextBlockObject {
	if strings.TrimSpace(text) == "" {
		text = "-"
	}
	return slack.NewTextBlockObject(slack.PlainTextType, text, true, false)
}

func section(text string) *slack.SectionBlock {
	return slack.NewSectionBlock(mrkdwnText(cut(text, maxSectionText)), nil, nil)
}

func headerBlock(text string) *slack.HeaderBlock {
	return slack.NewHeaderBlock(plainText(plain(text, maxHeaderText)))
}

func contextBlock(text string) *slack.ContextBlock {
	return slack.NewContextBlock("", mrkdwnText(cut(text, maxContextText)))
}

func fieldsSection(fields []string) *slack.SectionBlock {
	objs := make([]*slack.TextBlockObject, 0, min(len(fields), maxFields))
	for _, f := range fields[:min(len(fields), maxFields)] {
		objs = append(objs, mrkdwnText(cut(f, maxFieldText)))
	}
	return slack.NewSectionBlock(nil, objs, nil)
}

// packSections puts lines into as few sections as fit Slack's 3,000
// characters each, at most max of them; the lines that do not fit are
// counted by more on the last line.
func packSections(title string, lines []string, max int, more func(n int) string) []slack.Block {
	const room = 100 // kept free in every section for the "more" line
	var out []slack.Block
	cur := title
	for i, l := range lines {
		l = cut(l, 1000)
		sep := ""
		if cur != "" {
			sep = "\n"
		}
		if textLen(cur)+len(sep)+textLen(l) <= maxSectionText-room {
			cur += sep + l
			continue
		}
		if len(out)+1 >= max {
			cur += sep + more(len(lines)-i)
			break
		}
		out = append(out, section(cur))
		cur = l
	}
	if cur != "" {
		out = append(out, section(cur))
	}
	return out
}

// fit keeps a message within Slack's block count: when body and tail are
// too many together, body loses blocks from its end and says how many; the
// tail (buttons, decisions) always stays.
func fit(body, tail []slack.Block, max int) []slack.Block {
	if len(tail) >= max {
		tail = tail[len(tail)-max+1:]
	}
	if len(body)+len(tail) > max {
		keep := max - len(tail) - 1
		dropped := len(body) - keep
		body = append(body[:keep:keep], contextBlock(fmt.Sprintf("… %d more blocks not shown.", dropped)))
	}
	return append(body, tail...)
}
