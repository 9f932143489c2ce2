package bot

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/gonogo/gonogo/engine"
)

// Payloads are built as the JSON Slack sends and decoded with slack-go, so
// the tests read what the bot will read, field names and all.

const (
	testRun     = engine.RunID("20250405-120000-a1b2c3")
	testUser    = "U0ANA"
	testTeam    = "T0ACME"
	testChannel = "C0RUNS"
)

var testRef = StepRef{Run: testRun, Step: 2, Attempt: 1}

func slashCommand(text string) slack.SlashCommand {
	return slack.SlashCommand{
		Command: "/gonogo", Text: text,
		UserID: testUser, TeamID: testTeam, ChannelID: testChannel,
		ResponseURL: "https://hooks.slack.com/commands/T0ACME/1/x", TriggerID: "111.222.abc",
	}
}

// decodePayload turns a JSON-shaped map into the slack-go type Slack's payload
// decodes into.
func decodePayload[T any](t testing.TB, m map[string]any) T {
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

func buttonElement(actionID, value string) map[string]any {
	return map[string]any{
		"action_id": actionID, "block_id": "step-2", "type": "button", "value": value,
		"text":      map[string]any{"type": "plain_text", "text": "Approve"},
		"action_ts": "1743854400.123456",
	}
}

func actionPayload(actionID, value string) map[string]any {
	return map[string]any{
		"type":       "block_actions",
		"api_app_id": "A0GONOGO",
		"user":       map[string]any{"id": testUser, "username": "ana", "name": "ana", "team_id": testTeam},
		"team":       map[string]any{"id": testTeam, "domain": "acme"},
		"channel":    map[string]any{"id": testChannel, "name": "runs"},
		"container": map[string]any{"type": "message", "message_ts": "1743854300.000200",
			"channel_id": testChannel, "is_ephemeral": false, "thread_ts": "1743854000.000100"},
		"message": map[string]any{"type": "message", "ts": "1743854300.000200",
			"thread_ts": "1743854000.000100", "text": "Step 2 of 3: deliver-prd"},
		"trigger_id":   "111.222.abc",
		"response_url": "https://hooks.slack.com/actions/T0ACME/1/x",
		"actions":      []any{buttonElement(actionID, value)},
		"state":        map[string]any{"values": map[string]any{}},
	}
}

func actionCallback(t testing.TB, actionID, value string, edit func(m map[string]any)) slack.InteractionCallback {
	m := actionPayload(actionID, value)
	if edit != nil {
		edit(m)
	}
	return decodePayload[slack.InteractionCallback](t, m)
}

func inputValue(value any) map[string]any {
	return map[string]any{"type": "plain_text_input", "value": value}
}

func viewPayload(callbackID, metadata string, values map[string]any) map[string]any {
	return map[string]any{
		"type":       "view_submission",
		"api_app_id": "A0GONOGO",
		"team":       map[string]any{"id": testTeam, "domain": "acme"},
		"user":       map[string]any{"id": testUser, "username": "ana", "team_id": testTeam},
		"trigger_id": "111.222.abc",
		"view": map[string]any{
			"id": "V0EDIT", "team_id": testTeam, "type": "modal", "callback_id": callbackID,
			"private_metadata": metadata, "hash": "1743854400.AbCd",
			"state": map[string]any{"values": values},
		},
	}
}

func viewSubmission(t testing.TB, callbackID, metadata string, values map[string]any, edit func(m map[string]any)) slack.InteractionCallback {
	m := viewPayload(callbackID, metadata, values)
	if edit != nil {
		edit(m)
	}
	return decodePayload[slack.InteractionCallback](t, m)
}

func editValues(artifact any) map[string]any {
	return map[string]any{BlockArtifact: map[string]any{InputArtifact: inputValue(artifact)}}
}

func saveValues(name any) map[string]any {
	return map[string]any{BlockWorkflowName: map[string]any{InputWorkflowName: inputValue(name)}}
}

func mentionPayload(text string, files ...map[string]any) map[string]any {
	m := map[string]any{
		"type": "app_mention", "user": testUser, "text": text, "ts": "1743854400.000300",
		"channel": testChannel, "event_ts": "1743854400.000300",
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

func mentionEvent(t testing.TB, text string, edit func(m map[string]any), files ...map[string]any) *slackevents.AppMentionEvent {
	m := mentionPayload(text, files...)
	if edit != nil {
		edit(m)
	}
	ev := decodePayload[slackevents.AppMentionEvent](t, m)
	return &ev
}

func fileJSON(name, mimetype, filetype string, size int) map[string]any {
	return map[string]any{
		"id": "F0PLAN", "name": name, "title": name, "mimetype": mimetype, "filetype": filetype,
		"size": size, "url_private": "https://files.slack.com/files-pri/T0ACME-F0PLAN/" + name,
		"url_private_download": "https://files.slack.com/files-pri/T0ACME-F0PLAN/download/" + name,
	}
}

var planFileJSON = fileJSON("plan.md", "text/plain", "markdown", 4200)

type errKind int

const (
	wantInput    errKind = iota + 1 // *InputError
	wantPayload                     // wraps ErrBadPayload
	wantRefusal                     // *engine.Refusal from the chain parser
	wantFileInfo                    // wraps ErrNeedsFileInfo
)

// TestBadInput is the table of what people (and forgers) send that gonogo
// refuses: every case names what is wrong, and none panics.
func TestBadInput(t *testing.T) {
	cmd := func(text string) func() error {
		return func() error { _, err := ParseCommand(slashCommand(text)); return err }
	}
	cmdWith := func(edit func(*slack.SlashCommand)) func() error {
		return func() error {
			sc := slashCommand("runs")
			edit(&sc)
			_, err := ParseCommand(sc)
			return err
		}
	}
	act := func(id, value string, edit func(map[string]any)) func() error {
		return func() error { _, err := ParseAction(actionCallback(t, id, value, edit)); return err }
	}
	approve := func(edit func(map[string]any)) func() error { return act(ActionApprove, testRef.Value(), edit) }
	sub := func(cbID, meta string, values map[string]any, edit func(map[string]any)) func() error {
		return func() error { _, err := ParseSubmission(viewSubmission(t, cbID, meta, values, edit)); return err }
	}
	edit := func(artifact any) func() error { return sub(ModalEdit, testRef.Value(), editValues(artifact), nil) }
	saveAs := func(name string) func() error { return sub(ModalSaveWorkflow, testRef.Value(), saveValues(name), nil) }
	mention := func(text string, edit func(map[string]any), files ...map[string]any) func() error {
		return func() error { _, err := ParseMention(mentionEvent(t, text, edit, files...)); return err }
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
		kind errKind
		want string
	}{
		// Slash commands.
		{"unknown subcommand", cmd("deploy now"), wantInput, `unknown subcommand "deploy"`},
		{"misspelt subcommand", cmd("chian a -> b"), wantInput, `did you mean "chain"`},
		{"forgotten chain", cmd("deliver-prd -> deliver-user-stories"), wantInput, "/gonogo chain deliver-prd ..."},
		{"empty chain", cmd("chain"), wantRefusal, "names no skill"},
		{"chain of spaces and a lone dash", cmd("chain \u00a0— ctx"), wantRefusal, "a chain needs at least one skill"},
		{"trailing separator", cmd("chain deliver-prd ->"), wantRefusal, "trailing separator"},
		{"path traversal in a skill name", cmd("chain ../../etc/passwd"), wantRefusal, "not a path"},
		{"upper-case skill name", cmd("chain Deliver-PRD"), wantRefusal, "lower case"},
		{"unknown chain flag", cmd("chain deliver-prd --frobnicate"), wantRefusal, `unknown flag "--frobnicate"`},
		{"two separators", cmd("chain a -> , b"), wantRefusal, "a skill name is missing between them"},
		{"skill name as a shell command", cmd("chain $(rm -rf ~)"), wantRefusal, "invalid skill name"},
		{"run without a workflow", cmd("run --auto"), wantInput, "name the workflow to run"},
		{"path traversal in a workflow name", cmd("run ../../etc/passwd"), wantInput, "not a path"},
		{"workflow with its extension", cmd("run release.yaml"), wantInput, "without .yaml"},
		{"workflow name with a shell command", cmd("run $(reboot)"), wantInput, "invalid workflow name"},
		{"two workflows", cmd("run a b"), wantInput, `unexpected "b" at column 3`},
		{"upper-case workflow name", cmd("run Release-Train"), wantInput, `lower-case letters, digits and dashes, starting with a letter or digit (did you mean "release-train"?)`},
		{"underscore in a workflow name", cmd("run release_2"), wantInput, `(did you mean "release-2"?)`},
		{"workflow name starting with a dash", cmd("run -- x"), wantInput, "name the workflow to run"},
		{"workflow name of 129 characters", cmd("run " + strings.Repeat("w", 129)), wantInput, "at most 128 characters"},
		{"--arg without a pair", cmd("run rel --arg"), wantInput, "needs a name=value pair"},
		{"--arg without =", cmd("run rel --arg novalue"), wantInput, "needs name=value"},
		{"--arg with a bad name", cmd("run rel --arg 1x=y"), wantInput, "is not an argument name"},
		{"--arg given twice", cmd("run rel --arg k=1 --arg k=2"), wantInput, `gives "k" a second time`},
		{"bool flag with a value", cmd("run rel --auto=yes"), wantInput, "takes no value"},
		{"unknown run flag", cmd("run rel --verbose"), wantInput, `unknown flag "--verbose"`},
		{"single-dash flag", cmd("run rel -auto"), wantInput, `unknown flag "-auto"`},
		{"unclosed quote", cmd(`run rel --arg k="open`), wantInput, "is never closed"},
		{"runs with arguments", cmd("runs everything"), wantInput, `takes nothing after it (got "everything")`},
		{"huge command text", cmd("chain a -- " + huge), wantInput, "the limit is 12000"},
		{"bell character", cmd("chain a\x07 -> b"), wantInput, "control character (U+0007) at line 1, column 8"},
		{"NUL in the context", cmd("chain a -- x\x00y"), wantInput, "control character (U+0000)"},
		{"escape sequence on line 2", cmd("chain a --\nctx \x1b[31m"), wantInput, "(U+001B) at line 2, column 5"},
		{"right-to-left override", cmd("chain a -- invoice \u202egnp.exe"), wantInput, "text-direction character (U+202E)"},
		{"invalid UTF-8", cmd("chain \xff\xfe"), wantInput, "not valid UTF-8"},
		{"no user", cmdWith(func(sc *slack.SlashCommand) { sc.UserID = "" }), wantPayload, "no user_id"},
		{"no channel", cmdWith(func(sc *slack.SlashCommand) { sc.ChannelID = "" }), wantPayload, "no channel_id"},
		{"no team", cmdWith(func(sc *slack.SlashCommand) { sc.TeamID = "" }), wantPayload, "no team_id"},
		{"forged user id", cmdWith(func(sc *slack.SlashCommand) { sc.UserID = "U1\nadmin" }), wantPayload, "invalid user_id"},

		// Button clicks.
		{"another app's action id", act("other_app_approve", testRef.Value(), nil), wantPayload, `unknown action id "other_app_approve"`},
		{"forged run id", act(ActionApprove, "v1|../../etc|1|1", nil), wantPayload, "not a gonogo run id"},
		{"another version's value", act(ActionApprove, "v2|"+string(testRun)+"|1|1", nil), wantPayload, "not a gonogo button value"},
		{"empty value", act(ActionSkip, "", nil), wantPayload, "not a gonogo button value"},
		{"step 0", act(ActionRedo, "v1|"+string(testRun)+"|0|1", nil), wantPayload, "not a gonogo step reference"},
		{"negative attempt", act(ActionAbort, "v1|"+string(testRun)+"|1|-1", nil), wantPayload, "not a gonogo step reference"},
		{"huge value", act(ActionApprove, "v1|"+strings.Repeat("a", 5000)+"|1|1", nil), wantPayload, "not a gonogo run id"},
		{"two actions in one payload", approve(func(m map[string]any) {
			m["actions"] = []any{buttonElement(ActionApprove, testRef.Value()), buttonElement(ActionAbort, testRef.Value())}
		}), wantPayload, "carries 2 actions"},
		{"no action", approve(func(m map[string]any) { m["actions"] = []any{} }), wantPayload, "carries no action"},
		{"a submission sent as a click", approve(func(m map[string]any) { m["type"] = "view_submission" }), wantPayload, "expected a block_actions"},
		{"no user", approve(func(m map[string]any) { delete(m, "user") }), wantPayload, "no user id"},
		{"no channel", approve(func(m map[string]any) {
			delete(m, "channel")
			m["container"] = map[string]any{"type": "message", "message_ts": "1743854300.000200"}
		}), wantPayload, "no channel id"},
		{"no action time", approve(func(m map[string]any) {
			b := buttonElement(ActionApprove, testRef.Value())
			delete(b, "action_ts")
			m["actions"] = []any{b}
		}), wantPayload, "no action ts"},
		{"malformed message ts", approve(func(m map[string]any) {
			m["container"] = map[string]any{"type": "message", "message_ts": "yesterday"}
		}), wantPayload, `invalid message ts "yesterday"`},
		{"a select menu with a gonogo id", approve(func(m map[string]any) {
			b := buttonElement(ActionApprove, testRef.Value())
			b["type"] = "static_select"
			m["actions"] = []any{b}
		}), wantPayload, `"static_select" element, not a button`},
		{"legacy attachment action", approve(func(m map[string]any) {
			m["actions"] = []any{map[string]any{"name": "approve", "type": "button", "value": testRef.Value()}}
		}), wantPayload, `legacy attachment action "approve"`},
		{"a button in a modal", approve(func(m map[string]any) {
			m["container"] = map[string]any{"type": "view", "view_id": "V1"}
		}), wantPayload, `in a "view"`},

		// Modal submissions.
		{"another app's modal", sub("other_modal", testRef.Value(), editValues("x"), nil), wantPayload, `unknown modal callback id "other_modal"`},
		{"no private_metadata", sub(ModalEdit, "", editValues("x"), nil), wantPayload, "carries no private_metadata"},
		{"forged private_metadata", sub(ModalRedo, "v1|"+string(testRun)+"|1", nil, nil), wantPayload, "not a gonogo button value"},
		{"private_metadata naming a path", sub(ModalEdit, "v1|../runs|1|1", editValues("x"), nil), wantPayload, "not a gonogo run id"},
		{"empty edit", edit("  \n\t"), wantInput, "the edited artifact is empty"},
		{"cleared edit (null)", edit(nil), wantInput, "the edited artifact is empty"},
		{"oversized edit", edit(strings.Repeat("a", 3001)), wantInput, "is 3001 characters; this box holds 3000"},
		{"control character in an edit", edit("# PRD\n\x08oops"), wantInput, "control character (U+0008) at line 2, column 1"},
		{"invalid UTF-8 in an edit", func() error {
			// JSON cannot carry it, so the decoded payload is patched.
			cb := viewSubmission(t, ModalEdit, testRef.Value(), editValues("x"), nil)
			cb.View.State.Values[BlockArtifact][InputArtifact] = slack.BlockAction{Value: "# PRD \xc3"}
			_, err := ParseSubmission(cb)
			return err
		}, wantInput, "not valid UTF-8"},
		{"edit modal without its input", sub(ModalEdit, testRef.Value(), map[string]any{"other": map[string]any{}}, nil), wantPayload, "has no gonogo_artifact input"},
		{"no state at all", sub(ModalEdit, testRef.Value(), nil, func(m map[string]any) {
			delete(m["view"].(map[string]any), "state")
		}), wantPayload, "carries no input values"},
		{"a click sent as a submission", sub(ModalEdit, testRef.Value(), editValues("x"), func(m map[string]any) { m["type"] = "block_actions" }),
			wantPayload, "expected a view_submission"},
		{"a home tab", sub(ModalEdit, testRef.Value(), editValues("x"), func(m map[string]any) { m["view"].(map[string]any)["type"] = "home" }),
			wantPayload, `is a "home", not a modal`},
		{"no view id", sub(ModalEdit, testRef.Value(), editValues("x"), func(m map[string]any) { delete(m["view"].(map[string]any), "id") }),
			wantPayload, "no view id"},
		{"no user in a submission", sub(ModalEdit, testRef.Value(), editValues("x"), func(m map[string]any) { delete(m, "user") }),
			wantPayload, "no user id"},
		{"feedback too long", sub(ModalRedo, testRef.Value(), map[string]any{BlockFeedback: map[string]any{InputFeedback: inputValue(strings.Repeat("b", 3001))}}, nil),
			wantInput, "the feedback is 3001 characters long"},
		{"reply not chosen", sub(ModalEditReply, testRef.Value(), map[string]any{BlockReply: map[string]any{InputReply: map[string]any{"type": "radio_buttons"}}}, nil),
			wantInput, "choose the reply"},
		{"forged reply option", sub(ModalEditReply, testRef.Value(), map[string]any{BlockReply: map[string]any{InputReply: map[string]any{
			"type": "radio_buttons", "selected_option": map[string]any{"value": "v1|reply|../x|F1"}}}}, nil),
			wantPayload, "not a gonogo reply reference"},
		{"reply modal without its input", sub(ModalEditReply, testRef.Value(), map[string]any{}, nil), wantPayload, "has no gonogo_reply input"},
		{"empty workflow name", saveAs("  "), wantInput, "give the workflow a name"},
		{"workflow name with capitals", saveAs("Weekly-Review"), wantInput, `did you mean "weekly-review"?`},
		{"workflow name as a path", saveAs("../../etc/cron.d/x"), wantInput, "not a path"},
		{"workflow name over 64", saveAs(strings.Repeat("w", 65)), wantInput, "the name is 65 characters; use at most 64"},
		{"workflow name with a space", saveAs("weekly review"), wantInput, "lower-case letters, digits and dashes"},
		{"save modal without its input", sub(ModalSaveWorkflow, testRef.Value(), map[string]any{}, nil), wantPayload, "has no gonogo_workflow_name input"},

		// Mentions.
		{"no file", mention("<@U0BOT> --auto", nil), wantInput, "attach a Markdown (.md) or text (.txt) plan"},
		{"unknown flag in a mention", mention("<@U0BOT> --yolo", nil, planFileJSON), wantInput, `unknown flag "--yolo"`},
		{"a bot's message", mention("<@U0BOT>", func(m map[string]any) { m["bot_id"] = "B0OTHER" }, planFileJSON), wantPayload, "does not start a run"},
		{"an edited message", mention("<@U0BOT>", func(m map[string]any) {
			m["edited"] = map[string]any{"user": testUser, "ts": "1743854401.000000"}
		}, planFileJSON), wantInput, "an edited message does not start a run"},
		{"mention without a channel", mention("<@U0BOT>", func(m map[string]any) { delete(m, "channel") }, planFileJSON), wantPayload, "no channel"},
		{"mention with a bad ts", mention("<@U0BOT>", func(m map[string]any) { m["ts"] = "12:00" }, planFileJSON), wantPayload, `invalid ts "12:00"`},
		{"nil event", func() error { _, err := ParseMention(nil); return err }, wantPayload, "no app_mention event"},
		{"huge mention text", mention(strings.Repeat("y", MaxMentionChars+1), nil, planFileJSON), wantInput, "the limit is 40000"},
		{"control character in a mention", mention("<@U0BOT> \x1b]0;pwned\x07", nil, planFileJSON), wantInput, "control character (U+001B)"},
		{"two files", func() error {
			m, err := ParseMention(mentionEvent(t, "<@U0BOT>", nil, planFileJSON, fileJSON("shot.png", "image/png", "png", 10)))
			if err != nil {
				return err
			}
			_, err = m.PlanFile(1 << 20)
			return err
		}, wantInput, `2 files attached ("plan.md", "shot.png")`},

		// Plan files.
		{"an image", planFile(FileRef{Name: "diagram.png", Mimetype: "image/png", Filetype: "png", Size: 10}), wantInput, `"diagram.png" is an image (image/png)`},
		{"a PDF", planFile(FileRef{Name: "plan.pdf", Mimetype: "application/pdf", Filetype: "pdf", Size: 10}), wantInput, `"plan.pdf" is a PDF`},
		{"a binary named .md", planFile(FileRef{Name: "plan.md", Mimetype: "application/octet-stream", Filetype: "binary", Size: 10}), wantInput,
			`"plan.md" is a binary file (application/octet-stream)`},
		{"an archive", planFile(FileRef{Name: "plans.zip", Mimetype: "application/zip", Filetype: "zip", Size: 10}), wantInput, "a binary file (application/zip)"},
		{"a code snippet", planFile(FileRef{Name: "run.py", Mimetype: "text/x-python", Filetype: "python", Size: 10}), wantInput, `"run.py" is text/x-python text`},
		{"a file over the limit", planFile(FileRef{Name: "plan.md", Mimetype: "text/plain", Filetype: "markdown", Size: 3 << 20}), wantInput,
			`"plan.md" is 3.0 MiB; gonogo reads plans up to 1.0 MiB`},
		{"an empty file", planFile(FileRef{Name: "plan.md", Mimetype: "text/plain", Filetype: "markdown"}), wantInput, `"plan.md" is empty`},
		{"an external file", planFile(FileRef{Name: "Plan", Filetype: "gdoc", External: true}), wantInput, "kept outside Slack"},
		{"an executable with no type", planFile(FileRef{Name: "plan.exe", Size: 10}), wantInput, `"plan.exe" is a .exe file`},
		{"no type at all", planFile(FileRef{Name: "plan", Size: 10}), wantInput, `Slack says nothing about the type of "plan"`},
		{"a file known by id only", planFile(FileRef{ID: "F0SHARED", NeedsInfo: true}), wantFileInfo, "file F0SHARED"},
		{"binary content", content([]byte("# Plan\x00\x01\x02")), wantInput, "binary content at byte 6"},
		{"UTF-16 content", content([]byte{0xff, 0xfe, '#', 0, ' ', 0}), wantInput, "is UTF-16 text"},
		{"content over the limit", content(make([]byte, 1<<20+1)), wantInput, "is 1.0 MiB; gonogo reads plans up to 1.0 MiB"},
		{"blank content", content([]byte("\ufeff \n\n")), wantInput, `"plan.md" is empty`},
		{"oversized reply", func() error { return CheckArtifact(strings.Repeat("z", MaxEditBytes+1), MaxEditBytes) }, wantInput,
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
			case wantInput:
				if !errors.As(err, &ie) || ie.Problem == "" {
					t.Errorf("%T %v is not an *InputError", err, err)
				}
			case wantPayload:
				if !errors.Is(err, ErrBadPayload) {
					t.Errorf("%v does not wrap ErrBadPayload", err)
				}
			case wantRefusal:
				if !errors.As(err, &r) || r.Reason == "" {
					t.Errorf("%T %v is not an *engine.Refusal", err, err)
				}
			case wantFileInfo:
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
