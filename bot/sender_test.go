package bot

import (
	"context"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/internal/fakeslack"
	"github.com/gonogo/gonogo/internal/hangguard"
)

const senderChannel = "C0SENDER"

func testSender(t *testing.T) (*sender, *fakeslack.Server, string, context.Context) {
	t.Helper()
	srv := fakeslack.New()
	t.Cleanup(func() {
		for _, v := range srv.Violations() {
			t.Errorf("fake Slack violation: %s %s: %s", v.Method, v.Path, v.Detail)
		}
		srv.Close()
	})
	api := slack.New(srv.BotToken(), slack.OptionAPIURL(srv.APIURL()))
	ctx := hangguard.Context(t)
	s := newSender(api, NewMetrics(), 0, newUpdateBudget(50, 10, time.Minute, time.Second))
	thread, err := s.post(ctx, senderChannel, "", "run header", nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, srv, thread, ctx
}

// TestUploadSharesOnce: when the answer to the share is lost after Slack
// shared the file, the upload does not share it again (nor upload its
// bytes again); when the share failed before Slack acted, it is shared on
// the next try. Either way the thread holds the artifact once.
func TestUploadSharesOnce(t *testing.T) {
	for _, tc := range []struct {
		name      string
		fault     func(srv *fakeslack.Server)
		completes int
	}{
		{"answer lost after the share", func(srv *fakeslack.Server) { srv.LoseReply("files.completeUploadExternal", 1) }, 1},
		{"share failed before Slack acted", func(srv *fakeslack.Server) { srv.FailStatus("files.completeUploadExternal", 1, 503) }, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, srv, thread, ctx := testSender(t)
			tc.fault(srv)
			if err := s.upload(ctx, turnWait, senderChannel, thread, "01-deliver-prd.md", []byte("# PRD\n")); err != nil {
				t.Fatal(err)
			}
			if fs := srv.Files(senderChannel, thread); len(fs) != 1 || string(fs[0].Content) != "# PRD\n" {
				t.Fatalf("files in the thread: %+v", fs)
			}
			if n := len(srv.Calls("files.completeUploadExternal")); n != tc.completes {
				t.Errorf("files.completeUploadExternal called %d times, want %d", n, tc.completes)
			}
			if n := len(srv.Calls("files.getUploadURLExternal")); n != 1 {
				t.Errorf("files.getUploadURLExternal called %d times, want 1", n)
			}
			if n := len(srv.Calls("files.info")); n != 1 {
				t.Errorf("files.info called %d times, want 1 (before sharing again)", n)
			}
		})
	}
}

// TestBare429IsWaitedOutWithBackoff: a 429 without Retry-After is not
// dropped and not answered by calling again at once: the waits between
// tries grow.
func TestBare429IsWaitedOutWithBackoff(t *testing.T) {
	s, srv, thread, ctx := testSender(t)
	srv.RateLimitBare("chat.postEphemeral", 2)
	if err := s.ephemeral(ctx, senderChannel, thread, "U0PERSON", "only you see this", nil); err != nil {
		t.Fatal(err)
	}
	calls := srv.Calls("chat.postEphemeral")
	if len(calls) != 3 || calls[2].Status != 200 {
		t.Fatalf("calls: %+v", calls)
	}
	// Lower bounds only, which a loaded machine only lengthens: the first
	// wait is a second, the second twice that (a wait that did not grow
	// would be about a second).
	first, second := calls[1].Time.Sub(calls[0].Time), calls[2].Time.Sub(calls[1].Time)
	if first < 900*time.Millisecond || second < 1900*time.Millisecond {
		t.Errorf("waits after 429s without Retry-After: %v then %v; want at least 1s, then at least 2s", first, second)
	}
	if _, limited := s.metrics.Calls("chat.postEphemeral"); limited != 2 {
		t.Errorf("metrics count %d 429s, want 2", limited)
	}
}
