package backendtest

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/gonogo/gonogo/engine"
)

// A run started, decided step by step to its end, and read at each
// checkpoint as runs, show, show --artifact and export read it.
func startDecideAndRead(c *kase) {
	id := c.start(nil)
	c.waiting(id, 1, 1)
	c.readable(c.b, id)
	c.artifactIs(c.b, id, 1, 1, output(id, skills[0], 1))
	_, err := c.b.Artifact(c.ctx(), id, 2, 1)
	c.refused("artifact of a step not run yet", err, engine.ErrNotFound)
	if s := c.listed(c.b, id); s.State != engine.RunWaiting || s.StepsTotal != 2 || s.StepsDone != 0 {
		c.t.Errorf("the waiting run is listed as %+v", s)
	}

	if r := c.decide(c.b, id, 1, engine.DecideApprove, "", nil); r.Step(1).Status != engine.StepDone {
		c.t.Errorf("after the approval step 1 is %s", r.Step(1).Status)
	}
	c.waiting(id, 2, 1)
	c.decide(c.b, id, 2, engine.DecideApprove, "", nil)
	if r := c.ended(id); r.State != engine.RunCompleted {
		c.t.Errorf("the run ended %s", brief(r))
	}
	if s := c.listed(c.b, id); s.State != engine.RunCompleted || s.StepsDone != 2 {
		c.t.Errorf("the completed run is listed as %+v", s)
	}
	c.readable(c.b, id)
	c.artifactIs(c.b, id, 2, 1, output(id, skills[1], 1))
	c.journalIs(c.b, id, journalApproved...)
}

var journalApproved = []string{
	"run-started",
	"step-started 1/1 running",
	"step-finished 1/1 waiting PRODUCED",
	"decision 1/1 approve done",
	"step-started 2/1 running",
	"step-finished 2/1 waiting PRODUCED",
	"decision 2/1 approve done",
	"run-finished completed",
}

// A redo runs the step again with the feedback; an edit replaces the
// attempt's artifact and keeps the agent's as its first version; the
// earlier attempt keeps its own.
func redoAndEdit(c *kase) {
	id := c.start(nil)
	c.waiting(id, 1, 1)
	c.decide(c.b, id, 1, engine.DecideRedo, "name the metrics", nil)
	c.waiting(id, 1, 2)
	if j, ok := c.runner.job(id, 1, 2); !ok || !strings.Contains(j.Prompt, "name the metrics") {
		c.t.Errorf("the redo was not given the feedback (ran %v):\n%s", ok, j.Prompt)
	}
	edit := []byte("# Brief\n\nAs the team rewrote it.\n")
	if r := c.decide(c.b, id, 1, engine.DecideEdit, "", edit); r.Step(1).Status != engine.StepDone {
		c.t.Errorf("after the edit step 1 is %s", r.Step(1).Status)
	}
	c.artifactIs(c.b, id, 1, 2, output(id, skills[0], 2), edit)
	c.artifactIs(c.b, id, 1, 1, output(id, skills[0], 1))
	c.waiting(id, 2, 1)
	if _, err := c.b.Abort(c.ctx(), id, starter); err != nil {
		c.t.Fatalf("abort: %v", err)
	}
	if r := c.ended(id); r.State != engine.RunAborted {
		c.t.Errorf("the run ended %s", brief(r))
	}
	c.readable(c.b, id)
	c.journalIs(c.b, id, journalRedoEdit...)
}

var journalRedoEdit = []string{
	"run-started",
	"step-started 1/1 running",
	"step-finished 1/1 waiting PRODUCED",
	"decision 1/1 redo queued",
	"step-started 1/2 running",
	"step-finished 1/2 waiting PRODUCED",
	"decision 1/2 edit done",
	"step-started 2/1 running",
	"step-finished 2/1 waiting PRODUCED",
	"run-finished aborted",
}

// A moving run paused from another process holds at its next checkpoint
// and goes on when that process resumes it; the first sees both.
func pauseAndResume(c *kase) {
	release := c.runner.holdSkill(skills[0])
	defer release()
	id := c.start(func(p *engine.Plan) { p.Flags.ForceAuto = true })
	c.jobStarted(id, 1, 1)
	other := c.o.Other()
	r, err := other.Pause(c.ctx(), id, "U-bob")
	if err != nil {
		c.t.Fatalf("pause from another process: %v", err)
	}
	if !r.Paused {
		c.t.Errorf("pause answered an unpaused run: %s", brief(r))
	}
	_, err = other.Pause(c.ctx(), id, "U-bob")
	c.refused("a second pause", err, engine.ErrPaused)
	if r := c.load(c.b, id); !r.Paused {
		c.t.Errorf("the run is not paused where it runs: %s", brief(r))
	}
	release()
	// In guarded auto the step waits only because the run is paused.
	if r := c.waiting(id, 1, 1); !r.Paused {
		c.t.Errorf("the step waits in a run not paused: %s", brief(r))
	}
	if _, err := other.Unpause(c.ctx(), id, starter, ""); err != nil {
		c.t.Fatalf("resume from another process: %v", err)
	}
	if r := c.ended(id); r.State != engine.RunCompleted {
		c.t.Errorf("the resumed run ended %s", brief(r))
	}
	_, err = other.Unpause(c.ctx(), id, starter, "")
	c.refused("resume of a run that ended", err, engine.ErrNotPaused)
	c.readable(c.b, id)
	c.journalIs(c.b, id, journalPaused...)
}

var journalPaused = []string{
	"run-started",
	"step-started 1/1 running",
	"run-paused",
	"step-finished 1/1 waiting PRODUCED",
	"run-resumed",
	"step-released 1/1 done",
	"step-started 2/1 running",
	"step-finished 2/1 done PRODUCED",
	"run-finished completed",
}

// A decision and an abort from another process reach the run.
func decideAndAbortElsewhere(c *kase) {
	id := c.start(nil)
	c.waiting(id, 1, 1)
	other := c.o.Other()
	c.decide(other, id, 1, engine.DecideApprove, "", nil)
	c.waiting(id, 2, 1)
	if _, err := other.Abort(c.ctx(), id, starter); err != nil {
		c.t.Fatalf("abort from another process: %v", err)
	}
	if r := c.ended(id); r.State != engine.RunAborted {
		c.t.Errorf("the run ended %s", brief(r))
	}
	c.readable(c.b, id)
	c.journalIs(c.b, id, journalAbortedElsewhere...)
}

var journalAbortedElsewhere = []string{
	"run-started",
	"step-started 1/1 running",
	"step-finished 1/1 waiting PRODUCED",
	"decision 1/1 approve done",
	"step-started 2/1 running",
	"step-finished 2/1 waiting PRODUCED",
	"run-finished aborted",
}

// An abort stops the agent at work and ends the run; the stopped attempt
// fails and keeps nothing, and the run takes no more decisions.
func abortStopsTheAgent(c *kase) {
	release := c.runner.holdSkill(skills[0])
	defer release()
	id := c.start(nil)
	c.jobStarted(id, 1, 1)
	if _, err := c.b.Abort(c.ctx(), id, starter); err != nil {
		c.t.Fatalf("abort: %v", err)
	}
	r := c.ended(id)
	if r.State != engine.RunAborted || r.Step(1).Latest().Result != engine.ResultFailed {
		c.t.Errorf("after the abort the run is %s", brief(r))
	}
	if n := c.runner.stopped(); n != 1 {
		c.t.Errorf("the agent was stopped %d times, want once", n)
	}
	d := engine.Decision{Kind: engine.DecideRedo, Actor: starter, Step: 1, Attempt: 1, Key: "after-the-end"}
	_, err := c.b.Decide(c.ctx(), id, d, nil)
	c.refused("a decision after the end", err, engine.ErrStale)
	c.readable(c.b, id)
	c.journalIs(c.b, id, journalAbortedRunning...)
}

var journalAbortedRunning = []string{
	"run-started",
	"step-started 1/1 running",
	"run-finished aborted",
	"step-finished 1/1 aborted FAILED",
}

// A cancel stops one attempt: it fails with who cancelled it, keeps no
// artifact, and the run waits on it; a redo runs it again.
func cancelFailsTheAttempt(c *kase) {
	release := c.runner.holdSkill(skills[0])
	defer release()
	id := c.start(nil)
	c.jobStarted(id, 1, 1)
	if err := c.b.Cancel(c.ctx(), id, 1, 1, "U-bob"); err != nil {
		c.t.Fatalf("cancel: %v", err)
	}
	r := c.waiting(id, 1, 1)
	if l := r.Step(1).Latest(); l.Result != engine.ResultFailed || !strings.Contains(l.Reason, "cancelled by U-bob") {
		c.t.Errorf("the cancelled attempt is %s (%q), want FAILED, cancelled by U-bob", l.Result, l.Reason)
	}
	c.refused("a second cancel", c.b.Cancel(c.ctx(), id, 1, 1, "U-bob"), engine.ErrStale)
	release()
	c.decide(c.b, id, 1, engine.DecideRedo, "", nil)
	c.waiting(id, 1, 2)
	c.artifactIs(c.b, id, 1, 2, output(id, skills[0], 2))
	if _, err := c.b.Abort(c.ctx(), id, starter); err != nil {
		c.t.Fatalf("abort: %v", err)
	}
	c.ended(id)
	c.readable(c.b, id)
	c.journalIs(c.b, id, journalCancelled...)
}

var journalCancelled = []string{
	"run-started",
	"step-started 1/1 running",
	"step-finished 1/1 waiting FAILED",
	"decision 1/1 redo queued",
	"step-started 1/2 running",
	"step-finished 1/2 waiting PRODUCED",
	"run-finished aborted",
}

// Each refusal is answered with the engine's sentinel and writes nothing.
func refusals(c *kase) {
	id := c.start(nil)
	c.waiting(id, 1, 1)
	first := c.decision(id, 1, engine.DecideRedo)
	if _, err := c.b.Decide(c.ctx(), id, first, nil); err != nil {
		c.t.Fatal(err)
	}
	c.waiting(id, 1, 2)
	before := c.load(c.b, id)
	stale := c.decision(id, 1, engine.DecideApprove)
	stale.Attempt = 1
	reused := c.decision(id, 1, engine.DecideApprove)
	reused.Key = first.Key
	for _, d := range []struct {
		what string
		d    engine.Decision
		want error
	}{
		{"a decision on an earlier attempt", stale, engine.ErrStale},
		{"the same decision again", first, engine.ErrDuplicate},
		{"another decision under a used key", reused, engine.ErrKeyReused},
		{"a decision on a step not waiting", c.decision(id, 2, engine.DecideApprove), engine.ErrNotWaiting},
	} {
		_, err := c.b.Decide(c.ctx(), id, d.d, nil)
		c.refused(d.what, err, d.want)
	}
	_, err := c.b.Pause(c.ctx(), id, starter)
	c.refused("a pause of a run waiting for a decision", err, engine.ErrNotMoving)
	_, err = c.b.Unpause(c.ctx(), id, starter, "")
	c.refused("a resume of a run not paused", err, engine.ErrNotPaused)
	c.refused("a cancel of an attempt not running", c.b.Cancel(c.ctx(), id, 1, 2, starter), engine.ErrStale)
	if after := c.load(c.b, id); brief(after) != brief(before) {
		c.t.Errorf("refusals changed the run:\n  %s\nwas\n  %s", brief(after), brief(before))
	}

	const unknown = engine.RunID("20310402-090000-000000000000")
	_, err = c.b.Load(c.ctx(), unknown)
	c.refused("load of an unknown run", err, engine.ErrNotFound)
	_, err = c.b.Journal(c.ctx(), unknown)
	c.refused("journal of an unknown run", err, engine.ErrNotFound)
	_, err = c.b.Artifact(c.ctx(), unknown, 1, 1)
	c.refused("artifact of an unknown run", err, engine.ErrNotFound)
	_, err = c.b.Decide(c.ctx(), unknown, engine.Decision{Kind: engine.DecideApprove, Actor: starter, Step: 1, Attempt: 1, Key: "unknown"}, nil)
	c.refused("a decision on an unknown run", err, engine.ErrNotFound)
	_, err = c.b.Pause(c.ctx(), unknown, starter)
	c.refused("a pause of an unknown run", err, engine.ErrNotFound)
}

// A finished run and one waiting for a decision read the same once
// nothing carries runs out any more (no worker, no gonogo holding the
// store): their listing, state, journal and artifacts come from what the
// backend stores.
func readsWithoutACarrier(c *kase) {
	done := c.start(nil)
	c.waiting(done, 1, 1)
	c.decide(c.b, done, 1, engine.DecideEdit, "", []byte("# Brief\n\nEdited before the carrier went.\n"))
	c.waiting(done, 2, 1)
	c.decide(c.b, done, 2, engine.DecideApprove, "", nil)
	c.ended(done)
	waits := c.start(nil)
	c.waiting(waits, 1, 1)
	c.decide(c.b, waits, 1, engine.DecideApprove, "", nil)
	c.waiting(waits, 2, 1)
	ids := []engine.RunID{waits, done}
	before := c.snapshot(c.b, ids)

	rd := c.o.Halt()
	after := c.snapshot(rd, ids)
	if !reflect.DeepEqual(after, before) {
		c.t.Errorf("read once nothing carries the runs out:\n%+v\nbefore:\n%+v", after, before)
	}
	_, err := rd.Load(c.ctx(), "20310402-090000-000000000000")
	c.refused("load of an unknown run", err, engine.ErrNotFound)
}

// view is what the read commands show of one run.
type view struct {
	Listed    engine.RunSummary
	Run       string
	Journal   []string
	Artifacts map[string][][]byte
}

// snapshot reads runs ids through rd as runs, show and export do; the
// listing holds them newest first.
func (c *kase) snapshot(rd Reader, ids []engine.RunID) []view {
	c.t.Helper()
	var out []view
	for _, id := range ids {
		v := view{Listed: c.listed(rd, id), Artifacts: map[string][][]byte{}}
		r, evs := c.readable(rd, id)
		v.Run, v.Journal = brief(r), shape(evs)
		for _, st := range r.Steps {
			for _, a := range st.Attempts {
				if vs, err := rd.ArtifactVersions(c.ctx(), id, st.N, a.N); err == nil {
					v.Artifacts[fmt.Sprintf("%d/%d", st.N, a.N)] = vs
				}
			}
		}
		out = append(out, v)
	}
	list, err := rd.List(c.ctx())
	if err != nil {
		c.t.Fatal(err)
	}
	var order []engine.RunID
	for _, s := range list {
		if slices.Contains(ids, s.ID) {
			order = append(order, s.ID)
		}
	}
	if !slices.Equal(order, ids) {
		c.t.Errorf("the listing has the runs in the order %v, want newest first: %v", order, ids)
	}
	return out
}
