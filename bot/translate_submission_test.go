package bot

import (
	"errors"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

func TestParseSubmission(t *testing.T) {
	reply := ReplyRef{TS: "1743854500.000400", File: "F0NEW"}
	tests := []struct {
		name   string
		cb     slack.InteractionCallback
		want   Submission
		wantNo string // a field that must be empty
	}{
		{
			"edit",
			viewSubmission(t, ModalEdit, testRef.Value(), editValues("# PRD\n\nShip the fix.\n"), nil),
			Submission{Kind: SubmitEdit, Ref: testRef, Artifact: "# PRD\n\nShip the fix.\n"},
			"",
		},
		{
			"edit of exactly 3,000 characters, multibyte",
			viewSubmission(t, ModalEdit, testRef.Value(), editValues(strings.Repeat("é", 3000)), nil),
			Submission{Kind: SubmitEdit, Ref: testRef, Artifact: strings.Repeat("é", 3000)},
			"",
		},
		{
			"edit from a reply with a file",
			viewSubmission(t, ModalEditReply, testRef.Value(), map[string]any{BlockReply: map[string]any{InputReply: map[string]any{
				"type": "radio_buttons", "selected_option": map[string]any{"value": reply.Value(),
					"text": map[string]any{"type": "plain_text", "text": "your reply at 12:01"}}}}}, nil),
			Submission{Kind: SubmitEditReply, Ref: testRef, Reply: reply},
			"",
		},
		{
			"redo with feedback",
			viewSubmission(t, ModalRedo, testRef.Value(), map[string]any{BlockFeedback: map[string]any{InputFeedback: inputValue("  shorter, please\n")}}, nil),
			Submission{Kind: SubmitRedo, Ref: testRef, Feedback: "shorter, please"},
			"",
		},
		{
			"redo without feedback (null value)",
			viewSubmission(t, ModalRedo, testRef.Value(), map[string]any{BlockFeedback: map[string]any{InputFeedback: inputValue(nil)}}, nil),
			Submission{Kind: SubmitRedo, Ref: testRef},
			"",
		},
		{
			"save as workflow, the name trimmed",
			viewSubmission(t, ModalSaveWorkflow, testRef.Value(), saveValues(" weekly-prd-review\n"), nil),
			Submission{Kind: SubmitSaveWorkflow, Ref: testRef, Name: "weekly-prd-review"},
			"",
		},
		{
			"redo without the optional block",
			viewSubmission(t, ModalRedo, testRef.Value(), map[string]any{}, nil),
			Submission{Kind: SubmitRedo, Ref: testRef},
			"",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSubmission(tt.cb)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			want.User, want.Team, want.ViewID, want.ViewHash = testUser, testTeam, "V0EDIT", "1743854400.AbCd"
			if got != want {
				t.Errorf("got  %#v\nwant %#v", got, want)
			}
			if got.Key() != "slack-view:V0EDIT:1743854400.AbCd" {
				t.Errorf("Key() = %q", got.Key())
			}
		})
	}
}

func TestReplyRef(t *testing.T) {
	for _, r := range []ReplyRef{{TS: "1743854500.000400"}, {TS: "1743854500.000400", File: "F0NEW"}} {
		got, err := ParseReplyRef(r.Value())
		if err != nil || got != r {
			t.Errorf("ParseReplyRef(%q) = %v, %v", r.Value(), got, err)
		}
	}
}

// A modal's field errors are keyed by the input block they are about.
func TestSubmissionFieldBlock(t *testing.T) {
	tests := []struct {
		cb    slack.InteractionCallback
		block string
	}{
		{viewSubmission(t, ModalEdit, testRef.Value(), editValues(""), nil), BlockArtifact},
		{viewSubmission(t, ModalEdit, testRef.Value(), editValues(strings.Repeat("a", 3001)), nil), BlockArtifact},
		{viewSubmission(t, ModalRedo, testRef.Value(), map[string]any{BlockFeedback: map[string]any{InputFeedback: inputValue("\x00")}}, nil), BlockFeedback},
		{viewSubmission(t, ModalEditReply, testRef.Value(), map[string]any{BlockReply: map[string]any{InputReply: map[string]any{}}}, nil), BlockReply},
		{viewSubmission(t, ModalSaveWorkflow, testRef.Value(), saveValues("Bad Name"), nil), BlockWorkflowName},
	}
	for _, tt := range tests {
		_, err := ParseSubmission(tt.cb)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Block != tt.block {
			t.Errorf("%s modal: error %v, want a field error on %s", tt.cb.View.CallbackID, err, tt.block)
		}
	}
}
