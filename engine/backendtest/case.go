package backendtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gonogo/gonogo/engine"
)

// waitLimit bounds every wait of a case: far longer than any backend
// takes, so that only a change that never comes fails a case. No case
// asserts how long anything took.
const waitLimit = 2 * time.Minute

// starter starts every run; the backends' members say who may decide.
const starter = "U-ana"

// kase is one case under way: its backend and the parts it was made of.
type kase struct {
	t      *testing.T
	o      Opened
	b      Backend
	runner *runner
	notes  *notices
	keys   int
}

func newCase(t *testing.T) *kase {
	return &kase{t: t, runner: newRunner(), notes: &notices{}}
}

func (c *kase) ctx() context.Context { return c.t.Context() }

// start starts a run of the two skills' chain, adjusted by adjust when
// not nil.
func (c *kase) start(adjust func(*engine.Plan)) engine.RunID {
	c.t.Helper()
	p, err := engine.PreflightChain(engine.ChainExpr{Source: strings.Join(skills, " -> "), Names: skills, Context: "saved searches"},
		catalog(), engine.DefaultPolicy())
	if err != nil {
		c.t.Fatal(err)
	}
	if adjust != nil {
		adjust(&p)
	}
	r, err := c.b.Start(c.ctx(), p, engine.StartOptions{StartedBy: starter})
	if err != nil {
		c.t.Fatalf("start: %v", err)
	}
	if r.ID == "" || len(r.Steps) != len(skills) || r.StartedBy != starter {
		c.t.Fatalf("start answered run %q of %d steps started by %q", r.ID, len(r.Steps), r.StartedBy)
	}
	return r.ID
}

// await returns run id once ok holds for it, as the backend reads it; it
// looks again on each change the backend tells of.
func (c *kase) await(id engine.RunID, what string, ok func(*engine.Run) bool) *engine.Run {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.ctx(), waitLimit)
	defer cancel()
	for {
		changed := c.notes.after(id)
		r, err := c.b.Load(ctx, id)
		if err == nil && ok(r) {
			return r
		}
		select {
		case <-changed:
		case <-ctx.Done():
			c.t.Fatalf("run %s never came to be %s: it is %s (%v)", id, what, brief(r), err)
		}
	}
}

// waiting awaits step n waiting for a decision on its attempt a.
func (c *kase) waiting(id engine.RunID, n, a int) *engine.Run {
	c.t.Helper()
	return c.await(id, fmt.Sprintf("waiting on step %d attempt %d", n, a), func(r *engine.Run) bool {
		st := r.Step(n)
		return st != nil && st.Status == engine.StepWaiting && st.Latest() != nil && st.Latest().N == a
	})
}

// ended awaits the run's end, with every attempt's end recorded (an
// attempt an abort stopped is recorded after the abort).
func (c *kase) ended(id engine.RunID) *engine.Run {
	c.t.Helper()
	return c.await(id, "ended", func(r *engine.Run) bool {
		for _, s := range r.Steps {
			if l := s.Latest(); l != nil && l.Finished.IsZero() {
				return false
			}
		}
		return r.Finished()
	})
}

// jobStarted awaits the runner's start of step n's attempt a.
func (c *kase) jobStarted(id engine.RunID, n, a int) {
	c.t.Helper()
	limit := time.NewTimer(waitLimit)
	defer limit.Stop()
	select {
	case j := <-c.runner.started:
		if j.Run != id || j.Step != n || j.Attempt != a {
			c.t.Fatalf("the runner started run %s step %d attempt %d, want %s step %d attempt %d", j.Run, j.Step, j.Attempt, id, n, a)
		}
	case <-limit.C:
		c.t.Fatalf("the runner never started run %s step %d attempt %d", id, n, a)
	}
}

// decision is a decision by the starter on step n's latest attempt, with
// a key of its own.
func (c *kase) decision(id engine.RunID, n int, k engine.DecisionKind) engine.Decision {
	c.t.Helper()
	r := c.load(c.b, id)
	c.keys++
	a := 0
	if st := r.Step(n); st != nil && st.Latest() != nil {
		a = st.Latest().N
	}
	return engine.Decision{Kind: k, Actor: starter, Step: n, Attempt: a, Key: fmt.Sprintf("backendtest-%d", c.keys)}
}

// decide decides through b, which must take it.
func (c *kase) decide(b Backend, id engine.RunID, n int, k engine.DecisionKind, feedback string, body []byte) *engine.Run {
	c.t.Helper()
	d := c.decision(id, n, k)
	d.Feedback = feedback
	r, err := b.Decide(c.ctx(), id, d, body)
	if err != nil {
		c.t.Fatalf("%s step %d: %v", k, n, err)
	}
	if r == nil || r.ID != id || r.Step(n).LastDecision() == nil || r.Step(n).LastDecision().Key != d.Key {
		c.t.Fatalf("%s step %d answered a run without the decision: %s", k, n, brief(r))
	}
	return r
}

func (c *kase) load(rd Reader, id engine.RunID) *engine.Run {
	c.t.Helper()
	r, err := rd.Load(c.ctx(), id)
	if err != nil {
		c.t.Fatalf("load %s: %v", id, err)
	}
	return r
}

// refused fails the case unless err is the refusal want.
func (c *kase) refused(what string, err, want error) {
	c.t.Helper()
	if !errors.Is(err, want) {
		c.t.Errorf("%s: got %v, want %v", what, err, want)
	}
}

// readable checks what show and export read of run id through rd: the
// journal is numbered 1, 2, 3, ... and folds into the run Load returns,
// and every attempt that stored an artifact has it, as its last version;
// every other has none. It returns the run and its journal.
func (c *kase) readable(rd Reader, id engine.RunID) (*engine.Run, []engine.Event) {
	c.t.Helper()
	r := c.load(rd, id)
	evs, err := rd.Journal(c.ctx(), id)
	if err != nil {
		c.t.Fatalf("journal of %s: %v", id, err)
	}
	for i, ev := range evs {
		if ev.Seq != uint64(i+1) {
			c.t.Fatalf("journal event %d has seq %d", i+1, ev.Seq)
		}
	}
	folded, err := engine.Rebuild(evs)
	if err != nil {
		c.t.Fatalf("the journal of %s does not fold: %v", id, err)
	}
	if brief(folded) != brief(r) {
		c.t.Errorf("the journal folds into\n  %s\nLoad reads\n  %s", brief(folded), brief(r))
	}
	for _, st := range r.Steps {
		for _, a := range st.Attempts {
			body, err := rd.Artifact(c.ctx(), id, st.N, a.N)
			if !a.Artifact {
				c.refused(fmt.Sprintf("artifact of step %d attempt %d, which stored none", st.N, a.N), err, engine.ErrNotFound)
				continue
			}
			vs, verr := rd.ArtifactVersions(c.ctx(), id, st.N, a.N)
			if err != nil || verr != nil || len(vs) == 0 || !bytes.Equal(vs[len(vs)-1], body) {
				c.t.Errorf("step %d attempt %d: artifact %q (%v), versions %q (%v); want the artifact as the last version", st.N, a.N, body, err, vs, verr)
			}
		}
	}
	return r, evs
}

// artifactIs checks an attempt's current artifact and its versions.
func (c *kase) artifactIs(rd Reader, id engine.RunID, n, a int, versions ...[]byte) {
	c.t.Helper()
	body, err := rd.Artifact(c.ctx(), id, n, a)
	if err != nil || !bytes.Equal(body, versions[len(versions)-1]) {
		c.t.Errorf("artifact of step %d attempt %d = %q, %v; want %q", n, a, body, err, versions[len(versions)-1])
	}
	vs, err := rd.ArtifactVersions(c.ctx(), id, n, a)
	if err != nil || !reflect.DeepEqual(vs, versions) {
		c.t.Errorf("versions of step %d attempt %d = %q, %v; want %q", n, a, vs, err, versions)
	}
}

// journalIs checks run id's journal, event by event (see shape).
func (c *kase) journalIs(rd Reader, id engine.RunID, want ...string) {
	c.t.Helper()
	evs, err := rd.Journal(c.ctx(), id)
	if err != nil {
		c.t.Fatalf("journal of %s: %v", id, err)
	}
	if got := shape(evs); !slices.Equal(got, want) {
		c.t.Errorf("journal of %s:\n  %s\nwant:\n  %s", id, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// listed returns run id's line of rd's listing once it agrees with the
// run Load reads: a listing kept apart from the runs may trail them, so it
// is read again, a moment later, until it agrees.
func (c *kase) listed(rd Reader, id engine.RunID) engine.RunSummary {
	c.t.Helper()
	want := c.load(rd, id).Summary()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	limit := time.NewTimer(waitLimit)
	defer limit.Stop()
	for {
		list, err := rd.List(c.ctx())
		got, found := find(list, id)
		if err == nil && found && reflect.DeepEqual(got, want) {
			return got
		}
		select {
		case <-tick.C:
		case <-limit.C:
			c.t.Fatalf("the listing never showed run %s as Load reads it: got %+v (found %v, %v), want %+v", id, got, found, err, want)
		}
	}
}

func find(list []engine.RunSummary, id engine.RunID) (engine.RunSummary, bool) {
	for _, s := range list {
		if s.ID == id {
			return s, true
		}
	}
	return engine.RunSummary{}, false
}

// shape is a journal as the cases compare it: each event's type, step
// and attempt, decision, and the status, result or state it left, without
// times, reasons or sizes, which differ from backend to backend.
func shape(evs []engine.Event) []string {
	var out []string
	for _, ev := range evs {
		s := string(ev.Type)
		if ev.Step > 0 {
			s += fmt.Sprintf(" %d/%d", ev.Step, ev.Attempt)
		}
		for _, part := range []string{string(ev.Decision), string(ev.Status), string(ev.Result), string(ev.State)} {
			if part != "" {
				s += " " + part
			}
		}
		out = append(out, s)
	}
	return out
}

// brief is what a reader sees of a run, to compare a run read two ways:
// its state, mode and pause, and each step's status, attempts and
// decisions.
func brief(r *engine.Run) string {
	if r == nil {
		return "<none>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s at %d, mode %s, paused %v:", r.ID, r.State, r.Seq, r.Mode, r.Paused)
	for _, st := range r.Steps {
		fmt.Fprintf(&b, " [%d %s %s", st.N, st.Skill, st.Status)
		for _, a := range st.Attempts {
			fmt.Fprintf(&b, " a%d:%s/%v", a.N, a.Result, a.Artifact)
		}
		for _, d := range st.Decisions {
			fmt.Fprintf(&b, " %s@%d by %s", d.Kind, d.Attempt, d.Actor)
		}
		b.WriteString("]")
	}
	return b.String()
}
