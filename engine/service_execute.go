package engine

import (
	"context"
	"errors"
	"fmt"
)

// startStep commits the start of an attempt (the caller holds a slot and
// the run's lock) and hands the execution to Run: one per candidate of a
// best-of step, run at once under the step's one slot, which the last to
// end releases.
func (s *Service) startStep(ctx context.Context, r *Run, n int) (*Run, error) {
	// The executions are promised to Run before the start is committed,
	// so a stopping Run either refuses them here or waits for them:
	// nothing is committed after Run returns.
	count := executions(r.Step(n))
	if !s.reserve(count) {
		return nil, errStopping
	}
	evs, err := Start(r, n, s.now())
	if err == nil {
		r, err = s.commit(ctx, r, evs, Commit{})
	}
	if err != nil {
		s.mu.Lock()
		s.settleLocked(count)
		s.mu.Unlock()
		return nil, err
	}
	st := r.Step(n)
	job, ferr := s.prepare(ctx, r, st)
	started := StartedAttempts(st)
	left := len(started)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settleLocked(count - len(started)) // never short, but every promise is settled
	for _, a := range started {
		cjob := job
		cjob.Attempt, cjob.Runner = a.N, a.Runner
		s.handExecutionLocked(r, n, cjob, ferr, func() bool {
			s.mu.Lock()
			defer s.mu.Unlock()
			left--
			return left == 0
		})
	}
	return r, nil
}

// executions is how many executions a start of st makes: one per
// candidate of a best-of step, else one.
func executions(st *Step) int {
	if st != nil && IsBestOf(st) {
		return len(st.Rules.BestOf)
	}
	return 1
}

// settleLocked settles n promises of reserveLocked with no work.
func (s *Service) settleLocked(n int) {
	for range n {
		s.handLocked(nil)
	}
}

// reserve promises Run count pieces of work (see reserveLocked), all or
// none.
func (s *Service) reserve(count int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range count {
		if !s.reserveLocked() {
			s.settleLocked(i)
			return false
		}
	}
	return true
}

// handExecutionLocked hands Run the execution of one attempt; last says
// whether it is the last of its start to end, which releases the slot.
func (s *Service) handExecutionLocked(r *Run, n int, job Job, ferr error, last func() bool) {
	// Cancel and an abort may stop the attempt before Run has started it:
	// halted keeps their cause until the execution's context exists.
	halted, halt := context.WithCancelCause(context.Background())
	key := execKey{r.ID, n, job.Attempt}
	s.running[key] = halt
	s.handLocked(func(runCtx context.Context) {
		ectx, cancel := context.WithCancelCause(runCtx)
		unhook := context.AfterFunc(halted, func() { cancel(context.Cause(halted)) })
		recorded := s.execute(runCtx, ectx, r, n, job.Attempt, job, ferr)
		unhook()
		s.mu.Lock()
		delete(s.running, key)
		s.mu.Unlock()
		cancel(nil)
		halt(nil)
		if last() {
			s.release()
		}
		if recorded {
			if _, err := s.advance(runCtx, r.ID); err != nil && runCtx.Err() == nil {
				s.log.Error("advance run", "run", r.ID, "err", err)
			}
		}
	})
}

// prepare composes the job for an attempt: the rules are PlanAttempt and
// ComposeJob; prepare reads what they ask for. An error here (a threaded
// step that produced nothing, a skill that vanished) fails the attempt
// without running anything.
func (s *Service) prepare(ctx context.Context, r *Run, st *Step) (Job, error) {
	p, err := PlanAttempt(r, st, s.catalog, s.expand.Policy)
	if err != nil {
		return p.Job, err
	}
	read := make(map[ArtifactRef]ArtifactRead, len(p.Reads))
	for _, ref := range p.Reads {
		body, err := s.store.Artifact(ctx, r.ID, ref.Step, ref.Attempt)
		read[ref] = ArtifactRead{Body: body, Err: err}
	}
	var pre error
	if p.CheckPre {
		pre = CheckConditions(ctx, p.Step.Rules.Pre, nil, s.probe)
	}
	return ComposeJob(p, read, pre, s.catalog, s.now())
}

// execute runs one attempt in ctx (which a cancel or an abort ends with
// its cause), judges it and records the result; it reports whether the
// result was recorded. runCtx is Run's: when it ends, gonogo is stopping.
func (s *Service) execute(runCtx, ctx context.Context, r *Run, n, attempt int, job Job, prepErr error) bool {
	st := r.Step(n)
	out := s.outcome(ctx, r, n, attempt, job, prepErr)
	if runCtx.Err() != nil {
		// gonogo is stopping: leave the step running in the store, so it is
		// marked interrupted and offered for redo when the store reopens.
		return false
	}
	e := AttemptEnd{Run: r, Step: n, Attempt: attempt, Outcome: out, RateLimit: s.limit}
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		e.Cancel = cause // a person's cancel or an abort, with its reason
	}
	e.Skill, _ = s.catalog.Skill(job.Skill)
	f := JudgeAttempt(e)
	var post error
	if PostconditionsDue(st, f) {
		post = CheckConditions(ctx, st.Rules.Post, out.Artifact, s.probe)
	}
	var c Commit
	f, c.Artifacts, c.Files = SettleAttempt(e, f, post, s.expand)
	// This service's runner ran the attempt, whatever setup the run
	// recorded (a run resumed elsewhere, or started with a setup of its own).
	f.Agent = AttemptAgent(s.setup, job.Runner)
	return s.record(runCtx, r, n, attempt, f, c)
}

// outcome is what running the attempt's job gave: nothing ran when
// preparing it failed (prepErr) or in a dry run; else the runner ran it,
// its progress reported to the notifier as it went.
func (s *Service) outcome(ctx context.Context, r *Run, n, attempt int, job Job, prepErr error) Outcome {
	switch {
	case prepErr != nil:
		return Outcome{Err: prepErr}
	case r.DryRun:
		return Outcome{NotRun: true}
	}
	started := s.now()
	stop := s.pulse()
	out := s.runner.Run(ctx, job, func(p Progress) {
		if s.notifier == nil {
			return
		}
		if p.Elapsed == 0 {
			p.Elapsed = s.now().Sub(started)
		}
		s.notifier.Notify(Notice{Run: r, Event: Event{Type: EvStepStarted, Step: n, Attempt: attempt}, Progress: &p})
	})
	stop()
	return out
}

// record commits the end f of an attempt under the run's lock, with the
// change c that settled it, and reports whether it did. A stale finish
// (the run moved on) is dropped quietly; any other failure is logged and
// told to the notifier.
func (s *Service) record(ctx context.Context, r *Run, n, attempt int, f Finished, c Commit) bool {
	unlock := s.lock(r.ID)
	cur, err := s.store.Load(ctx, r.ID)
	if err == nil {
		err = s.finish(ctx, cur, n, attempt, f, c)
	}
	unlock()
	if err == nil {
		return true
	}
	if !errors.Is(err, ErrStale) {
		s.log.Error("record step result", "run", r.ID, "step", n, "attempt", attempt, "err", err)
		if s.notifier != nil {
			s.notifier.Notify(Notice{Run: r, Event: Event{Type: EvStepFinished, Step: n, Attempt: attempt},
				Err: fmt.Errorf("step %d: could not record its result: %w", n, err)})
		}
	}
	return false
}

// finish records the end f of an attempt with the change c that settled
// it, and the file moves of a candidate guarded auto picks with it.
func (s *Service) finish(ctx context.Context, cur *Run, n, attempt int, f Finished, c Commit) error {
	evs, err := Finish(cur, n, attempt, f, s.now())
	if err != nil {
		return err
	}
	_, err = s.commitPicked(ctx, cur, evs, c)
	return err
}
