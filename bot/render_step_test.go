package bot

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
)

// TestButtonsMatchAllowed checks that a checkpoint offers exactly the
// decisions engine.Allowed allows, with the exact labels, the action ids
// of ids.go and values naming the step's latest attempt.
func TestButtonsMatchAllowed(t *testing.T) {
	cases := []struct {
		name   string
		build  func(s *script)
		step   int
		render func(r *engine.Run, n int, v View) []slack.Block
	}{
		{"produced", func(s *script) { s.produce(1, "x") }, 1, StepMessage},
		{"empty", func(s *script) {
			s.start(1)
			s.finish(1, engine.Finished{Result: engine.ResultEmpty, Reason: "nothing"})
		}, 1, StepMessage},
		{"failed", func(s *script) { s.fail(1, "boom") }, 1, StepMessage},
		{"not-executed", func(s *script) {
			s.start(1)
			s.finish(1, engine.Finished{Result: engine.ResultNotExecuted, Reason: "NOT EXECUTED - dry run"})
		}, 1, StepMessage},
		{"interrupted", func(s *script) { s.start(1); s.interrupt() }, 1, StepMessage},
		{"interrupted notice", func(s *script) { s.start(1); s.interrupt() }, 1, Interrupted},
		{"second attempt", func(s *script) {
			s.fail(1, "boom")
			s.decide(1, engine.DecideRedo, alice, "")
			s.produce(1, "y")
		}, 1, StepMessage},
		{"halt on failed", func(s *script) { s.fail(1, "boom") }, 1, func(r *engine.Run, _ int, v View) []slack.Block { return Halt(r, v) }},
		{"done", func(s *script) { s.produce(1, "x"); s.decide(1, engine.DecideApprove, alice, "") }, 1, StepMessage},
		{"skipped", func(s *script) { s.produce(1, "x"); s.decide(1, engine.DecideSkip, alice, "") }, 1, StepMessage},
		{"aborted", func(s *script) { s.produce(1, "x"); s.decide(1, engine.DecideAbort, alice, "") }, 1, StepMessage},
		{"pending", func(s *script) {}, 2, StepMessage},
		{"running", func(s *script) { s.start(1) }, 1, StepMessage},
		{"failed, on_error gate", func(s *script) {
			s.r.Steps[0].Rules.OnError = engine.ErrorPolicy{Kind: engine.OnErrorGate}
			s.fail(1, "boom")
		}, 1, StepMessage},
		{"halt on failed, on_error gate", func(s *script) {
			s.r.Steps[0].Rules.OnError = engine.ErrorPolicy{Kind: engine.OnErrorGate}
			s.fail(1, "boom")
		}, 1, func(r *engine.Run, n int, v View) []slack.Block { return Halt(r, v.onStep(n)) }},
		{"failed, retry pending", func(s *script) {
			s.r.Steps[0].Rules.OnError = engine.ErrorPolicy{Kind: engine.OnErrorRetry, Retries: 2}
			s.fail(1, "boom")
		}, 1, StepMessage},
		{"retry notice", func(s *script) {
			s.r.Steps[0].Rules.OnError = engine.ErrorPolicy{Kind: engine.OnErrorRetry, Retries: 2}
			s.fail(1, "boom")
		}, 1, func(r *engine.Run, n int, v View) []slack.Block { return Halt(r, v.onStep(n)) }},
		{"second of two failed steps", func(s *script) {
			s.r.Steps[1].DependsOn = nil // parallel, as in a workflow
			s.fail(1, "boom")
			s.fail(2, "bang")
		}, 2, func(r *engine.Run, n int, v View) []slack.Block { return Halt(r, v.onStep(n)) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newRun(t, goldenRunID, chainInput("deliver-prd", "deliver-user-stories"), engine.StartOptions{})
			c.build(s)
			st := s.r.Step(c.step)
			var want []string
			for _, k := range engine.Allowed(st) {
				want = append(want, buttonID(k))
			}
			if st.Status == engine.StepRunning {
				want = []string{ActionCancel}
			}
			raw, err := json.Marshal(c.render(s.r, c.step, s.view()))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, b := range buttons(t, raw) {
				got = append(got, b.ActionID)
				ref, err := ParseStepRef(b.Value)
				if err != nil {
					t.Fatalf("button %s: %v", b.ActionID, err)
				}
				if wantRef := (StepRef{Run: s.r.ID, Step: st.N, Attempt: s.latest(st.N)}); ref != wantRef {
					t.Errorf("button %s carries %+v, want %+v", b.ActionID, ref, wantRef)
				}
				if label := labels[b.ActionID]; b.Text != label {
					t.Errorf("button %s is labelled %q, want %q", b.ActionID, b.Text, label)
				}
				if (b.ActionID == ActionAbort || b.ActionID == ActionCancel) != b.Confirm {
					t.Errorf("button %s: confirm dialog %v", b.ActionID, b.Confirm)
				}
				if b.ActionID == ActionAbort && b.ConfirmTitle != "Abort the run?" {
					t.Errorf("abort confirm title %q", b.ConfirmTitle)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("buttons %v, want %v (engine.Allowed %v, status %s)", got, want, engine.Allowed(st), st.Status)
			}
		})
	}
}

var labels = map[string]string{
	ActionApprove: "Approve", ActionEdit: "Edit", ActionSkip: "Skip", ActionRedo: "Redo", ActionAbort: "Abort", ActionCancel: "Cancel",
}

func buttonID(k engine.DecisionKind) string {
	return map[engine.DecisionKind]string{engine.DecideApprove: ActionApprove, engine.DecideEdit: ActionEdit,
		engine.DecideSkip: ActionSkip, engine.DecideRedo: ActionRedo, engine.DecideAbort: ActionAbort}[k]
}

type shownButton struct {
	ActionID, Value, Text string
	Confirm               bool
	ConfirmTitle          string
}

func buttons(t testing.TB, raw []byte) []shownButton {
	var out []shownButton
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if x["type"] == "button" {
				b := shownButton{}
				b.ActionID, _ = x["action_id"].(string)
				b.Value, _ = x["value"].(string)
				if txt, ok := x["text"].(map[string]any); ok {
					b.Text, _ = txt["text"].(string)
				}
				if c, ok := x["confirm"].(map[string]any); ok {
					b.Confirm = true
					if title, ok := c["title"].(map[string]any); ok {
						b.ConfirmTitle, _ = title["text"].(string)
					}
				}
				out = append(out, b)
				return
			}
			for _, k := range slices.Sorted(mapKeys(x)) {
				walk(x[k])
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(decodeJSON(t, raw))
	return out
}
