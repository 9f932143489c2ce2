package bot

import (
	"errors"
	"testing"

	"github.com/gonogo/gonogo/engine"
)

func TestParseAction(t *testing.T) {
	for id, kind := range map[string]ActionKind{
		ActionApprove: ActApprove, ActionEdit: ActEdit, ActionSkip: ActSkip, ActionRedo: ActRedo,
		ActionAbort: ActAbort, ActionCancel: ActCancel, ActionSaveWorkflow: ActSaveWorkflow,
		ActionStart: ActStart, ActionCancelStart: ActCancelStart,
	} {
		t.Run(id, func(t *testing.T) {
			got, err := ParseAction(actionCallback(t, id, testRef.Value(), nil))
			if err != nil {
				t.Fatal(err)
			}
			want := Action{
				Kind: kind, Ref: testRef, User: testUser, Team: testTeam, Channel: testChannel,
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
		got, err := ParseAction(actionCallback(t, ActionApprove, testRef.Value(), func(m map[string]any) {
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
		got, err := ParseAction(actionCallback(t, ActionSkip, testRef.Value(), func(m map[string]any) {
			m["container"] = map[string]any{"type": "message"}
		}))
		if err != nil {
			t.Fatal(err)
		}
		if got.MessageTS != "1743854300.000200" || got.ThreadTS != "1743854000.000100" || got.Channel != testChannel {
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
	for _, k := range []ActionKind{ActCancel, ActSaveWorkflow, ActStart, ActCancelStart, ActPickPlan} {
		if _, ok := k.Decision(); ok {
			t.Errorf("%s is a decision", k)
		}
	}
}

func TestPlanPick(t *testing.T) {
	p := PlanPick{User: "U0ANA", MentionTS: "1743854400.000300", File: "F0PLAN", Flags: engine.Flags{Auto: true, Thread: true}, Check: true}
	got, err := ParsePlanPick(p.Value())
	if err != nil || got != p {
		t.Fatalf("ParsePlanPick(%q) = %+v, %v; want %+v", p.Value(), got, err, p)
	}
	a, err := ParseAction(actionCallback(t, ActionPickPlan, p.Value(), nil))
	if err != nil || a.Kind != ActPickPlan || a.Pick != p || a.Ref != (StepRef{}) {
		t.Fatalf("ParseAction of a pick = %+v, %v", a, err)
	}
	for _, bad := range []string{"", testRef.Value(), "v1|pick|U0ANA|1743854400.000300|F0PLAN|z", "v1|pick|U0ANA|now|F0PLAN|",
		"v1|pick|U0<ANA|1743854400.000300|F0PLAN|", "v1|pick|U0ANA|1743854400.000300|F0PLAN"} {
		if _, err := ParsePlanPick(bad); err == nil {
			t.Errorf("ParsePlanPick(%q) accepted", bad)
		}
	}
	// A pick's button with a step reference, or a step's with a pick, is
	// no gonogo button.
	if _, err := ParseAction(actionCallback(t, ActionPickPlan, testRef.Value(), nil)); !errors.Is(err, ErrBadPayload) {
		t.Errorf("a pick with a step reference: %v", err)
	}
	if _, err := ParseAction(actionCallback(t, ActionStart, p.Value(), nil)); !errors.Is(err, ErrBadPayload) {
		t.Errorf("a Start with a pick: %v", err)
	}
}
