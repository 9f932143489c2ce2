package bot

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/gonogo/gonogo/engine"
)

// Payloads are built as the JSON Slack sends and decoded with slack-go, so
// the tests read what the bot will read, field names and all.

const (
	trRun  = engine.RunID("20250405-120000-a1b2c3")
	trUser = "U0ANA"
	trTeam = "T0ACME"
	trChan = "C0RUNS"
)

var trRef = StepRef{Run: trRun, Step: 2, Attempt: 1}

func trCommand(text string) slack.SlashCommand {
	return slack.SlashCommand{
		Command: "/gonogo", Text: text,
		UserID: trUser, TeamID: trTeam, ChannelID: trChan,
		ResponseURL: "https://hooks.slack.com/commands/T0ACME/1/x", TriggerID: "111.222.abc",
	}
}

// trDecode turns a JSON-shaped map into the slack-go type Slack's payload
// decodes into.
func trDecode[T any](t testing.TB, m map[string]any) T {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

func trButton(actionID, value string) map[string]any {
	return map[string]any{
		"action_id": actionID, "block_id": "step-2", "type": "button", "value": value,
		"text":      map[string]any{"type": "plain_text", "text": "Approve"},
		"action_ts": "1743854400.123456",
	}
}

func trActionPayload(actionID, value string) map[string]any {
	return map[string]any{
		"type":       "block_actions",
		"api_app_id": "A0GONOGO",
		"user":       map[string]any{"id": trUser, "username": "ana", "name": "ana", "team_id": trTeam},
		"team":       map[string]any{"id": trTeam, "domain": "acme"},
		"channel":    map[string]any{"id": trChan, "name": "runs"},
		"container": map[string]any{"type": "message", "message_ts": "1743854300.000200",
			"channel_id": trChan, "is_ephemeral": false, "thread_ts": "1743854000.000100"},
		"message": map[string]any{"type": "message", "ts": "1743854300.000200",
			"thread_ts": "1743854000.000100", "text": "Step 2 of 3: deliver-prd"},
		"trigger_id":   "111.222.abc",
		"response_url": "https://hooks.slack.com/actions/T0ACME/1/x",
		"actions":      []any{trButton(actionID, value)},
		"state":        map[string]any{"values": map[string]any{}},
	}
}

func trAction(t testing.TB, actionID, value string, edit func(m map[string]any)) slack.InteractionCallback {
	m := trActionPayload(actionID, value)
	if edit != nil {
		edit(m)
	}
	return trDecode[slack.InteractionCallback](t, m)
}

func trInput(value any) map[string]any {
	return map[string]any{"type": "plain_text_input", "value": value}
}

func trViewPayload(callbackID, metadata string, values map[string]any) map[string]any {
	return map[string]any{
		"type":       "view_submission",
		"api_app_id": "A0GONOGO",
		"team":       map[string]any{"id": trTeam, "domain": "acme"},
		"user":       map[string]any{"id": trUser, "username": "ana", "team_id": trTeam},
		"trigger_id": "111.222.abc",
		"view": map[string]any{
			"id": "V0EDIT", "team_id": trTeam, "type": "modal", "callback_id": callbackID,
			"private_metadata": metadata, "hash": "1743854400.AbCd",
			"state": map[string]any{"values": values},
		},
	}
}

func trView(t testing.TB, callbackID, metadata string, values map[string]any, edit func(m map[string]any)) slack.InteractionCallback {
	m := trViewPayload(callbackID, metadata, values)
	if edit != nil {
		edit(m)
	}
	return trDecode[slack.InteractionCallback](t, m)
}

func trEditValues(artifact any) map[string]any {
	return map[string]any{BlockArtifact: map[string]any{InputArtifact: trInput(artifact)}}
}

func trSaveValues(name any) map[string]any {
	return map[string]any{BlockWorkflowName: map[string]any{InputWorkflowName: trInput(name)}}
}

func trMentionPayload(text string, files ...map[string]any) map[string]any {
	m := map[string]any{
		"type": "app_mention", "user": trUser, "text": text, "ts": "1743854400.000300",
		"channel": trChan, "event_ts": "1743854400.000300",
	}
	if len(files) > 0 {
		fs := make([]any, len(files))
		for i, f := range files {
			fs[i] = f
		}
		m["files"] = fs
	}
	return m
}

func trMention(t testing.TB, text string, edit func(m map[string]any), files ...map[string]any) *slackevents.AppMentionEvent {
	m := trMentionPayload(text, files...)
	if edit != nil {
		edit(m)
	}
	ev := trDecode[slackevents.AppMentionEvent](t, m)
	return &ev
}

func trFile(name, mimetype, filetype string, size int) map[string]any {
	return map[string]any{
		"id": "F0PLAN", "name": name, "title": name, "mimetype": mimetype, "filetype": filetype,
		"size": size, "url_private": "https://files.slack.com/files-pri/T0ACME-F0PLAN/" + name,
		"url_private_download": "https://files.slack.com/files-pri/T0ACME-F0PLAN/download/" + name,
	}
}

var trPlanFile = trFile("plan.md", "text/plain", "markdown", 4200)

func TestParseCommand(t *testing.T) {
	chain := func(src string, names []string, f engine.Flags, ctx string) engine.ChainExpr {
		// The context is explicit when it follows a lone "--" as written.
		explicit := ctx != "" && strings.Contains(src, "-- "+ctx)
		return engine.ChainExpr{Source: src, Names: names, Flags: f, Context: ctx, ExplicitContext: explicit}
	}
	tests := []struct {
		name string
		text string
		want Command
	}{
		{"empty is help", "", Command{Kind: CmdHelp}},
		{"help", "help", Command{Kind: CmdHelp}},
		{"help in capitals, with a topic", "HELP chain", Command{Kind: CmdHelp}},
		{"--help", " --help", Command{Kind: CmdHelp}},
		{"runs", "runs", Command{Kind: CmdRuns}},
		{"runs with spaces around", "  runs \u00a0", Command{Kind: CmdRuns}},
		{
			"chain with flag and explicit context",
			"chain deliver-prd -> deliver-user-stories --thread -- mobile checkout",
			Command{Kind: CmdChain, Flags: engine.Flags{Thread: true}, Context: "mobile checkout",
				Chain: chain("deliver-prd -> deliver-user-stories --thread -- mobile checkout",
					[]string{"deliver-prd", "deliver-user-stories"}, engine.Flags{Thread: true}, "mobile checkout")},
		},
		{
			"capitalized by a phone, entities decoded, implicit context",
			"Chain deliver-prd, deliver-user-stories --auto mobile &amp; web &lt;beta&gt;",
			Command{Kind: CmdChain, Flags: engine.Flags{Auto: true}, Context: "mobile & web <beta>",
				Chain: chain("deliver-prd, deliver-user-stories --auto mobile & web <beta>",
					[]string{"deliver-prd", "deliver-user-stories"}, engine.Flags{Auto: true}, "mobile & web <beta>")},
		},
		{
			"links and mentions in the context",
			"chain deliver-prd -- see <https://example.com/spec|the spec> and <https://example.com|example.com> with <@U0BOB|bob> in <#C0GEN|general>",
			Command{Kind: CmdChain, Context: "see the spec (https://example.com/spec) and example.com with @bob in #general",
				Chain: chain("deliver-prd -- see the spec (https://example.com/spec) and example.com with @bob in #general",
					[]string{"deliver-prd"}, engine.Flags{}, "see the spec (https://example.com/spec) and example.com with @bob in #general")},
		},
		{
			"NBSP, zero-width space and smart quotes",
			"chain\u00a0“deliver-prd”\u00a0->\u200bdeliver-user-stories",
			Command{Kind: CmdChain,
				Chain: chain("“deliver-prd”\u00a0->\u200bdeliver-user-stories",
					[]string{"deliver-prd", "deliver-user-stories"}, engine.Flags{}, "")},
		},
		{
			"a keyboard's dashes: —dry-run is the flag, a lone — is --",
			"chain deliver-prd —dry-run — ship it --auto",
			Command{Kind: CmdChain, Flags: engine.Flags{DryRun: true}, Context: "ship it --auto",
				Chain: chain("deliver-prd —dry-run -- ship it --auto",
					[]string{"deliver-prd"}, engine.Flags{DryRun: true}, "ship it --auto")},
		},
		{
			"run with flags, args and context",
			`run release-train --dry-run --arg topic="mobile checkout" --arg=owner=ana -- ship by Friday`,
			Command{Kind: CmdRun, Workflow: "release-train", Flags: engine.Flags{DryRun: true},
				Args: map[string]string{"topic": "mobile checkout", "owner": "ana"}, Context: "ship by Friday"},
		},
		{
			"run typed on a phone: smart quotes and dashes",
			"Run release-2 —auto —arg topic=“mobile checkout” — note: keep --thread as text",
			Command{Kind: CmdRun, Workflow: "release-2", Flags: engine.Flags{Auto: true},
				Args: map[string]string{"topic": "mobile checkout"}, Context: "note: keep --thread as text"},
		},
		{
			"run with an empty argument and every flag",
			"run wf --auto --force-auto --dry-run --thread --arg note=",
			Command{Kind: CmdRun, Workflow: "wf", Flags: engine.Flags{Auto: true, ForceAuto: true, DryRun: true, Thread: true},
				Args: map[string]string{"note": ""}},
		},
		{
			"run with a quoted arg pair and an apostrophe in a value",
			`run wf --arg "title=don't panic" --arg who=ana's`,
			Command{Kind: CmdRun, Workflow: "wf", Args: map[string]string{"title": "don't panic", "who": "ana's"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCommand(trCommand(tt.text))
			if err != nil {
				t.Fatalf("ParseCommand(%q): %v", tt.text, err)
			}
			want := tt.want
			want.Slash, want.User, want.Team, want.Channel = "/gonogo", trUser, trTeam, trChan
			want.ResponseURL, want.TriggerID = "https://hooks.slack.com/commands/T0ACME/1/x", "111.222.abc"
			want.Text = got.Text // checked by TestSlackText
			if !reflect.DeepEqual(got, want) {
				t.Errorf("ParseCommand(%q)\n got %#v\nwant %#v", tt.text, got, want)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	h := Help("/pm")
	for _, want := range []string{"/pm chain EXPR", "/pm run WORKFLOW", "/pm runs", "/pm help", "--auto", "--dry-run", "--thread", ".md"} {
		if !strings.Contains(h, want) {
			t.Errorf("Help lacks %q:\n%s", want, h)
		}
	}
	if got := Usage("", CmdChain); !strings.HasPrefix(got, "/gonogo chain EXPR") {
		t.Errorf("Usage(\"\", chain) = %q", got)
	}
	// A custom slash command name is used in the answer to bad input.
	sc := trCommand("frobnicate")
	sc.Command = "/pm"
	_, err := ParseCommand(sc)
	var ie *InputError
	if !errors.As(err, &ie) || !strings.Contains(ie.Problem, "/pm takes chain") || !strings.Contains(ie.Usage, "/pm runs") {
		t.Errorf("unknown subcommand of /pm: %v", err)
	}
}

func TestSlackText(t *testing.T) {
	tests := []struct{ in, want, wantDropped string }{
		{"a &lt;b&gt; &amp; c", "a <b> & c", ""},
		{"&amp;lt; stays typed", "&lt; stays typed", ""},
		{"<https://x.io/a?b=1&amp;c=2>", "https://x.io/a?b=1&c=2", ""},
		{"<https://x.io|x.io> <http://y.io/|y.io/> <mailto:a@b.io|a@b.io>", "x.io y.io/ a@b.io", ""},
		{"<https://x.io/spec|the spec>", "the spec (https://x.io/spec)", ""},
		{"<@U0BOT> run <@U0ANA|ana> <@W0BOB>", "@U0BOT run @ana @W0BOB", " run  "},
		{"<#C0GEN|general> <#C0OPS>", "#general #C0OPS", ""},
		{"<!here> <!channel> <!subteam^S0PM|@pm-team> <!subteam^S0QA> <!date^1392734382^{date}|Feb 18>", "@here @channel @pm-team @S0QA Feb 18", ""},
		{"a < b > c", "a < b > c", ""}, // not markup Slack writes, kept as is
		{"x <y", "x <y", ""},
		{"<b>bold</b> <1:2>", "<b>bold</b> <1:2>", ""},
		{"<<@U1>>", "<@U1>", "<>"},
	}
	for _, tt := range tests {
		if got := trSlackText(tt.in, false); got != tt.want {
			t.Errorf("trSlackText(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if tt.wantDropped != "" {
			if got := trSlackText(tt.in, true); got != tt.wantDropped {
				t.Errorf("trSlackText(%q, drop mentions) = %q, want %q", tt.in, got, tt.wantDropped)
			}
		}
	}
}

func TestParseAction(t *testing.T) {
	for id, kind := range map[string]ActionKind{
		ActionApprove: ActApprove, ActionEdit: ActEdit, ActionSkip: ActSkip, ActionRedo: ActRedo,
		ActionAbort: ActAbort, ActionCancel: ActCancel, ActionSaveWorkflow: ActSaveWorkflow,
	} {
		t.Run(id, func(t *testing.T) {
			got, err := ParseAction(trAction(t, id, trRef.Value(), nil))
			if err != nil {
				t.Fatal(err)
			}
			want := Action{
				Kind: kind, Ref: trRef, User: trUser, Team: trTeam, Channel: trChan,
				MessageTS: "1743854300.000200", ThreadTS: "1743854000.000100", ActionTS: "1743854400.123456",
				TriggerID: "111.222.abc", ResponseURL: "https://hooks.slack.com/actions/T0ACME/1/x",
			}
			if got != want {
				t.Errorf("got  %#v\nwant %#v", got, want)
			}
			if got.Key() != "slack-action:T0ACME:U0ANA:1743854400.123456" {
				t.Errorf("Key() = %q", got.Key())
			}
		})
	}

	t.Run("a user of another organization in a shared channel", func(t *testing.T) {
		got, err := ParseAction(trAction(t, ActionApprove, trRef.Value(), func(m map[string]any) {
			m["user"] = map[string]any{"id": "U0EVE", "team_id": "T0OTHER"}
		}))
		if err != nil {
			t.Fatal(err)
		}
		if got.Team != "T0OTHER" || got.User != "U0EVE" {
			t.Errorf("user %s of team %s, want U0EVE of T0OTHER", got.User, got.Team)
		}
	})

	t.Run("fields from the message when the container lacks them", func(t *testing.T) {
		got, err := ParseAction(trAction(t, ActionSkip, trRef.Value(), func(m map[string]any) {
			m["container"] = map[string]any{"type": "message"}
		}))
		if err != nil {
			t.Fatal(err)
		}
		if got.MessageTS != "1743854300.000200" || got.ThreadTS != "1743854000.000100" || got.Channel != trChan {
			t.Errorf("got %#v", got)
		}
	})
}

func TestActionKindDecision(t *testing.T) {
	for _, k := range []ActionKind{ActApprove, ActEdit, ActSkip, ActRedo, ActAbort} {
		d, ok := k.Decision()
		if !ok {
			t.Fatalf("%s is not a decision", k)
		}
		if _, err := engine.ParseDecisionKind(string(d)); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
	for _, k := range []ActionKind{ActCancel, ActSaveWorkflow} {
		if _, ok := k.Decision(); ok {
			t.Errorf("%s is a decision", k)
		}
	}
}

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
			trView(t, ModalEdit, trRef.Value(), trEditValues("# PRD\n\nShip the fix.\n"), nil),
			Submission{Kind: SubmitEdit, Ref: trRef, Artifact: "# PRD\n\nShip the fix.\n"},
			"",
		},
		{
			"edit of exactly 3,000 characters, multibyte",
			trView(t, ModalEdit, trRef.Value(), trEditValues(strings.Repeat("é", 3000)), nil),
			Submission{Kind: SubmitEdit, Ref: trRef, Artifact: strings.Repeat("é", 3000)},
			"",
		},
		{
			"edit from a reply with a file",
			trView(t, ModalEditReply, trRef.Value(), map[string]any{BlockReply: map[string]any{InputReply: map[string]any{
				"type": "radio_buttons", "selected_option": map[string]any{"value": reply.Value(),
					"text": map[string]any{"type": "plain_text", "text": "your reply at 12:01"}}}}}, nil),
			Submission{Kind: SubmitEditReply, Ref: trRef, Reply: reply},
			"",
		},
		{
			"redo with feedback",
			trView(t, ModalRedo, trRef.Value(), map[string]any{BlockFeedback: map[string]any{InputFeedback: trInput("  shorter, please\n")}}, nil),
			Submission{Kind: SubmitRedo, Ref: trRef, Feedback: "shorter, please"},
			"",
		},
		{
			"redo without feedback (null value)",
			trView(t, ModalRedo, trRef.Value(), map[string]any{BlockFeedback: map[string]any{InputFeedback: trInput(nil)}}, nil),
			Submission{Kind: SubmitRedo, Ref: trRef},
			"",
		},
		{
			"save as workflow, the name trimmed",
			trView(t, ModalSaveWorkflow, trRef.Value(), trSaveValues(" weekly-prd-review\n"), nil),
			Submission{Kind: SubmitSaveWorkflow, Ref: trRef, Name: "weekly-prd-review"},
			"",
		},
		{
			"redo without the optional block",
			trView(t, ModalRedo, trRef.Value(), map[string]any{}, nil),
			Submission{Kind: SubmitRedo, Ref: trRef},
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
			want.User, want.Team, want.ViewID, want.ViewHash = trUser, trTeam, "V0EDIT", "1743854400.AbCd"
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

func TestParseMention(t *testing.T) {
	tests := []struct {
		name string
		ev   *slackevents.AppMentionEvent
		want Mention
	}{
		{
			"flags and words, a new thread under the mention",
			trMention(t, "<@U0BOT> --auto please run this plan", nil, trPlanFile),
			Mention{Flags: engine.Flags{Auto: true}, Text: "please run this plan", ThreadTS: "1743854400.000300"},
		},
		{
			"in a thread, dashes from a phone, prose dashes kept, nothing after a lone --",
			trMention(t, "here it is —dry-run <@U0BOT|gonogo> —thread a well-known — plan -- --force-auto is text", func(m map[string]any) {
				m["thread_ts"] = "1743850000.000100"
			}, trPlanFile),
			Mention{Flags: engine.Flags{DryRun: true, Thread: true}, Text: "here it is a well-known — plan --force-auto is text",
				ThreadTS: "1743850000.000100"},
		},
		{
			"a user of another organization",
			trMention(t, "<@U0BOT>", func(m map[string]any) { m["user_team"] = "T0OTHER"; m["source_team"] = "T0OTHER" }, trPlanFile),
			Mention{Team: "T0OTHER", ThreadTS: "1743854400.000300"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMention(tt.ev)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			want.User, want.Channel, want.TS = trUser, trChan, "1743854400.000300"
			want.Files = []FileRef{{
				ID: "F0PLAN", Name: "plan.md", Title: "plan.md", Mimetype: "text/plain", Filetype: "markdown", Size: 4200,
				URLPrivate:         "https://files.slack.com/files-pri/T0ACME-F0PLAN/plan.md",
				URLPrivateDownload: "https://files.slack.com/files-pri/T0ACME-F0PLAN/download/plan.md",
			}}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %#v\nwant %#v", got, want)
			}
			f, err := got.PlanFile(1 << 20)
			if err != nil || f.ID != "F0PLAN" {
				t.Errorf("PlanFile = %v, %v", f, err)
			}
		})
	}

	t.Run("a file Slack sent as an id only", func(t *testing.T) {
		m, err := ParseMention(trMention(t, "<@U0BOT>", nil, map[string]any{"id": "F0SHARED", "mode": "file_access", "file_access": "check_file_info"}))
		if err != nil {
			t.Fatal(err)
		}
		if !m.Files[0].NeedsInfo {
			t.Fatalf("NeedsInfo not set: %#v", m.Files[0])
		}
		if _, err := m.PlanFile(1 << 20); !errors.Is(err, ErrNeedsFileInfo) {
			t.Errorf("PlanFile: %v, want ErrNeedsFileInfo", err)
		}
	})
}

func TestCheckPlanFile(t *testing.T) {
	good := []FileRef{
		{ID: "F1", Name: "plan.md", Mimetype: "text/plain", Filetype: "markdown", Size: 10},
		{ID: "F1", Name: "plan.markdown", Mimetype: "text/markdown; charset=utf-8", Size: 10},
		{ID: "F1", Name: "notes.txt", Mimetype: "text/plain", Filetype: "text", Size: 1 << 20},
		{ID: "F1", Name: "Q3.plan", Filetype: "text", Size: 10},      // Slack sniffed it as text
		{ID: "F1", Name: "PLAN.MD", Size: 10},                        // no type from Slack: the extension decides
		{ID: "F1", Title: "Untitled", Filetype: "markdown", Size: 5}, // a snippet
	}
	for _, f := range good {
		if err := CheckPlanFile(f, 1<<20); err != nil {
			t.Errorf("CheckPlanFile(%+v): %v", f, err)
		}
	}
	if err := CheckPlanFile(FileRef{ID: "F1", Name: "big.md", Filetype: "markdown", Size: 50 << 20}, 0); err != nil {
		t.Errorf("no limit: %v", err)
	}
	if err := CheckPlanContent(FileRef{Name: "plan.md"}, []byte("\ufeff# Plan\n\nÉtape 1\n"), 1<<20); err != nil {
		t.Errorf("CheckPlanContent: %v", err)
	}
}

type trErrKind int

const (
	trWantInput    trErrKind = iota + 1 // *InputError
	trWantPayload                       // wraps ErrBadPayload
	trWantRefusal                       // *engine.Refusal from the chain parser
	trWantFileInfo                      // wraps ErrNeedsFileInfo
)

// TestBadInput is the table of what people (and forgers) send that gonogo
// refuses: every case names what is wrong, and none panics.
func TestBadInput(t *testing.T) {
	cmd := func(text string) func() error {
		return func() error { _, err := ParseCommand(trCommand(text)); return err }
	}
	cmdWith := func(edit func(*slack.SlashCommand)) func() error {
		return func() error {
			sc := trCommand("runs")
			edit(&sc)
			_, err := ParseCommand(sc)
			return err
		}
	}
	act := func(id, value string, edit func(map[string]any)) func() error {
		return func() error { _, err := ParseAction(trAction(t, id, value, edit)); return err }
	}
	approve := func(edit func(map[string]any)) func() error { return act(ActionApprove, trRef.Value(), edit) }
	sub := func(cbID, meta string, values map[string]any, edit func(map[string]any)) func() error {
		return func() error { _, err := ParseSubmission(trView(t, cbID, meta, values, edit)); return err }
	}
	edit := func(artifact any) func() error { return sub(ModalEdit, trRef.Value(), trEditValues(artifact), nil) }
	saveAs := func(name string) func() error { return sub(ModalSaveWorkflow, trRef.Value(), trSaveValues(name), nil) }
	mention := func(text string, edit func(map[string]any), files ...map[string]any) func() error {
		return func() error { _, err := ParseMention(trMention(t, text, edit, files...)); return err }
	}
	planFile := func(f FileRef) func() error {
		if f.ID == "" {
			f.ID = "F0PLAN"
		}
		return func() error { return CheckPlanFile(f, 1<<20) }
	}
	content := func(body []byte) func() error {
		return func() error { return CheckPlanContent(FileRef{ID: "F0PLAN", Name: "plan.md"}, body, 1<<20) }
	}
	huge := strings.Repeat("x", MaxCommandChars+1)

	tests := []struct {
		name string
		call func() error
		kind trErrKind
		want string
	}{
		// Slash commands.
		{"unknown subcommand", cmd("deploy now"), trWantInput, `unknown subcommand "deploy"`},
		{"misspelt subcommand", cmd("chian a -> b"), trWantInput, `did you mean "chain"`},
		{"forgotten chain", cmd("deliver-prd -> deliver-user-stories"), trWantInput, "/gonogo chain deliver-prd ..."},
		{"empty chain", cmd("chain"), trWantRefusal, "names no skill"},
		{"chain of spaces and a lone dash", cmd("chain \u00a0— ctx"), trWantRefusal, "a chain needs at least one skill"},
		{"trailing separator", cmd("chain deliver-prd ->"), trWantRefusal, "trailing separator"},
		{"path traversal in a skill name", cmd("chain ../../etc/passwd"), trWantRefusal, "not a path"},
		{"upper-case skill name", cmd("chain Deliver-PRD"), trWantRefusal, "lower case"},
		{"unknown chain flag", cmd("chain deliver-prd --frobnicate"), trWantRefusal, `unknown flag "--frobnicate"`},
		{"two separators", cmd("chain a -> , b"), trWantRefusal, "a skill name is missing between them"},
		{"skill name as a shell command", cmd("chain $(rm -rf ~)"), trWantRefusal, "invalid skill name"},
		{"run without a workflow", cmd("run --auto"), trWantInput, "name the workflow to run"},
		{"path traversal in a workflow name", cmd("run ../../etc/passwd"), trWantInput, "not a path"},
		{"workflow with its extension", cmd("run release.yaml"), trWantInput, "without .yaml"},
		{"workflow name with a shell command", cmd("run $(reboot)"), trWantInput, "invalid workflow name"},
		{"two workflows", cmd("run a b"), trWantInput, `unexpected "b" at column 3`},
		{"upper-case workflow name", cmd("run Release-Train"), trWantInput, `lower-case letters, digits and dashes, starting with a letter or digit (did you mean "release-train"?)`},
		{"underscore in a workflow name", cmd("run release_2"), trWantInput, `(did you mean "release-2"?)`},
		{"workflow name starting with a dash", cmd("run -- x"), trWantInput, "name the workflow to run"},
		{"workflow name of 129 characters", cmd("run " + strings.Repeat("w", 129)), trWantInput, "at most 128 characters"},
		{"--arg without a pair", cmd("run rel --arg"), trWantInput, "needs a name=value pair"},
		{"--arg without =", cmd("run rel --arg novalue"), trWantInput, "needs name=value"},
		{"--arg with a bad name", cmd("run rel --arg 1x=y"), trWantInput, "is not an argument name"},
		{"--arg given twice", cmd("run rel --arg k=1 --arg k=2"), trWantInput, `gives "k" a second time`},
		{"bool flag with a value", cmd("run rel --auto=yes"), trWantInput, "takes no value"},
		{"unknown run flag", cmd("run rel --verbose"), trWantInput, `unknown flag "--verbose"`},
		{"single-dash flag", cmd("run rel -auto"), trWantInput, `unknown flag "-auto"`},
		{"unclosed quote", cmd(`run rel --arg k="open`), trWantInput, "is never closed"},
		{"runs with arguments", cmd("runs everything"), trWantInput, `takes nothing after it (got "everything")`},
		{"huge command text", cmd("chain a -- " + huge), trWantInput, "the limit is 12000"},
		{"bell character", cmd("chain a\x07 -> b"), trWantInput, "control character (U+0007) at line 1, column 8"},
		{"NUL in the context", cmd("chain a -- x\x00y"), trWantInput, "control character (U+0000)"},
		{"escape sequence on line 2", cmd("chain a --\nctx \x1b[31m"), trWantInput, "(U+001B) at line 2, column 5"},
		{"right-to-left override", cmd("chain a -- invoice \u202egnp.exe"), trWantInput, "text-direction character (U+202E)"},
		{"invalid UTF-8", cmd("chain \xff\xfe"), trWantInput, "not valid UTF-8"},
		{"no user", cmdWith(func(sc *slack.SlashCommand) { sc.UserID = "" }), trWantPayload, "no user_id"},
		{"no channel", cmdWith(func(sc *slack.SlashCommand) { sc.ChannelID = "" }), trWantPayload, "no channel_id"},
		{"no team", cmdWith(func(sc *slack.SlashCommand) { sc.TeamID = "" }), trWantPayload, "no team_id"},
		{"forged user id", cmdWith(func(sc *slack.SlashCommand) { sc.UserID = "U1\nadmin" }), trWantPayload, "invalid user_id"},

		// Button clicks.
		{"another app's action id", act("other_app_approve", trRef.Value(), nil), trWantPayload, `unknown action id "other_app_approve"`},
		{"forged run id", act(ActionApprove, "v1|../../etc|1|1", nil), trWantPayload, "not a gonogo run id"},
		{"another version's value", act(ActionApprove, "v2|"+string(trRun)+"|1|1", nil), trWantPayload, "not a gonogo button value"},
		{"empty value", act(ActionSkip, "", nil), trWantPayload, "not a gonogo button value"},
		{"step 0", act(ActionRedo, "v1|"+string(trRun)+"|0|1", nil), trWantPayload, "not a gonogo step reference"},
		{"negative attempt", act(ActionAbort, "v1|"+string(trRun)+"|1|-1", nil), trWantPayload, "not a gonogo step reference"},
		{"huge value", act(ActionApprove, "v1|"+strings.Repeat("a", 5000)+"|1|1", nil), trWantPayload, "not a gonogo run id"},
		{"two actions in one payload", approve(func(m map[string]any) {
			m["actions"] = []any{trButton(ActionApprove, trRef.Value()), trButton(ActionAbort, trRef.Value())}
		}), trWantPayload, "carries 2 actions"},
		{"no action", approve(func(m map[string]any) { m["actions"] = []any{} }), trWantPayload, "carries no action"},
		{"a submission sent as a click", approve(func(m map[string]any) { m["type"] = "view_submission" }), trWantPayload, "expected a block_actions"},
		{"no user", approve(func(m map[string]any) { delete(m, "user") }), trWantPayload, "no user id"},
		{"no channel", approve(func(m map[string]any) {
			delete(m, "channel")
			m["container"] = map[string]any{"type": "message", "message_ts": "1743854300.000200"}
		}), trWantPayload, "no channel id"},
		{"no action time", approve(func(m map[string]any) {
			b := trButton(ActionApprove, trRef.Value())
			delete(b, "action_ts")
			m["actions"] = []any{b}
		}), trWantPayload, "no action ts"},
		{"malformed message ts", approve(func(m map[string]any) {
			m["container"] = map[string]any{"type": "message", "message_ts": "yesterday"}
		}), trWantPayload, `invalid message ts "yesterday"`},
		{"a select menu with a gonogo id", approve(func(m map[string]any) {
			b := trButton(ActionApprove, trRef.Value())
			b["type"] = "static_select"
			m["actions"] = []any{b}
		}), trWantPayload, `"static_select" element, not a button`},
		{"legacy attachment action", approve(func(m map[string]any) {
			m["actions"] = []any{map[string]any{"name": "approve", "type": "button", "value": trRef.Value()}}
		}), trWantPayload, `legacy attachment action "approve"`},
		{"a button in a modal", approve(func(m map[string]any) {
			m["container"] = map[string]any{"type": "view", "view_id": "V1"}
		}), trWantPayload, `in a "view"`},

		// Modal submissions.
		{"another app's modal", sub("other_modal", trRef.Value(), trEditValues("x"), nil), trWantPayload, `unknown modal callback id "other_modal"`},
		{"no private_metadata", sub(ModalEdit, "", trEditValues("x"), nil), trWantPayload, "carries no private_metadata"},
		{"forged private_metadata", sub(ModalRedo, "v1|"+string(trRun)+"|1", nil, nil), trWantPayload, "not a gonogo button value"},
		{"private_metadata naming a path", sub(ModalEdit, "v1|../runs|1|1", trEditValues("x"), nil), trWantPayload, "not a gonogo run id"},
		{"empty edit", edit("  \n\t"), trWantInput, "the edited artifact is empty"},
		{"cleared edit (null)", edit(nil), trWantInput, "the edited artifact is empty"},
		{"oversized edit", edit(strings.Repeat("a", 3001)), trWantInput, "is 3001 characters; this box holds 3000"},
		{"control character in an edit", edit("# PRD\n\x08oops"), trWantInput, "control character (U+0008) at line 2, column 1"},
		{"invalid UTF-8 in an edit", func() error {
			// JSON cannot carry it, so the decoded payload is patched.
			cb := trView(t, ModalEdit, trRef.Value(), trEditValues("x"), nil)
			cb.View.State.Values[BlockArtifact][InputArtifact] = slack.BlockAction{Value: "# PRD \xc3"}
			_, err := ParseSubmission(cb)
			return err
		}, trWantInput, "not valid UTF-8"},
		{"edit modal without its input", sub(ModalEdit, trRef.Value(), map[string]any{"other": map[string]any{}}, nil), trWantPayload, "has no gonogo_artifact input"},
		{"no state at all", sub(ModalEdit, trRef.Value(), nil, func(m map[string]any) {
			delete(m["view"].(map[string]any), "state")
		}), trWantPayload, "carries no input values"},
		{"a click sent as a submission", sub(ModalEdit, trRef.Value(), trEditValues("x"), func(m map[string]any) { m["type"] = "block_actions" }),
			trWantPayload, "expected a view_submission"},
		{"a home tab", sub(ModalEdit, trRef.Value(), trEditValues("x"), func(m map[string]any) { m["view"].(map[string]any)["type"] = "home" }),
			trWantPayload, `is a "home", not a modal`},
		{"no view id", sub(ModalEdit, trRef.Value(), trEditValues("x"), func(m map[string]any) { delete(m["view"].(map[string]any), "id") }),
			trWantPayload, "no view id"},
		{"no user in a submission", sub(ModalEdit, trRef.Value(), trEditValues("x"), func(m map[string]any) { delete(m, "user") }),
			trWantPayload, "no user id"},
		{"feedback too long", sub(ModalRedo, trRef.Value(), map[string]any{BlockFeedback: map[string]any{InputFeedback: trInput(strings.Repeat("b", 3001))}}, nil),
			trWantInput, "the feedback is 3001 characters long"},
		{"reply not chosen", sub(ModalEditReply, trRef.Value(), map[string]any{BlockReply: map[string]any{InputReply: map[string]any{"type": "radio_buttons"}}}, nil),
			trWantInput, "choose the reply"},
		{"forged reply option", sub(ModalEditReply, trRef.Value(), map[string]any{BlockReply: map[string]any{InputReply: map[string]any{
			"type": "radio_buttons", "selected_option": map[string]any{"value": "v1|reply|../x|F1"}}}}, nil),
			trWantPayload, "not a gonogo reply reference"},
		{"reply modal without its input", sub(ModalEditReply, trRef.Value(), map[string]any{}, nil), trWantPayload, "has no gonogo_reply input"},
		{"empty workflow name", saveAs("  "), trWantInput, "give the workflow a name"},
		{"workflow name with capitals", saveAs("Weekly-Review"), trWantInput, `did you mean "weekly-review"?`},
		{"workflow name as a path", saveAs("../../etc/cron.d/x"), trWantInput, "not a path"},
		{"workflow name over 64", saveAs(strings.Repeat("w", 65)), trWantInput, "the name is 65 characters; use at most 64"},
		{"workflow name with a space", saveAs("weekly review"), trWantInput, "lower-case letters, digits and dashes"},
		{"save modal without its input", sub(ModalSaveWorkflow, trRef.Value(), map[string]any{}, nil), trWantPayload, "has no gonogo_workflow_name input"},

		// Mentions.
		{"no file", mention("<@U0BOT> --auto", nil), trWantInput, "attach a Markdown (.md) or text (.txt) plan"},
		{"unknown flag in a mention", mention("<@U0BOT> --yolo", nil, trPlanFile), trWantInput, `unknown flag "--yolo"`},
		{"a bot's message", mention("<@U0BOT>", func(m map[string]any) { m["bot_id"] = "B0OTHER" }, trPlanFile), trWantPayload, "does not start a run"},
		{"an edited message", mention("<@U0BOT>", func(m map[string]any) {
			m["edited"] = map[string]any{"user": trUser, "ts": "1743854401.000000"}
		}, trPlanFile), trWantInput, "an edited message does not start a run"},
		{"mention without a channel", mention("<@U0BOT>", func(m map[string]any) { delete(m, "channel") }, trPlanFile), trWantPayload, "no channel"},
		{"mention with a bad ts", mention("<@U0BOT>", func(m map[string]any) { m["ts"] = "12:00" }, trPlanFile), trWantPayload, `invalid ts "12:00"`},
		{"nil event", func() error { _, err := ParseMention(nil); return err }, trWantPayload, "no app_mention event"},
		{"huge mention text", mention(strings.Repeat("y", MaxMentionChars+1), nil, trPlanFile), trWantInput, "the limit is 40000"},
		{"control character in a mention", mention("<@U0BOT> \x1b]0;pwned\x07", nil, trPlanFile), trWantInput, "control character (U+001B)"},
		{"two files", func() error {
			m, err := ParseMention(trMention(t, "<@U0BOT>", nil, trPlanFile, trFile("shot.png", "image/png", "png", 10)))
			if err != nil {
				return err
			}
			_, err = m.PlanFile(1 << 20)
			return err
		}, trWantInput, `2 files attached ("plan.md", "shot.png")`},

		// Plan files.
		{"an image", planFile(FileRef{Name: "diagram.png", Mimetype: "image/png", Filetype: "png", Size: 10}), trWantInput, `"diagram.png" is an image (image/png)`},
		{"a PDF", planFile(FileRef{Name: "plan.pdf", Mimetype: "application/pdf", Filetype: "pdf", Size: 10}), trWantInput, `"plan.pdf" is a PDF`},
		{"a binary named .md", planFile(FileRef{Name: "plan.md", Mimetype: "application/octet-stream", Filetype: "binary", Size: 10}), trWantInput,
			`"plan.md" is a binary file (application/octet-stream)`},
		{"an archive", planFile(FileRef{Name: "plans.zip", Mimetype: "application/zip", Filetype: "zip", Size: 10}), trWantInput, "a binary file (application/zip)"},
		{"a code snippet", planFile(FileRef{Name: "run.py", Mimetype: "text/x-python", Filetype: "python", Size: 10}), trWantInput, `"run.py" is text/x-python text`},
		{"a file over the limit", planFile(FileRef{Name: "plan.md", Mimetype: "text/plain", Filetype: "markdown", Size: 3 << 20}), trWantInput,
			`"plan.md" is 3.0 MiB; gonogo reads plans up to 1.0 MiB`},
		{"an empty file", planFile(FileRef{Name: "plan.md", Mimetype: "text/plain", Filetype: "markdown"}), trWantInput, `"plan.md" is empty`},
		{"an external file", planFile(FileRef{Name: "Plan", Filetype: "gdoc", External: true}), trWantInput, "kept outside Slack"},
		{"an executable with no type", planFile(FileRef{Name: "plan.exe", Size: 10}), trWantInput, `"plan.exe" is a .exe file`},
		{"no type at all", planFile(FileRef{Name: "plan", Size: 10}), trWantInput, `Slack says nothing about the type of "plan"`},
		{"a file known by id only", planFile(FileRef{ID: "F0SHARED", NeedsInfo: true}), trWantFileInfo, "file F0SHARED"},
		{"binary content", content([]byte("# Plan\x00\x01\x02")), trWantInput, "binary content at byte 6"},
		{"UTF-16 content", content([]byte{0xff, 0xfe, '#', 0, ' ', 0}), trWantInput, "is UTF-16 text"},
		{"content over the limit", content(make([]byte, 1<<20+1)), trWantInput, "is 1.0 MiB; gonogo reads plans up to 1.0 MiB"},
		{"blank content", content([]byte("\ufeff \n\n")), trWantInput, `"plan.md" is empty`},
		{"oversized reply", func() error { return CheckArtifact(strings.Repeat("z", MaxEditBytes+1), MaxEditBytes) }, trWantInput,
			"the edited artifact is 1.0 MiB; the limit is 1.0 MiB"},
	}
	if len(tests) < 50 {
		t.Fatalf("only %d bad inputs", len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q\ndoes not say %q", err, tt.want)
			}
			var ie *InputError
			var r *engine.Refusal
			switch tt.kind {
			case trWantInput:
				if !errors.As(err, &ie) || ie.Problem == "" {
					t.Errorf("%T %v is not an *InputError", err, err)
				}
			case trWantPayload:
				if !errors.Is(err, ErrBadPayload) {
					t.Errorf("%v does not wrap ErrBadPayload", err)
				}
			case trWantRefusal:
				if !errors.As(err, &r) || r.Reason == "" {
					t.Errorf("%T %v is not an *engine.Refusal", err, err)
				}
			case trWantFileInfo:
				if !errors.Is(err, ErrNeedsFileInfo) {
					t.Errorf("%v does not wrap ErrNeedsFileInfo", err)
				}
			}
			if errors.As(err, &ie) && errors.Is(err, ErrBadPayload) {
				t.Errorf("%v is both bad input and a bad payload", err)
			}
		})
	}
}

// A modal's field errors are keyed by the input block they are about.
func TestSubmissionFieldBlock(t *testing.T) {
	tests := []struct {
		cb    slack.InteractionCallback
		block string
	}{
		{trView(t, ModalEdit, trRef.Value(), trEditValues(""), nil), BlockArtifact},
		{trView(t, ModalEdit, trRef.Value(), trEditValues(strings.Repeat("a", 3001)), nil), BlockArtifact},
		{trView(t, ModalRedo, trRef.Value(), map[string]any{BlockFeedback: map[string]any{InputFeedback: trInput("\x00")}}, nil), BlockFeedback},
		{trView(t, ModalEditReply, trRef.Value(), map[string]any{BlockReply: map[string]any{InputReply: map[string]any{}}}, nil), BlockReply},
		{trView(t, ModalSaveWorkflow, trRef.Value(), trSaveValues("Bad Name"), nil), BlockWorkflowName},
	}
	for _, tt := range tests {
		_, err := ParseSubmission(tt.cb)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Block != tt.block {
			t.Errorf("%s modal: error %v, want a field error on %s", tt.cb.View.CallbackID, err, tt.block)
		}
	}
}

// The name a saved chain is offered: its skills' words once each, short
// enough to number, and free.
func TestWorkflowNameFor(t *testing.T) {
	taken := map[string]bool{"deliver-prd": true, "deliver-prd-2": true}
	long := []string{"discover-interview-synthesis", "define-problem-statement", "deliver-prd", "deliver-user-stories", "measure-experiment-design"}
	tests := []struct {
		skills []string
		want   string
	}{
		{[]string{"deliver-prd", "deliver-user-stories"}, "deliver-prd-user-stories"},
		{[]string{"deliver-prd"}, "deliver-prd-3"},
		{[]string{"deliver-prd", "deliver-prd"}, "deliver-prd-3"},
		{long, "discover-interview-synthesis-define-problem-statement"},
		{nil, "saved-chain"},
	}
	for _, tt := range tests {
		got := workflowNameFor(tt.skills, func(n string) bool { return taken[n] })
		if got != tt.want {
			t.Errorf("workflowNameFor(%v) = %q, want %q", tt.skills, got, tt.want)
		}
		if err := CheckWorkflowName(got); err != nil {
			t.Errorf("workflowNameFor(%v) = %q, which cannot be saved: %v", tt.skills, got, err)
		}
	}
}
