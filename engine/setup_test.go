package engine

import (
	"errors"
	"reflect"
	"testing"
	"testing/synctest"
	"time"
)

func TestDiffSetup(t *testing.T) {
	base := &Setup{Runner: "command", RunnerCmd: "/a", Skills: []string{"/s"}, Workflows: "/w"}
	cases := []struct {
		name     string
		from, to *Setup
		want     []SetupChange
	}{
		{"same", base, base.Clone(), nil},
		{"agent", base, &Setup{Runner: "command", RunnerCmd: "/b", Skills: []string{"/s"}, Workflows: "/w"},
			[]SetupChange{{Field: "runner-cmd", From: "/a", To: "/b"}}},
		{"runner and skills", base, &Setup{Runner: "claude", Skills: []string{"/s", "/t"}, Workflows: "/w"},
			[]SetupChange{{"runner", "command", "claude"}, {"runner-cmd", "/a", ""}, {"skills", "/s", "/s /t"}}},
		{"nothing recorded before", nil, base,
			[]SetupChange{{"runner", "", "command"}, {"runner-cmd", "", "/a"}, {"skills", "", "/s"}, {"workflows", "", "/w"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := DiffSetup(c.from, c.to); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("DiffSetup = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestChangeSetup(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	evs, err := NewRun("r1", Plan{Input: InputChain, Steps: []PlanStep{{Skill: "a"}}},
		StartOptions{StartedBy: "ann", Setup: &Setup{Runner: "command", RunnerCmd: "/a"}}, now)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Fold(&Run{}, evs)
	if err != nil {
		t.Fatal(err)
	}
	if r.Setup == nil || r.Setup.RunnerCmd != "/a" {
		t.Fatalf("started with setup %+v", r.Setup)
	}
	to := Setup{Runner: "command", RunnerCmd: "/b"}
	evs, err = ChangeSetup(r, to, "bob", now)
	if err != nil || len(evs) != 1 || evs[0].Type != EvSetupChanged || evs[0].Actor != "bob" || evs[0].Seq != r.Seq+1 {
		t.Fatalf("ChangeSetup = %+v, %v", evs, err)
	}
	after, err := Fold(r, evs)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(after.Setup, &to) || r.Setup.RunnerCmd != "/a" {
		t.Fatalf("after %+v, before %+v: the change must make a new run", after.Setup, r.Setup)
	}
	ended, err := Fold(after, stamp(after, now, Event{Type: EvRunFinished, State: RunAborted}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ChangeSetup(ended, Setup{Runner: "claude"}, "bob", now); !errors.Is(err, ErrStale) {
		t.Fatalf("a finished run's setup changed: %v", err)
	}
}

// Record applies a decision under Decide's rules and starts nothing; the
// service records a setup with runs started without one.
func TestServiceRecordStartsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		setup := &Setup{Runner: "command", RunnerCmd: "/opt/agent", Skills: []string{"/s"}}
		h := newHarnessWith(t, 4, false, func(_ *harness, c *ServiceConfig) { c.Setup = setup })
		id := h.start(h.chain(Flags{}, "deliver-prd", "deliver-user-stories"))
		synctest.Wait()
		r := h.expect(id, RunWaiting, "waiting/PRODUCED", "pending")
		if !reflect.DeepEqual(r.Setup, setup) {
			t.Fatalf("recorded setup %+v, want the service's %+v", r.Setup, setup)
		}
		stale := h.decision(id, 1, DecideApprove)
		stale.Attempt = 2
		if _, err := h.svc.Record(t.Context(), id, stale, nil); !errors.Is(err, ErrStale) {
			t.Fatalf("a stale decision: %v", err)
		}
		if _, err := h.svc.Record(t.Context(), id, h.decision(id, 1, DecideApprove), nil); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		h.expect(id, RunRunning, "done/PRODUCED", "pending")
		h.checkJournal(id)
		// Resume starts what the decision made ready.
		if _, err := h.svc.Resume(t.Context(), id, ""); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		h.expect(id, RunWaiting, "done/PRODUCED", "waiting/PRODUCED")
	})
}
