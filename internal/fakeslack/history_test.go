package fakeslack_test

import (
	"reflect"
	"testing"

	"github.com/slack-go/slack"
)

func stepMeta(run string, step int) slack.MsgOption {
	return slack.MsgOptionMetadata(slack.SlackMetadata{EventType: "gonogo_step",
		EventPayload: map[string]any{"run": run, "step": step}})
}

// historyPages reads conversations.history page by page, following
// next_cursor, and checks that has_more agrees with it.
func historyPages(t *testing.T, api *slack.Client, params *slack.GetConversationHistoryParameters) []slack.Message {
	t.Helper()
	var got []slack.Message
	for pages := 0; ; pages++ {
		if pages == 10 {
			t.Fatal("next_cursor never ran out")
		}
		resp, err := api.GetConversationHistory(params)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, resp.Messages...)
		if resp.HasMore != (resp.ResponseMetaData.NextCursor != "") {
			t.Errorf("has_more %t with next_cursor %q", resp.HasMore, resp.ResponseMetaData.NextCursor)
		}
		if !resp.HasMore {
			return got
		}
		params.Cursor = resp.ResponseMetaData.NextCursor
	}
}

func historyTS(msgs []slack.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Timestamp)
	}
	return out
}

func TestConversationsHistoryPagesTopLevelMessagesWithMetadata(t *testing.T) {
	srv := newServer(t)
	api := webClient(srv)
	var ts []string // top-level messages of C1, oldest first
	for i := range 5 {
		_, m, err := api.PostMessage("C1", slack.MsgOptionText("post", false), stepMeta("r1", i))
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, m)
	}
	if _, _, err := api.PostMessage("C1", slack.MsgOptionText("reply", false), slack.MsgOptionTS(ts[1])); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.AddUserMessage("C1", ts[1], "U1", "a person's reply"); err != nil {
		t.Fatal(err)
	}
	user, err := srv.AddUserMessage("C1", "", "U1", "hi")
	if err != nil {
		t.Fatal(err)
	}
	ts = append(ts, user)
	if _, _, err := api.PostMessage("C2", slack.MsgOptionText("elsewhere", false)); err != nil {
		t.Fatal(err)
	}

	// Two at a time, newest first, following next_cursor.
	got := historyPages(t, api, &slack.GetConversationHistoryParameters{ChannelID: "C1", Limit: 2, IncludeAllMetadata: true})
	order := historyTS(got)
	want := []string{ts[5], ts[4], ts[3], ts[2], ts[1], ts[0]}
	if !reflect.DeepEqual(order, want) {
		t.Fatalf("history = %v, want %v (top level, newest first)", order, want)
	}
	if md := got[2].Metadata; md.EventType != "gonogo_step" || md.EventPayload["run"] != "r1" || md.EventPayload["step"] != float64(3) {
		t.Errorf("metadata of %s = %+v", got[2].Timestamp, md)
	}
	if got[4].ReplyCount != 2 || got[4].ThreadTimestamp != ts[1] {
		t.Errorf("thread root: reply_count %d, thread_ts %q", got[4].ReplyCount, got[4].ThreadTimestamp)
	}
	if got[0].User != "U1" || got[0].Metadata.EventType != "" {
		t.Errorf("the person's message = %+v", got[0])
	}

	// Without include_all_metadata Slack leaves metadata out.
	resp, err := api.GetConversationHistory(&slack.GetConversationHistoryParameters{ChannelID: "C1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Messages) != 6 || resp.HasMore || resp.Messages[1].Metadata.EventType != "" {
		t.Errorf("history without metadata: %d messages, has_more %t, metadata %+v",
			len(resp.Messages), resp.HasMore, resp.Messages[1].Metadata)
	}

	// oldest and latest are excluded unless inclusive.
	between := func(inclusive bool) []string {
		return historyTS(historyPages(t, api, &slack.GetConversationHistoryParameters{
			ChannelID: "C1", Oldest: ts[1], Latest: ts[3], Inclusive: inclusive}))
	}
	if got := between(false); !reflect.DeepEqual(got, []string{ts[2]}) {
		t.Errorf("between %s and %s = %v, want %v", ts[1], ts[3], got, ts[2:3])
	}
	if got := between(true); !reflect.DeepEqual(got, []string{ts[3], ts[2], ts[1]}) {
		t.Errorf("between %s and %s inclusive = %v", ts[1], ts[3], got)
	}

	if _, err := api.GetConversationHistory(&slack.GetConversationHistoryParameters{ChannelID: "C1", Cursor: "bogus"}); err == nil || err.Error() != "invalid_cursor" {
		t.Errorf("a bad cursor: err = %v, want invalid_cursor", err)
	}
}

func TestConversationsRepliesMetadataOnlyWhenAsked(t *testing.T) {
	srv := newServer(t)
	api := webClient(srv)
	_, root, err := api.PostMessage("C1", slack.MsgOptionText("root", false), stepMeta("r1", 0))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.PostMessage("C1", slack.MsgOptionText("reply", false), slack.MsgOptionTS(root), stepMeta("r1", 1)); err != nil {
		t.Fatal(err)
	}
	for _, with := range []bool{false, true} {
		msgs, _, _, err := api.GetConversationReplies(&slack.GetConversationRepliesParameters{
			ChannelID: "C1", Timestamp: root, IncludeAllMetadata: with})
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != 2 {
			t.Fatalf("replies = %d messages, want 2", len(msgs))
		}
		md := msgs[1].Metadata
		if with && (md.EventType != "gonogo_step" || md.EventPayload["step"] != float64(1)) {
			t.Errorf("include_all_metadata: the reply's metadata = %+v", md)
		}
		if !with && md.EventType != "" {
			t.Errorf("without include_all_metadata the reply carries %+v", md)
		}
	}
}

func TestDuplicatesListsPostsMadeTwice(t *testing.T) {
	srv := newServer(t)
	api := webClient(srv)
	post := func(channel string, opts ...slack.MsgOption) string {
		t.Helper()
		_, ts, err := api.PostMessage(channel, append(opts, slack.MsgOptionText("step", false))...)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	post("C1", stepMeta("r1", 1))
	post("C1", stepMeta("r1", 2))
	post("C2", stepMeta("r1", 1)) // another channel: another post
	post("C1")
	post("C1")
	if d := srv.Duplicates(); len(d) != 0 {
		t.Fatalf("duplicates = %+v, want none", d)
	}
	// The same metadata, its payload's keys in another order.
	first := post("C1", stepMeta("r1", 1))
	_, again, err := api.PostMessage("C1", slack.MsgOptionText("step", false), slack.MsgOptionMetadata(slack.SlackMetadata{
		EventType: "gonogo_step", EventPayload: map[string]any{"step": 2, "run": "r1"}}))
	if err != nil {
		t.Fatal(err)
	}
	d := srv.Duplicates()
	if len(d) != 4 {
		t.Fatalf("duplicates = %d messages, want 4 (two posts made twice)", len(d))
	}
	if d[1].TS != first || d[3].TS != again || d[0].Channel != "C1" || d[2].Channel != "C1" {
		t.Errorf("duplicates = %v %v %v %v", d[0].TS, d[1].TS, d[2].TS, d[3].TS)
	}
}
