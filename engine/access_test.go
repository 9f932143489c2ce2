package engine

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestMayDecide(t *testing.T) {
	approvers := []string{"U-apr", "S-rev"}
	for _, c := range []struct {
		name, user string
		m          Member
		want       bool
	}{
		{"the operator decides any run", "alice", Member{Operator: true}, true},
		{"the starter", "U-start", Member{}, true},
		{"an approver named", "U-apr", Member{}, true},
		{"a member of an approver group", "U-gr", Member{Groups: []string{"S-rev"}}, true},
		{"a member of another group", "U-gr", Member{Groups: []string{"S-other"}}, false},
		{"anyone else", "U-x", Member{}, false},
		{"nobody named", "", Member{}, false},
		{"an outsider who started the run", "U-start", Member{Outsider: true}, false},
		{"an outsider in an approver group", "U-gr", Member{Outsider: true, Groups: []string{"S-rev"}}, false},
		{"an outsider the approvers name", "U-apr", Member{Outsider: true}, true},
	} {
		if got := MayDecide("U-start", approvers, c.user, c.m); got != c.want {
			t.Errorf("%s: MayDecide = %v, want %v", c.name, got, c.want)
		}
	}
	if !KeptOut("U-x", Member{Outsider: true}, approvers) || KeptOut("U-apr", Member{Outsider: true}, approvers) ||
		KeptOut("U-x", Member{}, approvers) {
		t.Error("KeptOut keeps out only outsiders the approvers do not name")
	}
}

// directory is a front end's Members: who is an outsider, who is in which
// group, and which questions it was asked.
type directory struct {
	outsiders map[string]bool
	groups    map[string][]string // group -> members

	mu    sync.Mutex
	asked []string // "user:group,group"
}

func (d *directory) members(_ context.Context, user string, groups []string) (Member, error) {
	d.mu.Lock()
	d.asked = append(d.asked, user+":"+joinNames(groups))
	d.mu.Unlock()
	m := Member{Outsider: d.outsiders[user]}
	for _, g := range groups {
		if slices.Contains(d.groups[g], user) {
			m.Groups = append(m.Groups, g)
		}
	}
	return m, nil
}

func (d *directory) questions() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.asked)
}

func joinNames(ns []string) string {
	out := ""
	for i, n := range ns {
		if i > 0 {
			out += ","
		}
		out += n
	}
	return out
}

func TestServiceRefusesWhoMayNotDecide(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := &directory{outsiders: map[string]bool{"U-guest": true}, groups: map[string][]string{"S-rev": {"U-gr"}}}
		h := newHarnessWith(t, 4, true, func(_ *harness, c *ServiceConfig) { c.Members = dir.members })
		ctx := t.Context()
		r, err := h.svc.Start(ctx, h.chain(Flags{}, "deliver-prd", "deliver-user-stories"), StartOptions{StartedBy: "U-ana",
			Origin: Origin{Channel: "C1"}, Oversight: Oversight{Approvers: []string{"U-apr", "S-rev"}}})
		if err != nil {
			t.Fatal(err)
		}
		id := r.ID
		synctest.Wait()
		// Step 1 runs: a stranger can neither cancel it, nor pause or abort
		// the run.
		before := h.load(id)
		refused := func(what string, err error) {
			t.Helper()
			if !errors.Is(err, ErrNotApprover) || !errors.Is(err, ErrForbidden) {
				t.Fatalf("%s by a stranger: %v, want ErrNotApprover", what, err)
			}
			if got := h.load(id); got.Seq != before.Seq {
				t.Fatalf("%s by a stranger changed the run (seq %d -> %d)", what, before.Seq, got.Seq)
			}
		}
		refused("cancel", h.svc.Cancel(ctx, id, 1, 1, "U-x"))
		_, err = h.svc.Pause(ctx, id, "U-x")
		refused("pause", err)
		_, err = h.svc.Abort(ctx, id, "U-x")
		refused("abort", err)
		if _, err := h.svc.Pause(ctx, id, "U-gr"); err != nil {
			t.Fatalf("pause by a member of an approver group: %v", err)
		}
		before = h.load(id)
		_, err = h.svc.Unpause(ctx, id, "U-guest", "")
		refused("resume", err)
		if _, err := h.svc.Unpause(ctx, id, "U-apr", ""); err != nil {
			t.Fatalf("resume by an approver: %v", err)
		}
		h.runner.gate <- struct{}{}
		synctest.Wait()
		before = h.expect(id, RunWaiting, "waiting/PRODUCED", "pending")
		for _, who := range []string{"U-x", "U-guest", ""} {
			d := Decision{Kind: DecideApprove, Actor: who, Step: 1, Attempt: 1, Key: "k-" + who}
			_, err := h.svc.Decide(ctx, id, d, nil)
			refused("a decision", err)
			_, err = h.svc.Record(ctx, id, d, nil)
			refused("a recorded decision", err)
		}
		if err := h.svc.MayDecide(ctx, before, "U-gr"); err != nil {
			t.Fatalf("a member of an approver group may decide: %v", err)
		}
		if _, err := h.svc.Decide(ctx, id, Decision{Kind: DecideApprove, Actor: "U-gr", Step: 1, Attempt: 1, Key: "k-gr"}, nil); err != nil {
			t.Fatal(err)
		}
		// The directory is asked only what the rule needs: an approver named
		// is never looked up, the starter only as a person, anyone else
		// about the run's approvers.
		if _, err := h.svc.Abort(ctx, id, "U-ana"); err != nil {
			t.Fatal(err)
		}
		for _, q := range dir.questions() {
			switch q {
			case "U-ana:", "U-x:U-apr,S-rev", "U-guest:U-apr,S-rev", ":U-apr,S-rev", "U-gr:U-apr,S-rev":
			default:
				t.Errorf("the directory was asked %q", q)
			}
		}
	})
}

func TestOutsiderStarterMayNotDecide(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := &directory{outsiders: map[string]bool{"U-ana": true, "U-apr": true}}
		h := newHarnessWith(t, 4, false, func(_ *harness, c *ServiceConfig) { c.Members = dir.members })
		r, err := h.svc.Start(t.Context(), h.chain(Flags{}, "deliver-prd"), StartOptions{StartedBy: "U-ana",
			Oversight: Oversight{Approvers: []string{"U-apr"}}})
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		d := h.decision(r.ID, 1, DecideApprove)
		if _, err := h.svc.Decide(t.Context(), r.ID, d, nil); !errors.Is(err, ErrNotApprover) {
			t.Fatalf("an outsider's decision on their own run: %v, want ErrNotApprover", err)
		}
		d.Actor = "U-apr"
		if _, err := h.svc.Decide(t.Context(), r.ID, d, nil); err != nil {
			t.Fatalf("an outsider the approvers name: %v", err)
		}
	})
}

// A run recorded before runs kept their approvers is judged by the
// approvers the front end names now, as it was then.
func TestRunWithoutOversightTakesTheServiceApprovers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := &directory{}
		h := newHarnessWith(t, 4, false, func(_ *harness, c *ServiceConfig) {
			c.Members, c.Approvers = dir.members, []string{"U-old"}
		})
		evs, err := NewRun("r-old", h.chain(Flags{}, "deliver-prd"), StartOptions{StartedBy: "U-ana"}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		evs[0].Start.Oversight = nil
		r, err := Fold(&Run{}, evs)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.store.Commit(t.Context(), Commit{Run: r, Events: evs}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.svc.Resume(t.Context(), r.ID, ""); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		r = h.expect(r.ID, RunWaiting, "waiting/PRODUCED")
		if r.Oversight != nil {
			t.Fatalf("the old run reads with oversight %+v", r.Oversight)
		}
		if err := h.svc.MayDecide(t.Context(), r, "U-new"); !errors.Is(err, ErrNotApprover) {
			t.Fatalf("someone the front end does not name: %v", err)
		}
		if _, err := h.svc.Decide(t.Context(), r.ID, Decision{Kind: DecideApprove, Actor: "U-old", Step: 1, Attempt: 1}, nil); err != nil {
			t.Fatalf("an approver the front end names: %v", err)
		}
	})
}

// gonogo's own retries are never refused, whoever may decide.
func TestAutomaticRetriesAreNotRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nobody := func(context.Context, string, []string) (Member, error) { return Member{}, nil }
		h, _ := newWorkflowHarness(t, 4, false, nil)
		h.svc.members = nobody
		h.script("flaky", failed("boom"))
		id := h.run(Flags{}, retrying(ws("s", "flaky"), 1, time.Minute))
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		r := h.expect(id, RunCompleted, "done/PRODUCED")
		if d := r.Step(1).Decisions; len(d) != 1 || d[0].Actor != RetryActor {
			t.Fatalf("decisions %+v, want gonogo's retry", d)
		}
	})
}
