package bot

import (
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/fakeslack"
)

// A halt is a message, and Slack takes alert blocks in modals only: the
// halt notice says what failed with a header and a section, the reason in
// both the blocks and the notification text, and no alert block; the same
// notice with an alert block in place of its header is refused.
func TestHaltNoticeWithoutAlertBlock(t *testing.T) {
	s := newRun(t, goldenRunID, chainInput("deliver-prd", "deliver-user-stories"), engine.StartOptions{})
	s.fail(1, "the agent reported an error: context window exceeded")
	blocks := Halt(s.r, s.view())
	if err := checkBlocks(blocks); err != nil {
		t.Fatalf("the halt notice is refused: %v", err)
	}
	for i, b := range blocks {
		if b.BlockType() == slack.MBTAlert {
			t.Fatalf("block %d is an alert block, which Slack refuses in a message", i)
		}
	}
	h, ok := blocks[0].(*slack.HeaderBlock)
	if !ok || h.Text.Text != "🛑 Run halted" {
		t.Fatalf("first block %#v, want the header 🛑 Run halted", blocks[0])
	}
	sec, ok := blocks[1].(*slack.SectionBlock)
	const reason = "FAILED - the agent reported an error: context window exceeded"
	if !ok || !strings.Contains(sec.Text.Text, reason) {
		t.Fatalf("second block %#v, want a section with %q", blocks[1], reason)
	}
	if text := FallbackText(blocks); !strings.Contains(text, "Run halted") || !strings.Contains(text, reason) {
		t.Errorf("notification text %q: want the halt and its reason", text)
	}

	alert := slack.NewAlertBlock(slack.NewTextBlockObject(slack.MarkdownType, sec.Text.Text, false, false))
	withAlert := append([]slack.Block{alert}, blocks[1:]...)
	vs := fakeslack.CheckBlocks(withAlert)
	if len(vs) != 1 || vs[0].Path != "blocks[0].type" || !strings.Contains(vs[0].Detail, "modals only") {
		t.Errorf("a halt with an alert block: %v, want it refused as modals only", vs)
	}
}
