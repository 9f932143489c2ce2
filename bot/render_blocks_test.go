package bot

import (
	"fmt"
	"testing"

	"github.com/slack-go/slack"
)

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
	if err := CheckBlocks(got); err != nil {
		t.Error(err)
	}
	if got := fit(body[:3], tail, maxMessageBlocks); len(got) != 4 {
		t.Errorf("fit changed a message within the limit: %d blocks", len(got))
	}
}
