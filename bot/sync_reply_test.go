package bot

import (
	"testing"
	"time"
)

// A click's response_url is used five times at most, and not once its
// life (Slack's 30 minutes, less a margin) is over; another click on the
// same message brings a fresh one.
func TestClickReplyKeepsToSlacksLimits(t *testing.T) {
	b := &Bot{clickReplies: map[string]clickReply{}}
	now := time.Now()
	b.keepClickReply(Action{Channel: "C1", MessageTS: "1.000001", ResponseURL: "https://hooks.example/1"}, now)
	for i := range clickReplyUses {
		if url, ok := b.takeClickReply("C1", "1.000001", now.Add(time.Duration(i)*time.Minute)); !ok || url != "https://hooks.example/1" {
			t.Fatalf("use %d: got %q, %v; want the click's url", i+1, url, ok)
		}
	}
	if _, ok := b.takeClickReply("C1", "1.000001", now.Add(6*time.Minute)); ok {
		t.Errorf("a sixth use was allowed; Slack takes %d", clickReplyUses)
	}
	if _, ok := b.takeClickReply("C1", "1.000002", now); ok {
		t.Error("a message nobody clicked has a url")
	}

	b.keepClickReply(Action{Channel: "C1", MessageTS: "1.000001", ResponseURL: "https://hooks.example/2"}, now)
	if url, ok := b.takeClickReply("C1", "1.000001", now.Add(clickReplyLife-time.Second)); !ok || url != "https://hooks.example/2" {
		t.Errorf("a new click's url: got %q, %v", url, ok)
	}
	if _, ok := b.takeClickReply("C1", "1.000001", now.Add(clickReplyLife+time.Second)); ok {
		t.Error("a url past its life was used")
	}
	if _, ok := b.clickReplies["C1/1.000001"]; ok {
		t.Error("a url past its life is still kept")
	}

	// A click without a url (one replayed from the inbox, which keeps
	// none) leaves nothing to use.
	b.keepClickReply(Action{Channel: "C1", MessageTS: "1.000003"}, now)
	if _, ok := b.takeClickReply("C1", "1.000003", now); ok {
		t.Error("a click without a response_url gave one")
	}
}
