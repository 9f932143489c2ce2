package bot

import (
	"fmt"
	"strings"

	"github.com/slack-go/slack"
)

// Block Kit's limits. Slack refuses a whole message or modal that breaks any
// of them (invalid_blocks), so a run's thread would silently miss a step:
// every text gonogo renders is cut to fit.
const (
	rdMaxMessageBlocks   = 50
	rdMaxModalBlocks     = 100
	rdMaxSectionText     = 3000
	rdMaxFieldText       = 2000
	rdMaxFields          = 10
	rdMaxHeaderText      = 150
	rdMaxContextElements = 10
	rdMaxContextText     = 3000
	rdMaxActionElements  = 25
	rdMaxButtonText      = 75
	rdMaxButtonValue     = 2000
	rdMaxURL             = 3000
	rdMaxID              = 255 // action_id, block_id, callback_id, external_id
	rdMaxModalTitle      = 24  // title, submit and close of a modal
	rdMaxMetadata        = 3000
	rdMaxLabel           = 2000
	rdMaxPlaceholder     = 150
	rdMaxConfirmTitle    = 100
	rdMaxConfirmText     = 300
	rdMaxConfirmButton   = 30
	rdMaxOptions         = 10 // radio buttons
	rdMaxOptionText      = 75 // an option's text and description
	rdMaxOptionValue     = 150
)

func rdMrkdwnText(text string) *slack.TextBlockObject {
	if strings.TrimSpace(text) == "" {
		text = "-"
	}
	return &slack.TextBlockObject{Type: slack.MarkdownType, Text: text, Verbatim: true}
}

func rdPlainText(text string) *slack.TextBlockObject {
	if strings.TrimSpace(text) == "" {
		text = "-"
	}
	return slack.NewTextBlockObject(slack.PlainTextType, text, true, false)
}

func rdSection(text string) *slack.SectionBlock {
	return slack.NewSectionBlock(rdMrkdwnText(rdCut(text, rdMaxSectionText)), nil, nil)
}

func rdHeader(text string) *slack.HeaderBlock {
	return slack.NewHeaderBlock(rdPlainText(rdPlain(text, rdMaxHeaderText)))
}

func rdContextBlock(text string) *slack.ContextBlock {
	return slack.NewContextBlock("", rdMrkdwnText(rdCut(text, rdMaxContextText)))
}

func rdFieldsSection(fields []string) *slack.SectionBlock {
	objs := make([]*slack.TextBlockObject, 0, min(len(fields), rdMaxFields))
	for _, f := range fields[:min(len(fields), rdMaxFields)] {
		objs = append(objs, rdMrkdwnText(rdCut(f, rdMaxFieldText)))
	}
	return slack.NewSectionBlock(nil, objs, nil)
}

// rdPackSections puts lines into as few sections as fit Slack's 3,000
// characters each, at most max of them; the lines that do not fit are
// counted by more on the last line.
func rdPackSections(title string, lines []string, max int, more func(n int) string) []slack.Block {
	const room = 100 // kept free in every section for the "more" line
	var out []slack.Block
	cur := title
	for i, l := range lines {
		l = rdCut(l, 1000)
		sep := ""
		if cur != "" {
			sep = "\n"
		}
		if rdTextLen(cur)+len(sep)+rdTextLen(l) <= rdMaxSectionText-room {
			cur += sep + l
			continue
		}
		if len(out)+1 >= max {
			cur += sep + more(len(lines)-i)
			break
		}
		out = append(out, rdSection(cur))
		cur = l
	}
	if cur != "" {
		out = append(out, rdSection(cur))
	}
	return out
}

// rdFit keeps a message within Slack's block count: when body and tail are
// too many together, body loses blocks from its end and says how many; the
// tail (buttons, decisions) always stays.
func rdFit(body, tail []slack.Block, max int) []slack.Block {
	if len(tail) >= max {
		tail = tail[len(tail)-max+1:]
	}
	if len(body)+len(tail) > max {
		keep := max - len(tail) - 1
		dropped := len(body) - keep
		body = append(body[:keep:keep], rdContextBlock(fmt.Sprintf("… %d more blocks not shown.", dropped)))
	}
	return append(body, tail...)
}
