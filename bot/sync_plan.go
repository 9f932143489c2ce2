package bot

import (
	"fmt"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
)

// A run's thread is kept in step with the run in two parts: planThread,
// pure, says what the thread should get given the run and what the thread
// already shows (the notes kept with the run); (*Bot).sync carries the plan
// out through the sender and its update budget, noting every post with the
// run as it goes, then gives the thread the loading status of the steps
// that run (ThreadStatus), which is no message and spends no update.

// threadOpKind is what a planned operation does in Slack.
type threadOpKind int

const (
	opPost   threadOpKind = iota + 1 // chat.postMessage, a new message in the thread
	opUpdate                         // chat.update of a message the thread already has
	opUpload                         // an artifact attached to the thread as a file
	opAudit                          // the run's audit trail attached to the thread as a file
	// opRevisit is no call: the thread is synced again at the op's time,
	// when a step whose message waits for its quiet start may need it.
	opRevisit
	// opRemove is chat.delete of a running message a checkpoint overtook
	// (see overtake).
	opRemove
)

// ifGone is what an update does when its message was deleted.
type ifGone int

const (
	goneFails  ifGone = iota // the sync fails with the error
	goneRepost               // the message is posted again, in the thread
	goneIgnore               // the message stays gone
)

// threadOp is one operation a thread needs.
type threadOp struct {
	kind threadOpKind
	// key is the note the message's ts is kept under (the file's note for
	// an upload); a post or a repost sets it.
	key string
	// ts is the message an update replaces.
	ts     string
	blocks []slack.Block
	// text is the text of a post without blocks.
	text   string
	prio   updatePriority // an update's place in the chat.update budget
	ifGone ifGone
	// opensThread marks the run's first message, the header: it is posted
	// in the thread the run came from (a new root message for a slash
	// command) and its thread is noted as the run's. A channel the bot
	// cannot post in ends the run there. Every other post goes to the
	// run's noted thread.
	opensThread bool
	// tsOnly notes a post's ts without a digest of what it shows: the end
	// of a run is never updated.
	tsOnly bool
	// also is noted with a post's ts, in the same write.
	also map[string]string
	// step, attempt and file name the artifact an upload attaches; file
	// also names the audit trail's file.
	step, attempt int
	file          string
	// late marks an upload that waited for its tier (fileDeferred);
	// agentText, one of the agent's own text of an attempt since edited.
	late, agentText bool
	// checkpoint marks the post of a step waiting for a decision: it
	// goes before the channel's other posts (turnFirst).
	checkpoint bool
	// attach marks step's own message: its post or update carries the
	// step's artifacts uploaded and not yet attached (pendingFiles).
	attach bool
	// overtake marks the update of a checkpoint that is posted as a new
	// message when the chat.update budget cannot carry it by due (see
	// overtake).
	overtake bool
	due      time.Time
	// asked is the note a step's message is noted under once it shows the
	// buttons of its latest attempt (noteAsked).
	asked string
	// at is when a revisit syncs the thread again.
	at time.Time
	// what names the message in errors: "step 3", "the run's header".
	what string
}

// planOptions are the bot's settings a thread's plan depends on.
type planOptions struct {
	// audit attaches the run's audit trail when it ends.
	audit bool
	// quietStart is how long a step runs before its message is posted
	// (Config.QuietStart); zero or less posts it as the step starts.
	quietStart time.Duration
}

// threadViews are the views a thread's messages are rendered with: run for
// the run's own messages, steps[n] for step n's.
type threadViews struct {
	run   View
	steps map[int]View
}

// planThread is the plan of a run's thread: the operations, in order, that
// bring the thread up to date with r, given the notes kept with the run.
// The order is the thread's: the header, then for each started step its
// message, its files, the announcement of its interrupted attempt, its
// halt notices and its deadlines' notices, then the end of the run and,
// when opt.audit is set, the run's audit trail as a file (but for a run
// cancelled at its preview). A step that started less than
// opt.quietStart ago gets no message yet, only a revisit then: one that
// finishes by then is posted once, showing its result. Updates are planned
// for every message the thread has; the sync leaves out those that already
// show their blocks.
func planThread(r *engine.Run, views threadViews, notes map[string]string, opt planOptions) []threadOp {
	if notes[noteUnreachable] != "" {
		return nil
	}
	ops := []threadOp{headerOp(r, views.run, notes)}
	for i := range r.Steps {
		s := &r.Steps[i]
		if len(s.Attempts) == 0 {
			continue
		}
		sv := views.steps[s.N]
		// The artifacts first: the step's message carries them (file_ids).
		ops = append(ops, uploadOps(s, notes)...)
		ops = append(ops, stepOp(r, s, sv, notes, opt.quietStart))
		ops = append(ops, staleOps(s.N, notes)...)
		ops = append(ops, interruptedOps(r, s, sv, notes)...)
		ops = append(ops, haltOps(r, s, views.run, notes)...)
		ops = append(ops, deadlineOps(r, s, sv, notes)...)
	}
	if !r.Finished() {
		return ops
	}
	// A run cancelled at its preview ran nothing: its thread says who
	// cancelled it, and gonogo export has the rest.
	audit := opt.audit && !cancelledAtStart(r)
	if notes[noteFinal] == "" {
		msg := Completion(r, views.run)
		if r.State == engine.RunAborted {
			msg = Halt(r, views.run)
		}
		end := threadOp{kind: opPost, key: noteFinal, blocks: msg, tsOnly: true, what: "the end of the run"}
		if audit {
			// Noted with the end, so that a restart between the two still
			// attaches the trail.
			end.also = map[string]string{noteAudit: auditPending}
		}
		ops = append(ops, end)
	}
	if audit && (notes[noteFinal] == "" || notes[noteAudit] == auditPending) {
		ops = append(ops, threadOp{kind: opAudit, key: noteAudit, file: auditFile(r), what: "the run's audit trail"})
	}
	return ops
}

// auditFile is the name a run's audit trail is attached under.
func auditFile(r *engine.Run) string { return "audit-" + string(r.ID) + ".md" }

// threadDone reports whether a run's thread has all it will ever show:
// the end of the run, the audit trail when one is due, and no running
// message a checkpoint overtook left to remove.
func threadDone(notes map[string]string) bool {
	return notes[noteFinal] != "" && notes[noteAudit] != auditPending && !staleLeft(notes)
}

// headerOp posts the run's header once and then keeps it current. The
// header changes with the run, not with the clock: its elapsed time is
// measured to the run's last change, so progress alone never spends an
// update on it.
func headerOp(r *engine.Run, v View, notes map[string]string) threadOp {
	if !r.Finished() && !r.Updated.IsZero() {
		v.Now = r.Updated
	}
	hdr := headerOrPreview(r, v)
	if notes[noteHeader] == "" {
		return threadOp{kind: opPost, key: noteHeader, blocks: hdr, opensThread: true, what: "the run's header"}
	}
	prio := updateMinor
	if r.Paused && !r.Finished() {
		// Its button changes from Pause to Resume: the header says so at
		// once rather than at its next refresh. The run's end is said at
		// once by the end message below it.
		prio = updateState
	}
	return threadOp{kind: opUpdate, key: noteHeader, ts: notes[noteHeader], blocks: hdr, prio: prio,
		ifGone: goneRepost, what: "the run's header"}
}

// stepOp posts a started step's message once and then keeps it current. A
// step waiting for a decision shows its buttons first of all, and the one a
// person has just decided comes next: whoever clicked is looking at the
// message for their decision to show. A running step's message changes only with
// the step's state (its live progress is the thread's status), so every
// update of it is a change of state. A step's first message waits for its
// quiet start (quiet after its attempt started, v.Now being now): most
// steps that end by then get one post, showing their result and buttons,
// rather than a running message with Cancel, a checkpoint update and the
// decision's; meanwhile the thread's loading status says the step runs.
func stepOp(r *engine.Run, s *engine.Step, v View, notes map[string]string, quiet time.Duration) threadOp {
	op := threadOp{
		key:    noteStep(s.N),
		what:   fmt.Sprintf("step %d", s.N),
		step:   s.N,
		attach: true,
	}
	ts := notes[op.key]
	if l := s.Latest(); ts == "" && s.Status == engine.StepRunning && l != nil && l.Result == "" &&
		quiet > 0 && v.Now.Before(l.Started.Add(quiet)) {
		op.kind, op.at = opRevisit, l.Started.Add(quiet)
		return op
	}
	op.blocks = StepMessage(r, s.N, v)
	l := s.Latest()
	if s.Status == engine.StepWaiting && l != nil {
		op.asked = noteAsked(s.N, l.N)
	}
	if ts == "" {
		op.kind, op.checkpoint = opPost, s.Status == engine.StepWaiting
		return op
	}
	op.kind, op.ts, op.ifGone, op.prio = opUpdate, ts, goneRepost, updateState
	switch d := s.LastDecision(); {
	case s.Status == engine.StepWaiting:
		op.prio = updateCheckpoint
		// Only a message that has not shown the attempt's buttons yet (its
		// running message) is overtaken: one a person may be reading them
		// in waits for its update.
		if op.overtake = op.asked != "" && notes[op.asked] == "" && !carriesFiles(notes, s.N); op.overtake {
			op.due = l.Finished.Add(checkpointPatience)
		}
	case d != nil && !engine.AutomaticActor(d.Actor):
		op.prio = updateDecision
	}
	return op
}

// uploadOps upload each finished attempt's artifact once, and its edited
// version once more after an edit, for the step's own message to carry:
// the upload is noted as pending (notePendingFile) until a post or an
// update of that message attached it. One that waited for its tier while
// the message went out without it (fileDeferred) is made again, late.
func uploadOps(s *engine.Step, notes map[string]string) []threadOp {
	var ops []threadOp
	for _, a := range s.Attempts {
		if !a.Artifact || a.Finished.IsZero() {
			continue
		}
		if orig := noteFile(s.N, a.N, false); a.Edited && notes[orig] == fileDeferred {
			// The agent's text waited for its tier and was edited
			// meanwhile: it is still shared, as the agent wrote it.
			agents := a
			agents.Edited = false
			ops = append(ops, threadOp{kind: opUpload, key: orig, step: s.N, attempt: a.N, file: artifactFile(s, agents),
				late: true, agentText: true})
		}
		key := noteFile(s.N, a.N, a.Edited)
		if notes[key] != "" && notes[key] != fileDeferred {
			continue
		}
		ops = append(ops, threadOp{kind: opUpload, key: key, step: s.N, attempt: a.N, file: artifactFile(s, a),
			late: notes[key] == fileDeferred})
	}
	return ops
}

// artifactFile is the name an attempt's artifact is attached under.
func artifactFile(s *engine.Step, a engine.Attempt) string {
	name := fmt.Sprintf("%02d-%s", s.N, s.Skill)
	if a.N > 1 {
		name += fmt.Sprintf(".attempt-%d", a.N)
	}
	if a.Candidate > 0 {
		name += "." + a.Runner // which agent wrote it, beside its rivals
	}
	if a.Edited {
		name += ".edited"
	}
	return name + ".md"
}

// interruptedOps announce an interrupted attempt once; the announcement is
// noted by its ts and kept current, so that once the step is redone or the
// run aborted its buttons give way.
func interruptedOps(r *engine.Run, s *engine.Step, v View, notes map[string]string) []threadOp {
	var ops []threadOp
	for _, a := range s.Attempts {
		key := noteInterrupted(s.N, a.N)
		av := v
		av.Attempt = a.N
		switch ts := notes[key]; {
		case ts == "" && a.N == s.Latest().N && s.Status == engine.StepInterrupted:
			ops = append(ops, threadOp{kind: opPost, key: key, blocks: Interrupted(r, s.N, av),
				what: fmt.Sprintf("the announcement of interrupted step %d", s.N)})
		case noted(ts):
			ops = append(ops, threadOp{kind: opUpdate, key: key, ts: ts, blocks: Interrupted(r, s.N, av), prio: updateState,
				what: fmt.Sprintf("the announcement of interrupted step %d", s.N)})
		}
	}
	return ops
}

// haltOps announce a FAILED halt once, noted by its ts and kept current,
// so its Redo and Abort give way once the step moves on.
func haltOps(r *engine.Run, s *engine.Step, v View, notes map[string]string) []threadOp {
	var ops []threadOp
	for _, a := range s.Attempts {
		key := noteHalt(s.N, a.N)
		latest := a.N == s.Latest().N
		switch ts := notes[key]; {
		case ts == "" && latest && s.Status == engine.StepWaiting && a.Result == engine.ResultFailed:
			ops = append(ops, threadOp{kind: opPost, key: key, blocks: Halt(r, v.onStep(s.N)),
				what: fmt.Sprintf("the halt of step %d", s.N)})
		case noted(ts):
			msg := Halt(r, v.onStep(s.N))
			if !latest || s.Status != engine.StepWaiting || r.Finished() {
				// Acted on: the notice keeps what failed and gives way,
				// and never becomes a second end of the run.
				msg = HaltHandled(r, s.N, a.N)
			}
			ops = append(ops, threadOp{kind: opUpdate, key: key, ts: ts, blocks: msg, prio: updateState, ifGone: goneIgnore,
				what: fmt.Sprintf("the halt of step %d", s.N)})
		}
	}
	return ops
}

// deadlineOps post, once each, what gonogo did about a checkpoint left
// waiting (the engine records it): that its decision timed out and it
// keeps waiting, then the reminder to its approvers. Neither is posted
// once the step has moved on.
func deadlineOps(r *engine.Run, s *engine.Step, v View, notes map[string]string) []threadOp {
	l := s.Latest()
	if l == nil || s.Status != engine.StepWaiting || r.Finished() {
		return nil
	}
	var ops []threadOp
	if key := noteTimeout(s.N, l.N); !l.TimedOut.IsZero() && notes[key] == "" {
		ops = append(ops, threadOp{kind: opPost, key: key, text: TimeoutNote(r, s.N), tsOnly: true,
			what: fmt.Sprintf("the decision timeout of step %d", s.N)})
	}
	if key := noteRemind(s.N, l.N); !l.Reminded.IsZero() && notes[key] == "" {
		ops = append(ops, threadOp{kind: opPost, key: key, blocks: Reminder(r, s.N, v), tsOnly: true,
			what: fmt.Sprintf("the reminder of step %d", s.N)})
	}
	return ops
}

// noted reports whether a message's note holds its ts: "1" was noted
// without it by an earlier version, and such a message is left as it is.
func noted(ts string) bool { return ts != "" && ts != "1" }
