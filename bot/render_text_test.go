package bot

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
)

// TestEscape puts markup in every piece of user text a run carries and
// checks none of it reaches Slack as markup.
func TestEscape(t *testing.T) {
	const evil = "<!channel> <@UEVIL> <https://evil.example|click> R&D <#C0EVIL> &amp;"
	p := planInput()
	p.Source = "plan " + evil + ".md"
	p.Confidence, p.ConfidenceReason = "High "+evil, evil
	p.Steps[0].Skill, p.Steps[0].Effort = "deliver-prd"+evil, evil
	p.Manual[0].Effort, p.Manual[0].Reason = evil, evil
	p.Deferred[0].Skill = evil
	p.Warnings = []string{evil}
	p.Context = evil
	s := newRun(t, goldenRunID, p, engine.StartOptions{StartedBy: "alice " + evil})
	s.start(1)
	s.finish(1, engine.Finished{Result: engine.ResultFailed, Reason: evil, Summary: evil})
	s.decide(1, engine.DecideRedo, alice, evil)
	s.produce(1, evil)
	v := s.view()
	v.Preview, v.ArtifactName, v.ArtifactLink = evil, evil, "https://evil.example/x|<!channel>"
	v.AbortedBy = evil
	ref := StepRef{Run: goldenRunID, Step: 1, Attempt: 2}
	outs := []any{Header(s.r, v), StepMessage(s.r, 1, v), Interrupted(s.r, 1, v), Reminder(s.r, 1, v), Halt(s.r, v),
		Refusal(&engine.Refusal{Reason: engine.RefuseUnknownSkill, Message: evil, Source: evil, Suggestions: map[string][]string{evil: {evil}}}, engine.InputChain),
		InputProblem(&InputError{Problem: evil, Usage: evil}),
		RunsList([]engine.RunSummary{{ID: engine.RunID(evil), Source: evil, State: engine.RunState(evil), Input: engine.InputKind(evil)}}, map[engine.RunID]string{engine.RunID(evil): evil}),
		EditModal(ref, evil, evil), RedoModal(ref, evil), EditTooLongModal(ref, evil, 5000),
		EditFromReplyModal(ref, evil, Reply{User: evil, TS: evil, File: evil, FileID: evil, Chars: 10}),
	}
	s.decide(1, engine.DecideAbort, bob, "")
	outs = append(outs, StepMessage(s.r, 1, v), Completion(s.r, v), Halt(s.r, v))
	for i, out := range outs {
		raw, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		checkMarkup(t, raw, alice, bob, starter)
		switch x := out.(type) {
		case []slack.Block:
			if err := checkBlocks(x); err != nil {
				t.Errorf("output %d: %v", i, err)
			}
			if fb := FallbackText(x); strings.Contains(fb, "<!channel>") || strings.Contains(fb, "<@UEVIL>") {
				t.Errorf("output %d: fallback text carries markup: %q", i, fb)
			}
		case slack.ModalViewRequest:
			if err := checkModal(x); err != nil {
				t.Errorf("output %d: %v", i, err)
			}
		}
	}
	// Escaped, not dropped: the reader still sees what the text says.
	if raw, _ := json.Marshal(StepMessage(s.r, 1, v)); !bytes.Contains(raw, []byte(`R\u0026amp;D`)) {
		t.Errorf("the step message does not show R&D escaped: %s", raw)
	}
	// The edit modal shows the artifact as it is, for editing.
	if got := EditModal(ref, "deliver-prd", evil).Blocks.BlockSet[1].(*slack.InputBlock).Element.(*slack.PlainTextInputBlockElement).InitialValue; got != evil {
		t.Errorf("edit modal initial value %q, want the artifact unchanged", got)
	}
}

// TestCut checks the cutter on composed mrkdwn: within the limit, valid
// UTF-8, and never inside an entity or a token.
func TestCut(t *testing.T) {
	s := "ab &amp; <@U0ALICE1> 😀😀 <!date^1^{time}|14:05 UTC> end"
	for max := 0; max <= textLen(s)+1; max++ {
		got := cut(s, max)
		if n := textLen(got); n > max {
			t.Fatalf("cut(%d) = %q, %d characters", max, got, n)
		}
		if !utf8.ValidString(got) {
			t.Fatalf("cut(%d) = %q: not UTF-8", max, got)
		}
		head := strings.TrimSuffix(got, "…")
		if strings.Count(head, "<") != strings.Count(head, ">") || strings.Count(head, "&") != strings.Count(head, ";") {
			t.Fatalf("cut(%d) = %q splits a token or an entity", max, got)
		}
		if max >= textLen(s) && got != s {
			t.Fatalf("cut(%d) = %q, want it whole", max, got)
		}
	}
	if got := plain("a<b & c😀d", 6); got != "a<b &…" {
		t.Errorf("plain = %q", got)
	}
	if got := clean("a\x00b\r\nc\u202ed\te"); got != "a␀b\nc<U+202E>d\te" { // shown, as on a terminal
		t.Errorf("clean = %q", got)
	}
}
