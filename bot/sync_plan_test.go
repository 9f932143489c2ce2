package bot

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
)

// describeOp is an operation in a line a table can hold: what it does, to
// which note, and how (an update's priority and what it does when its
// message is gone).
func describeOp(op threadOp) string {
	var s string
	switch op.kind {
	case opPost:
		s = "post " + op.key
		if op.opensThread {
			s += " opening the thread"
		}
		if op.tsOnly {
			s += " ts only"
		}
		for k, v := range op.also {
			s += " noting " + k + "=" + v
		}
	case opUpdate:
		s = fmt.Sprintf("update %s %s", op.key, op.ts)
		s += map[updatePriority]string{updateCheckpoint: " checkpoint", updateDecision: " decision", updateState: " state", updateMinor: " minor"}[op.prio]
		s += map[ifGone]string{goneRepost: " repost", goneIgnore: " ignore"}[op.ifGone]
		if op.overtake {
			s += " overtaking"
		}
	case opUpload:
		s = fmt.Sprintf("upload %s %s", op.key, op.file)
	case opAudit:
		s = fmt.Sprintf("attach the audit trail %s %s", op.key, op.file)
	case opRevisit:
		s = fmt.Sprintf("revisit %s %s after t0", op.key, op.at.Sub(goldenT0))
	case opRemove:
		s = fmt.Sprintf("remove %s %s", op.key, op.ts)
	}
	return s
}

func sameBlocks(t *testing.T, what string, got, want []slack.Block) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("%s shows\n%s\nwant\n%s", what, g, w)
	}
}

// TestPlanThread: what a thread gets for each state of its run and each
// thing it already shows.
func TestPlanThread(t *testing.T) {
	noted := map[string]string{noteHeader: "1.1", noteThread: "1.0"}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range noted {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	chain := func(t *testing.T, names ...string) *script {
		return newRun(t, goldenRunID, chainInput(names...), engine.StartOptions{})
	}
	tests := []struct {
		name  string
		run   func(t *testing.T) *script
		notes map[string]string
		audit bool
		quiet time.Duration
		want  []string
	}{
		{
			name:  "a new run posts its header, which opens the thread",
			run:   func(t *testing.T) *script { return chain(t, "deliver-prd") },
			notes: map[string]string{},
			want:  []string{"post header opening the thread"},
		},
		{
			name:  "a step that starts before the header is posted follows it",
			run:   func(t *testing.T) *script { s := chain(t, "deliver-prd"); s.start(1); return s },
			notes: map[string]string{},
			want:  []string{"post header opening the thread", "post step/1"},
		},
		{
			name:  "the header is kept current as a minor update, posted again if deleted",
			run:   func(t *testing.T) *script { return chain(t, "deliver-prd", "deliver-user-stories") },
			notes: noted,
			want:  []string{"update header 1.1 minor repost"},
		},
		{
			name:  "a step that starts gets its message",
			run:   func(t *testing.T) *script { s := chain(t, "deliver-prd"); s.start(1); return s },
			notes: noted,
			want:  []string{"update header 1.1 minor repost", "post step/1"},
		},
		{
			// The view is 30 s after the step started (97 s after t0).
			name:  "a step in its quiet start gets no message yet, only a revisit when the quiet start ends",
			run:   func(t *testing.T) *script { s := chain(t, "deliver-prd"); s.start(1); return s },
			notes: noted,
			quiet: time.Minute,
			want:  []string{"update header 1.1 minor repost", "revisit step/1 2m37s after t0"},
		},
		{
			name:  "a new run's header is posted while its first step is in its quiet start",
			run:   func(t *testing.T) *script { s := chain(t, "deliver-prd"); s.start(1); return s },
			notes: map[string]string{},
			quiet: time.Minute,
			want:  []string{"post header opening the thread", "revisit step/1 2m37s after t0"},
		},
		{
			name:  "a step still running after its quiet start gets its message",
			run:   func(t *testing.T) *script { s := chain(t, "deliver-prd"); s.start(1); return s },
			notes: noted,
			quiet: 20 * time.Second,
			want:  []string{"update header 1.1 minor repost", "post step/1"},
		},
		{
			name:  "a step that ends in its quiet start is posted once, at its checkpoint, carrying its artifact uploaded just before",
			run:   func(t *testing.T) *script { s := chain(t, "deliver-prd"); s.produce(1, "A PRD."); return s },
			notes: noted,
			quiet: time.Hour,
			want:  []string{"update header 1.1 minor repost", "upload file/1/1 01-deliver-prd.md", "post step/1"},
		},
		{
			name: "a redo's attempt updates the step's message at once",
			run: func(t *testing.T) *script {
				s := chain(t, "deliver-prd")
				s.produce(1, "A PRD.")
				s.decide(1, engine.DecideRedo, alice, "more")
				s.start(1)
				return s
			},
			notes: with(map[string]string{noteStep(1): "1.2", noteFile(1, 1, false): "1"}),
			quiet: time.Hour,
			want:  []string{"update header 1.1 minor repost", "update step/1 1.2 decision repost"},
		},
		{
			name:  "a step interrupted in its quiet start gets its message and the announcement",
			run:   func(t *testing.T) *script { s := chain(t, "deliver-prd"); s.start(1); s.interrupt(); return s },
			notes: noted,
			quiet: time.Hour,
			want:  []string{"update header 1.1 minor repost", "post step/1", "post interrupted/1/1"},
		},
		{
			// Its live progress is the thread's status: the sync leaves out
			// the update while the message shows the same blocks.
			name:  "a running step's message changes only with its state",
			run:   func(t *testing.T) *script { s := chain(t, "deliver-prd"); s.start(1); return s },
			notes: with(map[string]string{noteStep(1): "1.2"}),
			want:  []string{"update header 1.1 minor repost", "update step/1 1.2 state repost"},
		},
		{
			name:  "a checkpoint's artifact is uploaded once, for the update that shows its buttons to carry",
			run:   func(t *testing.T) *script { s := chain(t, "deliver-prd"); s.produce(1, "A PRD."); return s },
			notes: with(map[string]string{noteStep(1): "1.2"}),
			want: []string{"update header 1.1 minor repost", "upload file/1/1 01-deliver-prd.md",
				"update step/1 1.2 checkpoint repost overtaking"},
		},
		{
			// Whoever clicked is looking at the message for it to show.
			name: "a person's decision shows right after the checkpoints; gonogo's own retry does not",
			run: func(t *testing.T) *script {
				s := chain(t, "deliver-prd", "deliver-user-stories")
				s.produce(1, "A PRD.")
				s.decide(1, engine.DecideSkip, alice, "")
				s.fail(2, "boom")
				s.decide(2, engine.DecideRedo, engine.RetryActor, "")
				return s
			},
			notes: with(map[string]string{noteStep(1): "1.2", noteFile(1, 1, false): "1", noteStep(2): "1.3", noteHalt(2, 1): "1.4"}),
			want: []string{"update header 1.1 minor repost", "update step/1 1.2 decision repost",
				"update step/2 1.3 state repost", "update halt/2/1 1.4 state ignore"},
		},
		{
			name: "a checkpoint whose message carries an earlier attempt's artifact waits for the update budget: it may not overtake",
			run: func(t *testing.T) *script {
				s := chain(t, "deliver-prd")
				s.produce(1, "A PRD.")
				s.decide(1, engine.DecideRedo, alice, "more")
				s.produce(1, "A better PRD.")
				return s
			},
			notes: with(map[string]string{noteStep(1): "1.2", noteFile(1, 1, false): "F1", noteFile(1, 2, false): pendingPrefix + "F2"}),
			want:  []string{"update header 1.1 minor repost", "update step/1 1.2 checkpoint repost"},
		},
		{
			name:  "a checkpoint whose message has shown its buttons already waits for the update budget: it may not overtake",
			run:   func(t *testing.T) *script { s := chain(t, "deliver-prd"); s.produce(1, "A PRD."); return s },
			notes: with(map[string]string{noteStep(1): "1.2", noteFile(1, 1, false): "1", noteAsked(1, 1): "1.2"}),
			want:  []string{"update header 1.1 minor repost", "update step/1 1.2 checkpoint repost"},
		},
		{
			name:  "a running message a checkpoint overtook is removed, once",
			run:   func(t *testing.T) *script { s := chain(t, "deliver-prd"); s.produce(1, "A PRD."); return s },
			notes: with(map[string]string{noteStep(1): "1.5", noteFile(1, 1, false): "1", noteStale("1.2"): "1", noteStale("1.3"): staleRemoved}),
			want:  []string{"update header 1.1 minor repost", "update step/1 1.5 checkpoint repost overtaking", "remove stale/1.2 1.2"},
		},
		{
			name:  "an attached artifact is not attached again",
			run:   func(t *testing.T) *script { s := chain(t, "deliver-prd"); s.produce(1, "A PRD."); return s },
			notes: with(map[string]string{noteStep(1): "1.2", noteFile(1, 1, false): "1"}),
			want:  []string{"update header 1.1 minor repost", "update step/1 1.2 checkpoint repost overtaking"},
		},
		{
			name: "an edit attaches the edited artifact; a redo's attempt has its own file",
			run: func(t *testing.T) *script {
				s := chain(t, "deliver-prd", "deliver-user-stories")
				s.produce(1, "A PRD.")
				s.decide(1, engine.DecideRedo, alice, "more detail")
				s.produce(1, "A better PRD.")
				s.decide(1, engine.DecideEdit, alice, "")
				return s
			},
			notes: with(map[string]string{noteStep(1): "1.2", noteFile(1, 1, false): "1"}),
			want: []string{"update header 1.1 minor repost", "upload file/1/2/edited 01-deliver-prd.attempt-2.edited.md",
				"update step/1 1.2 decision repost"},
		},
		{
			name:  "an interrupted step is announced once",
			run:   func(t *testing.T) *script { s := chain(t, "deliver-prd"); s.start(1); s.interrupt(); return s },
			notes: with(map[string]string{noteStep(1): "1.2"}),
			want: []string{"update header 1.1 minor repost", "update step/1 1.2 state repost",
				"post interrupted/1/1"},
		},
		{
			name:  "an announced interruption is kept current, and fails the sync if deleted",
			run:   func(t *testing.T) *script { s := chain(t, "deliver-prd"); s.start(1); s.interrupt(); return s },
			notes: with(map[string]string{noteStep(1): "1.2", noteInterrupted(1, 1): "1.3"}),
			want: []string{"update header 1.1 minor repost", "update step/1 1.2 state repost",
				"update interrupted/1/1 1.3 state"},
		},
		{
			name:  "an interruption noted without its ts is left as it is",
			run:   func(t *testing.T) *script { s := chain(t, "deliver-prd"); s.start(1); s.interrupt(); return s },
			notes: with(map[string]string{noteStep(1): "1.2", noteInterrupted(1, 1): "1"}),
			want:  []string{"update header 1.1 minor repost", "update step/1 1.2 state repost"},
		},
		{
			name:  "a FAILED step waiting for a decision gets a halt notice",
			run:   func(t *testing.T) *script { s := chain(t, "deliver-prd"); s.fail(1, "no output"); return s },
			notes: with(map[string]string{noteStep(1): "1.2"}),
			want: []string{"update header 1.1 minor repost", "update step/1 1.2 checkpoint repost overtaking",
				"post halt/1/1"},
		},
		{
			name:  "a halt notice is kept current; a deleted one stays gone",
			run:   func(t *testing.T) *script { s := chain(t, "deliver-prd"); s.fail(1, "no output"); return s },
			notes: with(map[string]string{noteStep(1): "1.2", noteHalt(1, 1): "1.3"}),
			want: []string{"update header 1.1 minor repost", "update step/1 1.2 checkpoint repost overtaking",
				"update halt/1/1 1.3 state ignore"},
		},
		{
			name: "a completed run posts its end once, noting only its ts",
			run: func(t *testing.T) *script {
				s := chain(t, "deliver-prd")
				s.produce(1, "A PRD.")
				s.decide(1, engine.DecideApprove, alice, "")
				return s
			},
			notes: with(map[string]string{noteStep(1): "1.2", noteFile(1, 1, false): "1"}),
			want: []string{"update header 1.1 minor repost", "update step/1 1.2 decision repost",
				"post final ts only"},
		},
		{
			name: "a posted end is not posted again",
			run: func(t *testing.T) *script {
				s := chain(t, "deliver-prd")
				s.produce(1, "A PRD.")
				s.decide(1, engine.DecideApprove, alice, "")
				return s
			},
			notes: with(map[string]string{noteStep(1): "1.2", noteFile(1, 1, false): "1", noteFinal: "1.9"}),
			want:  []string{"update header 1.1 minor repost", "update step/1 1.2 decision repost"},
		},
		{
			name: "a run that ends posts its end, noting its audit trail due, then attaches the trail",
			run: func(t *testing.T) *script {
				s := chain(t, "deliver-prd")
				s.produce(1, "A PRD.")
				s.decide(1, engine.DecideAbort, alice, "")
				return s
			},
			notes: with(map[string]string{noteStep(1): "1.2", noteFile(1, 1, false): "1"}),
			audit: true,
			want: []string{"update header 1.1 minor repost", "update step/1 1.2 decision repost",
				"post final ts only noting audit=pending", "attach the audit trail audit audit-" + string(goldenRunID) + ".md"},
		},
		{
			name: "an audit trail still due after a restart is attached",
			run: func(t *testing.T) *script {
				s := chain(t, "deliver-prd")
				s.produce(1, "A PRD.")
				s.decide(1, engine.DecideApprove, alice, "")
				return s
			},
			notes: with(map[string]string{noteStep(1): "1.2", noteFile(1, 1, false): "1", noteFinal: "1.9", noteAudit: auditPending}),
			audit: true,
			want: []string{"update header 1.1 minor repost", "update step/1 1.2 decision repost",
				"attach the audit trail audit audit-" + string(goldenRunID) + ".md"},
		},
		{
			name: "an attached audit trail is not attached again, nor one for a run that ended before trails were",
			run: func(t *testing.T) *script {
				s := chain(t, "deliver-prd")
				s.produce(1, "A PRD.")
				s.decide(1, engine.DecideApprove, alice, "")
				return s
			},
			notes: with(map[string]string{noteStep(1): "1.2", noteFile(1, 1, false): "1", noteFinal: "1.9"}),
			audit: true,
			want:  []string{"update header 1.1 minor repost", "update step/1 1.2 decision repost"},
		},
		{
			name: "a run cancelled at its preview ran nothing: its end is posted, with no audit trail",
			run: func(t *testing.T) *script {
				s := newRun(t, goldenRunID, chainInput("deliver-prd"), engine.StartOptions{AwaitStart: true})
				s.apply(engine.CancelAwaited(s.r, bob, s.tick()))
				return s
			},
			notes: noted,
			audit: true,
			want:  []string{"update header 1.1 minor repost", "post final ts only"},
		},
		{
			name:  "a run in a channel the bot cannot post in plans nothing",
			run:   func(t *testing.T) *script { s := chain(t, "deliver-prd"); s.start(1); return s },
			notes: map[string]string{noteUnreachable: "1"},
			want:  nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.run(t)
			ops := planThread(s.r, threadViews{run: s.view(), steps: map[int]View{1: s.view(), 2: s.view()}}, tt.notes, planOptions{audit: tt.audit, quietStart: tt.quiet})
			var got []string
			for _, op := range ops {
				got = append(got, describeOp(op))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("plan:\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// TestThreadDoneWaitsForRemovals: a finished run's thread is not done
// while a running message a checkpoint overtook is still to be removed.
func TestThreadDoneWaitsForRemovals(t *testing.T) {
	done := map[string]string{noteFinal: "1.9", noteAudit: "1"}
	if !threadDone(done) {
		t.Fatal("a thread with its end and its audit trail is not done")
	}
	done[noteStale("1.2")] = "1"
	if threadDone(done) {
		t.Error("a thread with a running message left to remove is done")
	}
	done[noteStale("1.2")] = staleRemoved
	if !threadDone(done) {
		t.Error("a thread whose overtaken running message was removed is not done")
	}
}

// TestPlanThreadBlocks: each planned message shows what render makes of
// the run for it.
func TestPlanThreadBlocks(t *testing.T) {
	s := newRun(t, goldenRunID, chainInput("deliver-prd", "deliver-user-stories"), engine.StartOptions{})
	s.fail(1, "no output")
	s.decide(1, engine.DecideRedo, alice, "try again")
	s.start(1)
	s.interrupt()
	v := s.view()
	views := threadViews{run: v, steps: map[int]View{1: v}}
	notes := map[string]string{noteHeader: "1.1", noteThread: "1.0", noteStep(1): "1.2", noteHalt(1, 1): "1.3"}
	ops := planThread(s.r, views, notes, planOptions{})
	byKey := map[string]threadOp{}
	for _, op := range ops {
		byKey[op.key] = op
	}
	sameBlocks(t, "step 1", byKey[noteStep(1)].blocks, StepMessage(s.r, 1, v))
	sameBlocks(t, "the acted-on halt", byKey[noteHalt(1, 1)].blocks, HaltHandled(s.r, 1, 1))
	av := v
	av.Attempt = 2
	sameBlocks(t, "the interruption", byKey[noteInterrupted(1, 2)].blocks, Interrupted(s.r, 1, av))
	s.abortRun(bob)
	v = s.view()
	ops = planThread(s.r, threadViews{run: v, steps: map[int]View{1: v}}, notes, planOptions{})
	sameBlocks(t, "the end of an aborted run", ops[len(ops)-1].blocks, Halt(s.r, v))
	// The header of a finished run is measured to now.
	sameBlocks(t, "the finished run's header", ops[0].blocks, Header(s.r, v))

	// An unfinished run's header is measured to the run's last change, so
	// that the clock alone never changes it.
	s = newRun(t, goldenRunID, chainInput("deliver-prd"), engine.StartOptions{})
	s.start(1)
	v = View{Now: s.now.Add(time.Hour)}
	ops = planThread(s.r, threadViews{run: v, steps: map[int]View{1: v}}, map[string]string{}, planOptions{})
	hv := v
	hv.Now = s.r.Updated
	sameBlocks(t, "the running run's header", ops[0].blocks, Header(s.r, hv))
}

// TestPlanThreadDeadlines: what gonogo did about a checkpoint left waiting
// (the engine records it) is posted once, the timeout before the reminder,
// and not at all once the step has moved on.
func TestPlanThreadDeadlines(t *testing.T) {
	overseen := func(t *testing.T) *script {
		s := newRun(t, goldenRunID, chainInput("deliver-prd", "deliver-user-stories"), engine.StartOptions{
			Oversight: engine.Oversight{RemindAfter: time.Hour, DecisionTimeout: 24 * time.Hour}})
		s.produce(1, "A PRD.")
		evs, _ := engine.Overdue(s.r, s.now.Add(25*time.Hour))
		s.apply(evs, nil)
		return s
	}
	notes := map[string]string{noteHeader: "1.1", noteThread: "1.0", noteStep(1): "1.2", noteFile(1, 1, false): "1"}
	s := overseen(t)
	v := s.view()
	ops := planThread(s.r, threadViews{run: v, steps: map[int]View{1: v}}, notes, planOptions{})
	var got []string
	for _, op := range ops {
		got = append(got, describeOp(op))
	}
	want := []string{"update header 1.1 minor repost", "update step/1 1.2 checkpoint repost overtaking",
		"post timeout/1/1 ts only", "post remind/1/1 ts only"}
	if !slices.Equal(got, want) {
		t.Fatalf("plan:\n%q\nwant\n%q", got, want)
	}
	if text := ops[2].text; text != "Step 1 of 2 (deliver-prd) has waited 24h0m0s for a decision; it keeps waiting." || ops[2].blocks != nil {
		t.Errorf("the timeout note is %q with blocks %v", text, ops[2].blocks)
	}
	sameBlocks(t, "the reminder", ops[3].blocks, Reminder(s.r, 1, v))

	notes[noteTimeout(1, 1)], notes[noteRemind(1, 1)] = "1.3", "1.4"
	if ops := planThread(s.r, threadViews{run: v, steps: map[int]View{1: v}}, notes, planOptions{}); len(ops) != 2 {
		t.Errorf("posted deadlines are planned again: %d operations", len(ops))
	}
	delete(notes, noteTimeout(1, 1))
	delete(notes, noteRemind(1, 1))
	s.decide(1, engine.DecideApprove, alice, "")
	for _, op := range planThread(s.r, threadViews{run: v, steps: map[int]View{1: v, 2: v}}, notes, planOptions{}) {
		if op.key == noteTimeout(1, 1) || op.key == noteRemind(1, 1) {
			t.Errorf("a deadline of a step that moved on is posted: %s", describeOp(op))
		}
	}
}
