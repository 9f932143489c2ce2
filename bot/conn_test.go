package bot

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/slack-go/slack"
)

func TestConnectionErrorsNameTheCauseAndNoToken(t *testing.T) {
	b := &Bot{cfg: Config{AppToken: "xapp-1-secret", BotToken: "xoxb-2-secret"}}
	for _, tc := range []struct {
		err     error
		text    string
		refused bool
	}{
		{slack.SlackErrorResponse{Err: "invalid_auth"}, "invalid_auth", true},
		{fmt.Errorf("open: %w", slack.SlackErrorResponse{Err: "token_revoked"}), "token_revoked", true},
		{slack.SlackErrorResponse{Err: "missing_scope", Needed: "connections:write", Provided: "chat:write"},
			"missing_scope (needed: connections:write; provided: chat:write)", false},
		{slack.SlackErrorResponse{Err: "not_allowed_token_type"}, "not_allowed_token_type", false},
		{errors.New(`Post "http://127.0.0.1:9/api/auth.test?token=xoxb-2-secret": dial tcp 127.0.0.1:9: connect: connection refused`),
			`Post "http://127.0.0.1:9/api/auth.test?token=[token]": dial tcp 127.0.0.1:9: connect: connection refused`, false},
		{errors.New("lookup slack.com: no such host (invalid_auth)"), "lookup slack.com: no such host (invalid_auth)", false},
	} {
		if got := b.connErrorText(tc.err); got != tc.text {
			t.Errorf("connErrorText(%v) = %q, want %q", tc.err, got, tc.text)
		}
		if _, refused := refusedBySlack(tc.err); refused != tc.refused {
			t.Errorf("refusedBySlack(%v) = %v, want %v", tc.err, refused, tc.refused)
		}
	}
}

func TestBackoffDoublesUpToItsCap(t *testing.T) {
	var bo backoff
	var got []time.Duration
	for range 9 {
		got = append(got, bo.wait())
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second,
		32 * time.Second, time.Minute, time.Minute, time.Minute}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("waits = %v, want %v", got, want)
		}
	}
	bo.reset()
	if w := bo.wait(); w != time.Second {
		t.Errorf("after a reset the wait is %s, want 1s", w)
	}
}
