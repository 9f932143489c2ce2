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
	maxMessageBlocks  = 50
	maxSectionText    = 3000
	maxFieldText      = 2000
	maxFields         = 10
	maxHeaderText     = 150
	maxContextText    = 3000
	maxButtonValue    = 2000
	maxModalTitle     = 24 // title, submit and close of a modal
	maxConfirmTitle   = 100
	maxConfirmText    = 300
	maxConfirmButton  = 30
	maxOptions        = 10 // radio buttons
	maxActionElements = 25 // elements of an actions block
	maxOptionText     = 75 // an option's text and description
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

// fit keeps a message within Slack's block count (blockCount): when body
// and tail are too many together, body loses blocks from its end and says
// how many; the tail (buttons, decisions) always stays.
func fit(body, tail []slack.Block, max int) []slack.Block {
	if len(tail) >= max {
		tail = tail[len(tail)-max+1:]
	}
	if blockCount(body)+blockCount(tail) > max {
		room := max - blockCount(tail) - 1
		keep, n := 0, 0
		for keep < len(body) && n+blockCount(body[keep:keep+1]) <= room {
			n += blockCount(body[keep : keep+1])
			keep++
		}
		dropped := len(body) - keep
		body = append(body[:keep:keep], contextBlock(fmt.Sprintf("… %d more blocks not shown.", dropped)))
	}
	return append(body, tail...)
}

// Limits of the blocks for rendered text. A markdown block's 12,000
// characters are for every markdown block of a message together; a table
// takes at most 100 rows (its header row among them) of 20 cells, and a
// message takes one table.
const (
	maxMarkdownText = 12000
	maxTableRows    = 100
	maxTableCells   = 20
)

// markdownBlock is text Slack renders as Markdown: defang it first when it
// holds anything gonogo did not write.
func markdownBlock(text string) *slack.MarkdownBlock {
	if strings.TrimSpace(text) == "" {
		text = "-"
	}
	return slack.NewMarkdownBlock("", cutPlain(text, maxMarkdownText))
}

// textCell is a table cell of raw text, which Slack shows as it is: user
// text in it is cleaned, put on one line and defanged.
func textCell(text string, max int) *slack.TableRawTextCell {
	text = cutPlain(defang(clean(oneLine(text, max*4+16))), max)
	if text == "" {
		text = "-"
	}
	return slack.NewTableRawTextCell(text)
}

// headCell is a table's column title, in bold.
func headCell(title string) *slack.TableRichTextCell {
	return slack.NewTableRichTextCell(slack.NewRichTextSection(
		slack.NewRichTextSectionTextElement(title, &slack.RichTextSectionTextStyle{Bold: true})))
}

// cutPlain shortens text that is not mrkdwn to at most max characters,
// ending in an ellipsis when it cuts. A cut that parts a defanged < or &
// from its word joiner drops it too.
func cutPlain(s string, max int) string {
	if textLen(s) <= max {
		return s
	}
	return strings.TrimRight(s[:prefixLen(s, max-1)], "<&]@") + "…"
}

// wordJoiner is invisible and joins what it sits between: after a < it
// keeps any Slack token from forming, whatever parses the text.
const wordJoiner = "\u2060"

// defang keeps text that Slack renders as Markdown (a markdown block) or
// may parse (a table's raw text, a thread's status) from becoming markup,
// while a person reads it unchanged. Slack's markdown block translates
// standard Markdown into Slack's own markup, so an artifact could
// otherwise write <!channel>, <!here>, <@U…>, <#C…>, <!subteam^…> or an
// entity that decodes into one, a link whose label hides where it goes
// ([your bank](https://evil.example)) or an image link: a word joiner
// after every < and & means no token or entity can form; after every ]
// no inline, reference or image link can, so an address shows as itself;
// and after the @ of @here, @channel and @everyone. Backslash escapes
// would not do: whether Slack reads them before or after its own markup
// is not documented.
func defang(s string) string {
	if !strings.ContainsAny(s, "<&]@") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); i++ {
		c := s[i]
		b.WriteByte(c)
		switch c {
		case '<', '&', ']':
			b.WriteString(wordJoiner)
		case '@':
			if broadcast(s[i+1:]) {
				b.WriteString(wordJoiner)
			}
		}
	}
	return b.String()
}

// broadcast reports whether s starts with the name of a mention that
// notifies a whole channel or workspace.
func broadcast(s string) bool {
	for _, w := range []string{"here", "channel", "everyone"} {
		if len(s) >= len(w) && strings.EqualFold(s[:len(w)], w) {
			return true
		}
	}
	return false
}
