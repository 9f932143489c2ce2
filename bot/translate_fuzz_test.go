package bot

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/gonogo/gonogo/engine"
)

// The fuzz targets below hold every payload handler to the same promise:
// whatever arrives, the answer is a usable request or an error that says
// something and is of a kind the bot knows how to answer. More seeds live
// under testdata/fuzz/<target>/; run one long with, for example,
//
//	go test ./bot -run '^$' -fuzz FuzzParseCommand -fuzztime 5m

// checkErr fails unless err is one of the kinds a caller branches on.
func checkErr(t *testing.T, err error, refusalOK bool) {
	t.Helper()
	if err.Error() == "" {
		t.Fatal("empty error message")
	}
	var ie *InputError
	var r *engine.Refusal
	switch {
	case errors.As(err, &ie):
		if ie.Problem == "" {
			t.Fatalf("InputError without a problem: %#v", ie)
		}
	case refusalOK && errors.As(err, &r):
		if r.Message == "" || r.Reason == "" {
			t.Fatalf("refusal without reason or message: %#v", r)
		}
	case errors.Is(err, ErrBadPayload):
	default:
		t.Fatalf("error %T %q is neither bad input nor a bad payload", err, err)
	}
}

func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{
		"", "help", "runs", "runs x",
		"chain deliver-prd -> deliver-user-stories --thread -- mobile checkout",
		"Chain a, b then c &lt;x&gt; <https://x.io|x> <@U1|ana>",
		"chain a —dry-run — b --auto",
		`run wf --arg k="a b" --arg=j=“c d” -- ctx`,
		"run ../x", "run wf --arg", `run wf --arg k="`, "chain a\x00", "\u202e", "\xff",
		"run Release_Train --auto", "run release-2.yml", "run -x", "run 9-lives --arg k=v",
		"check a -> b --auto", "check chain run", "check run wf --arg k=v -- x", "check", "check run",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		cmd, err := ParseCommand(slashCommand(text))
		if err != nil {
			checkErr(t, err, true)
			return
		}
		if !utf8.ValidString(cmd.Text) {
			t.Fatalf("accepted text is not UTF-8: %q", cmd.Text)
		}
		kind := cmd.Kind
		if kind == CmdCheck {
			kind = cmd.Checks
		}
		switch kind {
		case CmdHelp, CmdRuns:
		case CmdChain:
			if len(cmd.Chain.Names) == 0 || cmd.Flags != cmd.Chain.Flags || cmd.Context != cmd.Chain.Context {
				t.Fatalf("chain %#v", cmd)
			}
			for _, n := range cmd.Chain.Names {
				if !engine.ValidSkillName(n) {
					t.Fatalf("invalid skill name %q accepted", n)
				}
			}
		case CmdRun:
			// The name must be one intake.Dir.Workflow accepts, so a refusal
			// about its form comes from the command, never from the file system.
			if err := checkRunWorkflowName(cmd.Workflow); err != nil || !engine.ValidSkillName(cmd.Workflow) {
				t.Fatalf("workflow %q accepted: %v", cmd.Workflow, err)
			}
			for k := range cmd.Args {
				if !argKeyRE.MatchString(k) {
					t.Fatalf("argument name %q accepted", k)
				}
			}
		default:
			t.Fatalf("unknown kind %q", cmd.Kind)
		}
	})
}

func FuzzParseAction(f *testing.F) {
	f.Add(testRef.Value(), ActionApprove)
	f.Add("v1|"+string(testRun)+"|+1|01", ActionAbort)
	f.Add("v1|../x|1|1", ActionEdit)
	f.Add("v1|a|1|1|1", ActionSkip)
	f.Add(testRef.Value(), "other_app_button")
	f.Add(testRef.Value(), ActionStart)
	f.Add(PlanPick{User: "U1", MentionTS: "1.2", File: "F1", Yes: true}.Value(), ActionPickPlan)
	f.Add("v1|pick|U1|1.2|F1|q", ActionPickPlan)
	f.Add("", "")
	f.Fuzz(func(t *testing.T, value, actionID string) {
		cb := slack.InteractionCallback{
			Type:      slack.InteractionTypeBlockActions,
			User:      slack.User{ID: testUser, TeamID: testTeam},
			Container: slack.Container{Type: "message", ChannelID: testChannel, MessageTs: "1743854300.000200"},
			ActionCallback: slack.ActionCallbacks{BlockActions: []*slack.BlockAction{{
				ActionID: actionID, Value: value, Type: "button", ActionTs: "1743854400.123456",
			}}},
		}
		a, err := ParseAction(cb)
		if err != nil {
			checkErr(t, err, false)
			return
		}
		if _, ok := actionKinds[actionID]; !ok {
			t.Fatalf("action id %q accepted", actionID)
		}
		if a.Kind == ActPickPlan {
			if back, err := ParsePlanPick(a.Pick.Value()); err != nil || back != a.Pick {
				t.Fatalf("pick %#v does not round-trip: %v", a.Pick, err)
			}
			return
		}
		if back, err := ParseStepRef(a.Ref.Value()); err != nil || back != a.Ref {
			t.Fatalf("ref %#v does not round-trip: %v", a.Ref, err)
		}
	})
}

func FuzzParseSubmission(f *testing.F) {
	f.Add(ModalEdit, testRef.Value(), "# PRD\n\nShip it.")
	f.Add(ModalEdit, testRef.Value(), " \t\n")
	f.Add(ModalEdit, testRef.Value(), strings.Repeat("é", 3001))
	f.Add(ModalRedo, testRef.Value(), "  shorter  ")
	f.Add(ModalEditReply, testRef.Value(), ReplyRef{TS: "1743854500.000400", File: "F1"}.Value())
	f.Add(ModalEditReply, testRef.Value(), "v1|reply|1.1|../x")
	f.Add(ModalEdit, "v1|x|1", "x")
	f.Add("other_modal", testRef.Value(), "x")
	f.Add(ModalSaveWorkflow, testRef.Value(), "deliver-prd-user-stories")
	f.Add(ModalSaveWorkflow, testRef.Value(), " Weekly_Review ")
	f.Add(ModalSaveWorkflow, testRef.Value(), "a/../../b")
	f.Fuzz(func(t *testing.T, callbackID, metadata, input string) {
		cb := slack.InteractionCallback{
			Type: slack.InteractionTypeViewSubmission,
			User: slack.User{ID: testUser, TeamID: testTeam},
			View: slack.View{
				ID: "V0EDIT", Type: slack.VTModal, CallbackID: callbackID, PrivateMetadata: metadata,
				State: &slack.ViewState{Values: map[string]map[string]slack.BlockAction{
					BlockArtifact:     {InputArtifact: {Value: input}},
					BlockFeedback:     {InputFeedback: {Value: input}},
					BlockReply:        {InputReply: {SelectedOption: slack.OptionBlockObject{Value: input}}},
					BlockWorkflowName: {InputWorkflowName: {Value: input}},
				}},
			},
		}
		s, err := ParseSubmission(cb)
		if err != nil {
			checkErr(t, err, false)
			return
		}
		if back, err := ParseStepRef(s.Ref.Value()); err != nil || back != s.Ref {
			t.Fatalf("ref %#v does not round-trip: %v", s.Ref, err)
		}
		switch s.Kind {
		case SubmitEdit:
			if s.Artifact != input || trimSpace(input) == "" || utf8.RuneCountInString(input) > maxModalInputText {
				t.Fatalf("edit %q accepted as %q", input, s.Artifact)
			}
		case SubmitRedo:
			if s.Feedback != trimSpace(input) {
				t.Fatalf("feedback %q read as %q", input, s.Feedback)
			}
		case SubmitEditReply:
			if back, err := ParseReplyRef(s.Reply.Value()); err != nil || back != s.Reply {
				t.Fatalf("reply %#v does not round-trip: %v", s.Reply, err)
			}
		case SubmitSaveWorkflow:
			if s.Name != trimSpace(input) || !engine.ValidSkillName(s.Name) || len(s.Name) > MaxWorkflowName {
				t.Fatalf("workflow name %q accepted as %q", input, s.Name)
			}
		default:
			t.Fatalf("unknown kind %q", s.Kind)
		}
	})
}

func FuzzParseMention(f *testing.F) {
	for _, s := range []string{
		"<@U0BOT> --auto run this", "<@U0BOT|gonogo> —dry-run — --thread", "--", "--x", "<@", "&amp;lt;@U1&gt;",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		ev := &slackevents.AppMentionEvent{
			User: testUser, Channel: testChannel, TimeStamp: "1743854400.000300", Text: text,
			Files: []slack.File{{ID: "F0PLAN", Name: "plan.md", Mimetype: "text/plain", Filetype: "markdown", Size: 10,
				URLPrivate: "https://files.slack.com/x"}},
		}
		m, err := ParseMention(ev)
		if err != nil {
			checkErr(t, err, false)
			return
		}
		if !utf8.ValidString(m.Text) || m.Text != trimSpace(m.Text) {
			t.Fatalf("text %q", m.Text)
		}
		if _, err := m.PlanFile(1 << 20); err != nil {
			t.Fatalf("PlanFile: %v", err)
		}
	})
}
