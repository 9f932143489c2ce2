package bot

import (
	"errors"
	"reflect"
	"testing"

	"github.com/slack-go/slack/slackevents"

	"github.com/gonogo/gonogo/engine"
)

func TestParseMention(t *testing.T) {
	tests := []struct {
		name string
		ev   *slackevents.AppMentionEvent
		want Mention
	}{
		{
			"flags and words, a new thread under the mention",
			mentionEvent(t, "<@U0BOT> --auto please run this plan", nil, planFileJSON),
			Mention{Flags: engine.Flags{Auto: true}, Text: "please run this plan", ThreadTS: "1743854400.000300"},
		},
		{
			"in a thread, dashes from a phone, prose dashes kept, nothing after a lone --",
			mentionEvent(t, "here it is —dry-run <@U0BOT|gonogo> —thread a well-known — plan -- --force-auto is text", func(m map[string]any) {
				m["thread_ts"] = "1743850000.000100"
			}, planFileJSON),
			Mention{Flags: engine.Flags{DryRun: true, Thread: true}, Text: "here it is a well-known — plan --force-auto is text",
				ThreadTS: "1743850000.000100"},
		},
		{
			"--yes and check, which any case and punctuation leave a word",
			mentionEvent(t, "<@U0BOT> Check: this —yes", nil, planFileJSON),
			Mention{Yes: true, Check: true, Text: "Check: this", ThreadTS: "1743854400.000300"},
		},
		{
			"check inside a word, or after a lone --, is no check",
			mentionEvent(t, "<@U0BOT> rechecked -- check", nil, planFileJSON),
			Mention{Text: "rechecked check", ThreadTS: "1743854400.000300"},
		},
		{
			"a user of another organization",
			mentionEvent(t, "<@U0BOT>", func(m map[string]any) { m["user_team"] = "T0OTHER"; m["source_team"] = "T0OTHER" }, planFileJSON),
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
			want.User, want.Channel, want.TS = testUser, testChannel, "1743854400.000300"
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
		m, err := ParseMention(mentionEvent(t, "<@U0BOT>", nil, map[string]any{"id": "F0SHARED", "mode": "file_access", "file_access": "check_file_info"}))
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

func TestPlanTypedAndSection7(t *testing.T) {
	files := []FileRef{
		{ID: "F1", Name: "notes.md", Filetype: "markdown", Size: 10},
		{ID: "F2", Name: "shot.png", Mimetype: "image/png", Filetype: "png", Size: 10},
		{ID: "F3", Name: "plan.txt", Mimetype: "text/plain", Size: 10},
		{ID: "F4", Name: "big.md", Filetype: "markdown", Size: 50 << 20},
	}
	typed, others := PlanTyped(files)
	var ids []string
	for _, f := range typed {
		ids = append(ids, f.ID)
	}
	if !reflect.DeepEqual(ids, []string{"F1", "F3", "F4"}) || len(others) != 1 || others[0].ID != "F2" {
		t.Errorf("typed %v, others %v; want F1, F3, F4 (sizes are checked on download) and F2", ids, others)
	}
	for body, want := range map[string]bool{
		"# Plan\n\n## Section 7. Prompts\n\n#### To execute P1: x\n\n**Skill:** `deliver-prd`\n\n**Prompt:**\n> go\n": true,
		"### Section 7. Prompts\n\n#### To execute P1: x\n":                                                           true,
		"# Notes\n\nSection 7 is mentioned in prose only.\n":                                                          false,
		"": false,
	} {
		if got := HasSection7([]byte(body), "x.md"); got != want {
			t.Errorf("HasSection7(%q) = %v, want %v", body, got, want)
		}
	}
}
