package bot

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/slack-go/slack/socketmode"
)

// TestScrub: the inbox keeps no verification token and no interaction's
// response_url, keeps a slash command's response_url, and what it keeps
// reads back as the same request.
func TestScrub(t *testing.T) {
	for _, tc := range []struct {
		typ, payload string
		gone, kept   []string
	}{
		{socketmode.RequestTypeSlashCommands,
			`{"token":"verif-123","command":"/gonogo","text":"chain a -> b","user_id":"U1","channel_id":"C1","response_url":"https://hooks.slack.com/commands/x"}`,
			[]string{"verif-123"}, []string{"https://hooks.slack.com/commands/x", "chain a -> b"}},
		{socketmode.RequestTypeInteractive,
			`{"type":"block_actions","token":"verif-123","user":{"id":"U1"},"response_url":"https://hooks.slack.com/actions/x","actions":[{"action_id":"gonogo_approve","value":"r/1/1"}]}`,
			[]string{"verif-123", "https://hooks.slack.com/actions/x"}, []string{"gonogo_approve", "r/1/1"}},
		{socketmode.RequestTypeInteractive,
			`{"type":"view_submission","token":"verif-123","user":{"id":"U1"},"response_urls":[{"response_url":"https://hooks.slack.com/app/x"}],"view":{"id":"V1"}}`,
			[]string{"verif-123", "https://hooks.slack.com/app/x"}, []string{"view_submission", "V1"}},
		{socketmode.RequestTypeEventsAPI,
			`{"token":"verif-123","team_id":"T1","type":"event_callback","event":{"type":"app_mention","text":"<@UBOT> run"}}`,
			[]string{"verif-123"}, []string{"app_mention", "<@UBOT> run"}},
	} {
		out, err := scrub(tc.typ, json.RawMessage(tc.payload))
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range tc.gone {
			if strings.Contains(string(out), g) {
				t.Errorf("%s: %q is still kept: %s", tc.typ, g, out)
			}
		}
		for _, k := range tc.kept {
			if !strings.Contains(string(out), k) {
				t.Errorf("%s: %q was lost: %s", tc.typ, k, out)
			}
		}
		raw, _ := json.Marshal(keptEnvelope{Type: tc.typ, EnvelopeID: "e1", Payload: out})
		if _, err := decodeEnvelope(raw); err != nil {
			t.Errorf("%s: kept envelope does not read back: %v", tc.typ, err)
		}
	}
	if _, err := scrub(socketmode.RequestTypeInteractive, json.RawMessage(`[1]`)); err == nil {
		t.Error("a payload that is not an object was kept")
	}
}
